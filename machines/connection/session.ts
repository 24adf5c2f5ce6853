/**
 * Session: initialize (connecting), notifications/initialized (initializing), and the open
 * session with its two regions: the session itself and the optional standalone stream (G6).
 */
import { assertEvent, assign, emit, enqueueActions, stopChild } from 'xstate';
import { asFailure, ProtocolError, StreamableHTTPError, StreamEndedError } from '../errors.js';
import { isOffline, actions, guards, networkRegion, otherAnswer, otherFailure, type ConnectionState } from './base.js';
import { asRequest, failCall, INITIALIZE, isRequest, requestIdsOf } from './messages.js';
import { healthRegion, openAnswer, openFailure } from './health.js';
import { spawnPosts } from './posts.js';
import { DIRECT_CALLS, DIRECT_INITIALIZE, DIRECT_INITIALIZED_NOTICE, handshakeIsDirect } from './direct.js';
import { probeAnswers } from './modern.js';
import { authorizeFrom } from './authorization.js';
import type { ConnectionContext, ConnectionEvent } from './types.js';
import { sessionClosingStates } from './closing.js';
import { resendOrFail } from './recovery.js';

/** H7: a response carried another session ID than the established one, not reported yet. */
function isOtherSessionId(context: ConnectionContext, event: ConnectionEvent): boolean {
  return (
    event.type === 'post.done' &&
    event.sessionId !== undefined &&
    context.sessionId !== undefined &&
    event.sessionId !== context.sessionId &&
    !context.sessionIdMismatchReported
  );
}

const otherSessionIdWarning = () =>
  new ProtocolError('server sent a different session ID on a later response; keeping the established one');

export const sessionGuards = guards({
  isInitialize: ({ event }) => event.type === 'send' && isRequest(event.message, INITIALIZE),
  isInitializeFailure: ({ event }) => (event.type === 'post.failed' || event.type === 'post.done') && isRequest(event.message, INITIALIZE),
  isOtherSessionId: ({ context, event }) => isOtherSessionId(context, event),
  /**
   * The direct path may carry calls: not while a re-established session is unproven (the first
   * answer resets the count, in the chart, F3) nor while streams are watched for idleness (R9).
   */
  takesDirectCalls: ({ context }) => context.recoveriesWithoutProgress === 0 && handshakeIsDirect(context),
  /** A session re-established and no call answered since: another 404 is not the session's fault to chase again. */
  recoveredWithoutProgress: ({ context }) => context.recoveriesWithoutProgress > 0,
  standaloneEnabled: ({ context }) => context.options.standaloneStream,
  authorizes: ({ context }) => context.options.authorization,
});

export const sessionActions = actions({
  /** W2: the host's network signal, watched while the session is open, when the host has one. */
  watchNetwork: enqueueActions(({ context, enqueue }) => {
    if (context.options.watchNetwork !== false) enqueue.spawnChild('networkStatus', { id: 'network', input: {} });
  }),
  unwatchNetwork: stopChild('network'),
  cacheInitialize: assign(({ event }) => {
    assertEvent(event, 'send');
    return {
      initializeRequest: asRequest(event.message),
      sessionId: undefined,
      protocolVersion: undefined,
      sessionMissing: false,
    };
  }),
  /**
   * One fault, one error: an initialize that failed before any response (a refused connection: a
   * StreamableHTTPError with no status) rejects send() with the very failure onerror hears
   * (TransportFailedError, its cause the network error). One the server answered keeps its
   * StreamableHTTPError, whose status the SDK's Client reads. Runs after failInitialize.
   */
  answerInitializeFailure: enqueueActions(({ context, event, enqueue }) => {
    assertEvent(event, 'post.failed');
    const refused = event.error instanceof StreamableHTTPError && event.error.status === undefined;
    failCall(context.sink, requestIdsOf(event.message), event.ticket, refused ? (context.error ?? event.error) : event.error);
    // As answerFailure: a stream that broke after send() resolved is seen on onerror (F6).
    if (event.error instanceof StreamEndedError) enqueue(emit({ type: 'warning', error: event.error }));
  }),
  failInitialize: assign(({ event }) => {
    assertEvent(event, ['post.failed', 'post.done']);
    return {
      error: asFailure(
        event.type === 'post.failed' ? event.error : new ProtocolError('initialize was answered without an InitializeResult'),
      ),
    };
  }),
  reportOtherSessionId: enqueueActions(({ enqueue }) => {
    enqueue.assign({ sessionIdMismatchReported: true });
    enqueue.emit({ type: 'warning', error: otherSessionIdWarning() });
  }),
  /** H7 for the first answer after a recovery, which is handled apart (it reopens the direct path). */
  reportIfOtherSessionId: enqueueActions(({ context, event, enqueue }) => {
    if (!isOtherSessionId(context, event)) return;
    enqueue.assign({ sessionIdMismatchReported: true });
    enqueue.emit({ type: 'warning', error: otherSessionIdWarning() });
  }),
  resetRecoveries: assign({ recoveriesWithoutProgress: 0 }),
  /** F3: a call that met the 404 of a session already replaced goes again on the current one (MAX_RESENDS times at most, then it fails alone). */
  resendOnCurrentSession: assign(({ context, event, spawn, self }) => {
    assertEvent(event, 'post.failed');
    const again = resendOrFail(context, event);
    return again === undefined ? {} : spawnPosts(context, spawn, [again], isOffline(self));
  }),
  reportStandaloneDegraded: emit(({ event }) => {
    assertEvent(event, 'standalone.degraded');
    return { type: 'warning' as const, error: event.error };
  }),
  /** W1: a restored stream position is for the restored session's first standalone stream only. */
  spendRestoredCursor: assign({ standaloneResumeFrom: undefined }),
  /** W2: the streams' waits pause offline, and go at once when the network is back. */
  tellStreams: enqueueActions(({ context, event, self, enqueue }) => {
    assertEvent(event, ['network.offline', 'network.online']);
    const children = self.getSnapshot().children;
    for (const id of [...Object.keys(context.posts), 'standalone']) {
      if (id in children) enqueue.sendTo(id, { type: event.type });
    }
  }),
  reportStandaloneGone: emit(({ event }) => {
    assertEvent(event, 'standalone.sessionMissing');
    return {
      type: 'warning' as const,
      error: new StreamEndedError('standalone stream: the server answers 404 for a session just re-established; not listening any more', {
        cause: event.error,
      }),
    };
  }),
});

/** A 404 for a session replaced meanwhile is not this session's end (F3). */
const staleSessionMissing = { guard: 'isStaleSessionMissing', actions: ['stopPost', 'resendOnCurrentSession'] } as const;

export const sessionStates = {
  /**
   * The initialize POST is in flight, or awaited. The facade POSTs the initialize itself (tag
   * `directInitialize`) and reports every outcome here, the InitializeResult included: no POST
   * child for it unless its stream must be resumed. A machine driven without the facade gets a
   * POST child for it as before.
   */
  connecting: {
    tags: ['connecting', DIRECT_INITIALIZE],
    on: {
      send: [{ guard: 'isInitialize', actions: ['cacheInitialize', 'spawnPost'] }, { actions: 'spawnPost' }],
      // E1: the 2026-07-28 era is decided here, by the Client's probe and the version it settles on.
      'protocolVersion.set': probeAnswers['protocolVersion.set'],
      'post.done': [
        ...probeAnswers['post.done'],
        { guard: 'isInitializeResult', target: 'initializing', actions: ['adoptSession', 'deliverResponse', 'stopPost'] },
        { guard: 'isInitializeFailure', target: 'failed', actions: ['deliverResponse', 'stopPost', 'failInitialize'] },
        otherAnswer,
      ],
      'post.failed': [
        authorizeFrom('connecting'),
        ...probeAnswers['post.failed'],
        { guard: 'canFallBackToLegacy', target: 'legacy', actions: ['stopPost', 'holdForLegacy'] },
        { guard: 'isInitializeFailure', target: 'failed', actions: ['stopPost', 'failInitialize', 'answerInitializeFailure'] },
        otherFailure,
      ],
    },
  },
  /**
   * InitializeResult received; waiting for notifications/initialized to be accepted. The facade
   * POSTs that notification itself (tag `directInitializedNotice`) and reports every outcome here,
   * the 202 included: no POST child for it.
   */
  initializing: {
    tags: ['connecting', DIRECT_INITIALIZED_NOTICE],
    on: {
      send: { actions: 'spawnPost' },
      'post.done': [{ guard: 'isInitializedAccepted', target: 'open', actions: 'stopPost' }, otherAnswer],
      'post.failed': [
        authorizeFrom('initializing'),
        staleSessionMissing,
        // The session was lost before the handshake ended: the Client's connect() fails with it (start() again begins afresh).
        { guard: 'isSessionMissing', target: 'failed', actions: ['stopPost', 'expireSession', 'answerExpired'] },
        otherFailure,
      ],
    },
  },
  open: {
    type: 'parallel',
    exit: 'spendRestoredCursor',
    on: {
      send: [{ guard: 'isCancellation', actions: ['cancelRequest', 'spawnPost'] }, { actions: 'spawnPost' }],
      'post.done': [
        { guard: 'isOtherSessionId', actions: ['reportOtherSessionId', 'deliverResponse', 'stopPost', 'reportAnswer'] },
        { guard: 'recoveredWithoutProgress', actions: ['resetRecoveries', 'deliverResponse', 'stopPost', 'reportAnswer'] },
        openAnswer,
      ],
      'post.failed': [
        authorizeFrom('open'),
        staleSessionMissing,
        { guard: 'isSessionMissing', target: 'recovering', actions: 'stopPost' },
        openFailure,
      ],
      'standalone.sessionMissing': [{ guard: 'recoveredWithoutProgress', actions: 'reportStandaloneGone' }, { target: 'recovering' }],
      'standalone.degraded': { actions: 'reportStandaloneDegraded' },
      'standalone.unauthorized': {
        guard: 'authorizes',
        target: 'authorizing',
        actions: ['holdStandaloneChallenge', { type: 'returnTo', params: { state: 'open' } }],
      },
    },
    states: {
      session: {
        initial: 'active',
        states: {
          active: {
            tags: ['connected'],
            initial: 'choosing',
            states: {
              choosing: { always: [{ guard: 'takesDirectCalls', target: 'direct' }, { target: 'charted' }] },
              /** The direct path is open: the facade POSTs plain calls itself; the chart hears only what is not a happy answer. */
              direct: { tags: [DIRECT_CALLS], entry: 'openDirectGate', exit: 'closeDirectGate' },
              /** Every call through the chart: after a session was re-established until a call is answered (F3), or with streamIdleTimeout (R9). */
              charted: {
                on: {
                  // The first answer on the re-established session is progress: direct calls again.
                  'post.done': {
                    guard: 'recoveredWithoutProgress',
                    target: 'choosing',
                    actions: ['reportIfOtherSessionId', 'resetRecoveries', 'deliverResponse', 'stopPost', 'reportAnswer'],
                  },
                },
              },
            },
            on: {
              // F1: DELETE first, while the standalone stream still runs (the server ends it and
              // its connection is reused), then everything stops. Defined here, in the session
              // region, so that the standalone region is not exited and re-entered.
              close: [{ guard: 'shouldTerminate', target: 'closing' }, { target: '#connection.closing' }],
              'session.terminate': [
                { guard: 'hasSession', target: 'terminating', actions: 'holdTerminateTicket' },
                { actions: 'acknowledgeTerminate' },
              ],
            },
          },
          ...sessionClosingStates,
        },
      },
      /** The optional server-to-client stream; its lifetime is the session's (G6). */
      standalone: {
        initial: 'deciding',
        states: {
          deciding: { always: [{ guard: 'standaloneEnabled', target: 'active' }, { target: 'off' }] },
          active: {
            invoke: {
              id: 'standalone',
              src: 'standaloneStream',
              input: ({ context }) => ({
                sessionId: context.sessionId,
                protocolVersion: context.protocolVersion,
                options: context.options,
                lastEventId: context.standaloneResumeFrom,
              }),
              onDone: 'ended',
            },
          },
          off: {},
          /** The server offers no standalone stream (G2). */
          ended: {},
        },
      },
      network: networkRegion,
      health: healthRegion,
    },
  },
} as const satisfies Record<string, ConnectionState>;
