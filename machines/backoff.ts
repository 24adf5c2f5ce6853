import type { ChartOptions, ReconnectionOptions, ReconnectionScheduler } from './types.js';

export const defaultReconnection: ReconnectionOptions = {
  initialReconnectionDelay: 1_000,
  reconnectionDelayGrowFactor: 1.5,
  maxReconnectionDelay: 30_000,
  maxRetries: 5,
  jitter: true,
};

/**
 * R4: the shortest wait before any stream is reopened, whatever the server says (`retry: 0`,
 * instant refusals) or the options ask: no stream is reopened more than about 10 times a second.
 */
export const minReconnectDelay = 100;

/** Largest `retry:` honoured (X2: absurd values are clamped). */
export const maxServerRetryMs = 3_600_000;

/** A server `retry:` value as a usable delay: integers only, clamped to 0 … 1 hour. */
export function clampRetry(value: number): number | undefined {
  if (!Number.isFinite(value)) return undefined;
  return Math.min(Math.max(Math.trunc(value), 0), maxServerRetryMs);
}

/**
 * Delay before reconnect attempt `attempt` (1-based), R4: after a stream ended, its own `retry`
 * exactly (`retryMs`); otherwise `initial × grow^(attempt−1)` capped at the maximum, plus full
 * jitter. Never below the floor (`minReconnectDelay`).
 */
export function reconnectDelay(attempt: number, retryMs: number | undefined, options: ReconnectionOptions, random: () => number): number {
  if (retryMs !== undefined) return Math.max(retryMs, minReconnectDelay);
  const base = Math.min(
    options.initialReconnectionDelay * options.reconnectionDelayGrowFactor ** Math.max(attempt - 1, 0),
    options.maxReconnectionDelay,
  );
  return Math.max(options.jitter ? base + Math.floor(random() * base) : base, minReconnectDelay);
}

export interface ScheduledWaitInput {
  scheduler: ReconnectionScheduler;
  delay: number;
  /** Zero-based, as the SDK passes it: 0 for the first reconnect after a drop. */
  attempt: number;
}

/** W3: the wait a stream is in: which attempt comes next, and when it is due. */
export interface PlannedWait {
  /** The reconnect attempt the wait leads to, 1-based (past maxRetries: the standalone stream's ceiling, G5). */
  attempt: number;
  /** How long the wait is, in ms: computed once, when the wait begins (jitter included). */
  delayMs: number;
  /** When the attempt is due, on the clock of `options.now` (epoch ms by default). */
  dueAt: number;
}

/** What both stream charts keep about their reconnects. */
export interface WaitContext {
  attempt: number;
  retryMs: number | undefined;
  /**
   * What the wait follows: a stream that was open and ended ('ended', where the server's `retry`
   * applies), or an attempt to open one that failed ('failed': status, network; backoff only).
   */
  waitAfter: 'ended' | 'failed';
  options: ChartOptions;
  /** W3: the current (or last) wait; read it only while the stream carries the `waiting` tag. */
  wait: PlannedWait | undefined;
  /** W2: the host said the network is gone; a wait pauses instead of spending the budget. */
  offline: boolean;
}

/** The delay of the next reconnect of a stream (R4): `retry` never shortens the backoff after a failed attempt. */
export function nextReconnectDelay(context: WaitContext): number {
  const retryMs = context.waitAfter === 'ended' ? context.retryMs : undefined;
  return reconnectDelay(context.attempt, retryMs, context.options.reconnection, context.options.random);
}

/** The standalone stream's wait once its budget is spent (G5): the ceiling, or the server's longer `retry`. */
export function ceilingDelay(context: WaitContext): number {
  return Math.max(context.retryMs ?? 0, context.options.reconnection.maxReconnectionDelay, minReconnectDelay);
}

/**
 * R12: a POST stream whose resumes keep coming back empty (answered, but no event and no message)
 * settles within this long of its stream's first end (the first end since its last progress).
 */
export const emptyResumeWindowMs = 15_000;

/** R12: the latest a resume is planned after that first end: its GET keeps a second to be answered inside the window. */
export const lastResumeDueMs = emptyResumeWindowMs - 1_000;

/** What a POST stream keeps besides its waits (R12): the empty resumes since its last progress, and when that run began. */
export interface ResumeWaitContext extends WaitContext {
  /** Resumes answered with a stream that ended with no progress, since the last progress. */
  emptyResumes: number;
  /** When the stream first ended since its last progress (`options.now`); undefined before any end. */
  firstEndAt: number | undefined;
}

/** R12: how long is left, from now, to plan another resume of a stream whose resumes came back empty. */
export function emptyResumeTimeLeft(context: ResumeWaitContext): number {
  return context.firstEndAt === undefined ? lastResumeDueMs : context.firstEndAt + lastResumeDueMs - context.options.now();
}

/**
 * R4 within R12: the delay of a POST stream's next resume. Once a resume has come back empty, no
 * wait (jitter included) runs past `lastResumeDueMs` after the first end; the floor still holds.
 */
export function resumeDelay(context: ResumeWaitContext): number {
  const delay = nextReconnectDelay(context);
  if (context.emptyResumes === 0) return delay;
  return Math.max(Math.min(delay, emptyResumeTimeLeft(context)), minReconnectDelay);
}

/** R11: an event id that can be sent back as a `Last-Event-ID` header (visible ASCII, inner spaces allowed). */
export function isResumableEventId(id: string): boolean {
  return /^[\x21-\x7E](?:[\x20-\x7E]*[\x21-\x7E])?$/.test(id);
}

/** W3: a wait computed once, so the timer, a caller's scheduler and a UI all see the same delay. */
export function planWait<C extends WaitContext>(context: C, delayOf: (context: C) => number): PlannedWait {
  const delayMs = delayOf(context);
  return { attempt: context.attempt, delayMs, dueAt: context.options.now() + delayMs };
}

/** The planned delay of the wait that just began (the `after` timers read it). */
export function plannedDelay<C extends WaitContext>(context: C, delayOf: (context: C) => number): number {
  return context.wait?.delayMs ?? delayOf(context);
}

type WaitArgs = { context: WaitContext };

/**
 * The guards and the delay `waitStates()` names, written once: both stream charts register them
 * with `setup(…).extend(waitImplementations)`. Its actions (planWait, noteOffline, noteOnline) stay
 * in each chart's setup, since xstate types an action by its chart's context.
 */
export const waitImplementations = {
  guards: {
    hasScheduler: ({ context }: WaitArgs) => context.options.reconnectionScheduler !== undefined,
    isOffline: ({ context }: WaitArgs) => context.offline,
  },
  delays: {
    /** R4, planned once as the wait begins (W3). */
    reconnectDelay: ({ context }: WaitArgs) => plannedDelay(context, nextReconnectDelay),
  },
};

/**
 * The sub-states of one wait before a reconnect: the chart's own timer (`after`), or the
 * caller's reconnectionScheduler (SDK v2) when one is given. Both stream charts use it.
 * W3: the wait is planned on entry (`wait` in context, tag `waiting` while it runs).
 * W2: offline, the wait pauses (tag `offline`): no timer runs and no attempt is spent; `online`
 * goes to the target at once.
 */
export function waitStates<const Delay extends string, const Target extends string, C extends WaitContext = WaitContext>(
  delay: Delay,
  target: Target,
  delayOf: (context: C) => number,
) {
  return {
    initial: 'choosing',
    states: {
      choosing: {
        entry: { type: 'planWait', params: { delayOf } },
        always: [{ guard: 'isOffline', target: 'paused' }, { guard: 'hasScheduler', target: 'scheduled' }, { target: 'timed' }],
      },
      timed: {
        tags: ['waiting'],
        after: { [delay]: target } as Record<Delay, Target>,
        on: { 'network.offline': { target: 'paused', actions: 'noteOffline' } },
      },
      /** The caller's reconnectionScheduler decides when. */
      scheduled: {
        tags: ['waiting'],
        invoke: {
          src: 'scheduledWait',
          input: ({ context }: { context: C }): ScheduledWaitInput => ({
            scheduler: context.options.reconnectionScheduler ?? (() => undefined),
            delay: plannedDelay(context, delayOf),
            // Zero-based, as the SDK passes it.
            attempt: Math.max(context.attempt - 1, 0),
          }),
        },
        on: { 'reconnect.due': target, 'network.offline': { target: 'paused', actions: 'noteOffline' } },
      },
      /** W2: offline: nothing is tried and no attempt is spent until the network is back. */
      paused: {
        tags: ['offline'],
        on: { 'network.online': { target, actions: 'noteOnline' } },
      },
    },
  } as const;
}
