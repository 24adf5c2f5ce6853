import { and, assign, enqueueActions, fromPromise, sendParent, setup, stateIn } from 'xstate';
import type { ChartOptions, GetResult, NetworkEvent, OpenStream } from './types.js';
import type { ReadStreamInput, ReconnectDue, StreamReaderEvent } from './post-stream-types.js';
import {
  ceilingDelay,
  isResumableEventId,
  nextReconnectDelay,
  plannedDelay,
  planWait,
  waitImplementations,
  waitStates,
  type PlannedWait,
  type WaitContext,
} from './backoff.js';
import { idleWatch, idleWatchStates } from './idle-watch.js';
import { scheduledWait } from './scheduled-wait.js';
import { isSessionMissing, statusOf, StreamEndedError, toError } from './errors.js';

/** The optional server-to-client stream of a session (G1–G6). */
export interface StandaloneStreamInput {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  options: ChartOptions;
  /** W1: a restored session's stream resumes from this event id (Last-Event-ID on its first GET). */
  lastEventId?: string | undefined;
  /** W2: the network is known to be gone as the stream begins. */
  offline?: boolean | undefined;
}

export interface OpenStandaloneInput {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  lastEventId: string | undefined;
  /** G2: the stream was open before in this session: a 404 now means the session is gone, not "no GET route". */
  established: boolean;
}

/** The connection chart's word to the stream: its session is closing (F1). */
export type StandaloneCommand = { type: 'windDown' };

export type StandaloneStreamReport =
  | { type: 'standalone.sessionMissing'; error: Error }
  | { type: 'standalone.degraded'; error: Error }
  | { type: 'standalone.unauthorized'; error: Error }
  /**
   * W6: the stream waits to reconnect (`error`: why it ended or could not open; undefined for a
   * clean end); `spent`: past its retry budget, without progress (G5).
   */
  | { type: 'standalone.waiting'; error: Error | undefined; spent: boolean }
  /** W6: the stream is open (again). */
  | { type: 'standalone.listening' }
  /** G2: the server refused the GET (no stream offered): said once the chart knows the session is not closing (F1). */
  | { type: 'warning'; error: Error; once?: undefined };

export interface StandaloneStreamContext extends StandaloneStreamInput, WaitContext {
  stream: OpenStream | undefined;
  lastEventId: string | undefined;
  seenIds: Set<string>;
  retryMs: number | undefined;
  /** Reconnects made since the last progress (R5); past the budget the stream waits at the ceiling (G5). */
  attempt: number;
  /** R4: the next wait follows a stream that ended (its `retry` applies) or an open that failed (backoff). */
  waitAfter: 'ended' | 'failed';
  /** G2: the stream has been open in this session. */
  established: boolean;
  lastError: Error | undefined;
  /** W3: the reconnect wait (tag `waiting`): its attempt and due time. */
  wait: PlannedWait | undefined;
  /** W2: the network is gone; a reconnect wait pauses. */
  offline: boolean;
}

export { resumePoint } from './standalone-resume.js';

const notProvided = (name: string) => () => {
  throw new Error(`actor '${name}' must be provided with machine.provide({ actors })`);
};

const actionNotProvided = (name: string) => new Error(`action '${name}' must be provided with machine.provide({ actions })`);

/** What the reader of the stream just opened reads: the stream, and where its ids go (R7, W1). */
function readerInput(context: StandaloneStreamContext): ReadStreamInput {
  if (!context.stream) throw new Error('listening without a stream');
  return {
    stream: context.stream,
    requestIds: [],
    lastEventId: context.lastEventId,
    seenIds: context.seenIds,
    replay: false,
    onEventId: undefined,
  };
}

/** What the GET resolved to, handed to guards and actions as typed params. */
const streamResult = ({ event }: { event: { output: GetResult } }) => ({ result: event.output });

/** Why the GET failed, handed to guards and actions as typed params. */
const failure = ({ event }: { event: { error: unknown } }) => ({ error: event.error });

const standaloneStreamSetup = setup({
  types: {
    context: {} as StandaloneStreamContext,
    input: {} as StandaloneStreamInput,
    events: {} as StreamReaderEvent | ReconnectDue | StandaloneCommand | NetworkEvent,
  },
  actors: {
    openStandalone: fromPromise<GetResult, OpenStandaloneInput>(notProvided('openStandalone')),
    scheduledWait,
  },
  guards: {
    gotStream: (_, params: { result: GetResult }) => params.result.kind === 'sse',
    isSessionMissing: (_, params: { error: unknown }) => isSessionMissing(params.error),
    isUnauthorized: (_, params: { error: unknown }) => statusOf(params.error) === 401,
    withinBudget: ({ context }) => context.attempt <= context.options.reconnection.maxRetries,
  },
  delays: {
    ceilingDelay: ({ context }) => plannedDelay(context, ceilingDelay),
  },
  actions: {
    planWait: assign(({ context }, params: { delayOf: (context: WaitContext) => number }) => ({ wait: planWait(context, params.delayOf) })),
    noteOffline: assign({ offline: true }),
    noteOnline: assign({ offline: false }),
    reportSessionMissing: sendParent((_, params: { error: unknown }): StandaloneStreamReport => ({
      type: 'standalone.sessionMissing',
      error: toError(params.error),
    })),
    /** Told once, when the budget is first spent; later rounds at the ceiling stay quiet. */
    reportDegraded: enqueueActions(({ context, enqueue }) => {
      if (context.attempt !== context.options.reconnection.maxRetries + 1) return;
      const report: StandaloneStreamReport = {
        type: 'standalone.degraded',
        error: new StreamEndedError(
          `standalone stream: ${context.attempt} reconnects without progress; retrying every ${ceilingDelay(context)} ms`,
          { cause: context.lastError },
        ),
      };
      enqueue.sendParent(report);
    }),
    reportUnauthorized: sendParent((_, params: { error: unknown }): StandaloneStreamReport => ({
      type: 'standalone.unauthorized',
      error: toError(params.error),
    })),
    /** W6: the connection chart hears each wait and each open, to say whether the server is failing. */
    reportWaiting: sendParent(({ context }): StandaloneStreamReport => ({
      type: 'standalone.waiting',
      error: context.lastError,
      spent: context.attempt > context.options.reconnection.maxRetries,
    })),
    reportListening: sendParent((): StandaloneStreamReport => ({ type: 'standalone.listening' })),
    /**
     * G2: why the server offers no stream (a refusal, a content type that is no stream), told by
     * the chart: a GET let finish while the session closes (F1) was refused by a server that had
     * already ended the session, which is no news.
     */
    reportRefusal: enqueueActions(({ enqueue }, params: { result: GetResult }) => {
      if (params.result.kind === 'unsupported' && params.result.warning !== undefined) {
        const report: StandaloneStreamReport = { type: 'warning', error: params.result.warning };
        enqueue.sendParent(report);
      }
    }),
    countAttempt: assign({ attempt: ({ context }) => context.attempt + 1 }),
    adoptStream: assign((_, params: { result: GetResult }) =>
      params.result.kind === 'sse' ? { stream: params.result.stream, established: true } : {},
    ),
  },
})
  .extend(waitImplementations)
  .extend(idleWatch)
  .extend({
    actions: {
      /**
       * The reader of a held stream (issue 44): `listening` starts it on entry and stops it on exit
       * (and the host stops it when this actor stops), and it tells this actor what it read
       * (`stream.ended`); the host provides the three. An invoked reader was an actor of its own,
       * ~1.7 KiB per held session (docs/benchmark.md, "What a held session is made of").
       */
      startReading: (_: unknown, _input: ReadStreamInput): void => {
        throw actionNotProvided('startReading');
      },
      stopReading: (): void => {
        throw actionNotProvided('stopReading');
      },
      /** R9: asks the reader whether anything arrived since the last check. */
      checkIdle: (): void => {
        throw actionNotProvided('checkIdle');
      },
    },
  });

export const standaloneStreamMachine = standaloneStreamSetup.createMachine({
  id: 'standaloneStream',
  // Every field named (no spread of the input; see the POST stream's context).
  context: ({ input }) => ({
    sessionId: input.sessionId,
    protocolVersion: input.protocolVersion,
    options: input.options,
    stream: undefined,
    lastEventId: input.lastEventId,
    seenIds: new Set<string>(),
    retryMs: undefined,
    attempt: 0,
    waitAfter: 'ended',
    // W1: a restored stream with a place to resume from was open before the reload: a 404 means the session is gone.
    established: input.lastEventId !== undefined,
    lastError: undefined,
    wait: undefined,
    offline: input.offline ?? false,
  }),
  initial: 'opening',
  // F1: a session closing needs no more reconnects; a stream being read drains first (see listening).
  on: { windDown: '.gone', 'network.offline': { actions: 'noteOffline' }, 'network.online': { actions: 'noteOnline' } },
  states: {
    opening: {
      initial: 'requesting',
      states: {
        requesting: {},
        /**
         * F1: the session is closing: the GET already on its way is let finish rather than aborted
         * (aborting it would cost its connection), then drained; the chart's timeouts bound both.
         */
        windingDown: {},
      },
      on: { windDown: '.windingDown' },
      invoke: {
        src: 'openStandalone',
        input: ({ context }) => ({
          sessionId: context.sessionId,
          protocolVersion: context.protocolVersion,
          lastEventId: context.lastEventId,
          established: context.established,
        }),
        onDone: [
          {
            guard: and([stateIn('#standaloneStream.opening.windingDown'), { type: 'gotStream', params: streamResult }]),
            target: 'listening.draining',
            actions: { type: 'adoptStream', params: streamResult },
          },
          {
            guard: { type: 'gotStream', params: streamResult },
            target: 'listening',
            actions: { type: 'adoptStream', params: streamResult },
          },
          // F1: the session is closing; a GET it let finish that found no stream just ends.
          { guard: stateIn('#standaloneStream.opening.windingDown'), target: 'gone' },
          { target: 'unsupported', actions: { type: 'reportRefusal', params: streamResult } },
        ],
        onError: [
          { guard: stateIn('#standaloneStream.opening.windingDown'), target: 'gone' },
          {
            guard: { type: 'isSessionMissing', params: failure },
            target: 'gone',
            actions: { type: 'reportSessionMissing', params: failure },
          },
          { guard: { type: 'isUnauthorized', params: failure }, target: 'gone', actions: { type: 'reportUnauthorized', params: failure } },
          {
            target: 'retrying',
            actions: [assign({ lastError: ({ event }) => toError(event.error), waitAfter: 'failed' }), 'countAttempt'],
          },
        ],
      },
    },
    listening: {
      entry: ['reportListening', { type: 'startReading', params: ({ context }) => readerInput(context) }],
      exit: 'stopReading',
      // R9: the idle watch runs while the reader reads.
      initial: 'choosing',
      states: {
        ...idleWatchStates,
        /** The session is closing: read until the server ends the stream, then stop (F1). */
        draining: {},
      },
      on: {
        windDown: '.draining',
        'stream.ended': [
          { guard: stateIn('#standaloneStream.listening.draining'), target: 'gone' },
          {
            target: 'retrying',
            actions: assign({
              stream: undefined,
              // R11: an id that cannot be a Last-Event-ID header is not kept: the stream reopens fresh.
              lastEventId: ({ context, event }) =>
                event.end.lastEventId !== undefined && isResumableEventId(event.end.lastEventId)
                  ? event.end.lastEventId
                  : context.lastEventId,
              retryMs: ({ context, event }) => event.end.retryMs ?? context.retryMs,
              attempt: ({ context, event }) => (event.end.progressed ? 1 : context.attempt + 1),
              waitAfter: 'ended',
              lastError: ({ event }) => event.end.error,
            }),
          },
        ],
      },
    },
    /** Chooses between ordinary backoff and waiting at the ceiling once the budget is spent (G5). */
    retrying: {
      entry: 'reportWaiting',
      always: [{ guard: 'withinBudget', target: 'backoff' }, { target: 'degraded' }],
    },
    backoff: waitStates('reconnectDelay', '#standaloneStream.opening', nextReconnectDelay),
    /** Past the retry budget: still trying, at the maximum delay; the session is unaffected (G5). */
    degraded: {
      entry: 'reportDegraded',
      ...waitStates('ceilingDelay', '#standaloneStream.opening', ceilingDelay),
    },
    /** 405 or another refusal: the server offers no standalone stream (G2). */
    unsupported: { type: 'final' },
    /** The server no longer knows the session, or wants authorization: the connection chart decides what follows. */
    gone: { type: 'final' },
  },
});
