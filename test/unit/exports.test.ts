import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import * as nodeApi from '../../src/node.js';
import * as devtools from '../../src/devtools/index.js';

describe('the public API', () => {
  it('U6, W1-W3, W6, E1, E9, A7, S7: src/index.ts exports the transport, its errors, loadEngine, the chart types and the UI helpers, and nothing internal (devtools have their own door)', () => {
    expect(Object.keys(api).sort()).toEqual([
      'EmptyResumesError',
      'HttpAuthError',
      'InvalidMessageError',
      'InvalidOptionsError',
      'InvalidRecordingError',
      'InvalidSavedStateError',
      'McpTransportError',
      'MessageTooDeepError',
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
      'TransportWaitingError',
      'connectionEra',
      'connectionStatus',
      'degradedReason',
      'findTransportError',
      'loadEngine',
      'manualNetwork',
      'nextRetry',
      'parseSavedState',
      'waitingReason',
    ]);
  });

  it('U4, U8, W5, X3: the devtools door exports the recorder, the chart view bridge, live inspection and the redaction', () => {
    expect(Object.keys(devtools).sort()).toEqual([
      'InspectorPortError',
      'MissingPeerError',
      'attachToView',
      'createJsonlRecorder',
      'inspectLive',
      'redactInspectionEvent',
      'toRecord',
      'viewInspector',
    ]);
  });

  it('U6, H11: the Node entry (src/node.ts, the `node` export condition) exports exactly the same API', () => {
    expect(Object.keys(nodeApi).sort()).toEqual(Object.keys(api).sort());
  });
});
