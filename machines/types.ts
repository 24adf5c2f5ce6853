/**
 * Types shared by the charts and the I/O that is provided to them.
 * Nothing here performs I/O: the charts see messages, tickets and sinks only as values.
 */

export type JSONRPCId = string | number;
type Params = Record<string, unknown> | undefined;

export interface JSONRPCRequest {
  jsonrpc: '2.0';
  id: JSONRPCId;
  method: string;
  params?: Params;
}
export interface JSONRPCNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Params;
}
export interface JSONRPCResultResponse {
  jsonrpc: '2.0';
  id: JSONRPCId;
  result: Record<string, unknown>;
}
export interface JSONRPCErrorResponse {
  jsonrpc: '2.0';
  id?: JSONRPCId | null | undefined;
  error: { code: number; message: string; data?: unknown };
}
export type JSONRPCResponse = JSONRPCResultResponse | JSONRPCErrorResponse;
export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse;

/** What a 401 or 403 said in its `WWW-Authenticate` header (`StreamableHTTPError.challenge`). */
export interface AuthChallenge {
  /** `resource_metadata`: where the server's OAuth protected-resource metadata is. */
  resourceMetadataUrl?: string | undefined;
  /** `scope`: the scope the request needs. */
  scope?: string | undefined;
  /** `error`, e.g. `invalid_token` or `insufficient_scope`. */
  error?: string | undefined;
}

/** How often one message already went through authorization: once for a 401 (A1), bounded step-ups for a 403 (A2). */
export interface SendAttempts {
  auth: number;
  stepUps: number;
  /** F3: how often the message was already re-sent after a lost session (bounded: then it fails alone, F5). */
  recoveries?: number | undefined;
}

/** Where decoded messages and out-of-band warnings go: straight to the host, never the chart. */
export interface MessageSink {
  deliver(message: JSONRPCMessage): void;
  /** A warning; with `once`, the chart says it only the first time for that key (its context remembers). */
  warn(error: Error, once?: string): void;
}

/** The caller awaiting `send()`: settled once, by whichever state decides first. */
export interface SendTicket {
  accepted(): void;
  /**
   * Rejects `send()` if it is still pending. True when it was: the caller learned of the failure
   * there (P10), so no synthetic answer is needed; false when `send()` had already resolved.
   */
  failed(error: Error): boolean;
  /**
   * E2, E7: the call's stream ended for a reason other than its caller's abort (the v2 SDK's
   * `onRequestStreamEnd`). True when the caller listens for that: it learns of a drop there, so
   * no synthetic answer is delivered for it.
   */
  ended?(): boolean;
}

/** A `send()` promise's two ends, settled once, and the caller's stream-end hook (E2); `shape` is what the caller's Client is given for an error (A7). */
export function sendTicket(
  resolve: () => void,
  reject: (error: Error) => void,
  onStreamEnd?: () => void,
  shape: (error: Error) => Error = (error) => error,
): SendTicket {
  let settled = false;
  let ended = false;
  return {
    ended() {
      if (onStreamEnd === undefined) return false;
      if (!ended) {
        ended = true;
        onStreamEnd();
      }
      return true;
    },
    accepted() {
      if (settled) return;
      settled = true;
      resolve();
    },
    failed(error) {
      if (settled) return false;
      settled = true;
      reject(shape(error));
      return true;
    },
  };
}

/** The ticket of a message nobody awaits (the chart's own recovery POSTs). */
export const noTicket: SendTicket = { accepted: () => undefined, failed: () => false };

/** Reconnection settings, named as in the official SDK's `reconnectionOptions`. */
/**
 * Backoff for reconnecting streams: the n-th wait is `initialReconnectionDelay ×
 * reconnectionDelayGrowFactor^(n−1)`, capped at `maxReconnectionDelay`, then (with `jitter`) a
 * random share of it.
 */
export interface ReconnectionOptions {
  /** The first wait, in ms. Default 1,000. */
  initialReconnectionDelay: number;
  /** Each further wait is this many times the one before. Default 1.5. */
  reconnectionDelayGrowFactor: number;
  /** No wait is longer than this, in ms. Default 30,000. */
  maxReconnectionDelay: number;
  /**
   * Reconnects in a row without progress (no new event) before giving up: a POST stream then fails
   * its request; the standalone stream keeps trying every `maxReconnectionDelay`. Default 5.
   */
  maxRetries: number;
  /** Wait a random time between 0 and the computed delay ("full jitter"), so clients do not reconnect in step. Default true. */
  jitter: boolean;
}

/**
 * Takes over the wait before a reconnect (the SDK v2 option of the same name): call `reconnect`
 * when it is time; the returned function, if any, cancels the wait.
 */
// `| void`, as in the SDK, so a scheduler written as a plain block body (returning nothing) fits.
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type
export type ReconnectionScheduler = (reconnect: () => void, delay: number, attempt: number) => (() => void) | void;

/** F7, L1: how long the legacy fallback waits for the `endpoint` event when `legacyEndpointTimeout` is not given, in ms. */
export const DEFAULT_LEGACY_ENDPOINT_TIMEOUT = 10_000;

/** Everything the charts decide with; resolved from the caller's options in src/. */
export interface ChartOptions {
  reconnection: ReconnectionOptions;
  standaloneStream: boolean;
  terminateOnClose: boolean;
  deleteTimeout: number;
  sessionRecovery: 'reinitialize' | 'fail';
  strict: boolean;
  /** R9: a stream silent this long (ms) is treated as dropped; undefined: never. */
  streamIdleTimeout: number | undefined;
  /** S5: the largest single event accepted, in bytes. */
  maxMessageBytes: number;
  /** A session ID given by the caller (the SDK's `sessionId` option): the session is resumed, not initialized. */
  sessionId: string | undefined;
  /** W1: what a saved transport state adds to its session ID, so the session continues as it was. */
  restored: RestoredSession | undefined;
  /** L1: an initialize answered 400, 404 or 405 falls back to the 2024-11-05 HTTP+SSE transport. */
  legacyFallback: boolean;
  /** F7, L1: the longest wait for the legacy transport's `endpoint` event, in ms (default `DEFAULT_LEGACY_ENDPOINT_TIMEOUT`). */
  legacyEndpointTimeout?: number | undefined;
  /** An authProvider was given: 401 and 403 insufficient_scope lead to authorizing (A1, A2). */
  authorization: boolean;
  /**
   * E5: `'reads'`: in the 2026-07-28 era a read-only request whose stream was cut before its answer
   * is sent once more under a new id, and its answer delivered under the caller's. Default: never.
   */
  reissue?: 'reads' | undefined;
  /** A2: how many step-ups (403 insufficient_scope) one message may go through. */
  maxStepUpRetries: number;
  /** Who waits before a reconnect: the chart's own timer when undefined. */
  reconnectionScheduler: ReconnectionScheduler | undefined;
  /** Source of randomness for backoff jitter, in [0, 1). */
  random: () => number;
  /** W3: the clock a wait's due time is told on (epoch ms in src/; any monotonic clock works). */
  now: () => number;
  /**
   * W2: false when the host has no network signal (Node): the open session then runs no
   * `networkStatus` actor, one actor less per session. Undefined: watched.
   */
  watchNetwork?: boolean | undefined;
}

/** W1: the rest of a saved session: its version, the standalone stream's place, and the initialize to repeat (F3). */
export interface RestoredSession {
  /** E10: a saved 2026-07-28 connection: no session, and the probe's answer to give without asking again. */
  era?: 'modern' | undefined;
  discover?: Record<string, unknown> | undefined;
  protocolVersion: string | undefined;
  standaloneLastEventId: string | undefined;
  initializeRequest: JSONRPCRequest | undefined;
}

/** W2: what the host's network signal says (a browser's `offline` and `online` events). */
export type NetworkEvent = { type: 'network.offline' } | { type: 'network.online' };

/** How a stream (POST or GET) ended before it was done, as told by the SSE reader. */
export interface StreamEnd {
  /** The last event id seen on this stream, if any. */
  lastEventId: string | undefined;
  /** A new event id or a delivered message since the stream (re)opened. */
  progressed: boolean;
  /** The server's last `retry:` value on this stream, in ms, already clamped. */
  retryMs: number | undefined;
  /** Why it ended: undefined for a clean end of body. */
  error: Error | undefined;
  /** E13: the server ended the request it carries with `notifications/cancelled` (delivered), and reading stopped there. */
  cancelled?: boolean;
}

/** What a POST's response turned out to be. */
export type PostResult =
  | { kind: 'accepted'; sessionId: string | undefined }
  | { kind: 'json'; sessionId: string | undefined; response: JSONRPCResponse | undefined }
  | { kind: 'sse'; sessionId: string | undefined; stream: OpenStream };

/** Told each chunk of a body as it arrives, then its end or why it broke; never after a cancel. */
export interface ChunkReader {
  /**
   * Reads each chunk during `chunk()` and keeps no reference to its bytes: a source may lend it a
   * view of a buffer it reuses for its next read (the HTTP/1.1 client's). Otherwise each chunk is
   * its own to keep.
   */
  readonly transient?: boolean;
  chunk(bytes: Uint8Array): void;
  end(): void;
  fail(error: unknown): void;
}

/** A body read chunk by chunk without a web stream (the Node client's); `cancel()` stops it. */
export interface ChunkSource {
  read(reader: ChunkReader): { cancel(): void };
  /** Cancels a body nobody will read, without reading it (frees the connection). */
  discard(): void;
  /** P4: its reader has what it needs and reads on only to the body's end (its grace): the connection is about to be free. */
  draining?(): void;
}

/** A response body: fetch's web stream, or the Node client's chunk source. */
export type ResponseBody = ReadableStream<Uint8Array> | ChunkSource;

/** An open event-stream body, handed from the request actor to the reader actor. */
export interface OpenStream {
  readonly body: ResponseBody;
  /** Aborts the underlying request and unlinks it from the transport's lifetime. */
  readonly release: () => void;
}

/** What a standalone or resume GET turned out to be. */
export type GetResult = { kind: 'sse'; stream: OpenStream } | { kind: 'unsupported'; status: number; warning: Error | undefined };
