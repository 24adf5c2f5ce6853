/**
 * O1: OpenTelemetry for one transport, after the OpenTelemetry semantic conventions for MCP
 * (gen-ai/mcp.md of open-telemetry/semantic-conventions-genai): a CLIENT span per request or
 * notification the caller sends, named `{mcp.method.name} {target}`; the HTTP attempts it took as
 * child spans (`POST`, `GET`); the chart's recoveries as events on it; W3C trace context in
 * `params._meta`; and the `mcp.client.operation.duration` and `mcp.client.session.duration`
 * histograms. Loaded with `import()` only when the `telemetry` option is given (O2); it loads
 * `@opentelemetry/api` (the optional peer) by a name in a variable, so that a bundler leaves it
 * alone for an application that never asks for telemetry.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Histogram, Meter, Span, Tracer } from '@opentelemetry/api';
import type { Actor } from 'xstate';
import type { GetResult, JSONRPCId, JSONRPCMessage, PostResult } from '../../machines/types.js';
import type { ConnectionMachine, INITIALIZE as Initialize } from '../../machines/connection/index.js';
import type { HttpAttempt, Recovery, Telemetry, TelemetryKit, TelemetryOption, TracedSendOptions } from './option.js';

/**
 * What this module uses of the transport's own code, handed over by createTelemetry(): a
 * run-time import of it would make a bundler split the page's eager code into a chunk shared with
 * this lazily loaded one (ARCHITECTURE.md, "Invariants"). The doors test holds it to that.
 */
let kit: TelemetryKit;
/** The chart's constant, typed by it (a literal, not a run-time import, for the reason above). */
const INITIALIZE: typeof Initialize = 'initialize';

/** The instrumentation scope: this package. */
const scope = 'mcp-xstate-transport';
/** The buckets the conventions ask for both MCP client histograms, in seconds. */
const buckets = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
/** The cancellation notification: it ends the span of the request it cancels (R8). */
const CANCELLED = 'notifications/cancelled';
/** E5: the id a re-issued request goes out under (machines/connection/modern.ts). */
const reissuedSuffix = ':reissued';

/** One call being traced or measured: its span (none when no tracer records it), when it began, and what its metric is recorded with. */
interface Call {
  readonly span: Span | undefined;
  readonly started: number;
  readonly metric: Attributes;
  attempts: number;
}

/** What every span and metric of this transport says about the server and the network. */
function networkAttributes(url: URL): Attributes {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const attributes: Attributes = {
    'server.address': url.hostname.replace(/^\[|\]$/g, ''),
    'server.port': port,
    'network.protocol.name': 'http',
    'network.transport': 'tcp',
  };
  // Node's own client speaks HTTP/1.1 only; a browser's fetch may speak 2 or 3, which it does not tell.
  const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
  if (node !== undefined) attributes['network.protocol.version'] = '1.1';
  return attributes;
}

/** The request's target (`gen_ai.tool.name` or `gen_ai.prompt.name`), named in its params. */
function targetOf(method: string, params: Record<string, unknown> | undefined): { key: string; name: string } | undefined {
  const name = params?.name;
  if (typeof name !== 'string') return undefined;
  if (method === 'tools/call') return { key: 'gen_ai.tool.name', name };
  if (method === 'prompts/get') return { key: 'gen_ai.prompt.name', name };
  return undefined;
}

/**
 * `traceparent`, `tracestate` and `baggage` of `ctx`: through the configured propagator, else
 * (none registered) written as W3C Trace Context and Baggage from the span itself.
 */
function traceContextOf(api: typeof OtelApi, span: Span): Record<string, string> | undefined {
  const { propagation } = api;
  const ctx = api.trace.setSpan(api.context.active(), span);
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  if (carrier.traceparent === undefined) {
    const spanContext = span.spanContext();
    if (!api.isSpanContextValid(spanContext)) return Object.keys(carrier).length === 0 ? undefined : carrier;
    carrier.traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${spanContext.traceFlags.toString(16).padStart(2, '0')}`;
    const state = spanContext.traceState?.serialize();
    if (state !== undefined && state !== '') carrier.tracestate = state;
    const baggage = propagation.getBaggage(ctx);
    const entries = baggage?.getAllEntries() ?? [];
    if (carrier.baggage === undefined && entries.length > 0) {
      carrier.baggage = entries.map(([key, entry]) => `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}`).join(',');
    }
  }
  return carrier;
}

/** The message with `carrier` added to `params._meta`: a copy, since the caller may hold the message and its params. */
function withTraceContext(message: JSONRPCMessage, carrier: Record<string, string>): JSONRPCMessage {
  if (!('method' in message)) return message;
  const params = message.params ?? {};
  const meta = params._meta;
  const merged = typeof meta === 'object' && meta !== null ? Object.assign({}, meta, carrier) : carrier;
  return Object.assign({}, message, { params: Object.assign({}, params, { _meta: merged }) });
}

/** `error.type` of a failed call: the typed error's name (or the class of the thrown value). */
function errorTypeOf(error: unknown): string {
  if (error instanceof Error) return error.name === 'Error' ? error.constructor.name : error.name;
  return '_OTHER';
}

export class OpenTelemetry implements Telemetry {
  private readonly tracer: Tracer;
  private readonly operations: Histogram;
  private readonly sessions: Histogram;
  private readonly network: Attributes;
  /** The calls whose span is open, by `String(id)`. */
  private readonly calls = new Map<string, Call>();
  /** Notifications whose span ends when their send() settles. */
  private readonly notifications = new WeakMap<object, Call>();
  /** The attempts whose event stream is still read, by the stream object handed on. */
  private readonly streams = new WeakMap<object, { span: Span; error: Error | undefined }>();
  /** The calls a session recovery (F3) is holding, for the `reinitialize` event when it is done. */
  private readonly reconnecting = new Set<string>();
  private sessionStart: number | undefined;
  /** A tracer was given: every call is traced. Else the global one, while a provider is registered. */
  private readonly ownTracer: boolean;
  /** What the global proxy delegates to while no tracer provider is registered. */
  private readonly noTracerProvider: unknown;
  /** A meter that records (given, or a global provider was registered before start()). */
  private readonly measuring: boolean;
  private readonly rawSessionId: boolean;

  constructor(
    private readonly api: typeof OtelApi,
    option: TelemetryOption,
    url: URL,
    private readonly actor: Actor<ConnectionMachine>,
  ) {
    const given = option === true ? {} : option;
    this.tracer = (given.tracer as Tracer | undefined) ?? api.trace.getTracer(scope);
    const meter = (given.meter as Meter | undefined) ?? api.metrics.getMeter(scope);
    this.ownTracer = given.tracer !== undefined;
    // What an unset proxy delegates to: the api's no-op provider (the class is deprecated for use as a provider, not for this).
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    this.noTracerProvider = new api.ProxyTracerProvider().getDelegate();
    // The metrics API has no proxy: a meter got while no provider is registered is the no-op one for good.
    this.measuring = meter !== api.createNoopMeter();
    const advice = { explicitBucketBoundaries: buckets };
    this.operations = meter.createHistogram('mcp.client.operation.duration', {
      unit: 's',
      description:
        'The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.',
      advice,
    });
    this.sessions = meter.createHistogram('mcp.client.session.duration', {
      unit: 's',
      description: 'The duration of the MCP session as observed on the MCP client.',
      advice,
    });
    this.network = networkAttributes(url);
    this.rawSessionId = given.sessionId === 'raw';
    this.watch();
  }

  /** O2: anything to record at all (a tracer provider registered now, or a meter); else send() goes untouched. */
  enabled(): boolean {
    return this.measuring || this.tracing();
  }

  private tracing(): boolean {
    if (this.ownTracer) return true;
    // The global provider is the api's proxy; it delegates to the no-op one until an SDK registers.
    const provider = this.api.trace.getTracerProvider() as { getDelegate?: () => unknown };
    return provider.getDelegate === undefined || provider.getDelegate() !== this.noTracerProvider;
  }

  sending(message: JSONRPCMessage, sessionId: string | undefined, protocolVersion: string | undefined): JSONRPCMessage {
    if (!('method' in message)) return message;
    const method = message.method;
    if (method === CANCELLED) {
      const cancelled = message.params?.requestId;
      if (typeof cancelled === 'string' || typeof cancelled === 'number') this.abandoned(cancelled, 'cancelled');
    }
    const tracing = this.tracing();
    if (!tracing && !this.measuring) return message;
    const target = targetOf(method, message.params);
    const metric: Attributes = Object.assign({ 'mcp.method.name': method }, this.network);
    if (target !== undefined) metric[target.key] = target.name;
    if (method === 'tools/call') metric['gen_ai.operation.name'] = 'execute_tool';
    const version = protocolVersion ?? kit.envelopeVersion(message);
    if (version !== undefined) metric['mcp.protocol.version'] = version;
    const id = 'id' in message ? message.id : undefined;
    let span: Span | undefined;
    let sent: JSONRPCMessage = message;
    if (tracing) {
      const attributes: Attributes = Object.assign({}, metric);
      if (id !== undefined) attributes['jsonrpc.request.id'] = String(id);
      const session = this.rawSessionId ? sessionId : kit.fingerprint(sessionId);
      if (session !== undefined) attributes['mcp.session.id'] = session;
      span = this.tracer.startSpan(
        target === undefined ? method : `${method} ${target.name}`,
        { kind: this.api.SpanKind.CLIENT, attributes },
        this.api.context.active(),
      );
      // The initialize is kept and sent again by the chart (F3) and saved (W1): it carries no trace context.
      const carrier = method === INITIALIZE ? undefined : traceContextOf(this.api, span);
      if (carrier !== undefined) sent = withTraceContext(message, carrier);
      // Sampled out: its context was propagated, nothing more is kept for it.
      if (!span.isRecording()) span = undefined;
    }
    if (span === undefined && !this.measuring) return sent;
    const call: Call = { span, started: performance.now(), metric, attempts: 0 };
    if (id === undefined) this.notifications.set(sent, call);
    else this.calls.set(String(id), call);
    return sent;
  }

  traced<O extends TracedSendOptions>(
    message: JSONRPCMessage | JSONRPCMessage[],
    options: O | undefined,
    { sessionId, protocolVersion }: { sessionId: string | undefined; protocolVersion: string | undefined },
    dispatch: (message: JSONRPCMessage | JSONRPCMessage[], options: O | undefined) => Promise<void>,
  ): Promise<void> {
    const messages = (Array.isArray(message) ? message : [message]).map((item) => this.sending(item, sessionId, protocolVersion));
    // The caller's abort ends a request's span whenever it comes (its answer may still be streaming after send() resolved).
    const abandon = () => {
      for (const item of messages) if ('id' in item && 'method' in item) this.abandoned(item.id, 'aborted');
    };
    options?.requestSignal?.addEventListener('abort', abandon, { once: true });
    // U12: a host's `signal` too (abandoned twice is a no-op: the span ended the first time).
    if (options?.signal !== options?.requestSignal) options?.signal?.addEventListener('abort', abandon, { once: true });
    // E7: a stream that ended without the answer (the v2 Client learns of it there) ends the span too; after the answer it is a no-op.
    const onStreamEnd = options?.onRequestStreamEnd;
    if (options !== undefined && onStreamEnd !== undefined) {
      options = Object.assign({}, options, {
        onRequestStreamEnd: () => {
          // After the chart's step that may deliver the answer in the same turn, whichever action runs first.
          queueMicrotask(() => {
            for (const item of messages) if ('id' in item && 'method' in item) this.abandoned(item.id, 'StreamEndedError');
          });
          onStreamEnd();
        },
      });
    }
    const sent = dispatch(Array.isArray(message) ? messages : (messages[0] as JSONRPCMessage), options);
    return sent.then(
      () => {
        for (const item of messages) this.sent(item, undefined);
      },
      (error: unknown) => {
        for (const item of messages) this.sent(item, kit.toError(error));
        throw error;
      },
    );
  }

  /** send() settled; `error` when it rejected. A notification's span ends here, a request's only on an error. */
  private sent(message: JSONRPCMessage, error: Error | undefined): void {
    if (!('id' in message) || !('method' in message)) {
      const call = this.notifications.get(message);
      if (call === undefined) return;
      this.notifications.delete(message);
      if (error === undefined) this.end(call, undefined, undefined);
      else this.end(call, errorTypeOf(error), error.message);
      return;
    }
    if (error === undefined) return;
    const call = this.take(message.id);
    if (call !== undefined) this.end(call, errorTypeOf(error), error.message);
  }

  delivered(message: JSONRPCMessage): void {
    if ('method' in message || !('id' in message) || message.id === undefined || message.id === null) return;
    const call = this.take(message.id);
    if (call === undefined) return;
    if ('error' in message) {
      const { code, message: text, data } = message.error;
      call.metric['rpc.response.status_code'] = String(code);
      call.span?.setAttribute('rpc.response.status_code', String(code));
      // P10: the transport's own answer to a failed call names the typed error it stands for.
      const typed = code === -32000 && typeof data === 'object' && data !== null && 'type' in data ? data.type : undefined;
      this.end(call, typeof typed === 'string' ? typed : String(code), text);
      return;
    }
    const result = message.result;
    if (call.metric['mcp.method.name'] === INITIALIZE && typeof result.protocolVersion === 'string') {
      call.metric['mcp.protocol.version'] = result.protocolVersion;
      call.span?.setAttribute('mcp.protocol.version', result.protocolVersion);
    }
    this.end(call, result.isError === true ? 'tool_error' : undefined, undefined);
  }

  abandoned(id: JSONRPCId, reason: string): void {
    const call = this.take(id);
    if (call !== undefined) this.end(call, reason, undefined);
  }

  attempt(method: 'POST' | 'GET', requestIds: readonly JSONRPCId[]): HttpAttempt | undefined {
    let call: Call | undefined;
    let reissue = false;
    for (const id of requestIds) {
      call = this.calls.get(String(id));
      if (call === undefined && typeof id === 'string' && id.endsWith(reissuedSuffix)) {
        call = this.calls.get(id.slice(0, -reissuedSuffix.length));
        reissue = call !== undefined;
      }
      if (call !== undefined) break;
    }
    if (call?.span === undefined) return undefined;
    call.attempts++;
    if (reissue) call.span.addEvent('mcp.client.reissue');
    if (method === 'GET') call.span.addEvent('mcp.client.resume', { 'mcp.client.attempt': call.attempts });
    const attributes: Attributes = Object.assign({ 'http.request.method': method, 'mcp.client.attempt': call.attempts }, this.network);
    const { context, trace, SpanKind } = this.api;
    const span = this.tracer.startSpan(method, { kind: SpanKind.CLIENT, attributes }, trace.setSpan(context.active(), call.span));
    let done = false;
    const finish = (error: unknown) => {
      if (done) return;
      done = true;
      if (error !== undefined) {
        const status = kit.statusOf(error);
        if (status !== undefined) span.setAttribute('http.response.status_code', status);
        span.setAttribute('error.type', status === undefined ? errorTypeOf(error) : String(status));
        span.setStatus(
          error instanceof Error
            ? { code: this.api.SpanStatusCode.ERROR, message: error.message }
            : { code: this.api.SpanStatusCode.ERROR },
        );
      }
      span.end();
    };
    return {
      failed: finish,
      answered: <R extends PostResult | GetResult>(result: R): R => {
        if (result.kind !== 'sse') {
          if (result.kind === 'unsupported') span.setAttribute('http.response.status_code', result.status);
          finish(undefined);
          return result;
        }
        const { stream } = result;
        const traced = {
          body: stream.body,
          release: () => {
            const state = this.streams.get(traced);
            finish(state?.error);
            stream.release();
          },
        };
        this.streams.set(traced, { span, error: undefined });
        return Object.assign({}, result, { stream: traced });
      },
    };
  }

  streamEnded(stream: object, error: Error | undefined): void {
    const state = this.streams.get(stream);
    if (state !== undefined && error !== undefined) state.error = error;
  }

  recovery(kind: Recovery, ids: readonly JSONRPCId[] | undefined, attributes?: Record<string, string | number>): void {
    const calls = ids === undefined ? [...this.calls.values()] : ids.map((id) => this.calls.get(String(id)));
    for (const call of calls) call?.span?.addEvent(`mcp.client.${kind}`, attributes);
  }

  sessionStarted(): void {
    this.sessionStart = performance.now();
  }

  sessionEnded(error: Error | undefined): void {
    for (const [id, call] of [...this.calls]) {
      this.calls.delete(id);
      this.end(call, error === undefined ? 'TransportClosedError' : errorTypeOf(error), error?.message);
    }
    this.reconnecting.clear();
    if (this.sessionStart === undefined) return;
    const attributes: Attributes = Object.assign({}, this.network);
    const version = this.actor.getSnapshot().context.protocolVersion;
    if (version !== undefined) attributes['mcp.protocol.version'] = version;
    if (error !== undefined) attributes['error.type'] = errorTypeOf(error);
    this.sessions.record((performance.now() - this.sessionStart) / 1000, attributes);
    this.sessionStart = undefined;
  }

  private take(id: JSONRPCId): Call | undefined {
    const key = String(id);
    const call = this.calls.get(key);
    if (call !== undefined) this.calls.delete(key);
    this.reconnecting.delete(key);
    return call;
  }

  private end(call: Call, errorType: string | undefined, description: string | undefined): void {
    const { span } = call;
    if (errorType !== undefined) {
      call.metric['error.type'] = errorType;
      span?.setAttribute('error.type', errorType);
      span?.setStatus(
        description === undefined ? { code: this.api.SpanStatusCode.ERROR } : { code: this.api.SpanStatusCode.ERROR, message: description },
      );
    }
    span?.end();
    if (this.measuring) this.operations.record((performance.now() - call.started) / 1000, call.metric);
  }

  /**
   * The chart's recoveries, read from its snapshots (the chart stays pure; it is observed): each
   * call waiting in its queue while it authorizes, re-establishes the session, or waits for the
   * legacy transport's endpoint gets that event once; the `session.changed` it emits ends a
   * re-establishment (`reinitialize`, with fingerprints, on the calls that waited for it).
   */
  private watch(): void {
    const authorizing = new Set<string>();
    const legacy = new Set<string>();
    const note = (
      kind: Recovery,
      active: boolean,
      seen: Set<string>,
      queue: readonly { message: JSONRPCMessage | JSONRPCMessage[] }[],
      attributes?: Record<string, string>,
    ) => {
      if (!active) {
        if (kind !== 'reconnect') seen.clear();
        return;
      }
      for (const queued of queue) {
        for (const id of kit.requestIdsOf(queued.message)) {
          const key = String(id);
          if (seen.has(key)) continue;
          seen.add(key);
          this.calls.get(key)?.span?.addEvent(`mcp.client.${kind}`, attributes);
        }
      }
    };
    this.actor.subscribe((snapshot) => {
      const { queue, authChallenge } = snapshot.context;
      const challenge = authChallenge?.error === undefined ? undefined : { 'mcp.client.challenge': authChallenge.error };
      note('authorization', snapshot.hasTag('authorizing'), authorizing, queue, challenge);
      note('reconnect', snapshot.hasTag('reconnecting'), this.reconnecting, queue);
      note('legacy_fallback', snapshot.matches({ legacy: 'awaitingEndpoint' }), legacy, queue);
    });
    this.actor.on('session.changed', (event) => {
      const attributes: Record<string, string> = {};
      if (event.previous !== undefined) attributes['mcp.client.previous_session'] = event.previous;
      if (event.current !== undefined) attributes['mcp.client.session'] = event.current;
      this.recovery('reinitialize', [...this.reconnecting], attributes);
      this.reconnecting.clear();
    });
    this.actor.on('closed', () => {
      this.sessionEnded(undefined);
    });
    this.actor.on('failed', (event) => {
      this.sessionEnded(event.error);
    });
  }
}

// A name in a variable: bundlers and the CommonJS build leave the optional peer alone until asked for.
// The comments: webpack would make a context module of the expression and warn 'Critical dependency'; Vite before 8 warns too.
const load = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

/** O1: the telemetry of one transport (the `telemetry` option), observing its chart; loads `@opentelemetry/api`. */
export async function createTelemetry(
  option: TelemetryOption,
  url: URL,
  actor: Actor<ConnectionMachine>,
  transportKit: TelemetryKit,
): Promise<Telemetry> {
  kit = transportKit;
  let api: typeof OtelApi;
  try {
    api = (await load('@opentelemetry/api')) as typeof OtelApi;
  } catch (cause) {
    throw new kit.McpTransportError(
      'the telemetry option needs the optional peer dependency @opentelemetry/api: install it, or leave the option out',
      {
        cause,
      },
    );
  }
  return new OpenTelemetry(api, option, url, actor);
}
