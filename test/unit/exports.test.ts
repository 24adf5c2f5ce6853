import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';

describe('the public API', () => {
  it('U6: src/index.ts exports the transport, its errors, the charts and the recorder, and nothing internal', () => {
    expect(Object.keys(api).sort()).toEqual([
      'InvalidMessageError',
      'McpTransportError',
      'MessageTooLargeError',
      'ProtocolError',
      'SessionExpiredError',
      'StreamEndedError',
      'StreamIdleError',
      'StreamableHTTPClientTransport',
      'StreamableHTTPError',
      'TransportClosedError',
      'TransportFailedError',
      'connectionMachine',
      'createJsonlRecorder',
      'postStreamMachine',
      'standaloneStreamMachine',
      'toRecord',
    ]);
  });
});
