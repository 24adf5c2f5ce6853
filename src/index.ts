/**
 * The public API, and only it: the transport and its options, its error classes, the charts'
 * types (the charts are at `./machines`), and what a UI reads (W1-W3: the saved state's
 * check, a network signal, the badge's word, the next retry). The recorder, the chart view and
 * live inspection are behind the devtools door (`./devtools`); everything else is internal.
 */
export { StreamableHTTPClientTransport, type SendOptions } from './transport.js';
export { loadEngine } from './engine-registry.js';
export type { StreamableHTTPClientTransportOptions } from './options.js';
export type { SdkAuthFunctions, SdkAuthOption } from './http/auth.js';
export { parseSavedState, type SavedTransportState } from './saved-state.js';
export { manualNetwork, type NetworkSignal } from './network.js';
export { connectionEra, connectionStatus, degradedReason, nextRetry, waitingReason, type ConnectionStatus, type NextRetry } from './ui.js';
export type { FetchLike, TokenSource } from './http/client.js';
export * from './errors.js';
// The charts themselves (to inspect, or to `provide()` other actors) are at `mcp-xstate-transport/machines`: a root
// export of them would put the chart engine in a page's first download, which the browser entry loads on start()
// (issue 44; a bundler that splits code makes a module re-exported by the entry part of the entry's chunk).
export type { ConnectionMachine, ConnectionEmitted, Era } from '../machines/connection/index.js';
export type {
  JSONRPCMessage,
  JSONRPCRequest,
  JSONRPCNotification,
  JSONRPCResponse,
  ReconnectionOptions,
  ReconnectionScheduler,
  RestoredSession,
} from '../machines/types.js';
export type { PlannedWait } from '../machines/backoff.js';
export type { InspectOption, InspectOptions } from './redaction.js';
export type { TelemetryOption, TelemetryTracer, TelemetryMeter } from './telemetry/option.js';
