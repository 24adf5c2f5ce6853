import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';

describe('the public API', () => {
  it('U6: src/index.ts exports the transport, its errors, the charts, the recorder and the UI helpers (W1-W3), and nothing internal', () => {
    expect(Object.keys(api).sort()).toEqual([
      'InvalidMessageError',
      'McpTransportError',
      'MessageTooLargeError',
      'OfflineError',
      'ProtocolError',
      'SessionExpiredError',
      'StreamEndedError',
      'StreamIdleError',
      'StreamableHTTPClientTransport',
      'StreamableHTTPError',
      'TransportClosedError',
      'TransportFailedError',
      'connectionMachine',
      'connectionStatus',
      'createJsonlRecorder',
      'manualNetwork',
      'nextRetry',
      'parseSavedState',
      'postStreamMachine',
      'standaloneStreamMachine',
      'toRecord',
    ]);
  });
});
