export { StreamableHTTPClientTransport, providedConnectionMachine } from './transport.js';
export { ioActors, connectionSystemId, type TransportIo } from './actors.js';
export type { StreamableHTTPClientTransportOptions } from './options.js';
export type { FetchLike, TokenSource } from './http/client.js';
export * from './errors.js';
export { connectionMachine, type ConnectionMachine, type ConnectionEmitted } from '../machines/connection.js';
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
export { createJsonlRecorder, toRecord, recordingHeader, recordingFormat, type JsonlRecord, type RecorderOptions } from './inspect.js';
export { attachToView, viewInspector, type ViewBridge, type ViewBridgeOptions } from './view/bridge.js';
