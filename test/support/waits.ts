/**
 * W3 in tests: every reconnect wait the chart planned, read from its stream children's
 * snapshots (`context.wait`, a PlannedWait) as the system's inspector sees them. Timing tests
 * assert these (what the chart chose) and keep only lower bounds on the wall clock: a loaded
 * machine makes a timer fire late, never early, so an upper bound on a measured gap is noise.
 */
import type { PlannedWait } from '../../src/index.js';

export interface SeenWait extends PlannedWait {
  /** The child that waits: `standalone`, or the POST stream's id. */
  stream: string;
}

interface Inspectable {
  actor: { system: { inspect(observer: (event: unknown) => void): unknown } };
}

const waitOf = (event: unknown): { stream: string; wait: PlannedWait } | undefined => {
  if (typeof event !== 'object' || event === null) return undefined;
  const e = event as { type?: unknown; actorRef?: { id?: unknown }; snapshot?: { context?: { wait?: unknown } } };
  if (e.type !== '@xstate.snapshot') return undefined;
  const wait = e.snapshot?.context?.wait;
  if (typeof wait !== 'object' || wait === null) return undefined;
  return { stream: String(e.actorRef?.id), wait: wait as PlannedWait };
};

/**
 * A recorder of each distinct wait (by stream, attempt and due time) a chart plans, in the order
 * planned: pass `inspect` as the transport's `inspect` option to see waits from the first one.
 */
export function waitRecorder(): { waits: SeenWait[]; inspect: (event: unknown) => void } {
  const waits: SeenWait[] = [];
  const keys = new Set<string>();
  const inspect = (event: unknown): void => {
    const found = waitOf(event);
    if (found === undefined) return;
    const key = `${found.stream} ${String(found.wait.attempt)} ${String(found.wait.dueAt)}`;
    if (keys.has(key)) return;
    keys.add(key);
    waits.push({ stream: found.stream, attempt: found.wait.attempt, delayMs: found.wait.delayMs, dueAt: found.wait.dueAt });
  };
  return { waits, inspect };
}

/** The waits the transport's chart plans from now on; attach before the fault that causes them. */
export function recordWaits(transport: Inspectable): SeenWait[] {
  const { waits, inspect } = waitRecorder();
  transport.actor.system.inspect(inspect);
  return waits;
}

/** The delays (ms) of the waits `stream` planned, in order. */
export const delaysOf = (waits: readonly SeenWait[], stream: string): number[] =>
  waits.filter((wait) => wait.stream === stream).map((wait) => wait.delayMs);

interface ScheduledEvent {
  event?: { type?: unknown };
  delay?: unknown;
}

/**
 * The delayed transitions (`after`) the chart has scheduled right now, as `{ type, delay }`:
 * what the chart chose to wait for, read from the actor system's scheduler.
 */
export function scheduledDelays(transport: { actor: { system: { getSnapshot(): unknown } } }): { type: string; delay: number }[] {
  const snapshot = transport.actor.system.getSnapshot() as { _scheduledEvents?: Record<string, ScheduledEvent> };
  return Object.values(snapshot._scheduledEvents ?? {}).map((scheduled) => ({
    type: String(scheduled.event?.type),
    delay: Number(scheduled.delay),
  }));
}

/** The delays (ms) of the chart's `after` transitions scheduled right now. */
export const afterDelays = (transport: Parameters<typeof scheduledDelays>[0]): number[] =>
  scheduledDelays(transport)
    .filter((scheduled) => scheduled.type.startsWith('xstate.after.'))
    .map((scheduled) => scheduled.delay);
