/**
 * An abstract model of the connection chart's 2026-07-28 branch (machines/connection/modern.ts,
 * E1-E10), for model-based testing beside the main model (model.ts), which covers every other
 * state: exactly the real chart's `connection.modern*` states (same ids), plus the few states of
 * the rest of the chart the branch is entered from and left to (idle, connecting, authorizing,
 * closing, closed, failed; also real ids). No `invoke`, no `after`; driven by what the world does:
 *
 * - the caller (the v2 SDK Client, played by hand): start(), the era probe (`server/discover` in
 *   the 2026-07-28 envelope), a 2025-era initialize, setProtocolVersion('2026-07-28'), a call, a
 *   `subscriptions/listen`, a cancellation of the call, aborting the listen's requestSignal,
 *   terminateSession(), close();
 * - the host: its network signal (W2);
 * - the server: its answers to the probe (a result; a 400 with a JSON-RPC -32022 body; a plain
 *   400), to the initialize (-32022 naming only modern versions: E9), to a call (JSON, JSON with a
 *   session ID, an event stream then its response or its cut, 404 with -32601, 500, 401), to the
 *   listen (a stream, its graceful end, its drop), to a cancellation (202), and to the token
 *   request of an authorization (a token; a refusal that needs the user; a refusal the host's
 *   provider cannot redirect for).
 *
 * The context is what the world can see: the requests the server holds, the requests whose
 * caller still waits for an answer, what the chart keeps (the probe's answer, the one warning of
 * E4). The executor (modern-executor.ts) runs every path against the real transport and the
 * puppet server, comparing the chart's state, the held requests and the waiting callers after
 * every step.
 */
import { assign, raise, setup } from 'xstate';
import { createTestModel, type StatePath, type TestParam } from 'xstate/graph';
import { isInit, modelCoverageOf, type Coverage } from './coverage.js';

export type ModernEventType =
  // the caller
  | 'start'
  | 'probe'
  | 'init'
  | 'setModern'
  /** U12: the Client settles on 2025-11-25 after setting 2026-07-28 before its probe (the AI SDK's order, its fallback). */
  | 'setLegacy'
  | 'call'
  | 'listen'
  | 'listen.abort'
  | 'call.abort'
  | 'cancel'
  | 'terminate'
  | 'close'
  // the host
  | 'net.offline'
  | 'net.online'
  // the server
  | 'probe.result'
  | 'probe.rpcError'
  | 'probe.400'
  | 'init.modernOnly'
  | 'call.json'
  | 'call.session'
  | 'call.sse'
  | 'call.404'
  | 'call.500'
  | 'call.401'
  /** F4: the server is down: the held call's connection closes before any response (no status at all). */
  | 'call.refused'
  /** F4: the chart's own probe, while it waits for the server, meets the same. */
  | 'probe.refused'
  | 'stream.response'
  | 'stream.cut'
  | 'listen.open'
  | 'listen.end'
  | 'listen.drop'
  /** E13: the server ends the listen with notifications/cancelled for it: a graceful end, as by its result. */
  | 'listen.cancel'
  | 'note.202'
  | 'token.ok'
  | 'token.500'
  | 'token.fatal'
  // not world events: W6, what the chart's `modern` state tells its health region (never offered)
  | 'health.trouble'
  | 'health.answered';

export type ModernEvent = { type: ModernEventType };

/** A request the server holds: waiting for its answer, or answered with an event stream kept open. */
export type HeldKind = 'probe' | 'init' | 'call' | 'callStream' | 'listen' | 'listenStream' | 'note' | 'token';
/** A request whose caller still waits for its answer (a response, an error response, or a rejected send()). */
export type Waiting = 'probe' | 'init' | 'call' | 'listen';

export interface ModernConfig {
  name: string;
  /** An authProvider is given (a 401 to a call authorizes). */
  auth: boolean;
  /** The transport is made from a saved 2026-07-28 state (E10): the era and the probe's answer are known. */
  restored: boolean;
  /** E5: `reissue: 'reads'`, and the call is a read (`tools/list`): a cut stream sends it once more. */
  reissue?: boolean;
  events: readonly ModernEventType[];
}

export interface ModernContext {
  config: ModernConfig;
  held: HeldKind[];
  waiting: Waiting[];
  /** The chart keeps the server's answer to the probe (E10). */
  discover: boolean;
  /** E4: answers that carried a session ID (capped at 2): the first gives the one warning, later ones none. */
  warned: 0 | 1 | 2;
  offline: boolean;
  /** The call goes through a POST child of the chart (re-sent after an authorization), not the data plane. */
  charted: boolean;
  /** One authorization per path. */
  authDone: boolean;
  /** E5: the call in flight is already the re-issue (it is not re-issued again). */
  reissued: boolean;
  /** F4: the chart keeps the Client's probe (a probe it POSTed was answered with a result): while waiting it repeats it. */
  probeKept: boolean;
  /** The chart knows the era is 2026-07-28 (it was in `modern`, or the state was restored): a start goes straight there. */
  era: boolean;
  /**
   * The Client told the version since the last start (or it was restored). Not compared with anything: it
   * tells apart the worlds before and after a restart that went straight to `modern`, so paths reach both.
   */
  told: boolean;
}

const add = <T extends string>(list: readonly T[], item: T): T[] => [...list, item].sort();
const without = <T extends string>(list: readonly T[], ...items: T[]): T[] => list.filter((item) => !items.includes(item));
const withoutOne = <T extends string>(list: readonly T[], item: T): T[] => {
  const at = list.indexOf(item);
  return at === -1 ? [...list] : [...list.slice(0, at), ...list.slice(at + 1)];
};
const has = <T extends string>(list: readonly T[], item: T) => list.includes(item);

type Ctx = { context: ModernContext };

export const modernModel = setup({
  types: { context: {} as ModernContext, events: {} as ModernEvent, input: {} as ModernConfig },
  guards: {
    knowsEra: ({ context }: Ctx) => context.era,
    isOffline: ({ context }: Ctx) => context.offline,
    knowsDiscover: ({ context }: Ctx) => context.discover,
    unconfirmed: ({ context }: Ctx) => !context.discover,
    charted: ({ context }: Ctx) => context.charted,
    warned: ({ context }: Ctx) => context.warned > 0,
    authorizes: ({ context }: Ctx) => context.config.auth && !context.authDone,
    probeKept: ({ context }: Ctx) => context.probeKept,
    /** F4: in probing, the server holds the Client's own probe as well as the chart's, the Client's sent first. */
    callersProbeFirst: ({ context }: Ctx) => context.held.filter((kind) => kind === 'probe').length > 1 && has(context.waiting, 'probe'),
    reissues: ({ context }: Ctx) => context.config.reissue === true && !context.reissued,
  },
  actions: {
    sendProbe: assign(({ context }: Ctx) => ({ held: add(context.held, 'probe'), waiting: add(context.waiting, 'probe') })),
    /** The probe is answered (its result, or its error): it waits no more. */
    probeAnswered: assign(({ context }: Ctx) => ({ held: without(context.held, 'probe'), waiting: without(context.waiting, 'probe') })),
    keepDiscover: assign({ discover: true, probeKept: true }),
    /** One probe answered (or refused) and its caller with it; any other probe still held. */
    callersProbeAnswered: assign(({ context }: Ctx) => ({
      held: withoutOne(context.held, 'probe'),
      waiting: withoutOne(context.waiting, 'probe'),
    })),
    /** F2: a start begins afresh (the E4 warning may come again); the era and the probe's answer are kept (E10). */
    startFresh: assign(({ context }) => ({ warned: 0 as const, told: context.config.restored })),
    /** The world sees this in the caller's answer, not in the context. */
    answeredFromBefore: () => undefined,
    acknowledged: () => undefined,
    sendCall: assign(({ context }: Ctx) => ({
      held: add(context.held, 'call'),
      waiting: add(context.waiting, 'call'),
      charted: false,
      reissued: false,
    })),
    /** E5: the cut read goes once more, under a new id; its caller still waits. */
    reissueCall: assign(({ context }: Ctx) => ({ held: add(without(context.held, 'callStream'), 'call'), reissued: true })),
    callAnswered: assign(({ context }: Ctx) => ({
      held: without(context.held, 'call', 'callStream'),
      waiting: without(context.waiting, 'call'),
      charted: false,
    })),
    callStreams: assign(({ context }: Ctx) => ({ held: add(without(context.held, 'call'), 'callStream') })),
    listenAnswered: assign(({ context }: Ctx) => ({
      held: without(context.held, 'listen', 'listenStream'),
      waiting: without(context.waiting, 'listen'),
    })),
    /** W6: the chart's `modern` state tells its health region (reportTrouble, reportAnswer). */
    trouble: raise({ type: 'health.trouble' }),
    answered: raise({ type: 'health.answered' }),
    ignore: () => undefined,
    /** stopEverything(answer: false): every request stops; a caller whose send() resolved hears nothing (the Client's onclose). */
    stopEverything: assign({ held: [], waiting: [], charted: false }),
  },
}).createMachine({
  id: 'connection',
  context: ({ input }) => ({
    config: input,
    held: [],
    waiting: [],
    discover: input.restored,
    probeKept: false,
    warned: 0,
    offline: false,
    charted: false,
    authDone: false,
    reissued: false,
    era: input.restored,
    told: input.restored,
  }),
  initial: 'idle',
  on: {
    close: '.closing',
  },
  states: {
    idle: {
      on: {
        start: [
          { guard: 'knowsEra', target: 'modern', actions: 'startFresh' },
          { target: 'connecting', actions: 'startFresh' },
        ],
      },
    },
    connecting: {
      on: {
        probe: { actions: 'sendProbe' },
        init: { actions: assign(({ context }) => ({ held: add(context.held, 'init'), waiting: add(context.waiting, 'init') })) },
        setModern: { target: 'modern', actions: assign({ told: true }) },
        // E9: initialize refused with -32022 naming only 2026-07-28: the caller hears why, the transport fails.
        'init.modernOnly': {
          target: 'failed',
          actions: assign(({ context }) => ({ held: without(context.held, 'init'), waiting: without(context.waiting, 'init') })),
        },
        'probe.result': { actions: ['probeAnswered', 'keepDiscover'] },
        // A 4xx with the probe's own JSON-RPC error is that error (post.done); a plain 4xx is answered as one (E8).
        // W6: the probe's error is an answer (the data plane reports it while degraded); its result is kept apart
        'probe.rpcError': { actions: ['probeAnswered', 'answered'] },
        'probe.400': { actions: 'probeAnswered' },
      },
    },
    modern: {
      type: 'parallel',
      entry: assign({ era: true }),
      on: {
        // U12: a 2025 version before any probe answer confirmed the era: back to negotiating; after one, only the version.
        setLegacy: [{ guard: 'unconfirmed', target: 'connecting', actions: assign({ era: false }) }, { actions: 'ignore' }],
        probe: [
          // E10: answered from before, under the probe's own id: nothing is POSTed.
          { guard: 'knowsDiscover', actions: 'answeredFromBefore' },
          { actions: 'sendProbe' },
        ],
        call: { actions: 'sendCall' },
        listen: { actions: assign(({ context }) => ({ held: add(context.held, 'listen'), waiting: add(context.waiting, 'listen') })) },
        // E6: the caller gave up the listen: its POST stops, nothing answers it.
        'listen.abort': {
          actions: assign(({ context }) => ({
            held: without(context.held, 'listen', 'listenStream'),
            waiting: without(context.waiting, 'listen'),
          })),
        },
        // E6: the caller gave up the call on the data plane: the facade stops its POST; the chart hears nothing.
        'call.abort': {
          actions: assign(({ context }) => ({
            held: without(context.held, 'call', 'callStream'),
            waiting: without(context.waiting, 'call'),
          })),
        },
        // R8: the cancelled call stops; the cancellation is POSTed.
        cancel: {
          actions: assign(({ context }) => ({
            held: add(without(context.held, 'call', 'callStream'), 'note'),
            waiting: without(context.waiting, 'call'),
            charted: false,
          })),
        },
        // E4: nothing to terminate: acknowledged at once
        terminate: { actions: 'acknowledged' },
        'probe.result': { actions: ['probeAnswered', 'keepDiscover'] },
        'probe.rpcError': { actions: 'probeAnswered' },
        'probe.400': { actions: 'probeAnswered' },
        // A happy answer on the data plane never reaches the chart; on a POST child it is post.done.
        'call.json': [{ guard: 'charted', actions: ['callAnswered', 'answered'] }, { actions: ['callAnswered', 'answered'] }],
        // E4: a session ID in this era: one warning, never sent back.
        'call.session': [
          { guard: 'warned', actions: ['callAnswered', assign({ warned: 2 }), 'answered'] },
          { actions: ['callAnswered', assign({ warned: 1 }), 'answered'] },
        ],
        'call.sse': { actions: 'callStreams' },
        'stream.response': { actions: ['callAnswered', 'answered'] },
        // E5: no resumption in this era: the call fails at once, unless it is a read the caller lets go again, once.
        'stream.cut': [{ guard: 'reissues', actions: 'reissueCall' }, { actions: 'callAnswered' }],
        // E8: a 404 with the call's own -32601 error is that error.
        'call.404': { actions: ['callAnswered', 'answered'] },
        // W6: the server is failing
        'call.500': { actions: ['callAnswered', 'trouble'] },
        // F4: no response at all: the call fails, and the chart waits for the server
        'call.refused': { target: '#connection.waiting', actions: 'callAnswered' },
        // A1: offered only where the path authorizes (elsewhere a 401 is a failure like call.500's)
        'call.401': {
          guard: 'authorizes',
          target: 'authorizing',
          actions: assign(({ context }) => ({ held: add(without(context.held, 'call'), 'token'), charted: false })),
        },
        // W6: a listen stream open again is a success (post.listening ends degraded)
        'listen.open': { actions: [assign(({ context }) => ({ held: add(without(context.held, 'listen'), 'listenStream') })), 'answered'] },
        'listen.end': { actions: ['listenAnswered', 'answered'] },
        // E13: notifications/cancelled for the listen ends it gracefully (done, reported as answered)
        'listen.cancel': { actions: ['listenAnswered', 'answered'] },
        // W6: a listen stream that broke is the network's trouble
        'listen.drop': { actions: ['listenAnswered', 'trouble'] },
        'note.202': { actions: [assign(({ context }) => ({ held: without(context.held, 'note') })), 'answered'] },
      },
      states: {
        calls: { initial: 'open', states: { open: {} } },
        /** W6: degraded while calls fail for the server's trouble; the next answer ends it. */
        health: {
          initial: 'steady',
          states: {
            steady: { on: { 'health.trouble': 'degraded' } },
            // noteTrouble: the latest failure is why
            degraded: { on: { 'health.trouble': { actions: 'ignore' }, 'health.answered': 'steady' } },
          },
        },
        network: {
          initial: 'online',
          states: {
            online: {
              // W2: the host's signal is watched from entry: a transport (re)started offline is offline at once
              always: { guard: 'isOffline', target: 'offline' },
              on: { 'net.offline': { target: 'offline', actions: assign({ offline: true }) } },
            },
            offline: { on: { 'net.online': { target: 'online', actions: assign({ offline: false }) } } },
          },
        },
      },
    },
    /** F4: waiting for the server: a call is held for an attempt made at once (the timer's waits an hour here). */
    waiting: {
      on: { call: { target: 'retrying', actions: assign(({ context }) => ({ waiting: add(context.waiting, 'call'), charted: false })) } },
    },
    /** F4: the attempt: the Client's probe again when the chart kept it; else straight back, the held call sent. */
    retrying: {
      always: [
        { guard: 'probeKept', target: 'probing' },
        { target: 'modern', actions: assign(({ context }) => ({ held: add(context.held, 'call'), charted: true })) },
      ],
    },
    probing: {
      entry: assign(({ context }) => ({ held: add(context.held, 'probe') })),
      on: {
        // A probe of the Client's own, sent before the chart's, is answered first (the world answers the
        // oldest): its caller hears of it; the chart's probe is still out.
        'probe.result': [
          { guard: 'callersProbeFirst', actions: 'callersProbeAnswered' },
          // the server is back: connected again, the held call goes out (flushQueue, a POST child)
          {
            target: 'modern',
            actions: assign(({ context }) => ({ held: add(without(context.held, 'probe'), 'call'), charted: true })),
          },
        ],
        'probe.refused': [
          { guard: 'callersProbeFirst', actions: 'callersProbeAnswered' },
          // still down: the held call fails typed (TransportWaitingError), and the chart waits again
          {
            target: 'waiting',
            actions: assign(({ context }) => ({ held: without(context.held, 'probe'), waiting: without(context.waiting, 'call') })),
          },
        ],
      },
    },
    authorizing: {
      exit: assign(({ context }) => ({ held: without(context.held, 'token'), authDone: true })),
      on: {
        // flushQueue: the call goes again, on a POST child
        'token.ok': { target: 'modern', actions: assign(({ context }) => ({ held: add(context.held, 'call'), charted: true })) },
        // needsUserInModernEra: the call that met the 401 fails; the era goes on
        'token.500': { target: 'modern', actions: assign(({ context }) => ({ waiting: without(context.waiting, 'call') })) },
        // the flow failed otherwise: failQueued, then failed (stopEverything answers the rest)
        'token.fatal': { target: 'failed' },
      },
    },
    closing: {
      entry: 'stopEverything',
      initial: 'choosing',
      // no session in this era: nothing to DELETE
      states: { choosing: { always: '#connection.closed' } },
    },
    closed: {
      on: {
        start: [
          { guard: 'knowsEra', target: 'modern', actions: 'startFresh' },
          { target: 'connecting', actions: 'startFresh' },
        ],
      },
    },
    failed: {
      // stopEverything(answer: true): every waiting caller is answered
      entry: 'stopEverything',
      on: {
        start: [
          { guard: 'knowsEra', target: 'modern', actions: 'startFresh' },
          { target: 'connecting', actions: 'startFresh' },
        ],
      },
    },
  },
});

// ------------------------------------------------------------------------------------------------
// Which world events can happen

export type ModernSnapshot = ReturnType<typeof modernModel.transition>;

const serverHolds: Partial<Record<ModernEventType, HeldKind>> = {
  'probe.result': 'probe',
  'probe.rpcError': 'probe',
  'probe.400': 'probe',
  'init.modernOnly': 'init',
  'call.json': 'call',
  'call.session': 'call',
  'call.sse': 'call',
  'call.404': 'call',
  'call.500': 'call',
  'call.401': 'call',
  'call.refused': 'call',
  'probe.refused': 'probe',
  'stream.response': 'callStream',
  'stream.cut': 'callStream',
  'listen.open': 'listen',
  'listen.end': 'listenStream',
  'listen.drop': 'listenStream',
  'listen.cancel': 'listenStream',
  'note.202': 'note',
  'token.ok': 'token',
  'token.500': 'token',
  'token.fatal': 'token',
};

const running = (snapshot: ModernSnapshot) => snapshot.matches('connecting') || snapshot.matches('modern');

/**
 * Whether the world can do `event` now: the server answers only what it holds; the caller sends
 * while the transport runs and the network is up (offline, the facade refuses a send at once and
 * the chart hears nothing), one request of each kind at a time.
 */
export function isModernEventApplicable(snapshot: ModernSnapshot, event: ModernEvent): boolean {
  const context = snapshot.context;
  if (!context.config.events.includes(event.type)) return false;
  const held = serverHolds[event.type];
  if (held !== undefined) {
    // a 401 only where the path authorizes (one authorization per path); elsewhere the call's answer is a 500
    if (event.type === 'call.401' && (!context.config.auth || context.authDone)) return false;
    return has(context.held, held);
  }
  const idle = !context.offline && running(snapshot);
  switch (event.type) {
    case 'start':
      return snapshot.matches('idle') || snapshot.matches('closed') || snapshot.matches('failed');
    case 'probe':
      return idle && !has(context.waiting, 'probe');
    case 'init':
      return idle && snapshot.matches('connecting') && !has(context.waiting, 'init');
    case 'setModern':
      return snapshot.matches('connecting');
    case 'setLegacy':
      return snapshot.matches('modern');
    case 'call':
      return (
        ((idle && snapshot.matches('modern')) || snapshot.matches('waiting')) && !has(context.waiting, 'call') && !has(context.held, 'call')
      );
    case 'listen':
      return idle && snapshot.matches('modern') && !has(context.waiting, 'listen');
    case 'listen.abort':
      return snapshot.matches('modern') && has(context.waiting, 'listen');
    case 'call.abort':
      // a call re-sent through the chart after an authorization is not offered (see knownModernBugs: the chart ignores request.abort)
      return snapshot.matches('modern') && !context.charted && (has(context.held, 'call') || has(context.held, 'callStream'));
    case 'cancel':
      return (
        idle &&
        snapshot.matches('modern') &&
        !context.charted &&
        !has(context.held, 'note') &&
        (has(context.held, 'call') || has(context.held, 'callStream'))
      );
    case 'terminate':
      return snapshot.matches('modern');
    case 'close':
      return running(snapshot) || snapshot.matches('authorizing') || snapshot.matches('waiting') || snapshot.matches('probing');
    case 'net.offline':
    case 'net.online':
      return snapshot.matches('modern');
    case 'health.trouble':
    case 'health.answered':
      return false;
    default:
      return true;
  }
}

/** Applicable, and something the model says happens. */
export function isModernEventTaken(snapshot: ModernSnapshot, event: ModernEvent): boolean {
  return isModernEventApplicable(snapshot, event) && snapshot.can(event);
}

export function modernCandidateEvents(snapshot: ModernSnapshot): ModernEvent[] {
  return snapshot.context.config.events.map((type) => ({ type })).filter((event) => isModernEventTaken(snapshot, event));
}

/** A vertex: the state and the context, without the (constant) configuration. */
export function serializeModernState(snapshot: ModernSnapshot): string {
  const { config: _config, ...world } = snapshot.context;
  return `${JSON.stringify(snapshot.value)} ${JSON.stringify(world)}`;
}

// ------------------------------------------------------------------------------------------------
// Configurations

export const modernConfigs: readonly ModernConfig[] = [
  {
    name: 'negotiation',
    auth: false,
    restored: false,
    events: ['start', 'probe', 'probe.result', 'probe.rpcError', 'probe.400', 'init', 'init.modernOnly', 'setModern', 'setLegacy', 'close'],
  },
  {
    name: 'calls',
    auth: false,
    restored: false,
    events: [
      'start',
      'setModern',
      'call',
      'call.json',
      'call.session',
      'call.sse',
      'call.404',
      'call.500',
      'stream.response',
      'stream.cut',
      'cancel',
      'call.abort',
      'note.202',
      'terminate',
      'close',
    ],
  },
  {
    name: 'listen and network',
    auth: false,
    restored: false,
    events: [
      'start',
      'setModern',
      'listen',
      'listen.open',
      'listen.end',
      'listen.drop',
      'listen.cancel',
      'listen.abort',
      'net.offline',
      'net.online',
      'close',
    ],
  },
  {
    name: 'auth',
    auth: true,
    restored: false,
    events: ['start', 'setModern', 'call', 'call.401', 'call.json', 'token.ok', 'token.500', 'token.fatal', 'close'],
  },
  {
    name: 'restart',
    auth: false,
    restored: false,
    events: ['start', 'setModern', 'close', 'call', 'cancel', 'note.202'],
  },
  {
    name: 'reissue',
    auth: false,
    restored: false,
    reissue: true,
    events: ['start', 'setModern', 'call', 'call.sse', 'call.json', 'stream.response', 'stream.cut', 'close'],
  },
  {
    name: 'outage',
    auth: false,
    restored: false,
    events: ['start', 'probe', 'probe.result', 'probe.refused', 'setModern', 'call', 'call.json', 'call.refused', 'close'],
  },
  {
    name: 'restored outage',
    auth: false,
    restored: true,
    events: ['start', 'call', 'call.json', 'call.refused', 'close'],
  },
  {
    name: 'restored',
    auth: false,
    restored: true,
    events: ['start', 'probe', 'probe.result', 'call', 'call.json', 'close'],
  },
];

// ------------------------------------------------------------------------------------------------
// Paths

export interface ModernTestModel {
  getShortestPaths(): StatePath<ModernSnapshot, ModernEvent>[];
  testPath(path: StatePath<ModernSnapshot, ModernEvent>, params: TestParam<ModernSnapshot, ModernEvent>): Promise<unknown>;
}

export interface GeneratedModernPath {
  config: ModernConfig;
  model: ModernTestModel;
  path: StatePath<ModernSnapshot, ModernEvent>;
  coverage: Coverage;
}

const coverageOf = (config: ModernConfig, path: StatePath<ModernSnapshot, ModernEvent>): Coverage =>
  modelCoverageOf(modernModel, config, path.steps);

/** Every shortest path of each configuration, each vertex keyed by the state, the context and the edge that led to it. */
export function generateModernPaths(configs: readonly ModernConfig[] = modernConfigs): GeneratedModernPath[] {
  const generated: GeneratedModernPath[] = [];
  for (const config of configs) {
    const model: ModernTestModel = createTestModel(modernModel, {
      input: config,
      events: (snapshot: ModernSnapshot) => modernCandidateEvents(snapshot),
      filterEvents: (snapshot: ModernSnapshot, event: ModernEvent) => isModernEventTaken(snapshot, event),
      serializeState: (snapshot: ModernSnapshot, event: ModernEvent | undefined, previous: ModernSnapshot | undefined) =>
        serializeModernState(snapshot) + (event !== undefined ? ` via ${event.type} from ${JSON.stringify(previous?.value)}` : ''),
    });
    for (const path of model.getShortestPaths()) generated.push({ config, model, path, coverage: coverageOf(config, path) });
  }
  return generated;
}

export function describeModernPath(generated: GeneratedModernPath): string {
  const events = generated.path.steps.filter(({ event }) => !isInit(event)).map(({ event }) => event.type);
  return `[modern: ${generated.config.name}] ${events.join(' → ') || '(initial state)'}`;
}
