/**
 * The public API, and only it: the transport and its options, its error classes, the charts
 * (to inspect, or to `provide()` other actors), and the recorder. Everything else is internal.
 */
export { StreamableHTTPClientTransport, type SendOptions } from './transport.js';
export type { StreamableHTTPClientTransportOptions } from './options.js';
export type { FetchLike, TokenSource } from './http/client.js';
export * from './errors.js';
export { connectionMachine, type ConnectionMachine, type ConnectionEmitted } from '../machines/connection/index.js';
export { postStreamMachine } from '../machines/post-stream.js';
export { standaloneStreamMachine } from '../machines/standalone-stream.js';
export type {
  JSONRPCMessage,
  JSONRPCRequest,
  JSONRPCNotification,
  JSONRPCResponse,
  ReconnectionOptions,
  ReconnectionScheduler,
} from '../machines/events.js';
export { createJsonlRecorder, toRecord, type JsonlRecord, type RecorderOptions } from './inspect.js';
export { attachToView, viewInspector, type ViewBridge, type ViewBridgeOptions } from './view/bridge.js';
