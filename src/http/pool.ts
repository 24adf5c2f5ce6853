/// <reference types="node" />
/**
 * H11, issue 44: the keep-alive pool of plain-http requests without a proxy: an `http.Agent`
 * whose `addRequest` hands a request an idle connection of its origin, or a new one, and takes
 * the connection back when Node frees it (`'free'`, emitted by Node's `ClientRequest` once an
 * answer ended on a kept-alive connection). Node's own agent does the same with more per request:
 * it copies the request's options twice, names the origin twice, moves the socket between two
 * lists and arms and disarms the socket's idle timer (about 25 µs of a modern JSON call's client
 * CPU here; docs/benchmark.md, "Per call"). Here the listeners are made once per connection, and
 * an idle connection is closed by one shared sweep, not a timer of its own.
 *
 * An idle connection is kept for 4 s (as fetch's dispatcher keeps it), or 1 s less than the
 * server's `Keep-Alive: timeout=` says; a server that gives 1 s or less gets its connections
 * closed once their answer ended, as Node's agent does. At most `maxIdlePerOrigin` per origin.
 * https (the TLS options pool connections too) and proxies keep Node's agents.
 */
import http from 'node:http';
import { createConnection, type Socket } from 'node:net';

/** How long an idle connection is kept when the server says nothing shorter. */
const idleMs = 4_000;
/** Node's agent default (`maxFreeSockets`). */
const maxIdlePerOrigin = 256;
/** How often idle connections are looked at (only while any is idle). */
const sweepMs = 1_000;

/** What the pool keeps of one connection it made: its origin and, while idle, when it must be closed. */
interface Kept {
  readonly origin: string;
  /** Date.now() after which the idle connection is closed; set when it is freed. */
  until: number;
  /** The idle time the last answer on it allowed (the server's hint), in ms; 0: not to be kept. */
  allowMs: number;
}

const kept = new WeakMap<Socket, Kept>();
/** The idle connections by origin (`host:port`), the most recently freed last. */
const idle = new Map<string, Socket[]>();
let sweeper: NodeJS.Timeout | undefined;

/** Out of its origin's idle list, if it is there. */
function unlist(socket: Socket, origin: string): void {
  const sockets = idle.get(origin);
  if (sockets === undefined) return;
  const at = sockets.lastIndexOf(socket);
  if (at === -1) return;
  sockets.splice(at, 1);
  if (sockets.length === 0) forget(origin);
}

/** No connection idle for `origin` any more; the sweep stops once none is idle anywhere. */
function forget(origin: string): void {
  idle.delete(origin);
  if (idle.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** A connection closed (idle or not): never handed out again. Shared: no closure per connection. */
function closed(this: Socket): void {
  const entry = kept.get(this);
  if (entry !== undefined) unlist(this, entry.origin);
}

/**
 * An error on a connection no request holds (the server reset an idle one) is its close: without
 * a listener it would be thrown. A request's own listener hears the errors of its connection.
 */
function ignore(): void {
  return undefined;
}

/** Node freed the connection: its answer ended and it may carry the next request. */
function freed(this: Socket): void {
  const entry = kept.get(this);
  if (entry === undefined) return;
  const sockets = idle.get(entry.origin) ?? [];
  if (entry.allowMs === 0 || this.destroyed || !this.writable || sockets.length >= maxIdlePerOrigin) {
    this.destroy();
    return;
  }
  entry.until = Date.now() + entry.allowMs;
  entry.allowMs = idleMs;
  sockets.push(this);
  idle.set(entry.origin, sockets);
  // An idle connection keeps no process alive.
  this.unref();
  sweeper ??= setInterval(sweep, sweepMs).unref();
}

/** Closes the idle connections past their time (each then leaves its list as it closes). */
function sweep(): void {
  const now = Date.now();
  for (const sockets of idle.values()) {
    for (const socket of sockets) if (now > (kept.get(socket)?.until ?? 0)) socket.destroy();
  }
}

/** The most recently freed idle connection of `origin` still within its time, taken out of the list. */
function take(origin: string): Socket | undefined {
  const sockets = idle.get(origin);
  if (sockets === undefined) return undefined;
  const now = Date.now();
  for (let socket = sockets.pop(); socket !== undefined; socket = sockets.pop()) {
    if (!socket.destroyed && now <= (kept.get(socket)?.until ?? 0)) {
      if (sockets.length === 0) forget(origin);
      socket.ref();
      return socket;
    }
    socket.destroy();
  }
  forget(origin);
  return undefined;
}

/** What Node hands `addRequest`: the request's options, `host` and `port` filled in. */
interface AddRequestOptions {
  host?: string | null | undefined;
  port?: number | string | null | undefined;
}

export class PoolAgent extends http.Agent {
  constructor() {
    // Node's agent reads these (the request's keep-alive default); its own pools stay empty.
    super({ keepAlive: true });
  }

  addRequest(req: http.ClientRequest, options: AddRequestOptions): void {
    const host = options.host ?? 'localhost';
    const port = Number(options.port ?? 80);
    const origin = `${host}:${port}`;
    const reused = take(origin);
    if (reused !== undefined) {
      // N7 reads it: a failure before any byte of the answer on a reused connection is sent again.
      req.reusedSocket = true;
      req.onSocket(reused);
      return;
    }
    // As Node's agent makes them: no Nagle delay on a request written in pieces, TCP keep-alive probes after 1 s idle.
    const socket = createConnection({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 1_000 });
    kept.set(socket, { origin, until: 0, allowMs: idleMs });
    socket.on('free', freed);
    socket.on('close', closed);
    socket.on('error', ignore);
    req.onSocket(socket);
  }
}

/**
 * An answer on one of the pool's connections ended its head: a `Keep-Alive: timeout=N` field (Node's
 * server says 5) keeps the connection idle 1 s less than that after it, or not at all for 1 s or
 * less, as Node's agent reads it. Read from `rawHeaders` (`headers` would build an object per answer).
 */
export function keepAliveHint(res: http.IncomingMessage): void {
  const entry = kept.get(res.socket);
  if (entry === undefined) return;
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.length !== 10 || raw[i]?.toLowerCase() !== 'keep-alive') continue;
    const seconds = /^timeout=(\d+)/.exec(raw[i + 1] ?? '')?.[1];
    if (seconds !== undefined) entry.allowMs = Math.min(idleMs, Math.max(0, Number(seconds) * 1_000 - 1_000));
    return;
  }
}

/** Whether an idle connection within its time is kept for `host:port`. */
export function hasIdle(host: string, port: number): boolean {
  const now = Date.now();
  return idle.get(`${host}:${port}`)?.some((socket) => now <= (kept.get(socket)?.until ?? 0)) ?? false;
}

/** N7: closes the idle connections of `host:port` (the server may have closed them too). */
export function dropIdle(host: string, port: number): void {
  for (const socket of idle.get(`${host}:${port}`)?.slice() ?? []) socket.destroy();
}

/** How many connections are idle for `host:port` (tests read it). */
export function idleCount(host: string, port: number): number {
  return idle.get(`${host}:${port}`)?.length ?? 0;
}
