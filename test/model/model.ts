/**
 * An abstract model of the connection chart (machines/connection.ts) for model-based testing.
 *
 * It has exactly the real chart's states (same ids, same nesting, same transient states), but it is
 * driven by what the outside world does instead of by the chart's internal events: the caller
 * (start, send initialize / initialized / a request / a notification / a cancellation, close,
 * terminateSession) and the server (each answer to each kind of request that is parked at it).
 * It has no `invoke` and no `after`, so `createTestModel` accepts it.
 *
 * Its context is the world as the chart sees it, reduced to what decides a state or a transition:
 * - which requests are parked at the server (`out`): initialize, initialized, calls (tagged with the
 *   session they carried, relative to the chart's current one, and whether they are a first send or
 *   a re-send after a 404), notifications, legacy POSTs; the standalone/legacy GET, a DELETE, the
 *   OAuth token request;
 * - which messages wait in the chart's queue (`queue`);
 * - the few session facts the guards read (a session ID, the server said it is gone, the
 *   initialize request is cached, a session was just re-established).
 *
 * The mirror is kept honest three ways: the state ids are compared with the real chart's
 * (connection.model.test.ts), each generated path is run against the real transport with the state compared after
 * every step, and the real chart's transitions taken during those runs are counted against the
 * chart's full list.
 */
import { assign, or, raise, setup, stateIn } from 'xstate';

// ------------------------------------------------------------------------------------------------
// World vocabulary

/** The session a call carried: the chart's current one, an earlier one, or none. */
export type CarriedSession = 'cur' | 'old' | 'nos';
/** A first send by the caller, or the chart's re-send after a 404 (F3: at most once). */
export type SendOrigin = 'caller' | 'retry';
export type ReqTag = `${CarriedSession}:${SendOrigin}`;
export type LegacyKind = 'init' | 'req' | 'note';

/** A request parked at the server, waiting for its answer. */
export type OutTag = 'init' | 'initd' | 'note' | `req:${ReqTag}` | `lpost:${LegacyKind}`;
/**
 * A message in the chart's queue. `a`: it carries authorization attempts (held by a 401, or
 * re-queued by a 404); `s`: sent by the caller while the chart waited.
 */
export type QueueTag = 'init' | 'initd' | 'note' | `req:${SendOrigin}:${'a' | 's'}`;

export type GetState = 'none' | 'parked' | 'stream';

export interface ModelConfig {
  /** Name of the configuration (shown in path names). */
  name: string;
  /** `standaloneStream` option. */
  standalone: boolean;
  /** `sessionRecovery` option. */
  recovery: 'reinitialize' | 'fail';
  /** `legacyFallback` option. */
  legacy: boolean;
  /** An `authProvider` is given. */
  auth: boolean;
  /** A `sessionId` option: start resumes it instead of initializing. */
  presetSession: boolean;
  /** `deleteTimeout`: short (the DELETE on close is left unanswered) or long (it is answered). */
  deleteTimeout: 'short' | 'long';
  /** `legacyEndpointTimeout`: short, where the legacy GET may never name its endpoint; else the default. */
  legacyEndpointTimeout?: 'short' | undefined;
  /** Most calls (counting queued ones) outstanding at once. */
  maxCalls: number;
  /** Most notifications outstanding at once. */
  maxNotes: number;
  /** World events offered in this configuration. */
  events: readonly ModelEventType[];
}

export interface ModelContext {
  config: ModelConfig;
  /** The chart holds a session ID. */
  session: boolean;
  /** The server said the session is gone (no DELETE for it). */
  missing: boolean;
  /** The caller's initialize request is cached (F3 can re-initialize). */
  cached: boolean;
  /** A session was re-established and no call answered since. */
  recovered: boolean;
  /** A call sent while the data plane was open is parked: the facade, not a POST child, awaits its answer. */
  direct: boolean;
  authReturn: 'connecting' | 'initializing' | 'open';
  /** One authorization episode per path: after it, no further 401s are offered. */
  authDone: boolean;
  out: OutTag[];
  queue: QueueTag[];
  get: GetState;
  /** G2: the standalone stream has been open in this session (a 404 to it then means the session is gone). */
  getOpened: boolean;
  del: boolean;
  token: boolean;
  /** W2: the host's network signal says offline (it outlives the chart's `open`, where it is shown). */
  hostOffline: boolean;
}

// ------------------------------------------------------------------------------------------------
// Events

export type ModelEvent =
  // the caller
  | { type: 'start' }
  | { type: 'close' }
  | { type: 'terminate' }
  | { type: 'setProtocolVersion' }
  | { type: 'send.initialize' }
  | { type: 'send.initialized' }
  | { type: 'send.request' }
  | { type: 'send.notification' }
  | { type: 'send.cancel' }
  // the host's network signal (W2)
  | { type: 'net.offline' }
  | { type: 'net.online' }
  // the server, answering the caller's or the chart's initialize
  | { type: 'init.ok' }
  | { type: 'init.okNoSession' }
  | { type: 'init.rpcError' }
  | { type: 'init.500' }
  | { type: 'init.404' }
  | { type: 'init.405' }
  | { type: 'init.401' }
  // ... notifications/initialized
  | { type: 'initd.202' }
  | { type: 'initd.404' }
  | { type: 'initd.500' }
  | { type: 'initd.401' }
  // ... a call
  | { type: 'req.ok'; tag: ReqTag }
  | { type: 'req.otherSession'; tag: ReqTag }
  | { type: 'req.404'; tag: ReqTag }
  | { type: 'req.401'; tag: ReqTag }
  | { type: 'req.500'; tag: ReqTag }
  /** An SSE answer that ends before the response, with no event id (R2): the call fails. */
  | { type: 'req.cut'; tag: ReqTag }
  // ... a notification
  | { type: 'note.202' }
  // ... a POST to the legacy endpoint
  | { type: 'lpost.202'; kind: LegacyKind }
  | { type: 'lpost.500'; kind: LegacyKind }
  // ... the standalone GET, or the legacy transport's GET
  | { type: 'get.stream' }
  | { type: 'get.405' }
  | { type: 'get.404' }
  | { type: 'get.401' }
  | { type: 'get.500' }
  | { type: 'get.endpoint' }
  /** L1, F7: the legacy GET opens an event stream that never names its endpoint (legacyEndpointTimeout ends the wait). */
  | { type: 'get.silent' }
  | { type: 'get.drop' }
  // ... a DELETE
  | { type: 'del.200' }
  | { type: 'del.500' }
  | { type: 'del.drop' }
  | { type: 'del.hang' }
  // ... the OAuth token request of an authorization
  | { type: 'token.ok' }
  | { type: 'token.500' }
  // not a world event: the model's own word from session.closing to the standalone region
  | { type: 'windDown' }
  // not world events: W6, what the chart's open state and its standalone stream tell its health region
  | { type: 'health.trouble' }
  | { type: 'health.answered' }
  | { type: 'standalone.waiting' }
  | { type: 'standalone.listening' };

export type ModelEventType = ModelEvent['type'];

export const callerEvents = [
  'start',
  'close',
  'terminate',
  'setProtocolVersion',
  'send.initialize',
  'send.initialized',
  'send.request',
  'send.notification',
  'send.cancel',
  'net.offline',
  'net.online',
] as const satisfies readonly ModelEventType[];

// ------------------------------------------------------------------------------------------------
// Context helpers (pure)

function sorted<T extends string>(items: readonly T[]): T[] {
  return [...items].sort();
}

function without<T extends string>(items: readonly T[], item: T): T[] {
  const copy = [...items];
  const at = copy.indexOf(item);
  if (at >= 0) copy.splice(at, 1);
  return copy;
}

export function reqTagOf(tag: OutTag): ReqTag | undefined {
  return tag.startsWith('req:') ? (tag.slice(4) as ReqTag) : undefined;
}

const originOf = (tag: ReqTag): SendOrigin => (tag.endsWith(':retry') ? 'retry' : 'caller');
const carriedOf = (tag: ReqTag): CarriedSession => tag.slice(0, 3) as CarriedSession;

export function callCount(context: ModelContext): number {
  return (
    context.out.filter((tag) => tag.startsWith('req:') || tag === 'lpost:req').length +
    context.queue.filter((tag) => tag.startsWith('req:')).length
  );
}

export function noteCount(context: ModelContext): number {
  return context.out.filter((tag) => tag === 'note' || tag === 'lpost:note').length + context.queue.filter((tag) => tag === 'note').length;
}

/** Tags of parked calls, each once. */
export function parkedReqTags(context: ModelContext): ReqTag[] {
  const tags = new Set<ReqTag>();
  for (const tag of context.out) {
    const reqTag = reqTagOf(tag);
    if (reqTag !== undefined) tags.add(reqTag);
  }
  return [...tags].sort();
}

export function parkedLegacyKinds(context: ModelContext): LegacyKind[] {
  const kinds = new Set<LegacyKind>();
  for (const tag of context.out) if (tag.startsWith('lpost:')) kinds.add(tag.slice(6) as LegacyKind);
  return [...kinds].sort();
}

/** The chart's session changed: calls that carried the previous one now carry an old one. */
function ageCalls(out: readonly OutTag[]): OutTag[] {
  return sorted(out.map((tag): OutTag => (tag.startsWith('req:cur:') ? (`req:old:${tag.slice(8)}` as OutTag) : tag)));
}

/** flushQueue: every queued message is POSTed, in order, on the current session (or the legacy endpoint). */
function flushed(context: ModelContext, legacy: boolean): OutTag[] {
  const out = [...context.out];
  for (const queued of context.queue) {
    if (legacy) {
      out.push(queued === 'init' ? 'lpost:init' : queued === 'note' ? 'lpost:note' : 'lpost:req');
      continue;
    }
    if (queued === 'init' || queued === 'initd' || queued === 'note') {
      out.push(queued);
      continue;
    }
    const origin = queued.split(':')[1] as SendOrigin;
    out.push(`req:${context.session ? 'cur' : 'nos'}:${origin}`);
  }
  return sorted(out);
}

function newCall(context: ModelContext): OutTag {
  return `req:${context.session ? 'cur' : 'nos'}:caller`;
}

function tagOf(event: ModelEvent): ReqTag | undefined {
  return 'tag' in event ? event.tag : undefined;
}

// ------------------------------------------------------------------------------------------------
// The model

/** idle, closed and failed alike: start begins a session (the preset one opens at once); sends and terminate are refused. */
function stopped() {
  return {
    start: [
      { guard: 'presetSession', target: 'open', actions: 'startFresh' },
      { target: 'connecting', actions: 'startFresh' },
    ],
    'send.request': { actions: 'refuse' },
    'send.notification': { actions: 'refuse' },
    terminate: { actions: 'refuse' },
  } as const;
}

export const connectionModel = setup({
  types: {
    context: {} as ModelContext,
    events: {} as ModelEvent,
    input: {} as ModelConfig,
  },
  guards: {
    presetSession: ({ context }) => context.config.presetSession,
    hasSession: ({ context }) => context.session,
    noSession: ({ context }) => !context.session,
    /** The standalone stream waits to reconnect: no GET on its way, no stream being read. */
    waiting: ({ context }) => context.get === 'none',
    opening: ({ context }) => context.get === 'parked',
    directCall: ({ context }) => context.direct,
    getNeverOpened: ({ context }) => !context.getOpened,
    standaloneEnabled: ({ context }) => context.config.standalone,
    /** shouldTerminate (terminateOnClose is always true here). */
    shouldTerminate: ({ context }) => context.session && !context.missing,
    legacyFallback: ({ context }) => context.config.legacy,
    authorizes: ({ context }) => context.config.auth,
    recovered: ({ context }) => context.recovered,
    /** The answered call carried a session, so its 404 says the session is missing. */
    callCarriedSession: ({ event }) => {
      const tag = tagOf(event);
      return tag !== undefined && carriedOf(tag) !== 'nos';
    },
    callCarriedNoSession: ({ event }) => {
      const tag = tagOf(event);
      return tag !== undefined && carriedOf(tag) === 'nos';
    },
    /** isStaleSessionMissing: a call (first send or re-send, F3 revised) that carried an earlier session. */
    staleSessionMissing: ({ event }) => {
      const tag = tagOf(event);
      return tag !== undefined && carriedOf(tag) === 'old';
    },
    /** canRequeue: a call (a re-send too, F3 revised) met 404 while the session is re-established. */
    canRequeue: ({ event }) => {
      const tag = tagOf(event);
      return tag !== undefined && carriedOf(tag) !== 'nos';
    },
    /**
     * canRecover: asked to, and an initialize to repeat (F3 revised: a re-sent call that meets
     * another 404 recovers again; its re-sends are bounded, MAX_RESENDS, beyond what a path makes).
     */
    canRecover: ({ context }) => context.config.recovery === 'reinitialize' && context.cached,
    returnsToConnecting: ({ context }) => context.authReturn === 'connecting',
    returnsToInitializing: ({ context }) => context.authReturn === 'initializing',
    /** needsUserMidSession: the flow needed the user (the token refresh failed) in an open session. */
    midSession: ({ context }) => context.authReturn === 'open',
    hostOffline: ({ context }) => context.hostOffline,
  },
  actions: {
    /** rejectSend: the transport is not running; the promise is rejected at once. */
    refuse: () => undefined,
    acknowledge: () => undefined,
    ignore: () => undefined,
    /** W6: the chart's open state tells its health region (reportTrouble, reportAnswer). */
    trouble: raise({ type: 'health.trouble' }),
    answered: raise({ type: 'health.answered' }),
    /** W6: the standalone stream tells it too: it waits to reconnect (reportWaiting), it is open again (reportListening). */
    waiting: raise({ type: 'standalone.waiting' }),
    listening: raise({ type: 'standalone.listening' }),
    setVersion: () => undefined,
    startFresh: assign(({ context }) => ({
      session: context.config.presetSession,
      missing: false,
      cached: false,
      recovered: false,
      direct: false,
    })),
    /** The answered call is no longer parked. */
    answerCall: assign(({ context, event }) => {
      const tag = tagOf(event);
      return tag === undefined ? {} : { out: without(context.out, `req:${tag}`), direct: false };
    }),
    answerNote: assign(({ context }) => ({ out: without(context.out, 'note') })),
    answerLegacy: assign(({ context, event }) => ('kind' in event ? { out: without(context.out, `lpost:${event.kind}`) } : {})),
    /** holdForAuthorization: the call waits for the authorization, then goes again. */
    holdCall: assign(({ context, event }) => {
      const tag = tagOf(event);
      if (tag === undefined) return {};
      return { out: without(context.out, `req:${tag}`), queue: sorted([...context.queue, `req:${originOf(tag)}:a` as const]) };
    }),
    /** requeue: the call waits for the new session, as a re-send. */
    requeueCall: assign(({ context, event }) => {
      const tag = tagOf(event);
      if (tag === undefined) return {};
      return { out: without(context.out, `req:${tag}`), queue: sorted([...context.queue, 'req:retry:a' as const]) };
    }),
    expire: assign({ missing: true }),
    flush: assign(({ context }) => ({ out: flushed(context, false), queue: [] })),
    resetRecovered: assign({ recovered: false }),
    returnTo: assign((_, params: { state: ModelContext['authReturn'] }) => ({ authReturn: params.state })),
  },
}).createMachine({
  id: 'connection',
  context: ({ input }) => ({
    config: input,
    session: false,
    missing: false,
    cached: false,
    recovered: false,
    direct: false,
    authReturn: 'connecting',
    authDone: false,
    out: [],
    queue: [],
    get: 'none',
    getOpened: false,
    del: false,
    token: false,
    hostOffline: false,
  }),
  initial: 'idle',
  on: {
    setProtocolVersion: { actions: 'setVersion' },
    // W2: outside `open` the signal is not watched; entering `open` reads it again.
    'net.online': { actions: assign(() => ({ hostOffline: false })) },
    close: '.closing',
    // terminateSession() where no open session can be ended: answered at once (resolved with no
    // session, rejected otherwise); the chart does not move.
    terminate: { actions: 'refuse' },
  },
  states: {
    idle: { on: stopped() },
    connecting: {
      on: {
        'send.initialize': {
          actions: assign(({ context }) => ({ cached: true, session: false, missing: false, out: sorted([...context.out, 'init']) })),
        },
        'send.request': { actions: assign(({ context }) => ({ out: sorted([...context.out, newCall(context)]) })) },
        'send.notification': { actions: assign(({ context }) => ({ out: sorted([...context.out, 'note']) })) },
        'init.ok': { target: 'initializing', actions: assign(({ context }) => ({ session: true, out: without(context.out, 'init') })) },
        'init.okNoSession': {
          target: 'initializing',
          actions: assign(({ context }) => ({ session: false, out: without(context.out, 'init') })),
        },
        'init.rpcError': { target: 'failed' },
        'init.500': { target: 'failed' },
        'init.405': [
          {
            guard: 'legacyFallback',
            target: 'legacy',
            actions: assign(({ context }) => ({ out: without(context.out, 'init'), queue: sorted([...context.queue, 'init']) })),
          },
          { target: 'failed' },
        ],
        'init.401': {
          guard: 'authorizes',
          target: 'authorizing',
          actions: assign(({ context }) => ({
            authReturn: 'connecting',
            out: without(context.out, 'init'),
            queue: sorted([...context.queue, 'init']),
          })),
        },
        'req.ok': { actions: 'answerCall' },
        'req.500': { actions: 'answerCall' },
        'req.cut': { actions: 'answerCall' },
        'req.404': { actions: 'answerCall' },
        'req.401': {
          guard: 'authorizes',
          target: 'authorizing',
          actions: ['holdCall', { type: 'returnTo', params: { state: 'connecting' } }],
        },
        'note.202': { actions: 'answerNote' },
      },
    },
    initializing: {
      on: {
        'send.initialized': { actions: assign(({ context }) => ({ out: sorted([...context.out, 'initd']) })) },
        'send.request': { actions: assign(({ context }) => ({ out: sorted([...context.out, newCall(context)]) })) },
        'send.notification': { actions: assign(({ context }) => ({ out: sorted([...context.out, 'note']) })) },
        'initd.202': { target: 'open', actions: assign(({ context }) => ({ out: without(context.out, 'initd') })) },
        'initd.404': [
          { guard: 'hasSession', target: 'failed', actions: 'expire' },
          { actions: assign(({ context }) => ({ out: without(context.out, 'initd') })) },
        ],
        'initd.500': { actions: assign(({ context }) => ({ out: without(context.out, 'initd') })) },
        'initd.401': {
          guard: 'authorizes',
          target: 'authorizing',
          actions: [
            assign(({ context }) => ({ out: without(context.out, 'initd'), queue: sorted([...context.queue, 'initd']) })),
            { type: 'returnTo', params: { state: 'initializing' } },
          ],
        },
        'req.ok': { actions: 'answerCall' },
        'req.500': { actions: 'answerCall' },
        'req.cut': { actions: 'answerCall' },
        'req.404': [
          // isStaleSessionMissing → resendOnCurrentSession, as in open
          {
            guard: 'staleSessionMissing',
            actions: assign(({ context, event }) => ({
              out: sorted([...without(context.out, `req:${event.tag}`), `req:${context.session ? 'cur' : 'nos'}:retry`]),
            })),
          },
          { guard: 'callCarriedSession', target: 'failed', actions: 'expire' },
          { actions: 'answerCall' },
        ],
        'req.401': {
          guard: 'authorizes',
          target: 'authorizing',
          actions: ['holdCall', { type: 'returnTo', params: { state: 'initializing' } }],
        },
        'note.202': { actions: 'answerNote' },
      },
    },
    open: {
      type: 'parallel',
      exit: assign(() => ({ get: 'none' })),
      on: {
        'send.request': { actions: assign(({ context }) => ({ out: sorted([...context.out, newCall(context)]) })) },
        'send.notification': { actions: assign(({ context }) => ({ out: sorted([...context.out, 'note']) })) },
        // cancelRequest: the one call outstanding stops; the cancellation is POSTed
        'send.cancel': {
          actions: assign(({ context }) => ({
            out: sorted([...context.out.filter((tag) => !tag.startsWith('req:')), 'note']),
          })),
        },
        // W6: an answer tells the health region (it ends degraded); a 500 tells it the server is failing
        'req.ok': [{ guard: 'recovered', actions: ['answerCall', 'resetRecovered', 'answered'] }, { actions: ['answerCall', 'answered'] }],
        'req.otherSession': [
          { guard: 'recovered', actions: ['answerCall', 'resetRecovered', 'answered'] },
          { actions: ['answerCall', 'answered'] },
        ],
        'note.202': [
          { guard: 'recovered', actions: ['answerNote', 'resetRecovered', 'answered'] },
          { actions: ['answerNote', 'answered'] },
        ],
        'req.500': { actions: ['answerCall', 'trouble'] },
        'req.cut': { actions: 'answerCall' },
        'req.401': { guard: 'authorizes', target: 'authorizing', actions: ['holdCall', { type: 'returnTo', params: { state: 'open' } }] },
        'req.404': [
          // a 404 to a call that carried no session is an ordinary failure
          { guard: 'callCarriedNoSession', actions: 'answerCall' },
          // isStaleSessionMissing → resendOnCurrentSession
          {
            guard: 'staleSessionMissing',
            actions: assign(({ context, event }) => ({
              out: sorted([...without(context.out, `req:${event.tag}`), `req:${context.session ? 'cur' : 'nos'}:retry`]),
            })),
          },
          { target: 'recovering' },
        ],
      },
      states: {
        session: {
          initial: 'active',
          states: {
            active: {
              initial: 'choosing',
              states: {
                // takesDirectCalls: not while a re-established session is unproven (no streamIdleTimeout here)
                choosing: { always: [{ guard: 'recovered', target: 'charted' }, { target: 'direct' }] },
                // the data plane: calls answered without incident never reach the chart
                direct: {
                  on: {
                    // the data plane: the facade POSTs the call itself
                    'send.request': {
                      actions: assign(({ context }) => ({ out: sorted([...context.out, newCall(context)]), direct: true })),
                    },
                    // its SSE answer ends early: handed to the chart (post.interrupted), which fails the call (R2)
                    'req.cut': { guard: 'directCall', actions: 'answerCall' },
                  },
                },
                // every call through the chart until the first answer on the re-established session
                charted: {
                  on: {
                    // spawnPost: a send goes through the chart (a POST child), not the data plane
                    'send.request': { actions: assign(({ context }) => ({ out: sorted([...context.out, newCall(context)]) })) },
                    'req.ok': { guard: 'recovered', target: 'choosing', actions: ['answerCall', 'resetRecovered', 'answered'] },
                    'req.otherSession': { guard: 'recovered', target: 'choosing', actions: ['answerCall', 'resetRecovered', 'answered'] },
                    'note.202': { guard: 'recovered', target: 'choosing', actions: ['answerNote', 'resetRecovered', 'answered'] },
                  },
                },
              },
              on: {
                close: [{ guard: 'shouldTerminate', target: 'closing' }, { target: '#connection.closing' }],
                terminate: [
                  { guard: 'hasSession', target: 'terminating', actions: assign(() => ({ del: true })) },
                  // no session to end: acknowledged at once
                  { actions: 'acknowledge' },
                ],
              },
            },
            /**
             * close() of an open session (F1): every call stops, the DELETE runs (bounded) while the
             * standalone stream winds down, then closed.
             */
            closing: {
              entry: [assign(() => ({ out: [], queue: [], del: true })), raise({ type: 'windDown' })],
              exit: assign(() => ({ del: false })),
              on: {
                close: { actions: 'ignore' },
                'send.request': { actions: 'refuse' },
                'send.notification': { actions: 'refuse' },
                terminate: { actions: 'refuse' },
                // the DELETE was answered (any status, or a network error): the stream drains
                'del.200': 'draining',
                'del.500': 'draining',
                'del.drop': 'draining',
                // deleteTimeout
                'del.hang': '#connection.closed',
              },
            },
            /**
             * The DELETE was answered; the server ends the standalone stream, or drainTimeout (a
             * chart constant, 100 ms) ends the wait. Nothing the world does can be placed inside that
             * bounded moment deterministically, so here it passes at once: a stream the server keeps
             * open stands for the drainTimeout.
             */
            draining: {
              always: [
                {
                  guard: or([stateIn('#connection.open.standalone.ended'), stateIn('#connection.open.standalone.off')]),
                  target: '#connection.closed',
                },
                { target: '#connection.closed' },
              ],
            },
            terminating: {
              exit: assign(() => ({ del: false })),
              // close() here is the chart's own: closing, with a DELETE of its own (the terminating one stops)
              on: {
                'del.200': {
                  target: '#connection.connecting',
                  actions: assign(({ context }) => ({ session: false, cached: false, out: ageCalls(context.out) })),
                },
                'del.500': { target: 'active' },
                'del.drop': { target: 'active' },
                // F7: deleteTimeout (an `after` of the chart) ends terminateSession()'s wait
                'del.hang': { target: 'active' },
              },
            },
          },
        },
        standalone: {
          initial: 'deciding',
          states: {
            deciding: {
              always: [
                { guard: 'standaloneEnabled', target: 'active', actions: assign(() => ({ get: 'parked', getOpened: false })) },
                { target: 'off' },
              ],
            },
            active: {
              on: {
                // windDownStandalone: a reconnect wait ends at once; a GET still opening is let finish (its
                // connection is reused) and its stream, like one being read, drains until the server ends it
                windDown: [
                  { guard: 'waiting', target: 'ended' },
                  // the GET still opening: let finish (the server answers it, or drainTimeout ends it)
                  { guard: 'opening', actions: 'ignore' },
                  // the stream being read drains until the server ends it
                  { actions: 'ignore' },
                ],
                'get.404': [
                  // the GET let finish at close: whatever its refusal, the stream just ends
                  { guard: stateIn('#connection.open.session.closing'), target: 'ended' },
                  // a GET without a session: the stream is refused, not the session
                  { guard: 'noSession', target: 'ended' },
                  // G2: a 404 to the first GET of a session: no GET route, one warning, the session kept
                  { guard: 'getNeverOpened', target: 'ended' },
                  // reportStandaloneGone: the child ends (gone), the region goes to ended
                  { guard: 'recovered', target: 'ended' },
                  { target: '#connection.recovering' },
                ],
                'get.401': [
                  { guard: stateIn('#connection.open.session.closing'), target: 'ended' },
                  { guard: 'authorizes', target: '#connection.authorizing', actions: { type: 'returnTo', params: { state: 'open' } } },
                  // not an authorizing transport: the GET is refused, the region ends
                  { target: 'ended' },
                ],
                // standalone.degraded (retry budget 0): a warning; the child waits at the ceiling (W6: degraded)
                'get.500': [
                  { guard: stateIn('#connection.open.session.closing'), target: 'ended' },
                  { actions: [assign(() => ({ get: 'none' })), 'waiting'] },
                ],
                // W6: standalone.listening: the stream is open again
                'get.stream': { actions: [assign(() => ({ get: 'stream', getOpened: true })), 'listening'] },
                'get.drop': [
                  // a stream being drained ends the standalone stream
                  { guard: stateIn('#connection.open.session.closing'), target: 'ended' },
                  // otherwise it reconnects: past the budget (0) at once, so standalone.degraded and a wait at the ceiling (W6: degraded)
                  { actions: [assign(() => ({ get: 'none' })), 'waiting'] },
                ],
                'get.405': { target: 'ended' },
              },
            },
            off: {},
            ended: { entry: assign(() => ({ get: 'none' })) },
          },
        },
        /** W6: degraded while calls fail for the server's trouble or the standalone stream waits; the next success ends it. */
        health: {
          initial: 'steady',
          states: {
            steady: { on: { 'health.trouble': 'degraded', 'standalone.waiting': 'degraded' } },
            degraded: {
              on: {
                // noteTrouble: the latest failure is why
                'health.trouble': { actions: 'ignore' },
                'standalone.waiting': { actions: 'ignore' },
                'health.answered': 'steady',
                'standalone.listening': 'steady',
              },
            },
          },
        },
        /** W2: the host's network signal, watched while the session is open; offline, sends fail fast. */
        network: {
          initial: 'online',
          states: {
            // the networkStatus actor tells the signal's state as it starts: offline at once if it is
            online: {
              always: { guard: 'hostOffline', target: 'offline' },
              on: { 'net.offline': { target: 'offline', actions: assign(() => ({ hostOffline: true })) } },
            },
            offline: {
              on: { 'net.online': { target: 'online', actions: assign(() => ({ hostOffline: false })) } },
            },
          },
        },
      },
    },
    authorizing: {
      entry: assign(() => ({ token: true })),
      exit: assign(() => ({ token: false, authDone: true })),
      on: {
        'send.request': { actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'req:caller:s']) })) },
        'send.notification': { actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'note']) })) },
        'req.ok': { actions: 'answerCall' },
        'req.500': { actions: 'answerCall' },
        'req.cut': { actions: 'answerCall' },
        'req.401': { actions: 'holdCall' },
        'note.202': { actions: 'answerNote' },
        // a POST of initialize or initialized still in flight when authorization began: its answer
        // still moves the session on (the chart returns to initializing, or to open)
        'init.ok': {
          actions: assign(({ context }) => ({ session: true, authReturn: 'initializing' as const, out: without(context.out, 'init') })),
        },
        'initd.202': { actions: assign(({ context }) => ({ authReturn: 'open' as const, out: without(context.out, 'initd') })) },
        'initd.401': {
          actions: assign(({ context }) => ({ out: without(context.out, 'initd'), queue: sorted([...context.queue, 'initd']) })),
        },
        'init.401': {
          actions: assign(({ context }) => ({ out: without(context.out, 'init'), queue: sorted([...context.queue, 'init']) })),
        },
        'token.ok': [
          { guard: 'returnsToConnecting', target: 'connecting', actions: 'flush' },
          { guard: 'returnsToInitializing', target: 'initializing', actions: 'flush' },
          { target: 'open', actions: 'flush' },
        ],
        'token.500': [
          // failAuthorizationTriggers, flushQueue
          {
            guard: 'midSession',
            target: 'open',
            actions: [assign(({ context }) => ({ queue: context.queue.filter((tag) => !tag.endsWith(':a')) })), 'flush'],
          },
          { target: 'failed' },
        ],
      },
    },
    legacy: {
      initial: 'awaitingEndpoint',
      exit: assign(() => ({ get: 'none' })),
      entry: assign(() => ({ get: 'parked' })),
      on: {
        'req.ok': { actions: 'answerCall' },
        'req.500': { actions: 'answerCall' },
        'note.202': { actions: 'answerNote' },
        'lpost.202': { actions: 'answerLegacy' },
        'lpost.500': { actions: 'answerLegacy' },
      },
      states: {
        awaitingEndpoint: {
          on: {
            'send.request': { actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'req:caller:s']) })) },
            'send.notification': { actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'note']) })) },
            'get.endpoint': {
              target: 'ready',
              actions: assign(({ context }) => ({ get: 'stream', out: flushed(context, true), queue: [] })),
            },
            'get.405': { target: '#connection.failed' },
            // F7: legacyEndpointTimeout (an `after` of the chart)
            'get.silent': { target: '#connection.failed' },
          },
        },
        ready: {
          on: {
            'send.request': { actions: assign(({ context }) => ({ out: sorted([...context.out, 'lpost:req']) })) },
            'send.notification': { actions: assign(({ context }) => ({ out: sorted([...context.out, 'lpost:note']) })) },
            'get.drop': { target: '#connection.failed' },
          },
        },
      },
    },
    recovering: {
      always: [
        // beginRecovery: the call that met the 404 waits in the queue as a re-send
        {
          guard: 'canRecover',
          target: 'reconnecting',
          actions: assign(({ context, event }) => {
            const tag = tagOf(event);
            return {
              session: false,
              missing: false,
              out: ageCalls(tag === undefined ? context.out : without(context.out, `req:${tag}`)),
              queue: tag === undefined ? context.queue : sorted([...context.queue, 'req:retry:a']),
            };
          }),
        },
        { target: 'failed', actions: 'expire' },
      ],
    },
    reconnecting: {
      initial: 'reinitializing',
      on: {
        'send.request': { actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'req:caller:s']) })) },
        'send.notification': { actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'note']) })) },
        // cancelRequest: the one call outstanding (parked or queued) is dropped; the cancellation is queued
        'send.cancel': {
          actions: assign(({ context }) => ({
            out: context.out.filter((tag) => !tag.startsWith('req:')),
            queue: sorted([...context.queue.filter((tag) => !tag.startsWith('req:')), 'note']),
          })),
        },
      },
      states: {
        reinitializing: {
          // reinitialize: the cached initialize is POSTed again
          entry: assign(({ context }) => ({ out: sorted([...context.out, 'init']) })),
          on: {
            'init.ok': { target: 'confirming', actions: assign(({ context }) => ({ session: true, out: without(context.out, 'init') })) },
            // F3, F4 revised: a failed re-initialize is tried again within the budget (the model's
            // transports have maxRetries 0: none), then the chart waits.
            'init.404': { target: '#connection.waiting', actions: assign(({ context }) => ({ out: without(context.out, 'init') })) },
            'init.500': { target: '#connection.waiting', actions: assign(({ context }) => ({ out: without(context.out, 'init') })) },
            // answered, but not with an InitializeResult: nothing a quick retry fixes; the chart waits
            'init.rpcError': { target: '#connection.waiting', actions: assign(({ context }) => ({ out: without(context.out, 'init') })) },
            'req.ok': { actions: 'answerCall' },
            'note.202': { actions: 'answerNote' },
            'req.404': [{ guard: 'canRequeue', actions: 'requeueCall' }, { actions: 'answerCall' }],
            'req.500': { actions: 'answerCall' },
            'req.cut': { actions: 'answerCall' },
          },
        },
        confirming: {
          // confirmInitialized: notifications/initialized is POSTed on the new session
          entry: assign(({ context }) => ({ out: sorted([...context.out, 'initd']) })),
          on: {
            'initd.202': {
              target: '#connection.open',
              actions: [assign(({ context }) => ({ recovered: true, out: without(context.out, 'initd') })), 'flush'],
            },
            'initd.500': { target: '#connection.waiting', actions: assign(({ context }) => ({ out: without(context.out, 'initd') })) },
            'req.ok': { actions: 'answerCall' },
            'note.202': { actions: 'answerNote' },
            'req.404': [{ guard: 'canRequeue', actions: 'requeueCall' }, { actions: 'answerCall' }],
            'req.500': { actions: 'answerCall' },
            'req.cut': { actions: 'answerCall' },
          },
        },
        /** R4: the backoff between re-initializes; with the model's maxRetries 0 it is never entered. */
        backoff: {},
      },
    },
    /**
     * F4: waiting for the server: the calls held for the failed attempt fail (failHeldCalls); a
     * send is held for an attempt made at once (retrying). The timer's attempt is not modelled:
     * the model's transports wait an hour.
     */
    waiting: {
      entry: assign(() => ({ queue: [] })),
      on: {
        'send.request': { target: 'retrying', actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'req:caller:s']) })) },
        'send.notification': { target: 'retrying', actions: assign(({ context }) => ({ queue: sorted([...context.queue, 'note']) })) },
        // cancelRequest: the one call outstanding is dropped; the cancellation is queued for the attempt
        'send.cancel': {
          target: 'retrying',
          actions: assign(({ context }) => ({
            out: context.out.filter((tag) => !tag.startsWith('req:')),
            queue: sorted([...context.queue.filter((tag) => !tag.startsWith('req:')), 'note']),
          })),
        },
        'req.ok': { actions: 'answerCall' },
        'note.202': { actions: 'answerNote' },
        'req.404': { actions: 'answerCall' },
        'req.500': { actions: 'answerCall' },
        'req.cut': { actions: 'answerCall' },
      },
    },
    /** F4: the attempt: a new session (the 2026-07-28 era's probe is the modern model's). */
    retrying: {
      always: { guard: 'canRecover', target: 'reconnecting' },
    },
    closing: {
      // stopEverything: every POST, the GET, the legacy stream and the authorization stop; queued sends fail
      entry: assign(() => ({ out: [], queue: [], get: 'none', token: false })),
      initial: 'choosing',
      on: {
        'send.request': { actions: 'refuse' },
        'send.notification': { actions: 'refuse' },
        terminate: { actions: 'refuse' },
        close: { actions: 'ignore' },
      },
      states: {
        choosing: {
          always: [{ guard: 'shouldTerminate', target: 'deleting' }, { target: '#connection.closed' }],
        },
        deleting: {
          entry: assign(() => ({ del: true })),
          exit: assign(() => ({ del: false })),
          on: {
            'del.200': '#connection.closed',
            'del.500': '#connection.closed',
            'del.drop': '#connection.closed',
            'del.hang': '#connection.closed',
          },
        },
      },
    },
    closed: {
      on: {
        ...stopped(),
        // Never offered: the facade answers close() on a closed transport without the chart.
        close: {},
      },
    },
    failed: {
      entry: assign(() => ({ out: [], queue: [] })),
      on: stopped(),
    },
  },
});

// ------------------------------------------------------------------------------------------------
// Which world events can happen in a state

export type ModelSnapshot = ReturnType<typeof connectionModel.transition>;

/** A vertex of the model's graph: the state and the context, without the (constant) configuration. */
export function serializeModelState(snapshot: ModelSnapshot): string {
  const { config: _config, ...world } = snapshot.context;
  return `${JSON.stringify(snapshot.value)} ${JSON.stringify(world)}`;
}

const serverEventsWithoutPayload = [
  'init.ok',
  'init.okNoSession',
  'init.rpcError',
  'init.500',
  'init.404',
  'init.405',
  'init.401',
  'initd.202',
  'initd.404',
  'initd.500',
  'initd.401',
  'note.202',
  'get.stream',
  'get.405',
  'get.404',
  'get.401',
  'get.500',
  'get.endpoint',
  'get.silent',
  'get.drop',
  'del.200',
  'del.500',
  'del.drop',
  'del.hang',
  'token.ok',
  'token.500',
] as const satisfies readonly ModelEventType[];

/** Every event worth trying in this snapshot (payloads from what is parked); `isApplicable` decides. */
export function candidateEvents(snapshot: ModelSnapshot): ModelEvent[] {
  const context = snapshot.context;
  const events: ModelEvent[] = [];
  for (const type of callerEvents) events.push({ type });
  // One by one: a `{ type }` of a union of more than 25 members is not checked against the union as a whole.
  for (const type of serverEventsWithoutPayload) events.push({ type } as Extract<ModelEvent, { type: typeof type }>);
  for (const tag of parkedReqTags(context)) {
    for (const type of ['req.ok', 'req.otherSession', 'req.404', 'req.401', 'req.500', 'req.cut'] as const) events.push({ type, tag });
  }
  for (const kind of parkedLegacyKinds(context)) {
    events.push({ type: 'lpost.202', kind }, { type: 'lpost.500', kind });
  }
  return events.filter((event) => isApplicable(snapshot, event));
}

/** The DELETE of close() (bounded by deleteTimeout), not the one of terminateSession(). */
const closingDelete = (snapshot: ModelSnapshot) =>
  snapshot.matches({ closing: 'deleting' }) || snapshot.matches({ open: { session: 'closing' } });

const has = <T extends string>(items: readonly T[], item: T) => items.includes(item);

/** Whether the world can do `event` now, in this configuration. */
export function isApplicable(snapshot: ModelSnapshot, event: ModelEvent): boolean {
  const context = snapshot.context;
  const { config } = context;
  if (!config.events.includes(event.type)) return false;
  const authorizing = config.auth && !context.authDone;
  // W2: offline, the facade refuses every send at once; the model does not offer them.
  if (event.type.startsWith('send.') && snapshot.matches({ open: { network: 'offline' } })) return false;
  switch (event.type) {
    case 'net.offline':
      return snapshot.matches({ open: { network: 'online' } });
    case 'net.online':
      return context.hostOffline;
    case 'start':
    case 'terminate':
      return true;
    case 'close':
      // The facade answers close() on a closed transport itself; the chart never sees it.
      return !snapshot.matches('closed');
    case 'setProtocolVersion':
      return snapshot.matches('initializing');
    case 'send.initialize':
      return snapshot.matches('connecting') && !has(context.out, 'init') && !has(context.queue, 'init');
    case 'send.initialized':
      return snapshot.matches('initializing') && !has(context.out, 'initd') && !has(context.queue, 'initd');
    case 'send.request':
      return callCount(context) < config.maxCalls;
    case 'send.notification':
      return noteCount(context) < config.maxNotes;
    case 'send.cancel':
      return (
        callCount(context) === 1 &&
        noteCount(context) === 0 &&
        (snapshot.matches('reconnecting') ||
          snapshot.matches('waiting') ||
          (snapshot.matches('open') && parkedReqTags(context).length === 1))
      );
    case 'init.401':
      return has(context.out, 'init') && authorizing;
    case 'init.ok':
    case 'init.okNoSession':
    case 'init.rpcError':
    case 'init.500':
    case 'init.404':
    case 'init.405':
      return has(context.out, 'init');
    case 'initd.401':
      return has(context.out, 'initd') && authorizing;
    case 'initd.202':
    case 'initd.404':
    case 'initd.500':
      return has(context.out, 'initd');
    case 'req.ok':
    case 'req.500':
    case 'req.cut':
    case 'req.404':
      return parkedReqTags(context).includes(event.tag);
    case 'req.otherSession':
      return parkedReqTags(context).includes(event.tag) && context.session;
    case 'req.401':
      return parkedReqTags(context).includes(event.tag) && authorizing;
    case 'note.202':
      return has(context.out, 'note');
    case 'lpost.202':
    case 'lpost.500':
      return parkedLegacyKinds(context).includes(event.kind);
    case 'get.401':
      return context.get === 'parked' && (!config.auth || authorizing);
    case 'get.stream':
    case 'get.405':
    case 'get.404':
    case 'get.500':
    case 'get.endpoint':
      return context.get === 'parked';
    case 'get.drop':
      return context.get === 'stream';
    case 'del.hang':
      return (
        context.del &&
        config.deleteTimeout === 'short' &&
        (closingDelete(snapshot) || snapshot.matches({ open: { session: 'terminating' } }))
      );
    case 'get.silent':
      return context.get === 'parked' && config.legacyEndpointTimeout === 'short' && snapshot.matches({ legacy: 'awaitingEndpoint' });
    case 'del.200':
    case 'del.500':
    case 'del.drop':
      return context.del && (config.deleteTimeout === 'long' || !closingDelete(snapshot));
    case 'token.ok':
    case 'token.500':
      return context.token;
    case 'windDown':
    case 'health.trouble':
    case 'health.answered':
    case 'standalone.waiting':
    case 'standalone.listening':
      return false;
  }
}

// ------------------------------------------------------------------------------------------------
// Configurations: each is one traversal of the model (the transport options are fixed per path)

const base = {
  standalone: true,
  recovery: 'reinitialize',
  legacy: false,
  auth: false,
  presetSession: false,
  deleteTimeout: 'long',
  maxCalls: 1,
  maxNotes: 1,
} as const;

export const modelConfigs: readonly ModelConfig[] = [
  {
    ...base,
    name: 'core',
    events: [
      'start',
      'close',
      'terminate',
      'setProtocolVersion',
      'send.initialize',
      'send.initialized',
      'send.request',
      'send.notification',
      'send.cancel',
      'init.ok',
      'init.okNoSession',
      'init.rpcError',
      'init.500',
      'init.404',
      'init.405',
      'initd.202',
      'initd.404',
      'initd.500',
      'req.ok',
      'req.otherSession',
      'req.404',
      'req.500',
      'req.cut',
      'note.202',
      'get.stream',
      'get.405',
      'get.404',
      'get.401',
      'get.500',
      'get.drop',
      'del.200',
      'del.500',
      'del.drop',
    ],
  },
  {
    ...base,
    name: 'auth',
    auth: true,
    events: [
      'start',
      'close',
      'send.initialize',
      'send.initialized',
      'send.request',
      'send.notification',
      'init.ok',
      'init.401',
      'initd.202',
      'initd.401',
      'req.ok',
      'req.401',
      'req.500',
      'req.cut',
      'note.202',
      'get.stream',
      'get.401',
      'token.ok',
      'token.500',
      'del.200',
    ],
  },
  {
    ...base,
    name: 'legacy',
    legacy: true,
    standalone: false,
    events: [
      'start',
      'close',
      'send.initialize',
      'send.request',
      'send.notification',
      'init.405',
      'req.ok',
      'req.500',
      'note.202',
      'lpost.202',
      'lpost.500',
      'get.endpoint',
      'get.405',
      'get.drop',
    ],
  },
  {
    // F3: a second call still in flight while the session is re-established (its 404, answer or failure meets reconnecting).
    ...base,
    name: 'recovery-race',
    standalone: false,
    maxCalls: 2,
    events: [
      'start',
      'close',
      'send.initialize',
      'send.initialized',
      'send.request',
      'init.ok',
      'initd.202',
      'req.ok',
      'req.404',
      'req.500',
      'req.cut',
      'del.200',
    ],
  },
  {
    // F4: a re-initialize refused while a second call is still in flight: the chart waits with it
    // parked (its answer, failure or cancellation meets `waiting`); a send from there tries again.
    ...base,
    name: 'recovery-wait',
    standalone: false,
    maxCalls: 2,
    events: [
      'start',
      'close',
      'send.initialize',
      'send.initialized',
      'send.request',
      'send.cancel',
      'init.ok',
      'init.500',
      'initd.202',
      'req.ok',
      'req.404',
      'req.500',
      'req.cut',
      'note.202',
      'del.200',
    ],
  },
  {
    ...base,
    name: 'preset',
    presetSession: true,
    standalone: false,
    recovery: 'fail',
    events: [
      'start',
      'close',
      'terminate',
      'send.request',
      'send.notification',
      'req.ok',
      'req.404',
      'req.500',
      'req.cut',
      'note.202',
      'del.200',
      'del.500',
      'del.drop',
    ],
  },
  {
    ...base,
    name: 'network',
    events: [
      'start',
      'close',
      'send.initialize',
      'send.initialized',
      'send.request',
      'init.ok',
      'initd.202',
      'get.stream',
      'req.ok',
      'req.404',
      'net.offline',
      'net.online',
      'del.200',
    ],
  },
  {
    ...base,
    name: 'deleteTimeout',
    deleteTimeout: 'short',
    events: ['start', 'close', 'terminate', 'send.initialize', 'send.initialized', 'init.ok', 'initd.202', 'get.stream', 'del.hang'],
  },
  {
    ...base,
    name: 'legacyEndpointTimeout',
    legacy: true,
    standalone: false,
    legacyEndpointTimeout: 'short',
    events: ['start', 'close', 'send.initialize', 'init.405', 'get.endpoint', 'get.silent'],
  },
];
