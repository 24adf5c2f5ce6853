import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import * as nodeApi from '../../src/node.js';

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

  it('U6, H11: the Node entry (src/node.ts, the `node` export condition) exports exactly the same API', () => {
    expect(Object.keys(nodeApi).sort()).toEqual(Object.keys(api).sort());
  });
});
