import type { SnapshotFrom } from 'xstate';
import type { ConnectionMachine, Era } from '../machines/connection/index.js';
import type { PlannedWait } from '../machines/backoff.js';

/** What a connection badge says, from the chart's tags; `idle` before start(). */
export type ConnectionStatus =
  | 'idle'
  | 'connecting'
  | 'connected'
  | 'degraded'
  | 'offline'
  | 'reconnecting'
  | 'waiting'
  | 'authorizing'
  | 'closing'
  | 'closed'
  | 'failed';

/**
 * The tags in the order a badge prefers them: `offline` and `degraded` come with `connected` (the
 * session lives on) and win; offline wins over degraded (the network, not the server, is gone).
 */
const byPriority = [
  'failed',
  'closed',
  'closing',
  // F4: no working server for now; the chart tries again (nextRetry says when, waitingReason why).
  'waiting',
  'authorizing',
  'offline',
  'reconnecting',
  'degraded',
  'connecting',
  'connected',
] as const;

/** U3, W2, W6: the one word a badge shows for a snapshot of `transport.actor` (its era: `connectionEra`). */
export function connectionStatus(snapshot: SnapshotFrom<ConnectionMachine>): ConnectionStatus {
  return byPriority.find((tag) => snapshot.hasTag(tag)) ?? 'idle';
}

/**
 * W6: why the status is `degraded` (the latest failure, as its error says it: "POST: HTTP 503
 * Service Unavailable", "GET failed before any response: ECONNREFUSED"), or undefined when it is
 * not. With `nextRetry` it is the line under an amber badge.
 */
export function degradedReason(snapshot: SnapshotFrom<ConnectionMachine>): string | undefined {
  // Only while the badge says degraded: offline or closing win over it, and their word needs no such line.
  if (connectionStatus(snapshot) !== 'degraded') return undefined;
  return snapshot.context.degradedBy?.message;
}

/**
 * F4: why the status is `waiting` (the failure that ended the last attempt: "POST failed before
 * any response: ECONNREFUSED", "POST: HTTP 503 Service Unavailable"), or undefined when it is not.
 * With `nextRetry` (stream `connection`) it is the line under the badge.
 */
export function waitingReason(snapshot: SnapshotFrom<ConnectionMachine>): string | undefined {
  if (connectionStatus(snapshot) !== 'waiting') return undefined;
  return snapshot.context.recoveryWait?.cause.message;
}

/**
 * E1: the protocol era the connection speaks, from the chart: `modern` (2026-07-28, sessionless),
 * `streamable` (2025-03-26 … 2025-11-25, sessions), `httpSse` (2024-11-05); undefined until decided.
 */
export function connectionEra(snapshot: SnapshotFrom<ConnectionMachine>): Era | undefined {
  return snapshot.context.era;
}

/** W3: the next reconnect a UI can announce ("reconnecting in 3 s, attempt 2"). */
export interface NextRetry {
  /**
   * What waits: the standalone GET stream, a request's POST stream waiting to resume, or the
   * connection itself (F3, F4: a new session, or the 2026-07-28 server, tried again).
   */
  stream: 'standalone' | 'request' | 'connection';
  /** The attempt the wait leads to, 1-based; past `maxRetries` the standalone stream is at its ceiling (G5). */
  attempt: number;
  /** When it is due (epoch ms) and the whole wait's length. */
  dueAt: number;
  delayMs: number;
  /** Time left from `now`, never negative. */
  inMs: number;
}

interface WaitingChild {
  // Children that are not charts (the network signal, a DELETE) have no context and no tags.
  getSnapshot(): { hasTag?: (tag: string) => boolean; context?: { wait?: PlannedWait | undefined } };
}

/**
 * W3: the soonest reconnect any stream of the transport waits for, or undefined when none waits
 * (a wait paused offline is not counted: nothing is due until the network is back). Read it from
 * `transport.actor.getSnapshot()` on a timer while showing a countdown (the streams are child
 * actors: the root snapshot does not change as their waits begin and end).
 */
export function nextRetry(snapshot: SnapshotFrom<ConnectionMachine>, now: number = Date.now()): NextRetry | undefined {
  let soonest: NextRetry | undefined;
  // F3, F4: the chart's own wait (the backoff between re-initializes, or `waiting`), planned in its context (W3).
  const own = snapshot.context.recoveryWait;
  if (own !== undefined && (snapshot.hasTag('waiting') || snapshot.hasTag('backoff'))) {
    soonest = { stream: 'connection', attempt: own.attempt, dueAt: own.dueAt, delayMs: own.delayMs, inMs: Math.max(own.dueAt - now, 0) };
  }
  for (const [id, child] of Object.entries(snapshot.children) as [string, WaitingChild | undefined][]) {
    const state = child?.getSnapshot();
    const wait = state?.context?.wait;
    if (wait === undefined || state?.hasTag?.('waiting') !== true) continue;
    if (soonest !== undefined && soonest.dueAt <= wait.dueAt) continue;
    soonest = {
      stream: id === 'standalone' ? 'standalone' : 'request',
      attempt: wait.attempt,
      dueAt: wait.dueAt,
      delayMs: wait.delayMs,
      inMs: Math.max(wait.dueAt - now, 0),
    };
  }
  return soonest;
}
