/**
 * O1: the `telemetry` option's types and what the transport and its I/O call on a loaded
 * telemetry. Structural and type-only: nothing here loads `@opentelemetry/api`, so the root entry
 * (and its declarations) never needs it. The implementation, src/telemetry/otel.ts, is loaded
 * with `import()` by start() only when the option is given.
 */
import type { JSONRPCId, JSONRPCMessage, PostResult, GetResult } from '../../machines/types.js';
import type { envelopeVersion, fingerprint } from '../../machines/connection/index.js';
import type { requestIdsOf } from '../../machines/connection/messages.js';
import type { McpTransportError, statusOf, toError } from '../../machines/errors.js';

/** An OpenTelemetry `Tracer` (`@opentelemetry/api`), as far as the transport needs to name it. */
export interface TelemetryTracer {
  startSpan(name: string, options?: object, context?: unknown): object;
}

/** An OpenTelemetry `Meter` (`@opentelemetry/api`), as far as the transport needs to name it. */
export interface TelemetryMeter {
  createHistogram(name: string, options?: object): object;
}

/**
 * O1: `true` traces and measures with the global providers of `@opentelemetry/api` (an optional
 * peer dependency, loaded only then); an object gives a tracer and meter of your own (each falls
 * back to the global one). `sessionId: 'raw'` puts the session ID itself in `mcp.session.id`;
 * by default it is a fingerprint (X1).
 */
export type TelemetryOption =
  | true
  | {
      tracer?: TelemetryTracer | undefined;
      meter?: TelemetryMeter | undefined;
      sessionId?: 'fingerprint' | 'raw' | undefined;
    };

/** Which recovery of the chart a call went through (a span event on its span). */
export type Recovery = 'resume' | 'reconnect' | 'reinitialize' | 'legacy_fallback' | 'authorization' | 'reissue' | 'retry';

/** One HTTP attempt of a call (a child span): ended by its answer, or by the release of its stream. */
export interface HttpAttempt {
  /** The request failed before an answer could be used (a status error, the network). */
  failed(error: unknown): void;
  /** The answer; an event stream comes back with a `release` that ends the attempt when the stream is done. */
  answered<R extends PostResult | GetResult>(result: R): R;
}

/** What a traced send() reads of the caller's send options. */
export interface TracedSendOptions {
  requestSignal?: AbortSignal | undefined;
  /** U12: the hosts' name for the same signal. */
  signal?: AbortSignal | undefined;
  onRequestStreamEnd?: (() => void) | undefined;
}

/** A loaded telemetry, one per transport: what the facade and the I/O actors call while it is on. */
/** What the lazily loaded telemetry module uses of the transport's own code; the transport hands it over (src/telemetry/otel.ts). */
export interface TelemetryKit {
  envelopeVersion: typeof envelopeVersion;
  fingerprint: typeof fingerprint;
  requestIdsOf: typeof requestIdsOf;
  statusOf: typeof statusOf;
  toError: typeof toError;
  McpTransportError: typeof McpTransportError;
}

export interface Telemetry {
  /** O2: anything to record (a tracer provider registered, or a meter); when not, send() takes its untraced path. */
  enabled(): boolean;
  /** A message the caller sends: its span starts. Returns what to send: a copy with trace context in `params._meta`, or the message. */
  sending(message: JSONRPCMessage, sessionId: string | undefined, protocolVersion: string | undefined): JSONRPCMessage;
  /**
   * send() with telemetry: each message's span starts (and the trace context goes into a copy of
   * it), then `dispatch` sends; a request's span ends when its answer is delivered, a
   * notification's when it was accepted, either when send() rejects or the caller gives up on it.
   */
  traced<O extends TracedSendOptions>(
    message: JSONRPCMessage | JSONRPCMessage[],
    options: O | undefined,
    context: { sessionId: string | undefined; protocolVersion: string | undefined },
    dispatch: (message: JSONRPCMessage | JSONRPCMessage[], options: O | undefined) => Promise<void>,
  ): Promise<void>;
  /** A message on its way to `onmessage`: a response ends its request's span. */
  delivered(message: JSONRPCMessage): void;
  /** The caller gave up on a request (its requestSignal, a notifications/cancelled). */
  abandoned(id: JSONRPCId, reason: string): void;
  /** An HTTP attempt for the requests `requestIds` (as on the wire); undefined when none of them is traced. */
  attempt(method: 'POST' | 'GET', requestIds: readonly JSONRPCId[]): HttpAttempt | undefined;
  /** An event stream of an attempt ended (`error`: how it broke). */
  streamEnded(stream: object, error: Error | undefined): void;
  /** A recovery of the chart, on the spans of the calls `ids` (all open calls when undefined). */
  recovery(kind: Recovery, ids: readonly JSONRPCId[] | undefined, attributes?: Record<string, string | number>): void;
  /** The session began (start()). */
  sessionStarted(): void;
  /** The session ended (closed, or failed with `error`); every span still open ends too. */
  sessionEnded(error: Error | undefined): void;
}
