/// <reference types="node" />
/**
 * H11: the Node HTTP client used when the caller passes no `fetch`: for plain http without a
 * proxy, the small HTTP/1.1 client of `h1.ts`; otherwise `node:http`/`node:https` with one shared
 * keep-alive agent each. It answers with the part of a WHATWG `Response` the
 * exchanges read (`HttpResponse`), so status handling, body limits and error classification stay
 * in one place above it, the same for both clients: `node-response.ts` makes that answer,
 * `proxy.ts` chooses a request's proxy (N1). Only the Node entry (`src/node.ts`) imports this
 * module; the browser build never sees it (U5).
 */
import http from 'node:http';
import type * as Https from 'node:https';
import { createConnection } from 'node:net';
import type { HttpResponse, HttpSend, RequestControl, SenderOptions, TlsOptions } from './client.js';
import { h1Request, hasIdleSocket as hasIdleH1, requestHead, type RequestHead } from './h1.js';
import { InvalidOptionsError } from '../../machines/errors.js';
import { abortReason, drains, nodeResponse, signalSource, type AbortSource } from './node-response.js';
import { loadProxyAgents, noProxy, proxyAgent, proxyAgentsLoaded, proxyChoice, type ProxyFor } from './proxy.js';

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
/** The longest request body sent as a string (see `nodeRequest`); a longer one is sent as one Buffer. */
const inlineBodyChars = 16 * 1024;
/**
 * A plain-http GET without a proxy that `h1.ts` cannot write as given (URL credentials, a header
 * value beyond ASCII) is still a stream held open for as long as the server keeps it: it gets a
 * connection of its own instead of one of the agent's. The agent keeps, per socket it lends, two
 * null-prototype copies of the request's options and four listener closures over them, and arms
 * the socket's idle timer (issue 44; docs/benchmark.md, "What a held session is made of").
 */
const ownConnection = (options: http.ClientRequestArgs) => createConnection(options as Parameters<typeof createConnection>[0]);
/** http's agent serves only what `h1.ts` cannot write as given, and proxies; https keeps Node's agent (its TLS options pool connections too). */
const agents: { 'http:': http.Agent; 'https:': Https.Agent | undefined } = {
  'http:': new http.Agent(keepAlive),
  'https:': undefined,
};

/**
 * `node:https` (with TLS, ~20 ms to load) loads on first use: an https URL. It is not in the cold
 * start of a client that needs none.
 */
let https: typeof Https | undefined;

async function loadHttps(): Promise<typeof Https> {
  https ??= (await import('node:https')).default;
  agents['https:'] ??= new https.Agent(keepAlive);
  return https;
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
/** Methods Node sends without a chunked body by default (`_http_client.js`). */
const unchunked = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/**
 * H11: a direct request's headers as the flat list `[name, value, …]` Node writes as given, with
 * the `Host` Node would add (the URL's host: the port only when not the scheme's default, IPv6 in
 * brackets), or undefined where the record must go to Node instead. Given a record, Node copies it
 * into a header dictionary of its own (null-prototype, in dictionary mode) that a held stream keeps
 * for its life: about 0.9 KiB per held session (docs/benchmark.md, "Heap per held session"). The
 * list is written at once, so it is only for what Node writes the same either way: lower-case
 * names (Node's dictionary merges names that differ in case), no `host` of the caller's (which
 * also names the TLS server), and a body of known length or a method Node sends unchunked (an
 * unknown length is chunked only when Node writes the head at `end()`). A proxy agent sets headers
 * after this (the http proxy's `Proxy-Authorization` and absolute path) and URL credentials become
 * Node's `Authorization`: both need the record, and the caller leaves those with it.
 */
function headerList(url: URL, method: string, sized: boolean, headers: Record<string, string>): string[] | undefined {
  if (!sized && !unchunked.has(method)) return undefined;
  const list = ['Host', url.host];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name === 'host' || name !== name.toLowerCase()) return undefined;
    list.push(name, value);
  }
  return list;
}

/**
 * One request over the shared keep-alive agent (or the agent of its proxy, N1), answered as fetch
 * would answer it.
 */
function nodeRequest(url: URL, init: RequestInit, control: RequestControl | undefined, net: NetSettings): Promise<HttpResponse> {
  if (url.protocol === 'https:' && https === undefined) return loadHttps().then(() => nodeRequest(url, init, control, net));
  const proxy = net.proxyFor(url);
  if (proxy !== undefined && !proxyAgentsLoaded()) return loadProxyAgents().then(() => nodeRequest(url, init, control, net));
  const signal: AbortSource = control ?? signalSource(init.signal);
  const method = (init.method ?? 'GET').toUpperCase();
  // Object.assign, not a spread followed by more fields (bench/README.md, "Code shapes").
  const headers: Record<string, string> = Object.assign({}, init.headers as Record<string, string> | undefined);
  headers['accept-encoding'] ??= url.protocol === 'https:' ? 'br, gzip, deflate' : 'gzip, deflate';
  headers['user-agent'] ??= 'node';
  // A small body goes as the string it is: Node joins it to the header, and no Buffer is made per
  // call. A large one is encoded once, up front: a large string body written as a string goes out
  // in many small encode-and-write steps (a 1 MiB POST took ~2.5 ms longer); as one Buffer it is
  // one write (bench/README.md, "Code shapes").
  const text = typeof init.body === 'string' ? init.body : undefined;
  const body = text === undefined || text.length <= inlineBodyChars ? text : Buffer.from(text);
  if (body !== undefined) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  const transport = url.protocol === 'https:' && https !== undefined ? https : http;
  const userinfo = url.username !== '' || url.password !== '';
  const plain = proxy === undefined && url.protocol === 'http:';
  const held = method === 'GET' && plain;
  // H11: it says keep-alive as fetch does (Node would write `close` for a request without an agent).
  if (plain && !('connection' in headers)) headers.connection = 'keep-alive';
  if (plain && !userinfo) {
    // Issue 44: plain http goes through the small HTTP/1.1 client (h1.ts), without node:http's objects.
    const list = headerList(url, method, body !== undefined, headers);
    const head = list === undefined ? undefined : requestHead(method, url.pathname + url.search, list);
    if (head !== undefined) return h1(url, method, head, body, signal, control);
  }
  const options: Https.RequestOptions = {
    protocol: url.protocol,
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method,
    // Issue 44: no socket timer while a request holds the socket (the agent's 4 s is for idle ones,
    // set again when it frees it): a timer on a busy socket was re-armed by every chunk read and
    // woke a held stream every 4 s for nothing (only an idle socket is closed by it).
    timeout: 0,
    headers: proxy === undefined && !userinfo ? (headerList(url, method, body !== undefined, headers) ?? headers) : headers,
    agent: held
      ? undefined
      : proxy !== undefined
        ? proxyAgent(proxy, url.protocol, keepAlive)
        : url.protocol === 'https:'
          ? agents['https:']
          : agents['http:'],
    ...(userinfo ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
  };
  // No TLS, no server name: the agent would otherwise work one out for each request (the Host header, isIP).
  if (proxy === undefined && url.protocol === 'http:') options.servername = '';
  if (held) options.createConnection = ownConnection;
  // N2: the https agent (or the proxy's, through its tunnel) hands these to tls.connect; sockets are pooled by them.
  if (net.tls !== undefined && url.protocol === 'https:') Object.assign(options, net.tls);
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const outgoing: Outgoing = { transport, options, body, control };
    if (drains.count > drains.waiters.length && proxy === undefined && drains.patient() && !hasIdleSocket(options)) {
      awaitDrain(signal, reject, () => {
        answer(outgoing, true, transport.request(options), method, signal, resolve, reject);
      });
      return;
    }
    answer(outgoing, true, transport.request(options), method, signal, resolve, reject);
  });
}

/**
 * P4: how long a request waits for a connection about to be free (a body in its grace) rather
 * than open a new one. A new connection costs a TCP handshake, over https a TLS one too: a round
 * trip or more on any network but the loopback; a body's end that comes in a packet of its own
 * comes within a few ms of the answer before it.
 */
const drainWaitMs = 25;

/**
 * A request through `h1.ts`. P4: a call (not a held GET) waits for a connection about to be free
 * (`awaitDrain`) when no idle one is kept for its origin.
 */
function h1(
  url: URL,
  method: string,
  head: RequestHead,
  body: string | Buffer | undefined,
  signal: AbortSource,
  control: RequestControl | undefined,
): Promise<HttpResponse> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? 80 : Number(url.port);
  const resent = control?.resent;
  if (method === 'GET' || drains.count <= drains.waiters.length || !drains.patient() || hasIdleH1(host, port)) {
    return h1Request(host, port, head, body, signal, resent);
  }
  return new Promise((resolve, reject) => {
    awaitDrain(signal, reject, () => {
      resolve(h1Request(host, port, head, body, signal, resent));
    });
  });
}

/** The agent keeps an idle connection for this request's origin. */
function hasIdleSocket(options: Https.RequestOptions): boolean {
  const agent = options.agent;
  if (!(agent instanceof http.Agent)) return true;
  // Named as the agent names it: by `host` (Node copies `hostname` there before the agent sees a request).
  const idle = agent.freeSockets[agent.getName(Object.assign({}, options, { host: options.hostname }))];
  return idle !== undefined && idle.length > 0;
}

/**
 * P4: sends the request once a body in its grace has ended (its connection back in the pool) or
 * after `drainWaitMs`, whichever comes first: sequential calls answered with event streams whose
 * end comes apart no longer open a connection each time the next call starts before the previous
 * body's end arrived (docs/benchmark.md, "Connections"). Each waiter takes one draining body.
 */
function awaitDrain(signal: AbortSource, reject: (reason: unknown) => void, go: () => void): void {
  let sent = false;
  const send = (timedOut?: boolean) => {
    if (sent) return;
    sent = true;
    clearTimeout(timer);
    if (timedOut === true) drains.lostPatience();
    else drains.served();
    const at = drains.waiters.indexOf(send);
    if (at !== -1) drains.waiters.splice(at, 1);
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    go();
  };
  // The wait runs out only after the event loop has read what arrived meanwhile: a loop held up
  // past the wait (a busy machine) fires this timer in the same turn as the body's end became
  // readable. Its end's own send (`drainEnded`, a check-phase hop after the poll) goes first.
  const timer = setTimeout(() => {
    setImmediate(() => {
      setImmediate(send, true);
    });
  }, drainWaitMs);
  drains.waiters.push(send);
}

/** N7: what sending a request again takes; dropped by its listeners once an answer arrives. */
interface Outgoing {
  transport: typeof http | typeof Https;
  options: Https.RequestOptions;
  body: string | Buffer | undefined;
  control: RequestControl | undefined;
}

/** N7: the failures of a kept-alive connection the server closed as the request went out. */
function isStaleConnection(error: Error & { code?: unknown }): boolean {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.message === 'socket hang up';
}

/**
 * N7: the idle sockets kept for `options`' origin are closed before a request is sent again, at
 * once, so the agent hands it a new connection (it skips destroyed idle sockets). The one that
 * failed was the most recently used (the agent hands out the last freed first): the others have
 * been idle longer, and the server may have closed them too.
 */
function dropIdleSockets(agent: unknown, options: Https.RequestOptions): void {
  if (!(agent instanceof http.Agent)) return;
  const idle = agent.freeSockets[agent.getName(Object.assign({}, options, { host: options.hostname }))];
  if (idle !== undefined) for (const socket of idle) socket.destroy();
}

/**
 * Settles a request's promise with its answer, its failure or its abort. The listeners are made
 * here, not in `nodeRequest`: a held stream keeps them, and with them only what they use, not the
 * request's options, init and headers (~0.4 KiB per held stream: bench/README.md, "Code shapes").
 *
 * N7: a request that failed on a reused keep-alive connection before any byte of its answer (the
 * server closed the idle connection as the request went out: a reset, EPIPE, "socket hang up")
 * is sent again once, on a new connection, as browsers do; the request's control hears of it
 * (O1, the inspector). Not after a byte of the answer, nor on a fresh connection: the server may
 * have received it. `mayResend` is false for that second attempt.
 */
function answer(
  outgoing: Outgoing,
  mayResend: boolean,
  req: http.ClientRequest,
  method: string,
  signal: AbortSource,
  resolve: (response: HttpResponse | Promise<HttpResponse>) => void,
  reject: (reason: unknown) => void,
): void {
  // Only while no answer arrived: a held stream's listeners keep none of the request.
  let again = mayResend && req.reusedSocket ? outgoing : undefined;
  const onAbort = () => {
    req.destroy(abortReason(signal));
    reject(abortReason(signal));
  };
  signal.onAbort(onAbort);
  // The bytes the reused socket had read when this request got it: any more by a failure are the answer's.
  let readBefore = -1;
  if (again !== undefined) {
    req.once('socket', (socket) => {
      readBefore = socket.bytesRead;
    });
  }
  req.on('error', (error) => {
    signal.offAbort(onAbort);
    const resend = again;
    again = undefined;
    if (
      resend !== undefined &&
      !signal.aborted &&
      readBefore >= 0 &&
      (req.socket === null || req.socket.bytesRead === readBefore) &&
      isStaleConnection(error)
    ) {
      const { body } = resend;
      resend.control?.resent?.(error, typeof body === 'string' || body === undefined ? body : body.toString('utf8'));
      dropIdleSockets(resend.options.agent, resend.options);
      answer(resend, false, resend.transport.request(resend.options), method, signal, resolve, reject);
      return;
    }
    reject(signal.aborted ? abortReason(signal) : new TypeError('fetch failed', { cause: error }));
  });
  req.once('response', (res) => {
    again = undefined;
    // `on`, not `once`: 'close' comes once, and a held stream keeps no once-wrapper.
    res.on('close', () => {
      signal.offAbort(onAbort);
    });
    // The first compressed answer waits for zlib to load (a promise, adopted by resolve).
    resolve(nodeResponse(res, method, signal));
  });
  req.end(outgoing.body);
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
  if (net === direct && !explicit) {
    // The common case: one sender for every transport with the same `viaFetch`, not two closures each.
    let shared = directSends.get(viaFetch);
    if (shared === undefined) {
      shared = sender(viaFetch, direct, false);
      directSends.set(viaFetch, shared);
    }
    return shared;
  }
  return sender(viaFetch, net, explicit);
}

/** The senders of direct transports with no proxy or tls of their own, by their `viaFetch`. */
const directSends = new WeakMap<HttpSend, HttpSend>();

function sender(viaFetch: HttpSend, net: NetSettings, explicit: boolean): HttpSend {
  // Other schemes go to fetch, which names them ("unknown scheme") as it always did.
  const fetchFor = (url: URL) => (url.protocol !== 'http:' && url.protocol !== 'https:') || (!explicit && hasCustomDispatcher());
  return (url, requestInit, control) => (fetchFor(url) ? viaFetch(url, requestInit, control) : nodeRequest(url, requestInit, control, net));
}
