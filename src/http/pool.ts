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
 * closed once their answer ended, as Node's agent does. At most 256 per origin.
 * https (the TLS options pool connections too) and proxies keep Node's agents.
 */
import http from 'node:http';
import { createConnection, type Socket } from 'node:net';

/** How long an idle connection is kept when the server says nothing shorter. */
export const idleMs = 4_000;
/** How often idle connections are looked at (only while any is idle). */
const sweepMs = 1_000;

/** Where an idle connection is kept, and until when (Date.now()). */
interface IdleEntry {
  origin: string;
  until: number;
}

/**
 * Idle connections by origin (`host:port`), the most recently kept last (handed out first, as
 * Node's agent does): the pool's below and the held GETs' (held-get.ts). One past its time is
 * never handed out; one shared sweep, running only while any is idle, closes those past their
 * time. An idle connection is unref'd (it keeps no process alive) and ref'd again when taken.
 * Whoever keeps one hears its close and calls `remove`.
 */
export class IdleSockets {
  private readonly lists = new Map<string, Socket[]>();
  private readonly entries = new WeakMap<Socket, IdleEntry>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly maxPerOrigin: number) {}

  /** Keeps `socket` idle for `origin` for `ms`; false when it cannot be kept (destroyed, `ms` 0, the origin's list full): the caller closes it. */
  keep(origin: string, socket: Socket, ms: number): boolean {
    const sockets = this.lists.get(origin) ?? [];
    if (ms <= 0 || socket.destroyed || sockets.length >= this.maxPerOrigin) return false;
    const until = Date.now() + ms;
    const entry = this.entries.get(socket);
    if (entry === undefined) this.entries.set(socket, { origin, until });
    else {
      entry.origin = origin;
      entry.until = until;
    }
    sockets.push(socket);
    this.lists.set(origin, sockets);
    socket.unref();
    this.sweeper ??= setInterval(() => {
      this.sweep();
    }, sweepMs).unref();
    return true;
  }

  /** The most recently kept idle connection of `origin` still within its time, taken out of the list and ref'd; those past their time are closed. */
  take(origin: string): Socket | undefined {
    const sockets = this.lists.get(origin);
    if (sockets === undefined) return undefined;
    const now = Date.now();
    for (let socket = sockets.pop(); socket !== undefined; socket = sockets.pop()) {
      if (!socket.destroyed && now <= (this.entries.get(socket)?.until ?? 0)) {
        if (sockets.length === 0) this.forget(origin);
        socket.ref();
        return socket;
      }
      socket.destroy();
    }
    this.forget(origin);
    return undefined;
  }

  /** A connection closed or failed: out of its list, if it is idle there. */
  remove(socket: Socket): void {
    const entry = this.entries.get(socket);
    const sockets = entry === undefined ? undefined : this.lists.get(entry.origin);
    if (entry === undefined || sockets === undefined) return;
    const at = sockets.lastIndexOf(socket);
    if (at === -1) return;
    sockets.splice(at, 1);
    if (sockets.length === 0) this.forget(entry.origin);
  }

  /** Whether an idle connection within its time is kept for `origin`. */
  has(origin: string): boolean {
    const now = Date.now();
    return this.lists.get(origin)?.some((socket) => now <= (this.entries.get(socket)?.until ?? 0)) ?? false;
  }

  /** Closes the idle connections of `origin` (each leaves its list as it closes). */
  drop(origin: string): void {
    for (const socket of this.lists.get(origin) ?? []) socket.destroy();
  }

  /** How many connections are idle for `origin` (tests read it). */
  count(origin: string): number {
    return this.lists.get(origin)?.length ?? 0;
  }

  /** No connection idle for `origin` any more; the sweep stops once none is idle anywhere. */
  private forget(origin: string): void {
    this.lists.delete(origin);
    if (this.lists.size === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Closes the idle connections past their time (each then leaves its list as it closes). */
  private sweep(): void {
    const now = Date.now();
    for (const sockets of this.lists.values()) {
      for (const socket of sockets) if (now > (this.entries.get(socket)?.until ?? 0)) socket.destroy();
    }
  }
}

/** The pool's idle connections: at most 256 per origin, Node's agent's default (`maxFreeSockets`). */
const idle = new IdleSockets(256);

/** What the pool keeps of a connection it made: its origin, and the idle time the last answer on it allowed. */
interface Kept {
  readonly origin: string;
  /** The server's hint for the answer being read, in ms (`keepAliveHint`); 0: not to be kept. */
  allowMs: number;
}

const kept = new WeakMap<Socket, Kept>();

/** A connection closed (idle or not): never handed out again. Shared: no closure per connection. */
function closed(this: Socket): void {
  idle.remove(this);
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
  const allowMs = entry.allowMs;
  entry.allowMs = idleMs;
  if (!this.writable || !idle.keep(entry.origin, this, allowMs)) this.destroy();
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
    const reused = idle.take(origin);
    if (reused !== undefined) {
      // N7 reads it: a failure before any byte of the answer on a reused connection is sent again.
      req.reusedSocket = true;
      req.onSocket(reused);
      return;
    }
    // As Node's agent makes them: no Nagle delay on a request written in pieces, TCP keep-alive probes after 1 s idle.
    const socket = createConnection({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 1_000 });
    kept.set(socket, { origin, allowMs: idleMs });
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
  return idle.has(`${host}:${port}`);
}

/** N7: closes the idle connections of `host:port` (the server may have closed them too). */
export function dropIdle(host: string, port: number): void {
  idle.drop(`${host}:${port}`);
}

/** How many connections are idle for `host:port` (tests read it). */
export function idleCount(host: string, port: number): number {
  return idle.count(`${host}:${port}`);
}
