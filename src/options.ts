import type { InspectionEvent, Observer } from 'xstate';
import type { ChartOptions, ReconnectionOptions, ReconnectionScheduler, RestoredSession } from '../machines/events.js';
import { defaultReconnection } from '../machines/backoff.js';
import type { FetchLike, TokenSource } from './http/client.js';
import type { NetworkSignal } from './network.js';
import type { SavedTransportState } from './saved-state.js';
import type { ExchangeOptions } from './http/exchanges.js';

/**
 * Options of `StreamableHTTPClientTransport`. The first group has the official SDK's names and
 * meanings (U1); the rest are this transport's own.
 */
export interface StreamableHTTPClientTransportOptions {
  /** Bearer tokens come from `authProvider.tokens()` on every request (the SDK's `OAuthClientProvider` fits). */
  authProvider?: TokenSource | undefined;
  /** A3: 'same-origin' (default) follows a redirect only within the origin, so no credential crosses origins; 'follow' leaves redirects to fetch. */
  redirectPolicy?: 'same-origin' | 'follow' | undefined;
  /** A2: how many times one message may step up its scope after 403 insufficient_scope. Default 1. */
  maxStepUpRetries?: number | undefined;
  /** Custom headers and fetch settings for every request (POST, GET, DELETE alike, H8). */
  requestInit?: RequestInit | undefined;
  /** The fetch used for every request (H9). */
  fetch?: FetchLike | undefined;
  /** Backoff for reconnecting streams; a partial object is merged with the defaults (R4). */
  reconnectionOptions?: Partial<ReconnectionOptions> | undefined;
  /** Takes over the wait before each reconnect (SDK v2): `(reconnect, delay, attempt) => cancel?`. */
  reconnectionScheduler?: ReconnectionScheduler | undefined;
  /** Resume an existing session instead of initializing one. */
  sessionId?: string | undefined;

  /** Open the standalone GET stream once initialized (G1). Default true. */
  standaloneStream?: boolean | undefined;
  /** Send DELETE on close when a session exists (F1). Default true. */
  terminateOnClose?: boolean | undefined;
  /** Longest wait for the DELETE on close, in ms (F1). Default 5,000. */
  deleteTimeout?: number | undefined;
  /** What a session the server forgot leads to (F3). Default 'reinitialize'. */
  sessionRecovery?: 'reinitialize' | 'fail' | undefined;
  /** L1: fall back to the 2024-11-05 HTTP+SSE transport when initialize is answered 400, 404 or 405. Default true. */
  legacyFallback?: boolean | undefined;
  /** Treat a lenient case as an error: e.g. 200 to a notification (P1). Default false. */
  strict?: boolean | undefined;
  /** Treat a stream that sends nothing (not even a comment) for this many ms as dropped, and resume it (R9). Default off. */
  streamIdleTimeout?: number | undefined;
  /** The largest message accepted, in bytes: one server-sent event (S5) or a JSON answer after decompression (P12). Default 16 MiB. */
  maxMessageBytes?: number | undefined;
  /**
   * W1: continue the session a `transport.saveState()` saved (e.g. before a page reload): no new
   * initialize, and the standalone stream resumes with Last-Event-ID. Checked; wins over `sessionId`.
   */
  restoreState?: SavedTransportState | undefined;
  /**
   * W2: where the transport learns the network is gone and back. Default: the browser's
   * (`navigator.onLine`, `offline`/`online` events), none on Node; `false`: ignore it.
   */
  network?: NetworkSignal | false | undefined;
  /** L1, F7: longest wait for the legacy server's `endpoint` event before connect fails, in ms. Default 10,000. */
  legacyEndpointTimeout?: number | undefined;
  /** An XState inspection observer, e.g. from `@statelyai/inspect` (U4). */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
}

export function resolveChartOptions(
  options: StreamableHTTPClientTransportOptions,
  restore?: { sessionId: string; restored: RestoredSession },
): ChartOptions {
  const given: Partial<ReconnectionOptions> = options.reconnectionOptions ?? {};
  const reconnection: ReconnectionOptions = {
    initialReconnectionDelay: given.initialReconnectionDelay ?? defaultReconnection.initialReconnectionDelay,
    reconnectionDelayGrowFactor: given.reconnectionDelayGrowFactor ?? defaultReconnection.reconnectionDelayGrowFactor,
    maxReconnectionDelay: given.maxReconnectionDelay ?? defaultReconnection.maxReconnectionDelay,
    maxRetries: given.maxRetries ?? defaultReconnection.maxRetries,
    jitter: given.jitter ?? defaultReconnection.jitter,
  };
  return {
    reconnection,
    standaloneStream: options.standaloneStream ?? true,
    terminateOnClose: options.terminateOnClose ?? true,
    deleteTimeout: options.deleteTimeout ?? 5_000,
    sessionRecovery: options.sessionRecovery ?? 'reinitialize',
    strict: options.strict ?? false,
    authorization: options.authProvider !== undefined,
    legacyFallback: options.legacyFallback ?? true,
    maxStepUpRetries: options.maxStepUpRetries ?? 1,
    streamIdleTimeout: options.streamIdleTimeout,
    maxMessageBytes: options.maxMessageBytes ?? 16 * 1024 * 1024,
    sessionId: restore?.sessionId ?? options.sessionId,
    restored: restore?.restored,
    reconnectionScheduler: options.reconnectionScheduler,
    random: Math.random,
    now: Date.now,
  };
}

/** What the I/O actors need of the options. */
export function resolveExchangeOptions(options: StreamableHTTPClientTransportOptions, chart: ChartOptions): ExchangeOptions {
  return {
    strict: chart.strict,
    maxMessageBytes: chart.maxMessageBytes,
    deleteTimeout: chart.deleteTimeout,
    legacyEndpointTimeout: options.legacyEndpointTimeout ?? 10_000,
  };
}
