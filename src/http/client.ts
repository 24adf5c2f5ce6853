import { InvalidOptionsError, TransportClosedError } from '../../machines/errors.js';
import type { ChunkSource, OpenStream, ResponseBody } from '../../machines/types.js';
import { discardBody } from './body.js';
import type { BaseHeaders } from './headers.js';
import type { DpopOption, DpopSessionLike } from './dpop-option.js';

/** A `fetch`-compatible function (the `fetch` option). */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * What the exchanges read from an answer: the part of a WHATWG `Response` that fetch and the
 * Node client (H11) both give, so reading bodies and classifying answers is written once.
 */
export interface HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  /** 'opaqueredirect' only from a browser's fetch. */
  readonly type: string;
  /** `getSetCookie` (N3): each `Set-Cookie` field apart, as fetch's `Headers` gives them. */
  readonly headers: { get(name: string): string | null; getSetCookie?(): string[] };
  readonly body: ReadableStream<Uint8Array> | null;
  /** The Node client's body as chunks, read without making a web stream (see `bodyOf`). */
  readonly chunks?: ChunkSource | undefined;
  readonly bodyUsed: boolean;
  text(): Promise<string>;
  /**
   * Issue 44: the exchange has read every field it reads (a held event stream's answer, once
   * classified): an answer that keeps its head for a session's life may let its fields go. Later
   * reads of `headers` then throw (they never answer from fields no longer kept).
   */
  fieldsRead?(): void;
}

/**
 * One request's abort handle (H10). The Node client listens to it directly: no AbortController
 * and no EventTarget listener per request (bench/README.md, "Code shapes"). Fetch gets a real `signal`, made on first use.
 */
export class RequestControl {
  private abortReason: unknown;
  private done = false;
  private listener: (() => void) | undefined;
  private controller: AbortController | undefined;
  /**
   * N7: told when the Node client sends this request again on a new connection (the server closed
   * the kept-alive one as it went out), with the request's body: the transport warns (the
   * inspector sees it) and counts it (O1). Set by `HttpClient.request`.
   */
  resent: ((cause: Error, body: string | undefined) => void) | undefined = undefined;

  get aborted(): boolean {
    return this.done;
  }

  /** As `AbortSignal.reason`: what abort() was given, else an AbortError (made when first read). */
  get reason(): unknown {
    if (!this.done) return undefined;
    this.abortReason ??= new DOMException('This operation was aborted', 'AbortError');
    return this.abortReason;
  }

  /** A signal for fetch, linked to this handle. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.abortReason = reason;
    if (this.controller !== undefined) this.controller.abort(this.reason);
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }

  /** The one listener (the Node client's request); replaces any earlier one. */
  onAbort(listener: () => void): void {
    this.listener = listener;
  }

  /** Removes `listener` if it is still the one set (no remover closure per request: a held stream would keep it). */
  offAbort(listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }
}

/**
 * Sends one request: fetch, or the Node client, ended by `control` (fetch through its signal).
 * Redirects are never followed by a sender given `redirect: 'manual'`.
 */
export type HttpSend = (url: URL, init: RequestInit, control?: RequestControl) => Promise<HttpResponse>;

/** Fetch as an HttpSend: the control's signal goes on the request (`init` is the caller's own copy). */
function fetchSender(fetchFn: FetchLike): HttpSend {
  return (url, init, control) => {
    if (control !== undefined) init.signal = control.signal;
    return fetchFn(url, init);
  };
}

/** A PEM text or its bytes (a Node `Buffer` is one), or several. */
export type PemInput = string | Uint8Array | readonly (string | Uint8Array)[];

/**
 * N2: TLS settings of Node's HTTP client for https endpoints, as `node:tls` takes them. Given,
 * they apply to the transport's own requests (and through a proxy's tunnel, N1); a user's
 * `fetch` has its own.
 */
export interface TlsOptions {
  /** Certificate authorities to trust instead of Node's bundled roots: e.g. a company CA, or a self-signed server's certificate. */
  ca?: PemInput | undefined;
  /** mTLS: the client's certificate chain (PEM), sent when the server asks for one; needs `key`. */
  cert?: PemInput | undefined;
  /** mTLS: the private key of `cert` (PEM). */
  key?: PemInput | undefined;
  /** The name the server's certificate must carry (and the SNI sent) when it is not the URL's host, e.g. connecting by IP address. */
  servername?: string | undefined;
}

/** What picks a transport's sender: the options that say how its requests go out. */
export interface SenderOptions {
  endpoint: URL;
  fetch: FetchLike | undefined;
  init: RequestInit;
  redirectPolicy: 'same-origin' | 'follow';
  /** N1, N2: the Node client's options, as given (their shapes checked by the constructor, U9). */
  proxy: string | URL | false | undefined;
  tls: TlsOptions | undefined;
  /** N3: false, no cookie jar. */
  cookies: boolean | undefined;
}

/** A transport's sender, and what it keeps for the session (N3: the Node entry's cookie jar). */
export interface Sender {
  send: HttpSend;
  /** The session ended (the chart's `session.ended`): what was kept for it goes. */
  sessionEnded?: (() => void) | undefined;
}

/**
 * H11, N1-N3: the Node entry's sender for a transport: its own client when the options allow it,
 * else `viaFetch`; either with the session's cookie jar. It refuses (InvalidOptionsError) a `proxy`
 * or `tls` that only its client honours when the options send requests through fetch.
 */
export type SenderFactory = (options: SenderOptions, viaFetch: HttpSend) => Sender;

let nodeSender: SenderFactory | undefined;

/** The Node entry registers its sender here; the browser entry never does, so browsers use fetch and keep their own cookies. */
export function registerSender(factory: SenderFactory): void {
  nodeSender = factory;
}

/** The global fetch, looked up at each call (a spy or polyfill installed later is used). */
const globalFetch: FetchLike = (input, requestInit) => fetch(input, requestInit);
/** `globalFetch` as an HttpSend: one for every transport without a fetch of its own, not a closure each. */
let globalViaFetch: HttpSend | undefined;

/** The sender for a transport: the Node entry's when registered, else fetch (the caller's when given, H9). */
export function chooseSender(options: SenderOptions): Sender & { fetch: FetchLike } {
  const fetchFn: FetchLike = options.fetch ?? globalFetch;
  const viaFetch = options.fetch === undefined ? (globalViaFetch ??= fetchSender(globalFetch)) : fetchSender(fetchFn);
  if (nodeSender !== undefined) return { fetch: fetchFn, ...nodeSender(options, viaFetch) };
  // `proxy: false` (no proxy) is what fetch does anyway.
  if ((options.proxy !== undefined && options.proxy !== false) || options.tls !== undefined) {
    throw new InvalidOptionsError([
      { field: options.tls === undefined ? 'proxy' : 'tls', expected: "none here: it is an option of the Node entry's HTTP client" },
    ]);
  }
  return { fetch: fetchFn, send: viaFetch };
}

/** A5: the v2 provider's `dpop()` (called per request, as the SDK does), or the `dpop` option. */
export type DpopSource = (() => DpopSessionLike | undefined | Promise<DpopSessionLike | undefined>) | DpopOption;

/** A5: the provider's `dpop()` when it has one (the v2 SDK's `OAuthClientProvider`), else the `dpop` option. */
export function dpopSource(provider: TokenSource | undefined, option: DpopOption | undefined): DpopSource | undefined {
  return typeof provider?.dpop === 'function' ? () => provider.dpop?.() : option;
}

/** The part of the SDK's `OAuthClientProvider` this module reads: the current tokens. */
export interface TokenSource {
  tokens(): { access_token: string; token_type?: string } | undefined | Promise<{ access_token: string; token_type?: string } | undefined>;
  /** A5: the v2 SDK's DPoP session for this client, if it uses DPoP (`OAuthClientProvider.dpop()`). */
  dpop?(): DpopSessionLike | undefined | Promise<DpopSessionLike | undefined>;
}

export interface HttpConfig {
  url: URL;
  /** The caller's `requestInit.signal`: aborting it ends every request of the transport. */
  signal: AbortSignal | undefined;
  /** For the OAuth flow, which needs real `Response`s: the caller's fetch or the global one. */
  fetch: FetchLike;
  /** For the transport's own requests: fetch or the Node client (H11). */
  send: HttpSend;
  /** The caller's `requestInit`, without headers and signal (those are the transport's). */
  init: RequestInit;
  headers: BaseHeaders;
  tokens: TokenSource | undefined;
  /**
   * A5: where a DPoP-bound token's proofs come from: the v2 provider's `dpop()`, or the `dpop`
   * option (1.x). Undefined: every token goes out as Bearer.
   */
  dpop: DpopSource | undefined;
  /** A3: 'same-origin' follows a redirect only within the origin; 'follow' leaves redirects to fetch. */
  redirectPolicy: 'same-origin' | 'follow';
  /** N7: a request was sent again on a new connection (see `RequestControl.resent`). */
  resent?: ((cause: Error, body: string | undefined) => void) | undefined;
}

const maxRedirects = 5;

/** Same scheme, host and port; or http → https on the same host with default ports (as the SDK allows). */
function isWithinOrigin(from: URL, to: URL): boolean {
  if (from.protocol === to.protocol && from.hostname === to.hostname && from.port === to.port) return true;
  return from.hostname === to.hostname && from.protocol === 'http:' && from.port === '' && to.protocol === 'https:' && to.port === '';
}

/** A redirect's status (the ones a `Location` is followed for). */
function isRedirectStatus(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** Where a redirect response points, if it is one. */
export function redirectTarget(response: HttpResponse, from: URL): URL | undefined {
  if (!isRedirectStatus(response.status)) return undefined;
  const location = response.headers.get('location');
  if (location === null) return undefined;
  try {
    return new URL(location, from);
  } catch {
    return undefined;
  }
}

/** A response whose body may still be read; `release()` aborts it and unlinks it from the lifetime. */
export interface Exchange {
  response: HttpResponse;
  /** The request is finished with: unlink it (its body was read or cancelled). */
  release(): void;
  /** Stop it now: the underlying fetch and body are aborted. */
  abort(): void;
  /** Hands it to a new owner (a stream reader): the calling actor's signal no longer aborts it, nor is it kept. */
  detach(): void;
  /** An event-stream body handed on (a reader's `OpenStream`): releasing it releases this exchange. */
  stream(body: ResponseBody): OpenStream;
}

/**
 * One request's exchange (H10): its link to the lifetime's requests and to the calling actor's
 * signal (an EventListener object: `handleEvent`). Methods on the prototype, not three closures
 * over one context per request, which a held stream kept for the session's life (issue 44).
 */
class LinkedExchange implements Exchange {
  response!: HttpResponse;
  private settled = false;
  constructor(
    private readonly control: RequestControl,
    private readonly inFlight: Set<RequestControl>,
    /** Dropped once detached: a held stream would otherwise keep its finished actor's signal alive. */
    private signal: AbortSignal | undefined,
  ) {}

  release(): void {
    if (this.settled) return;
    this.settled = true;
    this.inFlight.delete(this.control);
    this.detach();
  }

  abort(): void {
    if (this.settled) return;
    this.release();
    this.control.abort();
  }

  detach(): void {
    this.signal?.removeEventListener('abort', this);
    this.signal = undefined;
  }

  /** The calling actor's signal aborted. */
  handleEvent(): void {
    this.abort();
  }

  stream(body: ResponseBody): OpenStream {
    return new ExchangeStream(body, this);
  }
}

/** An event-stream body and the exchange it came with (`OpenStream`); the exchange is private, so an inspector sees only the body. */
class ExchangeStream implements OpenStream {
  readonly #exchange: Exchange;
  constructor(
    readonly body: ResponseBody,
    exchange: Exchange,
  ) {
    this.#exchange = exchange;
  }

  release(): void {
    this.#exchange.release();
  }
}

/**
 * One request. Every field is always present, in this order, at each call site: specs of one
 * shape keep the code that reads them optimized (bench/README.md, "Code shapes").
 */
export interface RequestSpec {
  method: 'POST' | 'GET' | 'DELETE';
  /** Another URL than the endpoint (the legacy transport's message endpoint). */
  url: URL | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  lastEventId: string | undefined;
  /** E2, E3: per-request headers (the caller's and those derived from the body); never a reserved one. */
  headers: Readonly<Record<string, string>> | undefined;
  body: string | undefined;
  /** The calling actor's signal: stopping the actor aborts the request while it is owned by it. */
  signal: AbortSignal | undefined;
  /**
   * The request's own abort handle, given by an owner that aborts it directly (the data plane's
   * calls, the DELETE's timeout): no listener is added anywhere for it. Without one, the client
   * makes one.
   */
  control: RequestControl | undefined;
}

/**
 * Every HTTP exchange of one transport. Each request gets its own AbortController, linked to the
 * transport's lifetime while it runs and unlinked when it settles (H10): nothing piles up on a
 * shared signal.
 */
export class HttpClient {
  /** Ended: no request starts until the next `begin()`. */
  private ended = false;
  /** The requests, streams and bodies of this lifetime still running. */
  private inFlight = new Set<RequestControl>();
  /** Removes this lifetime's one listener from the caller's signal. */
  private unlinkOuter: (() => void) | undefined;
  /** A5: the DPoP module, loaded with the first DPoP-bound token, and the `dpop` option's session. */
  private dpop: Promise<typeof import('./dpop.js')> | undefined;
  private dpopSession: DpopSessionLike | undefined;

  constructor(private readonly config: HttpConfig) {}

  get url(): URL {
    return this.config.url;
  }

  /** A new lifetime for a new start; the previous one stays ended. */
  begin(): void {
    if (this.ended) {
      this.ended = false;
      this.inFlight = new Set();
    }
    const outer = this.config.signal;
    if (outer === undefined || this.unlinkOuter !== undefined) return;
    if (outer.aborted) {
      this.end(outer.reason);
      return;
    }
    // One listener per lifetime on the caller's signal, never one per request (H10).
    const onAbort = () => {
      this.unlinkOuter = undefined;
      this.end(outer.reason);
    };
    outer.addEventListener('abort', onAbort, { once: true });
    this.unlinkOuter = () => {
      outer.removeEventListener('abort', onAbort);
    };
  }

  /**
   * Aborts every request, stream and body still running in this lifetime. The reason is made
   * only when something is still running (an error costs its stack; most closes have none).
   */
  end(reason?: unknown): void {
    this.ended = true;
    this.unlinkOuter?.();
    this.unlinkOuter = undefined;
    if (this.inFlight.size === 0) return;
    const why = reason ?? new TransportClosedError('transport closed');
    for (const control of this.inFlight) control.abort(why);
    this.inFlight.clear();
  }

  /**
   * One request with its own abort handle (H10): kept in the lifetime's set while it runs, so
   * ending the lifetime aborts it, and no listener is ever added to a shared signal. `release()`
   * only unlinks a request that finished normally (aborting one would cost a DOMException for
   * nothing); stopping the calling actor aborts it.
   */
  async request(spec: RequestSpec): Promise<Exchange> {
    if (this.ended) throw new TransportClosedError('transport closed');
    const control = spec.control ?? new RequestControl();
    control.resent = this.config.resent;
    this.inFlight.add(control);
    const exchange = new LinkedExchange(control, this.inFlight, spec.signal);
    if (spec.signal !== undefined) {
      spec.signal.addEventListener('abort', exchange, { once: true });
      if (spec.signal.aborted) exchange.abort();
    }
    try {
      const headers = this.headersFor(spec);
      // Only an auth provider makes building headers asynchronous (its token); otherwise no await.
      const send = this.config.tokens === undefined ? this.config.send : await this.addToken(headers, this.config.tokens);
      // Copied with Object.assign, then set, not a spread followed by more fields (bench/README.md, "Code shapes").
      const init: RequestInit = Object.assign({}, this.config.init);
      init.method = spec.method;
      init.headers = headers;
      if (spec.body !== undefined) init.body = spec.body;
      // A3: `init` is this request's own copy, so 'manual' is set on it here (not on a second copy),
      // and only a redirect status goes on to be followed: no closure and no `then` per request.
      const url = spec.url ?? this.config.url;
      const follows = this.followsHere(init);
      if (follows) init.redirect = 'manual';
      let response = await send(url, init, control);
      if (follows && isRedirectStatus(response.status)) response = await this.follow(url, response, 0, init, send, control);
      exchange.response = response;
      return exchange;
    } catch (error) {
      exchange.release();
      throw error;
    }
  }

  /**
   * A3: with 'same-origin', redirects are followed here, and only within the request's origin
   * and method; a redirect elsewhere is returned unfollowed, so no credential or session ID
   * ever crosses origins. `requestInit.redirect` of 'error' or 'manual' is passed through.
   */
  fetchWithPolicy<R extends HttpResponse>(
    url: URL,
    init: RequestInit,
    fetchFn: (url: URL, init: RequestInit, control?: RequestControl) => Promise<R>,
    control?: RequestControl,
  ): Promise<R> {
    if (!this.followsHere(init)) return fetchFn(url, init, control);
    const manual: RequestInit = Object.assign({}, init);
    manual.redirect = 'manual';
    return fetchFn(url, manual, control).then((response) => this.follow(url, response, 0, manual, fetchFn, control));
  }

  /** A3: redirects are followed here (not by the sender): the 'same-origin' policy, unless `redirect` says 'error' or 'manual'. */
  private followsHere(init: RequestInit): boolean {
    return this.config.redirectPolicy !== 'follow' && init.redirect !== 'error' && init.redirect !== 'manual';
  }

  /** A3: follows `response` when it redirects within the origin and method (`manual` is sent with redirect 'manual'). */
  private async follow<R extends HttpResponse>(
    from: URL,
    response: R,
    hops: number,
    manual: RequestInit,
    fetchFn: (url: URL, init: RequestInit, control?: RequestControl) => Promise<R>,
    control: RequestControl | undefined,
  ): Promise<R> {
    const target = redirectTarget(response, from);
    if (target === undefined || hops >= maxRedirects) return response;
    const method = (manual.method ?? 'GET').toUpperCase();
    const keepsMethod = response.status === 307 || response.status === 308 || method === 'GET' || method === 'HEAD';
    const addsUserinfo =
      (target.username !== '' || target.password !== '') && (target.username !== from.username || target.password !== from.password);
    if (!keepsMethod || addsUserinfo || !isWithinOrigin(from, target)) return response;
    discardBody(response);
    return this.follow(target, await fetchFn(target, manual, control), hops + 1, manual, fetchFn, control);
  }

  /** H9, A1: the fetch the SDK's OAuth flow uses: the caller's fetch, requestInit and redirect policy. */
  readonly authFetch: FetchLike = (url, init) => this.authFetchFor(undefined)(url, init);

  /**
   * The same, ended by `signal`: the authorizing actor's, so that leaving `authorizing` (close)
   * stops the flow. finishAuth() passes none: it runs after the SDK Client closed the transport.
   */
  authFetchFor(signal: AbortSignal | undefined): FetchLike {
    return (url, init) => {
      const headers = { ...this.config.headers.custom, ...Object.fromEntries(new Headers(init?.headers).entries()) };
      const signals = [signal, init?.signal ?? undefined].filter((s): s is AbortSignal => s !== undefined);
      const merged = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
      return this.fetchWithPolicy(
        new URL(url),
        { ...this.config.init, ...init, headers, ...(merged ? { signal: merged } : {}) },
        this.config.fetch,
      );
    };
  }

  private headersFor(spec: RequestSpec): Record<string, string> {
    const base = this.config.headers;
    const headers: Record<string, string> = Object.assign({}, base.custom);
    if (spec.headers !== undefined) Object.assign(headers, spec.headers);
    if (spec.method === 'POST') {
      headers['content-type'] = 'application/json';
      headers.accept = base.postAccept;
    } else if (spec.method === 'GET') {
      headers.accept = base.getAccept;
    }
    if (spec.sessionId !== undefined) headers['mcp-session-id'] = spec.sessionId;
    if (spec.protocolVersion !== undefined) headers['mcp-protocol-version'] = spec.protocolVersion;
    if (spec.lastEventId !== undefined) headers['last-event-id'] = spec.lastEventId;
    return headers;
  }

  /**
   * The provider's token: Bearer, or (A5) a `token_type: DPoP` token with DPoP configured, which
   * the returned sender presents with a fresh proof on each request it sends.
   */
  private async addToken(headers: Record<string, string>, source: TokenSource): Promise<HttpSend> {
    const tokens = await source.tokens();
    if (tokens === undefined) return this.config.send;
    const given = this.config.dpop;
    if (given !== undefined && tokens.token_type?.toLowerCase() === 'dpop') {
      // Loaded with the first DPoP-bound token (its code and `jose` stay out of a transport without it).
      const { dpopSender, sessionOf } = await (this.dpop ??= import('./dpop.js'));
      const session = typeof given === 'function' ? await given() : (this.dpopSession ??= sessionOf(given));
      if (session !== undefined) return dpopSender(this.config.send, session, tokens.access_token, { discardBody });
    }
    headers.authorization = `Bearer ${tokens.access_token}`;
    return this.config.send;
  }
}
