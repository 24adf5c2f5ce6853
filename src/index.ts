export { StreamableHTTPClientTransport, providedConnectionMachine } from './transport.js';
export { ioActors, connectionSystemId, type TransportIo } from './actors.js';
export type { StreamableHTTPClientTransportOptions } from './options.js';
export { parseSavedState, type SavedTransportState } from './saved-state.js';
export { browserNetwork, manualNetwork, type NetworkSignal } from './network.js';
export { connectionStatus, nextRetry, type ConnectionStatus, type NextRetry } from './ui.js';
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
  RestoredSession,
} from '../machines/events.js';
export type { PlannedWait } from '../machines/backoff.js';
export { createJsonlRecorder, toRecord, type JsonlRecord, type RecorderOptions } from './inspect.js';
