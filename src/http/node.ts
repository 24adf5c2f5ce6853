/// <reference types="node" />
/**
 * H11: the Node HTTP client used when the caller passes no `fetch`: `node:http`/`node:https`
 * with one shared keep-alive agent each. It answers with the part of a WHATWG `Response` the
 * exchanges read (`HttpResponse`), so status handling, body limits and error classification stay
 * in one place above it, the same for both clients. Only the Node entry (`src/node.ts`) imports
 * this module; the browser build never sees it (U5).
 */
import http, { type IncomingMessage } from 'node:http';
import type * as Https from 'node:https';
import type { Readable } from 'node:stream';
import type * as Zlib from 'node:zlib';
import type { ChunkReader, ChunkSource } from '../../machines/types.js';
import type { HttpResponse, HttpSend, RequestControl, SenderOptions, TlsOptions } from './client.js';
import { InvalidOptionsError } from '../../machines/errors.js';

/** N1, N2: what the Node client needs of the options besides `requestInit`. */
export interface NodeClientOptions {
  /** undefined: the environment's `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`; false: no proxy; a URL: every request through it. */
  proxy: URL | false | undefined;
  tls: TlsOptions | undefined;
}

/**
 * An idle socket is closed after 4 s (as fetch's dispatcher does), or sooner when the server's
 * `Keep-Alive: timeout=` says so: before Node's server default of 5 s closes it under a request.
 */
const keepAlive = { keepAlive: true, timeout: 4_000 };
const agents: { 'http:': http.Agent; 'https:': Https.Agent | undefined } = {
  'http:': new http.Agent(keepAlive),
  'https:': undefined,
};

/**
 * `node:https` (with TLS, ~20 ms to load) and `node:zlib` load on first use: an https URL, a
 * compressed answer. Neither is in the cold start of a client that needs neither.
 */
let https: typeof Https | undefined;
let zlib: typeof Zlib | undefined;

async function loadHttps(): Promise<typeof Https> {
  https ??= (await import('node:https')).default;
  agents['https:'] ??= new https.Agent(keepAlive);
  return https;
}

async function loadZlib(): Promise<typeof Zlib> {
  zlib ??= (await import('node:zlib')).default;
  return zlib;
}

/**
 * N1: the proxy agents (`https-proxy-agent`: CONNECT tunnels for https; `http-proxy-agent`:
 * absolute-form requests for http), loaded only when a request goes through a proxy. One agent
 * per proxy and scheme, shared like the direct agents, so tunnels are kept alive and reused.
 */
type ProxyAgentClass = new (proxy: URL, options: http.AgentOptions) => http.Agent;
interface ProxyModules {
  https: { HttpsProxyAgent: ProxyAgentClass };
  http: { HttpProxyAgent: ProxyAgentClass };
}
let proxyModules: ProxyModules | undefined;
const proxyAgents = new Map<string, http.Agent>();

// A name in a variable (as src/live.ts): the CommonJS build leaves these ESM-only packages to Node's loader.
// The comments: webpack would make a context module of the expression and warn 'Critical dependency'; Vite before 8 warns too.
const load = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

async function loadProxyAgents(): Promise<void> {
  try {
    const [httpsModule, httpModule] = (await Promise.all([load('https-proxy-agent'), load('http-proxy-agent')])) as [
      ProxyModules['https'],
      ProxyModules['http'],
    ];
    proxyModules ??= { https: httpsModule, http: httpModule };
  } catch (cause) {
    // Fails the request as a network failure would, saying what is missing.
    throw new TypeError('fetch failed: a proxy is set, and https-proxy-agent and http-proxy-agent could not be loaded', { cause });
  }
}

/** The agent for requests to `scheme` URLs through `proxy`; the modules must be loaded. */
function proxyAgent(modules: ProxyModules, proxy: URL, scheme: string): http.Agent {
  const key = `${scheme}${proxy.href}`;
  let agent = proxyAgents.get(key);
  if (agent === undefined) {
    agent = scheme === 'https:' ? new modules.https.HttpsProxyAgent(proxy, keepAlive) : new modules.http.HttpProxyAgent(proxy, keepAlive);
    proxyAgents.set(key, agent);
  }
  return agent;
}

/** N1: where a transport's requests go, by the URL's scheme: through a proxy, or direct (undefined). */
type ProxyFor = (url: URL) => URL | undefined;

const noProxy: ProxyFor = () => undefined;

/** A variable in lower case, else in upper case (as curl reads them); an empty one is unset. */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  for (const value of [env[name.toLowerCase()], env[name.toUpperCase()]]) {
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** An environment proxy as a URL (a bare `host:port` is taken as http://); a value that is no URL is ignored, as curl ignores it. */
function envProxyUrl(value: string | undefined): URL | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A host as NO_PROXY entries name it: lower case, no IPv6 brackets, no trailing dot. */
function bareHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/**
 * N1: whether `NO_PROXY` exempts `url`, as curl and Go read it: `*` exempts every host; an entry
 * exempts its host and the host's subdomains (a leading `.` or `*.` is the same); `host:port`
 * only that port. IP addresses are compared as text (no CIDR ranges).
 */
function exempt(noProxyList: readonly string[], url: URL): boolean {
  const host = bareHost(url.hostname);
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  for (const raw of noProxyList) {
    if (raw === '*') return true;
    let entry = raw;
    let entryPort: string | undefined;
    const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(raw);
    if (bracketed !== null) [, entry = '', entryPort] = bracketed;
    // One colon is `host:port`; more are an IPv6 address without brackets.
    else if (raw.indexOf(':') !== -1 && raw.indexOf(':') === raw.lastIndexOf(':')) [entry = '', entryPort] = raw.split(':');
    if (entryPort !== undefined && entryPort !== port) continue;
    entry = bareHost(entry).replace(/^\*?\./, '');
    if (entry !== '' && (host === entry || host.endsWith(`.${entry}`))) return true;
  }
  return false;
}

/**
 * N1: a transport's proxy choice. An explicit `proxy` carries every request; `false`, none;
 * otherwise the environment as the transport was made: `HTTPS_PROXY` for https URLs,
 * `HTTP_PROXY` for http ones (lower case first, as curl reads them), unless `NO_PROXY` exempts
 * the host.
 */
function proxyChoice(option: URL | false | undefined, env: NodeJS.ProcessEnv): ProxyFor {
  if (option === false) return noProxy;
  if (option !== undefined) return () => option;
  const httpsProxy = envProxyUrl(envValue(env, 'https_proxy'));
  const httpProxy = envProxyUrl(envValue(env, 'http_proxy'));
  if (httpsProxy === undefined && httpProxy === undefined) return noProxy;
  const exemptions = (envValue(env, 'no_proxy') ?? '')
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return (url) => {
    const proxy = url.protocol === 'https:' ? httpsProxy : httpProxy;
    return proxy === undefined || exempt(exemptions, url) ? undefined : proxy;
  };
}

/** N2: the `node:tls` fields of the request options for an https URL, or none. */
function tlsFields(tls: TlsOptions | undefined): Https.RequestOptions | undefined {
  if (tls === undefined) return undefined;
  const fields: Https.RequestOptions = {};
  if (tls.ca !== undefined) fields.ca = tls.ca as Https.RequestOptions['ca'];
  if (tls.cert !== undefined) fields.cert = tls.cert as Https.RequestOptions['cert'];
  if (tls.key !== undefined) fields.key = tls.key as Https.RequestOptions['key'];
  if (tls.servername !== undefined) fields.servername = tls.servername;
  return fields;
}

/** What one transport's Node client adds to each request: its proxy choice (N1) and TLS settings (N2). */
interface NetSettings {
  proxyFor: ProxyFor;
  tls: Https.RequestOptions | undefined;
}

const direct: NetSettings = { proxyFor: noProxy, tls: undefined };

/** Where Node's fetch (and `undici`) keep the global dispatcher that `setGlobalDispatcher` sets. */
const dispatcherKey = Symbol.for('undici.globalDispatcher.1');
type WithDispatcher = Record<typeof dispatcherKey, unknown>;
/**
 * Node's own default dispatcher, known only when it was installed under our eyes: Node installs
 * it when its fetch module first loads, which touching `Headers` does. A dispatcher already set
 * before this module loaded may be a caller's (a proxy, custom TLS), so it is never taken for
 * the default: requests then go through fetch.
 */
function defaultDispatcher(): unknown {
  const global = globalThis as unknown as WithDispatcher;
  if (global[dispatcherKey] !== undefined) return undefined;
  // Reading the global loads Node's fetch module, which installs its default dispatcher.
  if (typeof globalThis.Headers !== 'function') return undefined;
  return global[dispatcherKey];
}
const nodeDefaultDispatcher = defaultDispatcher();

/** H11: a global dispatcher other than Node's default serves fetch only, so fetch must carry the request. */
function hasCustomDispatcher(): boolean {
  const current = (globalThis as unknown as WithDispatcher)[dispatcherKey];
  return nodeDefaultDispatcher === undefined || current !== nodeDefaultDispatcher;
}

/**
 * `requestInit` fields this client honours as Node's fetch does (it ignores `credentials`,
 * `mode`, `cache`, `keepalive` and `priority` too). Any other field set (`dispatcher`,
 * `integrity`, `referrer`, `redirect: 'error'`, …) makes the transport use fetch.
 */
const honoured = new Set(['credentials', 'mode', 'cache', 'keepalive', 'priority', 'redirect', 'method', 'body', 'headers', 'signal']);

function honours(init: RequestInit): boolean {
  for (const [key, value] of Object.entries(init)) {
    if (value === undefined || value === null) continue;
    if (!honoured.has(key)) return false;
    if (key === 'redirect' && value === 'error') return false;
  }
  return true;
}

/** Content codings fetch decodes, outermost last in the header. */
function decoder(zlib: typeof Zlib, coding: string): Zlib.Gunzip | Zlib.Inflate | Zlib.BrotliDecompress | undefined {
  // Flush as data arrives, as fetch does, so a compressed event stream is not held back.
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip(flush);
  if (coding === 'deflate') return zlib.createInflate(flush);
  if (coding === 'br') {
    return zlib.createBrotliDecompress({
      flush: zlib.constants.BROTLI_OPERATION_FLUSH,
      finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
    });
  }
  return undefined;
}

/**
 * A header as fetch's `Headers.get` gives it: every field of that name, joined with ", ". Read
 * from `rawHeaders`, which Node has already: `res.headers` builds an object of every header on
 * first use (bench/README.md, "Code shapes"), and keeps only the first of some repeated fields.
 */
function rawHeader(raw: readonly string[], name: string): string | null {
  const wanted = name.toLowerCase();
  let value: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i];
    const field = raw[i + 1];
    if (key === undefined || field === undefined || key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
    value = value === null ? field : `${value}, ${field}`;
  }
  return value;
}

/** The body as fetch gives it: decoded when every coding is known, else as sent. */
function decodedBody(res: IncomingMessage, method: string, zlib: typeof Zlib | undefined): Readable {
  const header = rawHeader(res.rawHeaders, 'content-encoding') ?? undefined;
  const status = res.statusCode ?? 0;
  if (header === undefined || zlib === undefined || method === 'HEAD' || [101, 204, 205, 304].includes(status)) return res;
  const codings = header
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity')
    .reverse();
  const decoders = codings.map((coding) => decoder(zlib, coding));
  if (decoders.length === 0 || decoders.some((d) => d === undefined)) return res;
  let out: Readable = res;
  for (const d of decoders as (Zlib.Gunzip | Zlib.Inflate | Zlib.BrotliDecompress)[]) {
    const from = out;
    from.on('error', (error) => {
      d.destroy(error);
    });
    out = from.pipe(d);
  }
  return out;
}

/** What ends a request: the transport's RequestControl, or (called as fetch) `init.signal`. */
interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** The one listener; returns its remover. */
  onAbort(listener: () => void): () => void;
}

/** An AbortSignal as an AbortSource (a request made without a RequestControl). */
function signalSource(signal: AbortSignal | null | undefined): AbortSource {
  const source = signal ?? new AbortController().signal;
  return {
    get aborted() {
      return source.aborted;
    },
    get reason(): unknown {
      const reason: unknown = source.reason;
      return reason;
    },
    onAbort(listener) {
      source.addEventListener('abort', listener, { once: true });
      return () => {
        source.removeEventListener('abort', listener);
      };
    },
  };
}

/** What fetch rejects with once its signal is aborted: the signal's reason. */
function abortReason(signal: AbortSource): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}

/** A body cut before its end fails as fetch's does: TypeError('terminated') with the cause. */
function terminated(cause: unknown): TypeError {
  return new TypeError('terminated', { cause });
}

const ignore = (): void => undefined;

class NodeResponse implements HttpResponse, ChunkSource {
  readonly type = 'basic';
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null; getSetCookie(): string[] };
  bodyUsed = false;
  private stream: ReadableStream<Uint8Array> | undefined;

  constructor(
    private readonly res: IncomingMessage,
    private readonly source: Readable,
    private readonly signal: AbortSource,
  ) {
    this.status = res.statusCode ?? 0;
    this.statusText = res.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status <= 299;
    // A socket that dies under a body nobody reads yet must not become an uncaught 'error'.
    res.on('error', ignore);
    if (source !== res) source.on('error', ignore);
    const raw = res.rawHeaders;
    this.headers = {
      get(name: string): string | null {
        return rawHeader(raw, name);
      },
      getSetCookie(): string[] {
        const fields: string[] = [];
        for (let i = 0; i + 1 < raw.length; i += 2) {
          if (raw[i]?.length === 10 && raw[i]?.toLowerCase() === 'set-cookie') fields.push(raw[i + 1] ?? '');
        }
        return fields;
      },
    };
  }

  /** The body chunk by chunk, as it arrives: what the transport reads (no web stream per answer: bench/README.md, "Code shapes"). */
  get chunks(): ChunkSource {
    return this;
  }

  read(reader: ChunkReader): { cancel(): void } {
    if (this.bodyUsed || this.stream !== undefined) {
      queueMicrotask(() => {
        reader.fail(new TypeError('Body is unusable: Body has already been read'));
      });
      return { cancel: ignore };
    }
    this.bodyUsed = true;
    const listening = this.listen(reader);
    return {
      cancel: () => {
        // As the web stream's cancel.
        if (listening.stop()) this.drainOrCut();
      },
    };
  }

  discard(): void {
    if (this.bodyUsed || this.stream !== undefined) return;
    this.bodyUsed = true;
    this.drainOrCut();
  }

  /** Made on first use only (the transport reads `chunks`). */
  get body(): ReadableStream<Uint8Array> {
    this.stream ??= this.webStream();
    return this.stream;
  }

  text(): Promise<string> {
    if (this.bodyUsed || this.stream !== undefined) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    this.bodyUsed = true;
    const source = this.source;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const fail = (error: unknown) => {
        reject(this.signal.aborted ? abortReason(this.signal) : terminated(error));
      };
      source.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
      });
      source.once('error', fail);
      this.res.once('aborted', () => {
        fail(new Error('aborted'));
      });
      source.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      });
    });
  }

  private webStream(): ReadableStream<Uint8Array> {
    const { source } = this;
    let listening: { stop(): boolean } | undefined;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        listening = this.listen({
          chunk: (chunk) => {
            this.bodyUsed = true;
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            if ((controller.desiredSize ?? 1) <= 0) source.pause();
          },
          end: () => {
            controller.close();
          },
          fail: (error) => {
            controller.error(error);
          },
        });
        source.pause();
      },
      pull: () => {
        source.resume();
      },
      cancel: () => {
        listening?.stop();
        this.bodyUsed = true;
        this.drainOrCut();
      },
    });
  }

  /**
   * Hands the body to `to` as it arrives: each chunk, then its end or what cut it (the signal's
   * reason once aborted, else fetch's TypeError('terminated')), once. `stop()` silences it and
   * says whether it was still running.
   */
  private listen(to: ChunkReader): { stop(): boolean } {
    const { res, source, signal } = this;
    let done = false;
    const fail = (error: unknown) => {
      if (done) return;
      done = true;
      to.fail(signal.aborted ? abortReason(signal) : terminated(error));
    };
    source.on('data', (chunk: Buffer) => {
      if (!done) to.chunk(chunk);
    });
    // \`on\`, not \`once\`: \`done\` already makes each fire once, and a held stream keeps no once-wrapper
    // (its state object and bound function, ~0.15 KiB each: bench/README.md, "Code shapes").
    source.on('end', () => {
      if (done) return;
      done = true;
      to.end();
    });
    source.on('error', fail);
    res.on('aborted', () => {
      fail(new Error('aborted'));
    });
    return {
      stop: () => {
        const running = !done;
        done = true;
        return running;
      },
    };
  }

  /** A body received in full is drained, so its socket returns to the pool; one still arriving (a stream) is cut, as fetch does. */
  private drainOrCut(): void {
    if (this.res.complete) this.source.resume();
    else this.res.destroy();
  }
}

/**
 * One request over the shared keep-alive agent (or the agent of its proxy, N1), answered as fetch
 * would answer it.
 */
function nodeRequest(url: URL, init: RequestInit, control: RequestControl | undefined, net: NetSettings): Promise<HttpResponse> {
  if (url.protocol === 'https:' && https === undefined) return loadHttps().then(() => nodeRequest(url, init, control, net));
  const proxy = net.proxyFor(url);
  if (proxy !== undefined && proxyModules === undefined) return loadProxyAgents().then(() => nodeRequest(url, init, control, net));
  const signal: AbortSource = control ?? signalSource(init.signal);
  const method = (init.method ?? 'GET').toUpperCase();
  // Object.assign, not a spread followed by more fields (bench/README.md, "Code shapes").
  const headers: Record<string, string> = Object.assign({}, init.headers as Record<string, string> | undefined);
  headers['accept-encoding'] ??= url.protocol === 'https:' ? 'br, gzip, deflate' : 'gzip, deflate';
  headers['user-agent'] ??= 'node';
  // Encoded once, up front: a large string body written as a string goes out in many small
  // encode-and-write steps (a 1 MiB POST took ~2.5 ms longer); the same as one Buffer is one write.
  const body = typeof init.body === 'string' ? Buffer.from(init.body) : undefined;
  if (body !== undefined) headers['content-length'] = String(body.length);
  const transport = url.protocol === 'https:' && https !== undefined ? https : http;
  const options: http.RequestOptions = {
    protocol: url.protocol,
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method,
    headers,
    agent:
      proxy !== undefined && proxyModules !== undefined
        ? proxyAgent(proxyModules, proxy, url.protocol)
        : url.protocol === 'https:'
          ? agents['https:']
          : agents['http:'],
    ...(url.username !== '' || url.password !== ''
      ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }
      : {}),
  };
  // N2: the https agent (or the proxy's, through its tunnel) hands these to tls.connect; sockets are pooled by them.
  if (net.tls !== undefined && url.protocol === 'https:') Object.assign(options, net.tls);
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    // No retry on a reset, as fetch: the server may have received the POST.
    const req = transport.request(options);
    const unlisten = signal.onAbort(() => {
      req.destroy(abortReason(signal));
      reject(abortReason(signal));
    });
    req.on('error', (error) => {
      unlisten();
      reject(signal.aborted ? abortReason(signal) : new TypeError('fetch failed', { cause: error }));
    });
    req.once('response', (res) => {
      res.once('close', unlisten);
      if (zlib !== undefined || rawHeader(res.rawHeaders, 'content-encoding') === null) {
        resolve(new NodeResponse(res, decodedBody(res, method, zlib), signal));
        return;
      }
      // The first compressed answer waits for zlib to load; the body stays buffered meanwhile.
      res.on('error', ignore);
      loadZlib().then((loaded) => {
        resolve(new NodeResponse(res, decodedBody(res, method, loaded), signal));
      }, reject);
    });
    req.end(body);
  });
}

/**
 * N1, N2: the network options resolved, after the constructor checked each one's shape (U9). What
 * no single field can say is checked here: `cert` and `key` go together, and a `proxy` or `tls`
 * needs this client, which a caller's `fetch`, `redirectPolicy: 'follow'` or a `requestInit` field
 * only fetch honours replaces. A problem throws `InvalidOptionsError` naming the option, at
 * construction rather than at the first request.
 */
function resolveNodeClientOptions(options: SenderOptions): NodeClientOptions {
  const { proxy, tls } = options;
  const proxyUrl = proxy === false || proxy === undefined ? proxy : new URL(proxy);
  if (tls !== undefined && (tls.cert === undefined) !== (tls.key === undefined)) {
    throw new InvalidOptionsError([
      { field: tls.cert === undefined ? 'tls.cert' : 'tls.key', expected: 'tls.cert and tls.key together (mutual TLS)' },
    ]);
  }
  // `proxy: false` (no proxy) asks nothing a fetch cannot do.
  if (proxyUrl instanceof URL || tls !== undefined) {
    const instead =
      options.fetch !== undefined
        ? "no fetch beside it: proxy and tls configure this transport's Node HTTP client, which a given fetch replaces (configure your fetch's own dispatcher instead)"
        : options.redirectPolicy !== 'same-origin'
          ? "none with redirectPolicy 'follow': proxy and tls need the Node HTTP client, which 'follow' replaces with fetch"
          : honours(options.init)
            ? undefined
            : 'none with a requestInit field only fetch honours (e.g. dispatcher): proxy and tls need the Node HTTP client, which that replaces with fetch';
    if (instead !== undefined) throw new InvalidOptionsError([{ field: proxyUrl instanceof URL ? 'proxy' : 'tls', expected: instead }]);
  }
  return { proxy: proxyUrl, tls };
}

/**
 * H11: the Node client for a transport, or `viaFetch` when the caller gave a `fetch`, asked
 * `redirectPolicy: 'follow'`, or a `requestInit` that only fetch honours. Each request still goes
 * through `viaFetch` while a custom global dispatcher is set, unless the transport was given its
 * own `proxy` or `tls` (N1, N2), which only this client honours. The environment's proxy
 * variables are read once, here, as the transport is made.
 */
export function nodeSend(options: SenderOptions, viaFetch: HttpSend): HttpSend {
  const resolved = resolveNodeClientOptions(options);
  if (options.fetch !== undefined || options.redirectPolicy !== 'same-origin' || !honours(options.init)) return viaFetch;
  const proxyFor = proxyChoice(resolved.proxy, process.env);
  const tls = tlsFields(resolved.tls);
  const net: NetSettings = proxyFor === noProxy && tls === undefined ? direct : { proxyFor, tls };
  const explicit = resolved.proxy !== undefined || resolved.tls !== undefined;
  // Other schemes go to fetch, which names them ("unknown scheme") as it always did.
  const fetchFor = (url: URL) => (url.protocol !== 'http:' && url.protocol !== 'https:') || (!explicit && hasCustomDispatcher());
  return (url, requestInit, control) => (fetchFor(url) ? viaFetch(url, requestInit, control) : nodeRequest(url, requestInit, control, net));
}
