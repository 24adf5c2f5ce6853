/// <reference types="node" />
/**
 * H11, P4, issue 44: the keep-alive pool's bookkeeping: idle connections by origin, each until
 * its time, handed out most recently kept first. The small HTTP/1.1 client (h1.ts) keeps its
 * connections here between requests. Node's agent does the same with more per request: it copies
 * the request's options twice, names the origin twice, moves the socket between two lists and
 * arms and disarms the socket's idle timer. Here an idle connection is closed by one shared
 * sweep, not a timer of its own (docs/benchmark.md, "Per call").
 */
import type { Socket } from 'node:net';

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
 * Node's agent does). One past its time is never handed out; one shared sweep, running only
 * while any is idle (or was in the last second), closes those past their time. An idle connection is unref'd (it keeps no process alive) and ref'd again when taken.
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

  /**
   * No connection idle for `origin` any more. The sweep goes on (unref'd) until one finds none
   * idle anywhere: a connection taken and kept again call after call stops and starts no timer.
   */
  private forget(origin: string): void {
    this.lists.delete(origin);
  }

  /** Closes the idle connections past their time (each then leaves its list as it closes); stops when none is idle. */
  private sweep(): void {
    if (this.lists.size === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const now = Date.now();
    for (const sockets of this.lists.values()) {
      for (const socket of sockets) if (now > (this.entries.get(socket)?.until ?? 0)) socket.destroy();
    }
  }
}
