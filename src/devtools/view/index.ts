/**
 * W5: the chart view. `serveView` (Node) serves the page on 127.0.0.1; `attachToView` and
 * `viewInspector` feed it live from a transport; the page replays JSONL recordings.
 */
export { serveView, recorderLines, type ViewServer, type ViewServerOptions } from './server.js';
export { attachToView, viewInspector, type ViewBridge, type ViewBridgeOptions } from './bridge.js';
export { transportCharts, transportChartVersion, chartVersion, type ChartMachine, type ChartNode } from '../chart-model.js';
export {
  parseRecording,
  frameAt,
  activePaths,
  describeRecord,
  type Recording,
  type RecordLine,
  type Frame,
  type ActorFrame,
} from './replay.js';
export { pageHtml } from './page.js';
export { packageVersion } from '../version.js';
