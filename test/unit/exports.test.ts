import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import * as nodeApi from '../../src/node.js';

describe('the public API', () => {
  it('U6, W1-W3, W5, E1, E9: src/index.ts exports the transport, its errors, the charts, the recorder, the UI helpers and the chart view bridge, and nothing internal', () => {
    expect(Object.keys(api).sort()).toEqual([
      'InvalidMessageError',
      'McpTransportError',
      'MessageTooLargeError',
      'ModernOnlyServerError',
      'OfflineError',
      'ProtocolError',
      'SessionExpiredError',
      'StreamEndedError',
      'StreamIdleError',
      'StreamableHTTPClientTransport',
      'StreamableHTTPError',
      'TransportClosedError',
      'TransportFailedError',
      'attachToView',
      'connectionEra',
      'connectionMachine',
      'connectionStatus',
      'createJsonlRecorder',
      'manualNetwork',
      'nextRetry',
      'parseSavedState',
      'postStreamMachine',
      'standaloneStreamMachine',
      'toRecord',
      'viewInspector',
    ]);
  });

  it('U6, H11: the Node entry (src/node.ts, the `node` export condition) exports exactly the same API', () => {
    expect(Object.keys(nodeApi).sort()).toEqual(Object.keys(api).sort());
  });
});
