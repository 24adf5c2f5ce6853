import type { Actor, InspectionEvent, Observer } from 'xstate';
import type { ConnectionEmitted, ConnectionInput, ConnectionMachine } from '../machines/connection/index.js';
import { envelopeVersion } from '../machines/connection/messages.js';
import { directRoute } from '../machines/connection/route.js';
import { sendTicket, type JSONRPCMessage, type MessageSink } from '../machines/types.js';
import { asSdkAuthError, McpTransportError, OfflineError, StreamEndedError, TransportFailedError } from '../machines/errors.js';
import type { TransportIo } from './actors.js';
import { engineNow, loadEngine, type Engine } from './engine-registry.js';
import { telemetryKit } from './telemetry/kit.js';
import { DataPlane } from './data-plane.js';
import { redactingObserver } from './redaction.js';
import { chooseSender, dpopSource, HttpClient } from './http/client.js';
import { baseHeaders, perRequestHeaders } from './http/headers.js';
import {
  checkEndpoint,
  checkOptions,
  resolveChartOptions,
  resolveExchangeOptions,
  type StreamableHTTPClientTransportOptions,
} from './options.js';
import { invalidMessage } from './schema.js';
import { browserNetwork } from './network.js';
import { checkSavedState, restoredSession, savedStateOf, type SavedTransportState } from './saved-state.js';
import type { Telemetry, TelemetryOption } from './telemetry/option.js';

/** The SDK's send options (`TransportSendOptions`, 1.x and 2.x). */
export interface SendOptions {
  relatedRequestId?: string | number | undefined;
  /** Resume the stream of an earlier request from this event id instead of sending the message again. */
  resumptionToken?: string | undefined;
  /** Called with each new event id of this message's stream: keep the last one to resume with. */
  onresumptiontoken?: ((token: string) => void) | undefined;
  /** E2, E6: aborts this request's POST and stream only; no `onerror`, no reconnect, nothing sent. */
  requestSignal?: AbortSignal | undefined;
  /**
   * U12: the name hosts use for the same thing (the Vercel AI SDK's `MCPTransportSendOptions.signal`):
   * aborting it ends this request's POST and stream as `requestSignal` does; either one aborts it.
   */
  signal?: AbortSignal | undefined;
  /** E2, E7: called when this request's stream ends for any reason but its `requestSignal`. */
  onRequestStreamEnd?: (() => void) | undefined;
  /** E2, E3: headers for this request only (e.g. `Mcp-Param-*`); reserved names are ignored. */
  headers?: Readonly<Record<string, string>> | undefined;
}

/** U12: the signal that aborts one request: `requestSignal` (the SDK's name), `signal` (the hosts'), or either. */
function requestSignalOf(options: SendOptions | undefined): AbortSignal | undefined {
  const requestSignal = options?.requestSignal;
  const signal = options?.signal;
  if (signal === undefined || signal === requestSignal) return requestSignal;
  return requestSignal === undefined ? signal : AbortSignal.any([requestSignal, signal]);
}

/**
 * MCP Streamable HTTP client transport: a drop-in for the official SDK's class of the same name
 * under the SDK `Client`, whose lifecycle is the XState chart running in `actor`.
 */
export class StreamableHTTPClientTransport {
  /** Called once when the transport closed (after `close()`, or when its chart stopped). */
  onclose?: (() => void) | undefined;
  /** Warnings and failures; the transport goes on after a warning. */
  onerror?: ((error: Error) => void) | undefined;
  /** Every message from the server, in order. */
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  /**
   * E2: one POST (and response stream) per request, so `requestSignal` cancels exactly one: the
   * v2 SDK Client then cancels a 2026-07-28 request by aborting it instead of POSTing a cancellation.
   */
  readonly hasPerRequestStream = true;
  /**
   * U12: the Vercel AI SDK (`@ai-sdk/mcp`) keeps a custom transport on the 2025 `initialize` flow
   * unless it says it can carry the 2026-07-28 `server/discover` probe. This one negotiates either
   * era (E1): a probe refused by a 2025 server reaches the host as the probe's JSON-RPC error (E8),
   * and a 2025 version set after it takes the chart back to `initialize`.
   */
  readonly supportsProtocolVersionDiscovery = true;
  /**
   * U12: the probe always gets an answer (its result, or the server's refusal as its JSON-RPC
   * error), never silence: the AI SDK waits for it instead of taking a slow modern server for a
   * 2025 one. A network failure rejects `send()`, as the AI SDK's own HTTP transport does.
   */
  readonly waitsForProtocolVersionDiscovery = true;
  /** U12: `send()`'s per-request `headers` (the AI SDK's `Mcp-Param-*`, SEP-2243) go on that request's POST (E3). */
  readonly supportsMcpToolParameterHeaders = true;
  /** The connection chart's actor, once made (from the constructor where the engine is loaded; see `actor`). */
  private running: Actor<ConnectionMachine> | undefined;
  /** What the actor is made from, until it is made (then dropped): its input, inspector, and a version set before it. */
  private pending:
    | {
        options: ConnectionInput['options'];
        sink: InstanceType<typeof StreamableHTTPClientTransport.Sink>;
        inspect: Observer<InspectionEvent> | undefined;
        version: string | undefined;
      }
    | undefined;
  private readonly http: HttpClient;
  /** N3: what the sender keeps for a session (the Node entry's cookie jar) is dropped with this; undefined in a browser. */
  private readonly sessionEnded: (() => void) | undefined;
  private readonly authProvider: object | undefined;
  /** E2: the versions the Client supports (`setSupportedProtocolVersions`), for the host to read. */
  private supportedVersions: readonly string[] | undefined;
  /** What the I/O actors share; `io.directCalls` is the data plane, while the chart runs the direct path. */
  private readonly io: TransportIo;
  /** O1: the `telemetry` option, loaded by start() (O2: without it nothing is loaded). */
  private readonly telemetryOption: TelemetryOption | undefined;
  /** O1: the loaded telemetry; undefined without the option, which is one check per send and per delivery. */
  private telemetry: Telemetry | undefined;

  /**
   * What the charts deliver to and warn through (the transport's `onmessage` and `onerror`), and
   * the observer of its actor: one object, its methods on a shared prototype, reading the
   * transport's own fields, not four closures per transport (issue 44).
   */
  private static readonly Sink = class implements MessageSink {
    constructor(private readonly transport: StreamableHTTPClientTransport) {}

    /** A handler that throws must not stop the chart that delivered to it: it is told through onerror. */
    deliver(message: JSONRPCMessage): void {
      const transport = this.transport;
      if (transport.telemetry !== undefined) transport.telemetry.delivered(message);
      try {
        transport.onmessage?.(message);
      } catch (error) {
        // U12: the host's own error, as the SDK's transports pass it (a thrown non-Error is wrapped, its value in `cause`).
        transport.onerror?.(
          error instanceof Error ? error : new McpTransportError('onmessage threw while handling a message', { cause: error }),
        );
      }
    }

    /** One channel for warnings: the chart emits them (an inspector sees each), `onerror` hears them. */
    warn(error: Error, once?: string): void {
      const actor = this.transport.running;
      if (actor !== undefined && actor.getSnapshot().status === 'active') actor.send({ type: 'warning', error, once });
      else this.transport.onerror?.(error);
    }

    /**
     * A fault inside the chart stopped its actor: end every request, say so once, and close, so
     * that no call and no close() is left waiting on an actor that will never answer.
     */
    error(cause: unknown): void {
      const transport = this.transport;
      const error = new TransportFailedError('internal error in the transport chart', { cause });
      transport.endDirectCalls(error, false);
      transport.http.end();
      transport.onerror?.(error);
      transport.onclose?.();
    }

    /** Stopped from outside (actor.stop(), not closed through the chart): no direct call is left waiting. */
    complete(): void {
      this.transport.endDirectCalls(undefined, false);
    }
  };

  constructor(url: URL | string, options: StreamableHTTPClientTransportOptions = {}) {
    // U9: every option's shape first, so a bad one is named before anything starts.
    checkOptions(options);
    const endpoint = checkEndpoint(url);
    const restore =
      options.restoreState === undefined ? undefined : restoredSession(checkSavedState(options.restoreState, 'restoreState'), endpoint);
    const network = options.network === false ? undefined : (options.network ?? browserNetwork());
    // Built as one literal, not a spread copy with one field more (bench/README.md, "Code shapes").
    const chartOptions = resolveChartOptions(options, restore, network !== undefined);
    this.authProvider = options.authProvider;
    this.telemetryOption = options.telemetry;
    this.telemetry = undefined;
    const { headers, signal, ...init } = options.requestInit ?? {};
    const redirectPolicy = options.redirectPolicy ?? 'same-origin';
    // N1-N3: checked before anything starts; a proxy or tls no sender here honours throws InvalidOptionsError.
    const { fetch, send, sessionEnded } = chooseSender({
      endpoint,
      fetch: options.fetch,
      init,
      redirectPolicy,
      proxy: options.proxy,
      tls: options.tls,
      cookies: options.cookies,
    });
    this.sessionEnded = sessionEnded;
    this.http = new HttpClient({
      url: endpoint,
      signal: signal ?? undefined,
      fetch,
      send,
      init,
      headers: baseHeaders(headers, options.authProvider !== undefined),
      tokens: options.authProvider,
      dpop: dpopSource(options.authProvider, options.dpop),
      redirectPolicy,
      resent: (cause, body) => {
        this.resent(cause, body);
      },
    });
    const sink = new StreamableHTTPClientTransport.Sink(this);
    const exchangeOptions = resolveExchangeOptions(options, chartOptions);
    const io: TransportIo = {
      http: this.http,
      sink,
      options: exchangeOptions,
      authProvider: options.authProvider,
      network,
      directCalls: undefined,
      skipIssuerMetadataValidation: options.skipIssuerMetadataValidation,
      sdkAuth: options.sdkAuth,
    };
    this.io = io;
    this.pending = {
      options: chartOptions,
      sink,
      // X3: every observer, this one and any attached later with actor.system.inspect(), sees redacted events only.
      inspect: options.inspect === undefined ? undefined : redactingObserver(options.inspect),
      version: undefined,
    };
    this.running = undefined;
    const engine = engineNow();
    if (engine !== undefined) this.makeActor(engine);
  }

  /**
   * The running connection chart: subscribe to it, read its tags, inspect it. It exists from the
   * constructor where the chart engine is loaded: on Node, and wherever `./devtools` or
   * `./testing` is imported. The browser entry loads the engine on the first `start()` (the
   * `Client`'s `connect()`), so that a page does not download it with its first paint (issue 44);
   * there, `await loadEngine()` before reading `actor` ahead of `start()`. Read earlier, it throws
   * an `McpTransportError` that says so.
   */
  get actor(): Actor<ConnectionMachine> {
    const actor = this.chart();
    if (actor === undefined) {
      throw new McpTransportError(
        'transport.actor is made once the chart engine has loaded: in a browser, on the first start() (client.connect calls it); await loadEngine() to have it before',
      );
    }
    return actor;
  }

  /** The connection actor, made now if the engine is loaded; undefined while it is not (the browser entry, before start()). */
  private chart(): Actor<ConnectionMachine> | undefined {
    if (this.running !== undefined) return this.running;
    const engine = engineNow();
    return engine === undefined ? undefined : this.makeActor(engine);
  }

  private makeActor(engine: Engine): Actor<ConnectionMachine> {
    const pending = this.pending;
    if (pending === undefined) throw new McpTransportError('the connection actor was made twice');
    const actor = engine.connection(this.io, { options: pending.options, sink: pending.sink }, pending.inspect);
    this.running = actor;
    this.pending = undefined;
    const system = actor.system;
    // xstate's `inspect` is an arrow over its system's observers: called unbound, as it is here (no bound copy per transport).
    const inspectRaw = system.inspect;
    system.inspect = (observer) => inspectRaw(redactingObserver(observer));
    // One listener for everything the chart emits, not one per event type (bench/README.md, "Code shapes"): what
    // `onerror` and `onclose` hear.
    actor.on('*', (event) => {
      this.heard(event);
    });
    // A fault inside the chart stops its actor (`sink.error`), or it is stopped from outside (`sink.complete`).
    actor.subscribe(pending.sink);
    actor.start();
    // A version the Client set before the engine loaded (the chart takes it in any state).
    if (pending.version !== undefined) actor.send({ type: 'protocolVersion.set', version: pending.version });
    return actor;
  }

  /** Begins a session (the SDK `Client` calls it in `connect()`); allowed again after `close()` or a failure, for a new session. */
  start(): Promise<void> {
    const actor = this.chart();
    // The browser entry: the chart engine loads first (once per page).
    if (actor === undefined) return loadEngine().then(() => this.start());
    if (!actor.getSnapshot().can({ type: 'start' })) {
      return Promise.reject(
        new McpTransportError(
          'transport already started: client.connect(transport) calls start() itself, so do not call start() before connect(); close() it before starting again',
        ),
      );
    }
    // O1: the telemetry (and `@opentelemetry/api`) is loaded by the first start() that needs it.
    if (this.telemetryOption !== undefined && this.telemetry === undefined) return this.loadTelemetry(this.telemetryOption);
    this.begin();
    return Promise.resolve();
  }

  private begin(): void {
    this.http.begin();
    this.telemetry?.sessionStarted();
    this.actor.send({ type: 'start' });
  }

  /**
   * N7: the Node client sent a request again on a new connection (the server closed the kept-alive
   * one as it went out): a warning, which the inspector sees and `onerror` hears, and with O1 a
   * `mcp.client.retry` event on the span of each call it carried. Never silent.
   */
  private resent(cause: Error, body: string | undefined): void {
    const code = (cause as Error & { code?: unknown }).code;
    const why = typeof code === 'string' && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
    this.io.sink.warn(
      new McpTransportError(
        `a request met a kept-alive connection the server had closed (${why}) before any byte of its answer; sent again once on a new connection (N7)`,
        { cause },
      ),
    );
    const telemetry = this.telemetry;
    if (telemetry === undefined || body === undefined) return;
    let ids: readonly (string | number)[] = [];
    try {
      ids = telemetryKit.requestIdsOf(JSON.parse(body) as JSONRPCMessage);
    } catch {
      // Not JSON-RPC (nothing of ours sends such a body): no call to name.
    }
    telemetry.recovery('retry', ids, { 'mcp.client.retry.cause': typeof code === 'string' ? code : cause.message });
  }

  private async loadTelemetry(option: TelemetryOption): Promise<void> {
    const { createTelemetry } = await import('./telemetry/otel.js');
    this.telemetry ??= await createTelemetry(option, this.http.url, this.actor, telemetryKit);
    this.io.telemetry = this.telemetry;
    // close() may have come while the module loaded.
    if (!this.actor.getSnapshot().can({ type: 'start' })) throw new McpTransportError('transport closed while it was starting');
    this.begin();
  }

  /**
   * Sends one message as its own POST. Resolves when the server accepted it (for a request: when
   * its response began); rejects with a typed error when the call failed, after the pending
   * request was answered with a JSON-RPC error, so a waiting `Client` call rejects at once.
   */
  send(message: JSONRPCMessage | JSONRPCMessage[], options?: SendOptions): Promise<void> {
    if (Array.isArray(message)) {
      for (const item of message) {
        const invalid = invalidMessage(item);
        if (invalid) return Promise.reject(invalid);
      }
      const telemetry = this.telemetry;
      return telemetry === undefined || !telemetry.enabled()
        ? this.dispatchAll(message, options)
        : telemetry.traced(message, options, this.actor.getSnapshot().context, (traced, tracedOptions) =>
            this.dispatchEither(traced, tracedOptions),
          );
    }
    const invalid = invalidMessage(message);
    if (invalid) return Promise.reject(invalid);
    const telemetry = this.telemetry;
    return telemetry === undefined || !telemetry.enabled()
      ? this.dispatch(message, options)
      : telemetry.traced(message, options, this.actor.getSnapshot().context, (traced, tracedOptions) =>
          this.dispatchEither(traced, tracedOptions),
        );
  }

  /** What a traced send() sends with (O1): one message, or a list as `dispatchAll` sends it. */
  private dispatchEither(message: JSONRPCMessage | JSONRPCMessage[], options: SendOptions | undefined): Promise<void> {
    return Array.isArray(message) ? this.dispatchAll(message, options) : this.dispatch(message, options);
  }

  /** A list: one batch POST where the protocol revision allows it (H1), else each on its own. */
  private dispatchAll(messages: JSONRPCMessage[], options: SendOptions | undefined): Promise<void> {
    const actor = this.chart();
    if (actor === undefined) return loadEngine().then(() => this.dispatchAll(messages, options));
    if (actor.getSnapshot().context.batching) return this.dispatch(messages, options);
    return Promise.all(messages.map((item) => this.dispatch(item, options))).then(() => undefined);
  }

  /**
   * Re-opens an interrupted stream from `lastEventId` (GET with `Last-Event-ID`) and delivers what
   * it carries; resolves once the GET is under way.
   */
  resumeStream(lastEventId: string, options?: { onresumptiontoken?: ((token: string) => void) | undefined }): Promise<void> {
    return this.dispatch([], { resumptionToken: lastEventId, onresumptiontoken: options?.onresumptiontoken });
  }

  /** Ends the session (`DELETE`, unless `terminateOnClose: false`) and every stream, timer and request; safe to call twice. */
  close(): Promise<void> {
    const actor = this.chart();
    // Before the engine loaded (the browser entry, before start()): the chart closes as from idle, once it is there. If
    // the engine cannot load, nothing was started to close: closed all the same (onclose once, as from idle).
    if (actor === undefined) {
      return loadEngine().then(
        () => this.close(),
        () => {
          this.http.end();
          this.onclose?.();
        },
      );
    }
    const snapshot = actor.getSnapshot();
    if (snapshot.status !== 'active' || snapshot.matches('closed')) return Promise.resolve();
    return new Promise((resolve) => {
      const subscription = actor.on('closed', () => {
        subscription.unsubscribe();
        resolve();
      });
      actor.send({ type: 'close' });
    });
  }

  /**
   * Completes an OAuth redirect flow with the code from the redirect (or its whole query, whose
   * `iss` is checked, RFC 9207), through the SDK's own `auth()`; then connect again
   * (`client.connect(transport)` restarts this transport).
   */
  async finishAuth(codeOrParams: string | URLSearchParams, iss?: string): Promise<void> {
    const { authorize, unauthorizedError } = await import('./http/auth.js');
    if (this.authProvider === undefined) throw await unauthorizedError(McpTransportError, 'No auth provider', this.io.sdk, this.io.sdkAuth);
    // The v2 SDK's form: the redirect's query (`code`, and `iss` for RFC 9207) instead of the code alone.
    const params = typeof codeOrParams === 'string' ? undefined : codeOrParams;
    const authorizationCode = params === undefined ? (codeOrParams as string) : (params.get('code') ?? '');
    await authorize({
      provider: this.authProvider,
      serverUrl: this.http.url,
      challenge: this.running?.getSnapshot().context.authChallenge,
      fetch: this.http.authFetch,
      authorizationCode,
      iss: params === undefined ? iss : (params.get('iss') ?? undefined),
      sdk: this.io.sdk,
      skipIssuerMetadataValidation: this.io.skipIssuerMetadataValidation,
      TransportError: McpTransportError,
      sdkAuth: this.io.sdkAuth,
    });
  }

  /** DELETE the session and forget it, as the SDK does; 405 is fine. */
  terminateSession(): Promise<void> {
    const actor = this.chart();
    if (actor === undefined) return loadEngine().then(() => this.terminateSession());
    return new Promise((resolve, reject) => {
      actor.send({ type: 'session.terminate', ticket: sendTicket(resolve, reject) });
    });
  }

  /**
   * W1: what a new transport needs to continue this session (pass it as `restoreState`), or
   * undefined when there is no session to continue (not connected yet, re-establishing one, the
   * legacy transport). Plain JSON with the session ID and no token; save it when the page hides.
   */
  saveState(): SavedTransportState | undefined {
    // No actor yet: no session either (the chart's own answer before start()).
    const actor = this.running;
    if (actor === undefined) return undefined;
    const { context, children } = actor.getSnapshot();
    return savedStateOf(this.http.url, context, children.standalone?.getSnapshot().context);
  }

  get sessionId(): string | undefined {
    return this.running?.getSnapshot().context.sessionId;
  }

  get protocolVersion(): string | undefined {
    const actor = this.running;
    return actor === undefined ? this.pending?.version : actor.getSnapshot().context.protocolVersion;
  }

  setProtocolVersion(version: string): void {
    const actor = this.chart();
    if (actor !== undefined) actor.send({ type: 'protocolVersion.set', version });
    else if (this.pending !== undefined) this.pending.version = version;
  }

  /** E2: the v2 SDK Client tells the versions it supports when it connects. */
  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = [...versions];
    // Only the v2 SDK Client says this: its OAuth flow and UnauthorizedError are the ones to use.
    this.io.sdk = 'v2';
  }

  /** The versions the Client said it supports (v2 SDK), if it said. */
  get supportedProtocolVersions(): readonly string[] | undefined {
    return this.supportedVersions;
  }

  /**
   * A7: an error as the caller's Client types it: under the v2 SDK Client a 401 or 403 the
   * transport did not resolve is the SDK's authentication or forbidden error; the 1.x Client
   * keeps its StreamableHTTPError (and either keeps the SDK's UnauthorizedError).
   */
  private readonly forClient = (error: Error): Error => (this.io.sdk === 'v2' ? asSdkAuthError(error) : error);

  private dispatch(message: JSONRPCMessage | JSONRPCMessage[], options: SendOptions | undefined): Promise<void> {
    const actor = this.chart();
    // Before start() on the browser entry: the chart answers it (it refuses a send before start) once the engine is there.
    if (actor === undefined) return loadEngine().then(() => this.dispatch(message, options));
    const snapshot = actor.getSnapshot();
    if (snapshot.status !== 'active') {
      return Promise.reject(new TransportFailedError('the transport chart stopped after an internal error'));
    }
    // W2: offline, a send fails fast (nothing queued to go out later); the session lives on.
    if (snapshot.hasTag('offline')) return Promise.reject(new OfflineError('the network is offline; nothing was sent'));
    // The direct path, where the chart routes this message (directRoute); the chart hears only
    // what is not a happy answer (every answer while its gate is closed, the handshake's).
    const directCalls = this.io.directCalls;
    const route = directCalls === undefined ? undefined : directRoute(snapshot, message, options);
    if (route !== undefined && directCalls !== undefined && !Array.isArray(message)) {
      return new Promise((resolve, reject) => {
        directCalls.send(
          message,
          sendTicket(resolve, reject, options?.onRequestStreamEnd, this.forClient),
          route,
          perRequestHeaders(options?.headers, this.authProvider !== undefined),
          requestSignalOf(options),
        );
      });
    }
    // The era probe's envelope shows a v2 SDK Client before it says its versions (A1: whose OAuth flow).
    if (this.io.sdk === undefined && envelopeVersion(message) !== undefined) this.io.sdk = 'v2';
    const requestSignal = requestSignalOf(options);
    const requestId = Array.isArray(message) || !('id' in message) || !('method' in message) ? undefined : message.id;
    if (requestSignal !== undefined && requestId !== undefined) {
      // E6: the chart stops this request's POST child (a listen stream, a handshake) when it is aborted.
      const abort = () => {
        if (actor.getSnapshot().status === 'active') actor.send({ type: 'request.abort', requestId });
      };
      if (requestSignal.aborted) return Promise.reject(new StreamEndedError('request aborted by its requestSignal'));
      requestSignal.addEventListener('abort', abort, { once: true });
    }
    return new Promise((resolve, reject) => {
      actor.send({
        type: 'send',
        message,
        ticket: sendTicket(resolve, reject, options?.onRequestStreamEnd, this.forClient),
        resumptionToken: options?.resumptionToken,
        onResumptionToken: options?.onresumptiontoken,
        headers: perRequestHeaders(options?.headers, this.authProvider !== undefined),
      });
    });
  }

  /**
   * The direct path ends (the chart said so, or its actor stopped): its calls end, told `error`
   * (undefined: the transport closed); the plane is dropped first, so nothing reaches it after.
   */
  private endDirectCalls(error: Error | undefined, answer: boolean): void {
    const plane = this.io.directCalls;
    this.io.directCalls = undefined;
    plane?.end(error, answer);
  }

  private heard(event: ConnectionEmitted): void {
    switch (event.type) {
      case 'direct.start': {
        // The chart starts a connection: its direct path, a data plane of the facade's (not an
        // actor: docs/benchmark.md, issue 44), whose reports reach the chart as events.
        const actor = this.actor;
        const io = this.io;
        io.directCalls = new DataPlane(io.http, io.sink, io.options, io.telemetry, (report) => {
          if (actor.getSnapshot().status === 'active') actor.send(report);
        });
        return;
      }
      case 'direct.open':
      case 'direct.close':
      case 'direct.degraded':
      case 'direct.steady':
      case 'direct.cancel':
        this.io.directCalls?.command(event);
        return;
      case 'direct.end':
        this.endDirectCalls(event.error, event.answer);
        return;
      case 'warning':
      case 'failed':
        this.onerror?.(event.error);
        return;
      case 'closed':
        this.http.end();
        this.onclose?.();
        return;
      case 'session.ended':
        // N3: what was kept for the session (its cookies, on Node) ends with it.
        this.sessionEnded?.();
        return;
      case 'session.changed':
        return;
    }
  }
}
