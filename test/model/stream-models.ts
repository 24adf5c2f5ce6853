/**
 * Abstract models of the two stream machines (machines/standalone-stream.ts, machines/post-stream.ts)
 * for model-based testing, as test/model/model.ts is of the connection chart: exactly the real
 * machine's states (same ids; the POST model adds one, `idle`: no POST stream actor exists), no
 * `invoke` and no `after`, driven by what the world does to one stream in an open session:
 *
 * - the server: its answers to the stream's requests (the standalone GET, a call's POST, the GET that
 *   resumes it) and what it writes on an open stream (an event with a resumable id, one with an id
 *   that cannot be sent back, the response, the end, silence);
 * - the caller: one message (a call on the data plane or through the chart, a notification, a
 *   resumption with a token, `resumeStream()`), `close()`;
 * - the host: its network signal (W2), and the caller's reconnectionScheduler saying a wait is over.
 *
 * Each configuration fixes how waits end (the caller's scheduler, the chart's own timers kept long so
 * the world can act during them, or short so they end by themselves), whether streams are watched
 * for silence (R9) and the retry budget. The executor (stream-executor.ts) runs every path against
 * the real transport and the puppet server, comparing the real machine's state after every step.
 */
import { assign, setup } from 'xstate';

export type StreamEventType =
  // the caller
  | 'send.request'
  | 'send.charted'
  | 'send.notification'
  | 'resume'
  | 'resume.bad'
  | 'resumeStream'
  | 'close'
  // the host
  | 'net.offline'
  | 'net.online'
  | 'wait.due'
  // the server: the standalone GET, or the GET that resumes a POST stream
  | 'get.stream'
  | 'get.404'
  | 'get.405'
  | 'get.401'
  | 'get.500'
  /** R6: a transient answer to a resume GET (retried under the budget). */
  | 'get.503'
  // ... a call's or a notification's POST
  | 'post.json'
  | 'post.202'
  | 'post.sse'
  | 'post.500'
  // ... on an open event stream
  | 'stream.event'
  | 'stream.badId'
  | 'stream.response'
  | 'stream.end'
  | 'stream.silence'
  /** E13: the server writes notifications/cancelled for the call on its stream (which ends it). */
  | 'stream.cancel';

export type StreamEvent = { type: StreamEventType };

export interface StreamConfig {
  name: string;
  machine: 'standalone' | 'post';
  /** How a reconnect wait ends: the caller's reconnectionScheduler (the world fires it), or the chart's timers, hour-long or short. */
  waits: 'scheduler' | 'long' | 'short';
  /** streamIdleTimeout is set (R9): streams are watched for silence, and every call goes through the chart. */
  idle: boolean;
  maxRetries: number;
  events: readonly StreamEventType[];
}

/** What the server holds of this stream: a request waiting for its answer, or an open event stream. */
export type Held = 'none' | 'post' | 'postStream' | 'get' | 'getStream';

interface Common {
  config: StreamConfig;
  held: Held;
  /** Reconnects since the last progress, capped where the machines no longer tell values apart. */
  attempt: number;
  /** The current stream showed an event (the reader's `progressed`). */
  progressed: boolean;
  /** W2: the host's network signal says offline. */
  offline: boolean;
}

export interface StandaloneContext extends Common {
  /** G2: the stream has been open in this session. */
  established: boolean;
  /** close() was called: the stream winds down. */
  closing: boolean;
}

export type MessageKind = 'none' | 'request' | 'notification' | 'resume' | 'badResume' | 'resumeStream';

export interface PostContext extends Common {
  /** What the caller sent (one message per path). */
  kind: MessageKind;
  /** The call went on the data plane: no POST stream actor unless its stream is handed over. */
  direct: boolean;
  /** The data plane handed the call's stream over when it ended early. */
  interrupted: boolean;
  /** The last event id of the message's streams: none, one that can be sent back, or one that cannot (R11). */
  lastId: 'none' | 'ok' | 'bad';
  /** E13: the stream the data plane handed over ended with the server's notifications/cancelled for the call. */
  cancelled: boolean;
}

/** No value the machines tell apart lies past maxRetries + 2 (G5 reports at maxRetries + 1). */
const capped = (context: Common, attempt: number) => Math.min(attempt, context.config.maxRetries + 2);

const waitGuards = {
  isOffline: ({ context }: { context: Common }) => context.offline,
  isOnline: ({ context }: { context: Common }) => !context.offline,
  hasScheduler: ({ context }: { context: Common }) => context.config.waits === 'scheduler',
  /** Short timers end the wait by themselves; the model passes through `timed` at once. */
  shortWaits: ({ context }: { context: Common }) => context.config.waits === 'short',
  watchesIdle: ({ context }: { context: Common }) => context.config.idle,
};

/** The sub-states of a reconnect wait (machines/backoff.ts `waitStates`), ending at `target`. */
function waitModel<const Target extends string>(target: Target) {
  return {
    initial: 'choosing',
    states: {
      choosing: { always: [{ guard: 'isOffline', target: 'paused' }, { guard: 'hasScheduler', target: 'scheduled' }, { target: 'timed' }] },
      timed: {
        always: [{ guard: 'shortWaits', target }],
        on: { 'net.offline': { target: 'paused', actions: 'noteOffline' } },
      },
      scheduled: { on: { 'wait.due': target, 'net.offline': { target: 'paused', actions: 'noteOffline' } } },
      paused: { on: { 'net.online': { target, actions: 'noteOnline' } } },
    },
  } as const;
}

/** What both models start from: nothing held, no attempt, online. */
const commonContext = (config: StreamConfig) => ({ config, held: 'none' as const, attempt: 0, progressed: false, offline: false });

/** The network signal (W2): every stream actor hears it. */
const networkSignal = {
  'net.offline': { guard: 'isOnline', actions: 'noteOffline' },
  'net.online': { guard: 'isOffline', actions: 'noteOnline' },
} as const;

const idleWatchModel = {
  choosing: { always: [{ guard: 'watchesIdle', target: 'watching' }, { target: 'unwatched' }] },
  watching: {},
  unwatched: {},
} as const;

// ------------------------------------------------------------------------------------------------
// The standalone stream

export const standaloneModel = setup({
  types: { context: {} as StandaloneContext, events: {} as StreamEvent, input: {} as StreamConfig },
  guards: {
    ...waitGuards,
    established: ({ context }) => context.established,
    /** F1: the session is closing (the GET still opening is let finish; the stream being read drains). */
    isClosing: ({ context }) => context.closing,
    notClosing: ({ context }) => !context.closing,
    withinBudget: ({ context }) => context.attempt <= context.config.maxRetries,
  },
  actions: {
    noteOffline: assign({ offline: true }),
    noteOnline: assign({ offline: false }),
    windDown: assign({ closing: true }),
    /** A GET is on its way. */
    request: assign({ held: 'get', progressed: false }),
    adoptStream: assign({ held: 'getStream', established: true, progressed: false }),
    /** The GET failed (status, network): one more attempt. */
    failedAttempt: assign(({ context }) => ({ held: 'none' as const, attempt: capped(context, context.attempt + 1) })),
    /** The stream ended: the attempt count starts again after progress (R5). */
    streamEnded: assign(({ context }) => ({
      held: 'none' as const,
      attempt: capped(context, context.progressed ? 1 : context.attempt + 1),
    })),
    released: assign({ held: 'none' }),
  },
}).createMachine({
  id: 'standaloneStream',
  context: ({ input }) => ({ ...commonContext(input), established: false, closing: false }),
  initial: 'opening',
  on: {
    close: { guard: 'notClosing', target: '.gone', actions: 'windDown' },
    ...networkSignal,
  },
  states: {
    opening: {
      entry: 'request',
      initial: 'requesting',
      states: { requesting: {}, windingDown: {} },
      on: {
        close: { guard: 'notClosing', target: '.windingDown', actions: 'windDown' },
        'get.stream': [
          { guard: 'isClosing', target: 'listening.draining', actions: 'adoptStream' },
          { target: 'listening', actions: 'adoptStream' },
        ],
        // G2: after the stream was open, a 404 says the session is gone; on the first GET, no GET route.
        // F1: a GET let finish at close that found no stream just ends it, with no warning (the
        // DELETE may have overtaken it, and the server then answers 404 to a session it has ended).
        'get.404': [
          { guard: 'isClosing', target: 'gone', actions: 'released' },
          { guard: 'established', target: 'gone', actions: 'released' },
          { target: 'unsupported', actions: 'released' },
        ],
        'get.405': [
          { guard: 'isClosing', target: 'gone', actions: 'released' },
          { target: 'unsupported', actions: 'released' },
        ],
        // Not an authorizing transport: a refusal (with a warning), like 405.
        'get.401': [
          { guard: 'isClosing', target: 'gone', actions: 'released' },
          { target: 'unsupported', actions: 'released' },
        ],
        'get.500': [
          { guard: 'isClosing', target: 'gone', actions: 'released' },
          { target: 'retrying', actions: 'failedAttempt' },
        ],
      },
    },
    listening: {
      initial: 'choosing',
      states: { ...idleWatchModel, draining: {} },
      on: {
        close: { guard: 'notClosing', target: '.draining', actions: 'windDown' },
        'stream.event': { actions: assign({ progressed: true }) },
        'stream.end': [
          { guard: 'isClosing', target: 'gone', actions: 'released' },
          { target: 'retrying', actions: 'streamEnded' },
        ],
        // R9: a silent stream is ended by the idle watch, as if dropped (not while draining: no watch runs then).
        'stream.silence': { guard: 'notClosing', target: 'retrying', actions: 'streamEnded' },
      },
    },
    retrying: { always: [{ guard: 'withinBudget', target: 'backoff' }, { target: 'degraded' }] },
    backoff: waitModel('#standaloneStream.opening'),
    degraded: waitModel('#standaloneStream.opening'),
    unsupported: { type: 'final' },
    gone: { type: 'final' },
  },
});

// ------------------------------------------------------------------------------------------------
// A POST stream (one message)

export const postModel = setup({
  types: { context: {} as PostContext, events: {} as StreamEvent, input: {} as StreamConfig },
  guards: {
    ...waitGuards,
    charted: ({ context }) => context.config.idle,
    wasInterrupted: ({ context }) => context.interrupted,
    cancelledByServer: ({ context }) => context.cancelled,
    badToken: ({ context }) => context.kind === 'badResume',
    isResumption: ({ context }) => context.kind === 'resume' || context.kind === 'resumeStream',
    isRequest: ({ context }) => context.kind === 'request' || context.kind === 'resume',
    isNotification: ({ context }) => context.kind === 'notification',
    /** `resumeStream()` and a notification await no response: the stream's end is their end. */
    awaitsNothing: ({ context }) => context.kind === 'notification' || context.kind === 'resumeStream',
    /** R1, R5: an id to resume from, and budget left (progress starts the count again). */
    canResume: ({ context }) => context.lastId === 'ok' && (context.progressed ? 0 : context.attempt) <= context.config.maxRetries,
    /**
     * R12: a resumed stream (the GET's) ended with no event and no budget left: the real chart fails
     * it naming the empty resumes (emptyResumesSpent), not as an ordinary end. A transition of its
     * own, so the covering subset of paths takes it.
     */
    emptyResumesSpent: ({ context }) =>
      context.held === 'getStream' && !context.progressed && context.lastId === 'ok' && context.attempt > context.config.maxRetries,
    /** R11: the last id cannot be sent back as Last-Event-ID. */
    endedUnsendable: ({ context }) => context.lastId === 'bad',
    /** R6: a 5xx spends the budget (offline it spends none: W2). */
    canRetry: ({ context }) => context.offline || context.attempt <= context.config.maxRetries,
  },
  actions: {
    noteOffline: assign({ offline: true }),
    noteOnline: assign({ offline: false }),
    sendPost: assign({ held: 'post' }),
    request: assign({ held: 'get', progressed: false }),
    released: assign({ held: 'none' }),
    openStream: assign(({ context }) => ({
      held: context.held === 'get' ? ('getStream' as const) : ('postStream' as const),
      progressed: false,
    })),
    goodId: assign({ lastId: 'ok', progressed: true }),
    badId: assign({ lastId: 'bad', progressed: true }),
    /** adoptEnd: the wait before resuming (R4). */
    adoptEnd: assign(({ context }) => ({ held: 'none' as const, attempt: capped(context, context.progressed ? 1 : context.attempt + 1) })),
    failedAttempt: assign(({ context }) => ({ held: 'none' as const, attempt: capped(context, context.attempt + 1) })),
  },
}).createMachine({
  id: 'postStream',
  context: ({ input }) => ({ ...commonContext(input), kind: 'none', direct: false, interrupted: false, lastId: 'none', cancelled: false }),
  initial: 'idle',
  on: networkSignal,
  states: {
    /** Model only: no POST stream actor (nothing sent yet, or the call is on the data plane). */
    idle: {
      on: {
        // no POST stream actor to tell (the root's handlers stand for the actor's own)
        ...networkSignal,
        'send.request': [
          { guard: 'charted', target: 'starting', actions: [assign({ kind: 'request' }), 'sendPost'] },
          // the data plane: the facade POSTs the call itself
          { actions: [assign({ kind: 'request', direct: true }), 'sendPost'] },
        ],
        // onresumptiontoken: only the chart can call it back, so the call goes through the chart
        'send.charted': { target: 'starting', actions: [assign({ kind: 'request' }), 'sendPost'] },
        'send.notification': { target: 'starting', actions: [assign({ kind: 'notification' }), 'sendPost'] },
        resume: { target: 'starting', actions: assign({ kind: 'resume', lastId: 'ok' }) },
        'resume.bad': { target: 'starting', actions: assign({ kind: 'badResume', lastId: 'bad' }) },
        resumeStream: { target: 'starting', actions: assign({ kind: 'resumeStream', lastId: 'ok' }) },
        // the data plane's call: answered without the chart, or its stream handed over when it ends early
        'post.json': { actions: [assign({ direct: false }), 'released'] },
        'post.500': { actions: [assign({ direct: false }), 'released'] },
        'post.sse': { actions: 'openStream' },
        'stream.event': { actions: 'goodId' },
        'stream.badId': { actions: 'badId' },
        'stream.response': { actions: [assign({ direct: false }), 'released'] },
        'stream.end': { target: 'starting', actions: [assign({ direct: false, interrupted: true }), 'released'] },
        // E13: the server cancelled the call: its stream is handed over all the same, and fails it at once
        'stream.cancel': {
          guard: 'isRequest',
          target: 'starting',
          actions: [assign({ direct: false, interrupted: true, cancelled: true }), 'released'],
        },
      },
    },
    starting: {
      always: [
        { guard: 'wasInterrupted', target: 'interrupted' },
        { guard: 'badToken', target: 'failed' },
        { guard: 'isResumption', target: 'resuming' },
        { target: 'sending' },
      ],
    },
    /** The data plane's stream ended before the response: decided as if this machine had read it. */
    interrupted: {
      always: [
        { guard: 'awaitsNothing', target: 'done' },
        // E13: never resumed
        { guard: 'cancelledByServer', target: 'failed' },
        { guard: 'canResume', target: 'backoff', actions: 'adoptEnd' },
        { guard: 'endedUnsendable', target: 'failed' },
        { target: 'failed' },
      ],
    },
    sending: {
      on: {
        'post.202': { guard: 'isNotification', target: 'accepted', actions: 'released' },
        'post.json': { guard: 'isRequest', target: 'json', actions: 'released' },
        'post.sse': [
          // any 2xx to a notification is its acceptance: the body is not read (P-rules of the POST answer)
          { guard: 'isNotification', target: 'accepted', actions: 'released' },
          { target: 'streaming', actions: 'openStream' },
        ],
        'post.500': { target: 'failed', actions: 'released' },
      },
    },
    accepted: { type: 'final' },
    json: { type: 'final' },
    streaming: {
      initial: 'choosing',
      states: idleWatchModel,
      on: {
        'stream.event': { actions: 'goodId' },
        'stream.badId': { actions: 'badId' },
        'stream.response': { guard: 'isRequest', target: 'done', actions: 'released' },
        // E13: the server cancelled the call: it fails at once, never resumed
        'stream.cancel': { guard: 'isRequest', target: 'failed', actions: 'released' },
        'stream.end': [
          { guard: 'awaitsNothing', target: 'done', actions: 'released' },
          { guard: 'emptyResumesSpent', target: 'failed', actions: 'released' },
          { guard: 'canResume', target: 'backoff', actions: 'adoptEnd' },
          { guard: 'endedUnsendable', target: 'failed', actions: 'released' },
          { target: 'failed', actions: 'released' },
        ],
        // R9: the idle watch ends a silent stream as if it had dropped
        'stream.silence': [
          { guard: 'awaitsNothing', target: 'done', actions: 'released' },
          { guard: 'emptyResumesSpent', target: 'failed', actions: 'released' },
          { guard: 'canResume', target: 'backoff', actions: 'adoptEnd' },
          { guard: 'endedUnsendable', target: 'failed', actions: 'released' },
          { target: 'failed', actions: 'released' },
        ],
      },
    },
    backoff: waitModel('#postStream.resuming'),
    /** R1: GET with Last-Event-ID. */
    resuming: {
      entry: 'request',
      on: {
        'get.stream': { target: 'streaming', actions: 'openStream' },
        'get.405': { target: 'failed', actions: 'released' },
        // R6 (revised): a transient answer spends the budget; any other error status ends the call at once.
        'get.503': [
          { guard: 'canRetry', target: 'backoff', actions: 'failedAttempt' },
          { target: 'failed', actions: 'released' },
        ],
        'get.500': { target: 'failed', actions: 'released' },
      },
    },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
});

// ------------------------------------------------------------------------------------------------
// Which world events can happen

export type StandaloneSnapshot = ReturnType<typeof standaloneModel.transition>;
export type PostSnapshot = ReturnType<typeof postModel.transition>;
export type StreamSnapshot = StandaloneSnapshot | PostSnapshot;

const callerSends: readonly StreamEventType[] = [
  'send.request',
  'send.charted',
  'send.notification',
  'resume',
  'resume.bad',
  'resumeStream',
];

/** Whether the world can do `event` now: the server answers only what it holds; the caller sends one message, never offline. */
export function isStreamEventApplicable(snapshot: StreamSnapshot, event: StreamEvent): boolean {
  const context = snapshot.context;
  // A final state is the path's end: the stream actor is gone.
  if (snapshot.status === 'done' || !context.config.events.includes(event.type)) return false;
  const held = context.held;
  if (callerSends.includes(event.type)) return 'kind' in context && context.kind === 'none' && !context.offline;
  if (event.type.startsWith('post.')) return held === 'post';
  if (event.type.startsWith('get.')) return held === 'get';
  if (event.type.startsWith('stream.')) return held === 'postStream' || held === 'getStream';
  return true;
}

/** Applicable, and something the model says happens: the paths never take a step the model treats as nothing. */
export function isStreamEventTaken(snapshot: StreamSnapshot, event: StreamEvent): boolean {
  return isStreamEventApplicable(snapshot, event) && snapshot.can(event);
}

export function streamCandidateEvents(snapshot: StreamSnapshot): StreamEvent[] {
  return snapshot.context.config.events.map((type) => ({ type })).filter((event) => isStreamEventTaken(snapshot, event));
}

/** A vertex: the state and the context, without the (constant) configuration. */
export function serializeStreamState(snapshot: StreamSnapshot): string {
  const { config: _config, ...world } = snapshot.context;
  return `${JSON.stringify(snapshot.value)} ${JSON.stringify(world)}`;
}

// ------------------------------------------------------------------------------------------------
// Configurations

const standaloneEvents = ['get.stream', 'get.404', 'get.405', 'get.401', 'get.500', 'stream.event', 'stream.end'] as const;
const postResumeEvents = ['stream.event', 'stream.end', 'get.stream', 'get.503', 'get.500'] as const;

export const streamConfigs: readonly StreamConfig[] = [
  {
    name: 'standalone, scheduler',
    machine: 'standalone',
    waits: 'scheduler',
    idle: false,
    maxRetries: 1,
    events: [...standaloneEvents, 'wait.due', 'net.offline', 'net.online', 'close'],
  },
  {
    name: 'standalone, long timers',
    machine: 'standalone',
    waits: 'long',
    idle: false,
    maxRetries: 1,
    events: ['get.stream', 'get.500', 'stream.end', 'net.offline', 'net.online'],
  },
  {
    name: 'standalone, short timers',
    machine: 'standalone',
    waits: 'short',
    idle: false,
    maxRetries: 1,
    events: ['get.stream', 'get.500', 'stream.end', 'close'],
  },
  {
    name: 'standalone, idle watch',
    machine: 'standalone',
    waits: 'long',
    idle: true,
    maxRetries: 1,
    events: ['get.stream', 'stream.event', 'stream.silence', 'close'],
  },
  {
    name: 'post, data plane, scheduler',
    machine: 'post',
    waits: 'scheduler',
    idle: false,
    maxRetries: 1,
    events: [
      ...callerSends,
      'post.json',
      'post.202',
      'post.sse',
      'post.500',
      'stream.event',
      'stream.badId',
      'stream.response',
      'stream.end',
      'stream.cancel',
      'get.stream',
      'get.405',
      'get.503',
      'get.500',
      'wait.due',
      'net.offline',
      'net.online',
    ],
  },
  {
    name: 'post, long timers',
    machine: 'post',
    waits: 'long',
    idle: false,
    maxRetries: 1,
    events: ['send.request', 'post.sse', ...postResumeEvents, 'net.offline', 'net.online'],
  },
  {
    name: 'post, short timers',
    machine: 'post',
    waits: 'short',
    idle: false,
    maxRetries: 1,
    events: ['send.charted', 'post.sse', ...postResumeEvents],
  },
  {
    name: 'post, idle watch',
    machine: 'post',
    waits: 'scheduler',
    idle: true,
    maxRetries: 1,
    events: ['send.request', 'resumeStream', 'post.sse', 'stream.event', 'stream.badId', 'stream.silence', 'wait.due', 'get.stream'],
  },
];
