import type { InspectOption } from './redaction.js';
import {
  DEFAULT_LEGACY_ENDPOINT_TIMEOUT,
  type ChartOptions,
  type ReconnectionOptions,
  type ReconnectionScheduler,
  type RestoredSession,
} from '../machines/types.js';
import { defaultReconnection } from '../machines/backoff.js';
import type { DpopOption } from './http/dpop-option.js';
import type { FetchLike, PemInput, TlsOptions, TokenSource } from './http/client.js';
import type { SdkAuthOption } from './http/auth.js';
import type { NetworkSignal } from './network.js';
import type { SavedTransportState } from './saved-state.js';
import type { ExchangeOptions } from './http/exchanges.js';
import { InvalidOptionsError } from '../machines/errors.js';

import type { TelemetryOption } from './telemetry/option.js';
import { aBoolean, aCount, aDuration, aFunction, anObject, aString, issuesOf, shape } from './validation.js';
import { isRecord } from './record.js';
import * as z from './validation.js';

/**
 * Options of `StreamableHTTPClientTransport`. The first group has the names and meanings of the
 * official SDK transport's options; the rest are this transport's own.
 */
export interface StreamableHTTPClientTransportOptions {
  /**
   * OAuth: the SDK's `OAuthClientProvider` (or anything with `tokens()`). Its access token goes on
   * every request as `Authorization: Bearer …`; on 401, or 403 `insufficient_scope`, the SDK's own
   * `auth()` flow runs and the request is sent again once. Needs `@modelcontextprotocol/sdk`.
   */
  authProvider?: TokenSource | undefined;
  /**
   * A5, DPoP (RFC 9449) for the 1.x SDK, whose providers have no `dpop()`: `true` (a fresh,
   * non-extractable ES256 key pair), a key pair `{ privateKey, publicKey, alg? }` (the v2 SDK's
   * `DpopKeyPair` is one), or a v2 `DpopSession`. A provider token with `token_type: "DPoP"` then
   * goes out as `Authorization: DPoP …` with a fresh proof on every request; a Bearer token stays
   * Bearer. Under the v2 SDK the provider's own `dpop()` is used and this is not needed.
   */
  dpop?: DpopOption | undefined;
  /**
   * How redirects are followed. `'same-origin'` (default): only within the request's origin and
   * method, so a token or session ID never reaches another origin. `'follow'`: left to `fetch`.
   */
  redirectPolicy?: 'same-origin' | 'follow' | undefined;
  /** How many times one request may step up its OAuth scope after 403 `insufficient_scope`. Default 1. */
  maxStepUpRetries?: number | undefined;
  /**
   * Headers and fetch settings for every POST, GET and DELETE. The transport's own headers
   * (`Content-Type`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`, and `Authorization`
   * with an `authProvider`) win; `Accept` types are appended. Aborting `signal` ends every request
   * of the transport, as `close()` does.
   */
  requestInit?: RequestInit | undefined;
  /** The `fetch` used for every request, OAuth included. Default: the global `fetch`. */
  fetch?: FetchLike | undefined;
  /**
   * Backoff for streams that reconnect (a broken POST stream resuming, the standalone GET stream).
   * A partial object is merged with the defaults; a server's `retry:` value replaces the delay for
   * that stream.
   */
  reconnectionOptions?: Partial<ReconnectionOptions> | undefined;
  /**
   * Takes over each wait before a reconnect: `(reconnect, delay, attempt) => cancel?`. Call
   * `reconnect` when it is time (e.g. when the page is visible again); return a function that
   * cancels the wait, if you can. The name and shape of the SDK's next major version.
   */
  reconnectionScheduler?: ReconnectionScheduler | undefined;
  /** Continue this existing session instead of initializing a new one. */
  sessionId?: string | undefined;
  /** The protocol version a session continued with `sessionId` speaks (the v2 SDK's option): sent from the first request on. */
  protocolVersion?: string | undefined;
  /** With the v2 SDK's OAuth flow: skip the RFC 8414 `issuer` check of the metadata (the v2 SDK's option). Security-weakening. */
  skipIssuerMetadataValidation?: boolean | undefined;
  /**
   * With an `authProvider` in a bundled app (a browser): the SDK's OAuth functions, e.g.
   * `{ auth, UnauthorizedError }` imported from `@modelcontextprotocol/client`, or a function that
   * loads `@modelcontextprotocol/sdk/client/auth.js` with `import()`. Without it the transport loads
   * the SDK by name when it first authorizes, which Node resolves and a bundle cannot (this
   * package never names an optional peer where a bundler would try to resolve it).
   */
  sdkAuth?: SdkAuthOption | undefined;

  /** Open the standalone GET stream (server-to-client messages outside any request) once the session is up. Default true. */
  standaloneStream?: boolean | undefined;
  /**
   * Send `DELETE` for the session on `close()`. Default true (the SDK transport never does). Set
   * false for a session you mean to resume later with its `sessionId`.
   */
  terminateOnClose?: boolean | undefined;
  /** The longest wait for the `DELETE` on `close()`, in ms. Default 1,000 (U13: a host that closes per request or per run does not wait long on a frozen server). */
  deleteTimeout?: number | undefined;
  /**
   * What happens when the server answers 404 for the session (it forgot it): `'reinitialize'`
   * (default) starts a new session with the same `initialize` request and sends the failed request
   * again (F3: a failed re-initialize is retried with the backoff, then the transport waits, F4);
   * `'fail'` fails the transport with `SessionExpiredError`.
   */
  sessionRecovery?: 'reinitialize' | 'fail' | undefined;
  /**
   * When `initialize` is answered 400, 404 or 405, speak the older HTTP+SSE transport
   * (protocol 2024-11-05) instead: GET the URL, wait for its `endpoint` event, POST there. Default true.
   */
  legacyFallback?: boolean | undefined;
  /**
   * In the 2026-07-28 era, which has no resumption: `'reads'` sends a read-only request (`…/list`,
   * `resources/read`, `prompts/get`, `completion/complete`) whose response stream was cut once more,
   * under a new id, and answers the caller under its own. Default: the call fails at once.
   */
  reissue?: 'reads' | undefined;
  /** Treat lenient cases as errors, e.g. a `200` (rather than `202`) to a notification. Default false. */
  strict?: boolean | undefined;
  /** A stream that sends nothing, not even a keep-alive comment, for this many ms counts as dropped and is resumed. Default: off. */
  streamIdleTimeout?: number | undefined;
  /** The largest message accepted, in bytes: one server-sent event, or a JSON answer after decompression; a larger one fails with `MessageTooLargeError`. Default 16 MiB. */
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
  /** With the older HTTP+SSE transport: the longest wait for the server's `endpoint` event before connecting fails, in ms. Default 10,000. */
  legacyEndpointTimeout?: number | undefined;
  /**
   * An XState inspection observer (`createJsonlRecorder(…)`, an inspector of `@statelyai/inspect`),
   * or `{ observer, bodies: true }` to let it see message bodies. X3: it is handed redacted events
   * only: session IDs as fingerprints, no credential, messages as method and id unless `bodies`.
   */
  inspect?: InspectOption | undefined;
  /**
   * O1: OpenTelemetry traces and metrics after the MCP semantic conventions: a CLIENT span per
   * request, its HTTP attempts as child spans, recoveries as span events, trace context in
   * `params._meta`, and the `mcp.client.operation.duration` / `mcp.client.session.duration`
   * histograms. `true` uses the global providers of `@opentelemetry/api` (an optional peer
   * dependency, loaded by `start()` only when this is set); or give `{ tracer, meter }`.
   * `sessionId: 'raw'` records the session ID itself; by default it is a fingerprint. Default: off,
   * and nothing is loaded (O2).
   */
  telemetry?: TelemetryOption | undefined;
  /**
   * N1, on Node's own HTTP client (no `fetch` given): the proxy every request goes through, an
   * `http:` or `https:` URL such as `'http://proxy.internal:3128'` (with `user:password@` for
   * Basic proxy authorization). https endpoints are reached through a CONNECT tunnel, http ones
   * as absolute-form requests. Default: `HTTPS_PROXY` / `HTTP_PROXY` (either case) from the
   * environment, except for the hosts in `NO_PROXY`; `false`: no proxy, whatever the environment
   * says. Given (a URL or `false`), it also wins over a global undici dispatcher.
   */
  proxy?: string | URL | false | undefined;
  /**
   * N2, on Node's own HTTP client (no `fetch` given): TLS for https endpoints: `ca` to trust a
   * private or self-signed certificate, `cert` and `key` for mutual TLS, `servername` to verify
   * (and send as SNI) another name than the URL's host.
   */
  tls?: TlsOptions | undefined;
  /**
   * N3: keep the cookies the server sets (`Set-Cookie`, e.g. a load balancer's affinity cookie)
   * and send them back on every later POST, GET and DELETE to the endpoint's origin, until the
   * session ends (close, `terminateSession()`, failure, or a session the server forgot). Default
   * true on Node, the user's `fetch` included; `false` sends no cookie but the caller's own. In a
   * browser the browser keeps cookies (`requestInit.credentials`), and this option does nothing.
   */
  cookies?: boolean | undefined;
}

function isPem(value: unknown): boolean {
  const one = (item: unknown) => typeof item === 'string' || item instanceof Uint8Array;
  return one(value) || (Array.isArray(value) && value.length > 0 && value.every(one));
}

const pem = () => shape<PemInput>('PEM text or bytes, or a list of them', isPem);

/** N1: an `http:` or `https:` proxy URL (a string or a URL), or `false`. */
function isProxy(value: unknown): boolean {
  if (value === false) return true;
  if (typeof value !== 'string' && !(value instanceof URL)) return false;
  const url = URL.canParse(value) ? new URL(value) : undefined;
  return url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:');
}

/**
 * U9: the shape of every option, for the constructor's check. One line per option: a new option
 * adds its line here (the type below makes a missing one a compile error). Unknown keys pass, as
 * with the SDK's transport; `restoreState` is checked as an object here and in full by
 * `parseSavedState`.
 */
function optionSchemas() {
  return {
    authProvider: z.looseObject({ tokens: aFunction() }, 'an OAuthClientProvider (an object with tokens())'),
    dpop: shape<DpopOption>(
      'true, a key pair { privateKey, publicKey } of CryptoKeys, or a DpopSession',
      (v) =>
        v === true ||
        (isRecord(v) && typeof v.privateKey === 'object' && typeof v.publicKey === 'object') ||
        (typeof v === 'object' && v !== null && typeof (v as { buildProof?: unknown }).buildProof === 'function'),
    ),
    redirectPolicy: z.literal(['same-origin', 'follow'], "'same-origin' or 'follow'"),
    maxStepUpRetries: aCount(0, 'a whole number, 0 or more'),
    requestInit: anObject('a RequestInit object'),
    fetch: aFunction('a fetch function'),
    reconnectionOptions: z.object(
      {
        initialReconnectionDelay: z.optional(aDuration()),
        reconnectionDelayGrowFactor: z.optional(
          z.number('a number, 1 or more').check(z.refine((n: number) => n >= 1, 'a number, 1 or more')),
        ),
        maxReconnectionDelay: z.optional(aDuration()),
        maxRetries: z.optional(
          shape<number>(
            'a whole number, 0 or more (or Infinity)',
            (n) => typeof n === 'number' && n >= 0 && (Number.isInteger(n) || n === Infinity),
          ),
        ),
        jitter: z.optional(aBoolean()),
      },
      'an object of reconnection options',
    ),
    reconnectionScheduler: aFunction('a function (reconnect, delay, attempt) => cancel?'),
    sessionId: aString(),
    protocolVersion: aString(),
    skipIssuerMetadataValidation: aBoolean(),
    sdkAuth: shape<SdkAuthOption>(
      "the SDK's OAuth functions ({ auth, UnauthorizedError }), or a function that loads them",
      (v) => typeof v === 'function' || (typeof v === 'object' && v !== null && typeof (v as { auth?: unknown }).auth === 'function'),
    ),
    standaloneStream: aBoolean(),
    terminateOnClose: aBoolean(),
    deleteTimeout: aDuration(),
    sessionRecovery: z.literal(['reinitialize', 'fail'], "'reinitialize' or 'fail'"),
    legacyFallback: aBoolean(),
    reissue: z.literal('reads', "'reads'"),
    strict: aBoolean(),
    streamIdleTimeout: aDuration(),
    maxMessageBytes: aCount(1, 'a whole number of bytes, 1 or more'),
    restoreState: anObject('a saved transport state (what saveState() returned)'),
    network: shape<NetworkSignal | false>(
      'false or a network signal ({ online, subscribe })',
      (v) => v === false || (isRecord(v) && typeof v.online === 'boolean' && typeof v.subscribe === 'function'),
    ),
    legacyEndpointTimeout: aDuration(),
    inspect: shape<InspectOption>(
      'an inspection observer (an object or a function), or { observer, bodies }',
      (v) => typeof v === 'function' || (typeof v === 'object' && v !== null && !Array.isArray(v)),
    ),
    telemetry: shape<TelemetryOption>(
      'true, or { tracer, meter, sessionId }',
      (v) => v === true || (isRecord(v) && (v.sessionId === undefined || v.sessionId === 'fingerprint' || v.sessionId === 'raw')),
    ),
    proxy: shape<string | URL | false>("an http: or https: proxy URL (e.g. 'http://proxy.internal:3128'), or false", isProxy),
    tls: z.object(
      {
        ca: z.optional(pem()),
        cert: z.optional(pem()),
        key: z.optional(pem()),
        servername: z.optional(z.string('a host name').check(z.refine((name: string) => name !== '', 'a host name'))),
      },
      'an object { ca, cert, key, servername }',
    ),
    cookies: aBoolean(),
  } satisfies { [K in keyof Required<StreamableHTTPClientTransportOptions>]: z.ZodMiniType };
}

/**
 * U9: the endpoint, checked before anything starts: an absolute `http:` or `https:` URL, else
 * `InvalidOptionsError` naming the scheme it got (never the URL, which may carry a token).
 */
export function checkEndpoint(url: unknown): URL {
  const parsed = url instanceof URL ? url : typeof url === 'string' && URL.canParse(url) ? new URL(url) : undefined;
  if (parsed !== undefined && (parsed.protocol === 'http:' || parsed.protocol === 'https:')) return new URL(parsed.href);
  const received =
    parsed !== undefined
      ? `a ${parsed.protocol} URL`
      : typeof url === 'string'
        ? 'a string that is not an absolute URL'
        : `a ${typeof url}`;
  throw new InvalidOptionsError([{ field: 'url', expected: 'an absolute http: or https: URL', received }], 'invalid endpoint');
}

let optionsSchema: z.ZodMiniType | undefined;

/** U9: throws `InvalidOptionsError` naming each option of the wrong shape (never its value). */
export function checkOptions(options: unknown): asserts options is StreamableHTTPClientTransportOptions {
  if (optionsSchema === undefined) {
    const shapes = optionSchemas();
    optionsSchema = z.looseObject(
      Object.fromEntries(Object.entries(shapes).map(([key, schema]) => [key, z.optional(schema)])),
      'an options object',
    );
  }
  const issues = issuesOf(optionsSchema, options, '').map((issue) => (issue.field === '' ? { ...issue, field: 'options' } : issue));
  if (issues.length > 0) throw new InvalidOptionsError(issues);
}

export function resolveChartOptions(
  options: StreamableHTTPClientTransportOptions,
  restore?: { sessionId: string | undefined; restored: RestoredSession },
  /** W2: the host has a network signal to watch. */
  watchNetwork = true,
): ChartOptions {
  const given: Partial<ReconnectionOptions> = options.reconnectionOptions ?? {};
  const reconnection: ReconnectionOptions = {
    initialReconnectionDelay: given.initialReconnectionDelay ?? defaultReconnection.initialReconnectionDelay,
    reconnectionDelayGrowFactor: given.reconnectionDelayGrowFactor ?? defaultReconnection.reconnectionDelayGrowFactor,
    maxReconnectionDelay: given.maxReconnectionDelay ?? defaultReconnection.maxReconnectionDelay,
    maxRetries: given.maxRetries ?? defaultReconnection.maxRetries,
    jitter: given.jitter ?? defaultReconnection.jitter,
  };
  return sharedChartOptions({
    reconnection,
    standaloneStream: options.standaloneStream ?? true,
    terminateOnClose: options.terminateOnClose ?? true,
    deleteTimeout: options.deleteTimeout ?? 1_000,
    sessionRecovery: options.sessionRecovery ?? 'reinitialize',
    strict: options.strict ?? false,
    authorization: options.authProvider !== undefined,
    legacyFallback: options.legacyFallback ?? true,
    maxStepUpRetries: options.maxStepUpRetries ?? 1,
    reissue: options.reissue,
    legacyEndpointTimeout: options.legacyEndpointTimeout ?? DEFAULT_LEGACY_ENDPOINT_TIMEOUT,
    streamIdleTimeout: options.streamIdleTimeout,
    maxMessageBytes: options.maxMessageBytes ?? 16 * 1024 * 1024,
    sessionId: restore?.sessionId ?? options.sessionId,
    // A saved state wins; else the v2 SDK's `protocolVersion` option goes with a given session.
    restored:
      restore?.restored ??
      (options.protocolVersion === undefined
        ? undefined
        : { protocolVersion: options.protocolVersion, standaloneLastEventId: undefined, initializeRequest: undefined }),
    reconnectionScheduler: options.reconnectionScheduler,
    random: Math.random,
    now: Date.now,
    watchNetwork,
  });
}

/** The chart options last resolved: the next transport resolving the same values gets this object. */
let lastChartOptions: ChartOptions | undefined;

/**
 * One object for every transport whose options resolve to the same values (most use the
 * defaults): the chart only reads its options, and each chart's context keeps them for the
 * transport's life (~0.3 KiB per transport: bench/README.md, "Code shapes").
 */
function sharedChartOptions(fresh: ChartOptions): ChartOptions {
  const last = lastChartOptions;
  if (last !== undefined && sameChartOptions(last, fresh)) return last;
  lastChartOptions = fresh;
  return fresh;
}

function sameChartOptions(a: ChartOptions, b: ChartOptions): boolean {
  return sameFields(a, b, (key) => key === 'reconnection') && sameFields(a.reconnection, b.reconnection);
}

/** The same keys with the same values (`Object.is`), but those `skip` names. */
function sameFields<T extends object>(a: T, b: T, skip?: (key: string) => boolean): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (skip?.(key) === true) continue;
    if (!(key in b) || !Object.is((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** What the I/O actors need of the options. */
export function resolveExchangeOptions(options: StreamableHTTPClientTransportOptions, chart: ChartOptions): ExchangeOptions {
  return {
    strict: chart.strict,
    maxMessageBytes: chart.maxMessageBytes,
    deleteTimeout: chart.deleteTimeout,
  };
}
