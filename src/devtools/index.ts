/**
 * The devtools door (`mcp-xstate-transport/devtools`): what watches a transport, and nothing the
 * transport needs to run. The JSONL recorder (U4), the chart view's live bridge (W5), and live
 * inspection in the Stately inspector (U8). Every one of them is handed redacted events (X3).
 */
import { engine } from '../engine.js';
import { registerEngine } from '../engine-registry.js';

// What the devtools attach to is `transport.actor`, from the constructor: the chart engine comes with them.
registerEngine(engine);

export { createJsonlRecorder, toRecord, type JsonlRecord, type RecorderOptions } from './recorder.js';
export { attachToView, viewInspector, type ViewBridge, type ViewBridgeOptions } from './view/bridge.js';
export { inspectLive, InspectorPortError, MissingPeerError, type LiveInspection, type LiveInspectionOptions } from './live.js';
export { redactInspectionEvent, type InspectOption, type InspectOptions } from '../redaction.js';
