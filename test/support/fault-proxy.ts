/**
 * A fault-injecting HTTP proxy on 127.0.0.1 in front of the SDK's real server
 * (test/support/mcp-server.ts). Every request is forwarded unchanged unless a rule a test added
 * matches it; a rule can answer a status itself, reset the connection, hold the headers or the
 * body (for a time, or until `release()`), and, on an event stream, count events (an event ends
 * at a blank line; comment-only blocks are not events), cut the response after N of them
 * (destroying the socket or ending the body cleanly), strip `id:` lines, inject `retry:` lines,
 * send each event twice, split multi-byte characters across writes, or write raw bytes of its
 * own (malformed SSE, invalid UTF-8, a flood of comments or one oversized event).
 *
 * Every request is logged with its arrival time, the events the client was sent and when the
 * proxy cut it, so tests can measure reconnect delays. `restartBackend()` replaces the SDK server
 * with a fresh one on the same port: every session is lost.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { performance } from 'node:perf_hooks';
import { startServer, type ServerOptions, type TestServer } from './mcp-server.js';
import { OrderedEventStore } from './event-store.js';
import { fieldOf as field, listenLocal, parseBody, readBytes, RequestLog, shutDown } from './http.js';

export type HttpMethod = 'POST' | 'GET' | 'DELETE';

/** Hold for this many ms, or until `release()` (or the proxy closes). */
export type Hold = number | 'release';

/** One event as the proxy sent it to the client. */
export interface ForwardedEvent {
  /** The id the client was sent (undefined when stripped or absent). */
  id: string | undefined;
  /** The id the server sent. */
  serverId: string | undefined;
  /** The data lines, joined with \n. */
  data: string;
  /** The bytes written to the client for this event (after any change), as text. */
  raw: string;
  /** When it was written (performance.now()). */
  at: number;
}

export interface ProxiedRequest {
  /** Arrival order, from 1. */
  seq: number;
  method: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body of a POST (the raw text when not JSON). */
  body: unknown;
  /** JSON-RPC method of the body, if any. */
  rpc: string | undefined;
  /** JSON-RPC id of the body, if it has one. */
  rpcId: string | number | undefined;
  /** The tool of a tools/call. */
  tool: string | undefined;
  lastEventId: string | undefined;
  sessionId: string | undefined;
  /** When the request arrived at the proxy (performance.now(), ms). */
  at: number;
  /** The rule applied to it, if any. */
  rule: ProxyRule | undefined;
  /** The status the client was sent (undefined: none, e.g. a reset before headers). */
  status: number | undefined;
  /** Events of an event-stream response, as the client was sent them. */
  events: ForwardedEvent[];
  /** When the proxy cut the response (performance.now()). */
  cutAt: number | undefined;
  /** When the client side of the exchange was over, however it ended (performance.now()). */
  endedAt: number | undefined;
  /** complete: ended as the server ended it; cut: by a rule; closed: the client went away first. */
  outcome: 'pending' | 'complete' | 'cut' | 'closed' | 'failed';
  /** Body bytes written to the client. */
  bytesOut: number;
  /** Settles when the client side of the exchange is over. */
  ended: Promise<void>;
}

export interface ProxyRule {
  // Which requests: all given conditions hold.
  method?: HttpMethod;
  /** JSON-RPC method of the POST body. */
  rpc?: string;
  /** Tool name of a tools/call. */
  tool?: string;
  /** GET only: true matches a resume (with Last-Event-ID), false a GET without one. */
  resume?: boolean;
  match?: (request: ProxiedRequest) => boolean;
  /** Let this many matching requests through untouched first: the Nth is `skip: N - 1`. */
  skip?: number;
  /** How many matching requests the rule applies to (default 1; Infinity: all). */
  times?: number;
  /**
   * Decides per matching request what happens to it (e.g. from a seeded PRNG): the actions
   * returned are added to the rule's own; undefined lets the request through untouched.
   */
  decide?: (request: ProxiedRequest) => Omit<ProxyRule, 'decide'> | undefined;

  // What happens to them.
  /** Answer this instead of forwarding. */
  respond?: { status: number; body?: string; contentType?: string };
  /** Destroy the client's connection before any header (a network error). */
  reset?: boolean;
  /** Hold the request before it is forwarded, so the client waits for headers. */
  stallHeaders?: Hold;
  /** Event stream: forward this many events (0: none), then cut. A function decides per request. */
  cutAfter?: number | ((request: ProxiedRequest) => number | undefined);
  /** How to cut: destroy the socket (default; the client sees the body fail) or end the body cleanly. */
  cutMode?: 'destroy' | 'end';
  /** Cut in the middle of the next event (half of it written) instead of between events. */
  cutMidEvent?: boolean;
  /** Remove `id:` lines from every event. */
  stripIds?: boolean;
  /** Remove `retry:` lines from every event. */
  stripRetry?: boolean;
  /** Put a `retry: <value>` line in every event (a string for values the server would never send). */
  retry?: number | string;
  /** Hold the body after this many events (default 0: before the first). */
  stallBodyAfter?: number;
  stallBody?: Hold;
  /** Write each event twice. */
  duplicate?: boolean;
  /** Write the bytes of each event with a multi-byte character in two writes, split inside that character. */
  splitUtf8?: boolean;
  /** Bytes written right after the headers, before any event from the server. */
  prefix?: string | Uint8Array | ((request: ProxiedRequest) => string | Uint8Array);
  /**
   * Written after the headers (and prefix): `head`, then `chunk` again and again until `bytes`
   * were written or the client went away, then `tail`. Writes wait for the client to read.
   */
  flood?: { head?: string; chunk: string; bytes: number; tail?: string };
}

interface ActiveRule {
  rule: ProxyRule;
  seen: number;
  applied: number;
}

export interface FaultProxy {
  /** The MCP endpoint, through the proxy. */
  url: URL;
  port: number;
  /** The SDK server behind the proxy (a new one after `restartBackend()`). */
  readonly backend: TestServer;
  requests: ProxiedRequest[];
  /** Adds a rule; rules are tried in the order they were added. */
  rule(rule: ProxyRule): ProxyRule;
  /** Removes a rule (e.g. one with `times: Infinity`). */
  drop(rule: ProxyRule): void;
  /** Lets every held request and body go on. */
  release(): void;
  /** Resolves with the first logged request (past or future) that matches. */
  waitFor(match: (request: ProxiedRequest) => boolean, timeoutMs?: number): Promise<ProxiedRequest>;
  /** The request whose response carried event `id` to the client. */
  carrierOf: (id: string) => ProxiedRequest | undefined;
  /** Closes the SDK server and starts a fresh one on the same port: all sessions are lost. */
  restartBackend(): Promise<void>;
  close(): Promise<void>;
}

export interface FaultProxyOptions extends ServerOptions {
  /** Use the SDK's own example event store instead of the ordered one (which replays correctly). */
  sdkEventStore?: boolean;
}

const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** End of the first event block in `buffer` (after its blank line), or -1. */
function blockEnd(buffer: Buffer): number {
  const lf = buffer.indexOf('\n\n');
  const crlf = buffer.indexOf('\r\n\r\n');
  if (lf === -1) return crlf === -1 ? -1 : crlf + 4;
  if (crlf === -1 || lf < crlf) return lf + 2;
  return crlf + 4;
}

function linesOf(block: string): string[] {
  return block.split(/\r\n|\r|\n/).filter((line) => line !== '');
}

function fieldOf(line: string): { name: string; value: string } {
  const colon = line.indexOf(':');
  if (colon === -1) return { name: line, value: '' };
  const value = line.slice(colon + 1);
  return { name: line.slice(0, colon), value: value.startsWith(' ') ? value.slice(1) : value };
}

/** Index just past the lead byte of the first multi-byte UTF-8 character, or -1. */
function insideMultiByte(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte >= 0xc0 && byte <= 0xf4) return i + 1;
  }
  return -1;
}

/** Whether the client side is over (a call, so that checks after an await are not narrowed away). */
function gone(response: ServerResponse): boolean {
  return response.destroyed;
}

function matches(rule: ProxyRule, request: ProxiedRequest): boolean {
  if (rule.method !== undefined && rule.method !== request.method) return false;
  if (rule.rpc !== undefined && rule.rpc !== request.rpc) return false;
  if (rule.tool !== undefined && rule.tool !== request.tool) return false;
  if (rule.resume !== undefined && rule.resume !== (request.lastEventId !== undefined)) return false;
  return rule.match === undefined || rule.match(request);
}

export async function startFaultProxy(options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const { sdkEventStore, ...given } = options;
  const serverOptions: ServerOptions = {
    ...given,
    ...(sdkEventStore === true || given.eventStore !== undefined ? {} : { eventStore: () => new OrderedEventStore() }),
  };
  let backend = await startServer(serverOptions);
  const backendPort = backend.port;
  const agent = new Agent({ keepAlive: true });
  const log = new RequestLog<ProxiedRequest>('through the proxy');
  const requests = log.entries;
  const rules: ActiveRule[] = [];
  const carriers = new Map<string, ProxiedRequest>();
  /** Everything held: released by release() or close(). */
  const held = new Set<() => void>();
  let closing = false;
  let restarting: Promise<void> | undefined;

  const hold = (how: Hold, response: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        held.delete(done);
        response.off('close', done);
        resolve();
      };
      held.add(done);
      response.once('close', done);
      if (how !== 'release') timer = setTimeout(done, how);
      if (closing) done();
    });

  const pause = (ms: number, response: ServerResponse): Promise<void> => hold(ms, response);

  const take = (request: ProxiedRequest): ProxyRule | undefined => {
    for (const active of rules) {
      if (!matches(active.rule, request)) continue;
      active.seen++;
      if (active.seen <= (active.rule.skip ?? 0)) continue;
      active.applied++;
      if (active.applied >= (active.rule.times ?? 1)) rules.splice(rules.indexOf(active), 1);
      if (active.rule.decide === undefined) return active.rule;
      const chosen = active.rule.decide(request);
      return chosen === undefined ? undefined : { ...active.rule, ...chosen };
    }
    return undefined;
  };

  /** Per response: settles once everything written so far was handed to the socket. */
  const flushed = new WeakMap<ServerResponse, Promise<void>>();

  /** Writes `data`, waiting while the client is not reading; false once the client is gone. */
  const write = (entry: ProxiedRequest, response: ServerResponse, data: string | Uint8Array): Promise<boolean> => {
    if (response.destroyed || response.writableEnded) return Promise.resolve(false);
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    entry.bytesOut += bytes.byteLength;
    let onFlushed: () => void = () => undefined;
    flushed.set(
      response,
      new Promise<void>((resolve) => {
        onFlushed = resolve;
      }),
    );
    if (
      response.write(bytes, () => {
        onFlushed();
      })
    ) {
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const onDrain = () => {
        response.off('close', onClose);
        resolve(true);
      };
      const onClose = () => {
        response.off('drain', onDrain);
        resolve(false);
      };
      response.once('drain', onDrain);
      response.once('close', onClose);
    });
  };

  const forward = (entry: ProxiedRequest, request: IncomingMessage, body: Buffer): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const headers: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (!hopByHop.has(name) && value !== undefined) headers[name] = value;
      }
      if (entry.method === 'POST') headers['content-length'] = String(body.length);
      const upstream = httpRequest(
        { host: '127.0.0.1', port: backendPort, method: entry.method, path: request.url, headers, agent },
        resolve,
      );
      upstream.once('error', reject);
      upstream.end(body);
    });

  /** Relays an event stream event by event, applying the rule. */
  const relayEvents = async (
    entry: ProxiedRequest,
    rule: ProxyRule | undefined,
    upstream: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> => {
    const cutAfter = typeof rule?.cutAfter === 'function' ? rule.cutAfter(entry) : rule?.cutAfter;
    /**
     * Ends the response here. A destroy waits until what was written reached the socket, and a
     * moment more for the client to read it: a body that breaks discards what its reader has
     * not read yet, and the test should know which events the client had.
     */
    const cut = async () => {
      upstream.destroy();
      entry.outcome = 'cut';
      if (rule?.cutMode === 'end') {
        entry.cutAt = performance.now();
        response.end();
        return;
      }
      const pending = flushed.get(response);
      if (pending !== undefined) await Promise.race([pending, pause(1_000, response)]);
      await pause(20, response);
      entry.cutAt = performance.now();
      response.destroy();
    };
    const stallAt = rule?.stallBody === undefined ? undefined : (rule.stallBodyAfter ?? 0);
    if (rule?.prefix !== undefined) {
      const prefix = typeof rule.prefix === 'function' ? rule.prefix(entry) : rule.prefix;
      if (!(await write(entry, response, prefix))) return;
    }
    if (rule?.flood !== undefined) {
      const { head, chunk, bytes, tail } = rule.flood;
      if (head !== undefined && !(await write(entry, response, head))) return;
      const piece = Buffer.from(chunk);
      for (let sent = 0; sent < bytes; sent += piece.length) {
        if (!(await write(entry, response, piece))) {
          upstream.destroy();
          return;
        }
      }
      if (tail !== undefined && !(await write(entry, response, tail))) return;
    }
    let count = 0;
    if (stallAt === 0 && rule?.stallBody !== undefined) await hold(rule.stallBody, response);
    if (cutAfter === 0 && rule?.cutMidEvent !== true) {
      await cut();
      return;
    }
    let buffer = Buffer.alloc(0);
    try {
      for await (const chunk of upstream) {
        if (response.destroyed) break;
        buffer = Buffer.concat([buffer, chunk as Buffer]);
        for (let end = blockEnd(buffer); end !== -1; end = blockEnd(buffer)) {
          // The client may have gone while this loop waited (a hold): log only what was sent.
          if (gone(response)) return;
          const block = buffer.subarray(0, end);
          buffer = buffer.subarray(end);
          const lines = linesOf(block.toString('utf8'));
          if (lines.every((line) => line.startsWith(':'))) {
            // A comment (keep-alive): passed on, not counted.
            if (!(await write(entry, response, block))) return;
            continue;
          }
          let serverId: string | undefined;
          const data: string[] = [];
          const kept: string[] = [];
          for (const line of lines) {
            const { name, value } = fieldOf(line);
            if (name === 'id') {
              serverId = value;
              if (rule?.stripIds === true) continue;
            }
            if (name === 'retry' && rule?.stripRetry === true) continue;
            if (name === 'data') data.push(value);
            kept.push(line);
          }
          if (rule?.retry !== undefined) kept.unshift(`retry: ${String(rule.retry)}`);
          const out = Buffer.from(`${kept.join('\n')}\n\n`);
          if (rule?.cutMidEvent === true && cutAfter === count) {
            await write(entry, response, out.subarray(0, Math.ceil(out.length / 2)));
            await cut();
            return;
          }
          const event: ForwardedEvent = {
            id: rule?.stripIds === true ? undefined : serverId,
            serverId,
            data: data.join('\n'),
            raw: out.toString('utf8'),
            at: performance.now(),
          };
          entry.events.push(event);
          if (event.id !== undefined && !carriers.has(event.id)) carriers.set(event.id, entry);
          for (let copy = 0; copy < (rule?.duplicate === true ? 2 : 1); copy++) {
            const split = rule?.splitUtf8 === true ? insideMultiByte(out) : -1;
            if (split === -1) {
              if (!(await write(entry, response, out))) return;
            } else {
              if (!(await write(entry, response, out.subarray(0, split)))) return;
              // Long enough for the first part to reach the client as a chunk of its own.
              await pause(40, response);
              if (!(await write(entry, response, out.subarray(split)))) return;
            }
          }
          count++;
          if (stallAt === count && rule?.stallBody !== undefined) await hold(rule.stallBody, response);
          if (cutAfter === count && rule?.cutMidEvent !== true) {
            await cut();
            return;
          }
        }
      }
    } catch {
      // The server side broke (e.g. the backend was closed): the client sees its body break too.
      entry.outcome = 'failed';
      response.destroy();
      return;
    }
    if (response.destroyed) return;
    if (buffer.length > 0 && !(await write(entry, response, buffer))) return;
    entry.outcome = 'complete';
    response.end();
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const at = performance.now();
    const raw = await readBytes(request);
    const body = request.method === 'POST' ? parseBody(raw) : undefined;
    const rpc = field(body, 'method');
    const rpcId = field(body, 'id');
    const tool = rpc === 'tools/call' ? field(field(body, 'params'), 'name') : undefined;
    let settle: () => void = () => undefined;
    const entry: ProxiedRequest = {
      seq: requests.length + 1,
      method: request.method ?? '',
      headers: request.headers,
      body,
      rpc: typeof rpc === 'string' ? rpc : undefined,
      rpcId: typeof rpcId === 'string' || typeof rpcId === 'number' ? rpcId : undefined,
      tool: typeof tool === 'string' ? tool : undefined,
      lastEventId: one(request.headers['last-event-id']),
      sessionId: one(request.headers['mcp-session-id']),
      at,
      rule: undefined,
      status: undefined,
      events: [],
      cutAt: undefined,
      endedAt: undefined,
      outcome: 'pending',
      bytesOut: 0,
      ended: new Promise<void>((resolve) => {
        settle = resolve;
      }),
    };
    response.once('close', () => {
      entry.endedAt = performance.now();
      if (entry.outcome === 'pending') entry.outcome = response.writableFinished ? 'complete' : 'closed';
      settle();
    });
    log.add(entry);
    const rule = take(entry);
    entry.rule = rule;
    if (rule?.stallHeaders !== undefined) await hold(rule.stallHeaders, response);
    if (response.destroyed) return;
    if (rule?.reset === true) {
      entry.outcome = 'cut';
      entry.cutAt = performance.now();
      request.socket.destroy();
      return;
    }
    if (rule?.respond !== undefined) {
      const { status, body: text, contentType } = rule.respond;
      entry.status = status;
      response.writeHead(status, contentType === undefined ? {} : { 'content-type': contentType });
      response.end(text ?? '');
      return;
    }
    if (restarting !== undefined) await restarting;
    let upstream: IncomingMessage;
    try {
      upstream = await forward(entry, request, raw);
    } catch (error) {
      entry.status = 502;
      entry.outcome = 'failed';
      if (!gone(response)) {
        response.writeHead(502, { 'content-type': 'text/plain' });
        response.end(`proxy: ${error instanceof Error ? error.message : String(error)}`);
      }
      return;
    }
    response.once('close', () => {
      if (!upstream.complete) upstream.destroy();
    });
    const status = upstream.statusCode ?? 502;
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (!hopByHop.has(name) && value !== undefined) headers[name] = value;
    }
    entry.status = status;
    const type = (one(upstream.headers['content-type']) ?? '').toLowerCase();
    if (!type.startsWith('text/event-stream')) {
      const content: Buffer[] = [];
      try {
        for await (const chunk of upstream) content.push(chunk as Buffer);
      } catch {
        entry.outcome = 'failed';
        response.destroy();
        return;
      }
      const all = Buffer.concat(content);
      entry.bytesOut = all.length;
      if (gone(response)) return;
      response.writeHead(status, { ...headers, 'content-length': String(all.length) });
      response.end(all);
      return;
    }
    response.writeHead(status, headers);
    response.flushHeaders();
    await relayEvents(entry, rule, upstream, response);
  };

  const http: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.destroy();
    });
  });
  const port = await listenLocal(http);

  const releaseAll = () => {
    for (const done of [...held]) done();
  };

  return {
    url: new URL(`http://127.0.0.1:${String(port)}/mcp`),
    port,
    get backend() {
      return backend;
    },
    requests,
    rule(rule) {
      rules.push({ rule, seen: 0, applied: 0 });
      return rule;
    },
    drop(rule) {
      const index = rules.findIndex((active) => active.rule === rule);
      if (index !== -1) rules.splice(index, 1);
    },
    release: releaseAll,
    waitFor: (match, timeoutMs) => log.waitFor(match, timeoutMs),
    carrierOf: (id) => carriers.get(id),
    async restartBackend() {
      const run = (async () => {
        await backend.close();
        agent.destroy();
        backend = await startServer({ ...serverOptions, port: backendPort });
      })();
      restarting = run;
      try {
        await run;
      } finally {
        restarting = undefined;
      }
    },
    async close() {
      closing = true;
      releaseAll();
      await shutDown(http);
      await backend.close();
      agent.destroy();
    },
  };
}
