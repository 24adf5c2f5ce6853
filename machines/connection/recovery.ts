/**
 * Recovery (F3): the server forgot the session (404, P8). With `sessionRecovery: 'reinitialize'`
 * a new session is made from the cached initialize while sends wait in the queue; otherwise,
 * or when that fails, the transport fails with SessionExpiredError.
 */
import { assertEvent, assign, emit } from 'xstate';
import { isSessionMissing, ProtocolError, SessionExpiredError, sessionExpiredMessage } from '../errors.js';
import { isOffline, actions, guards, type ConnectionState } from './base.js';
import { fingerprint, INITIALIZED } from './messages.js';
import { noTicket } from '../types.js';
import { spawnPosts } from './posts.js';

export const recoveryGuards = guards({
  /** F3: recover when asked to, when there is an initialize to repeat, and not for a request already repeated once. */
  canRecover: ({ context, event }) =>
    context.options.sessionRecovery === 'reinitialize' &&
    context.initializeRequest !== undefined &&
    (event.type !== 'post.failed' || event.origin === 'caller'),
  /** A 404 met while recovering: the request waits for the new session, unless it was already repeated. */
  canRequeue: ({ event }) => event.type === 'post.failed' && isSessionMissing(event.error) && event.origin === 'caller',
  /** A report about the chart's own recovery POST. */
  isRecovery: ({ event }) => (event.type === 'post.done' || event.type === 'post.failed') && event.origin === 'recovery',
});

export const recoveryActions = actions({
  expireSession: assign({
    sessionMissing: true,
    error: ({ context, event }) =>
      new SessionExpiredError(sessionExpiredMessage(context.options.sessionId !== undefined), {
        cause:
          event.type === 'post.failed' || event.type === 'standalone.sessionMissing'
            ? event.error
            : event.type === 'post.done'
              ? new ProtocolError('re-initialize was not answered with an InitializeResult')
              : undefined,
      }),
  }),
  /** Forget the expired session; the request that met the 404 waits for the new one. */
  beginRecovery: assign(({ context, event }) => ({
    expiredSessionId: context.sessionId,
    sessionId: undefined,
    sessionMissing: false,
    queue:
      event.type === 'post.failed'
        ? [...context.queue, { message: event.message, ticket: event.ticket, origin: 'retry' as const, attempts: event.attempts }]
        : context.queue,
  })),
  /** A message that met a 404 waits for the new session (at most once: its origin becomes `retry`). */
  requeue: assign(({ context, event }) => {
    assertEvent(event, 'post.failed');
    return {
      queue: [...context.queue, { message: event.message, ticket: event.ticket, origin: 'retry' as const, attempts: event.attempts }],
    };
  }),
  reinitialize: assign(({ context, spawn, self }) =>
    context.initializeRequest === undefined
      ? {}
      : spawnPosts(context, spawn, [{ message: context.initializeRequest, ticket: noTicket, origin: 'recovery' }], isOffline(self)),
  ),
  confirmInitialized: assign(({ context, spawn, self }) =>
    spawnPosts(
      context,
      spawn,
      [{ message: { jsonrpc: '2.0', method: INITIALIZED }, ticket: noTicket, origin: 'recovery' }],
      isOffline(self),
    ),
  ),
  countRecovery: assign({ recoveriesWithoutProgress: ({ context }) => context.recoveriesWithoutProgress + 1 }),
  emitSessionChanged: emit(({ context }) => ({
    type: 'session.changed' as const,
    previous: fingerprint(context.expiredSessionId),
    current: fingerprint(context.sessionId),
  })),
});

/** Reports of other POSTs while recovering: a 404 waits for the new session, anything else is answered. */
const recoveryPostFailed = [
  { guard: 'isRecovery', target: '#connection.failed', actions: ['stopPost', 'expireSession'] },
  { guard: 'canRequeue', actions: ['requeue', 'stopPost'] },
  { actions: ['answerFailure', 'stopPost'] },
] as const;

export const recoveryStates = {
  /** The server forgot the session (P8): re-establish it (F3) or fail with SessionExpiredError. */
  recovering: {
    entry: 'abandonTerminate',
    always: [
      { guard: 'canRecover', target: 'reconnecting', actions: ['beginRecovery', 'emitSessionEnded'] },
      { target: 'failed', actions: ['expireSession', 'answerExpired'] },
    ],
  },
  /** A new session from the cached initialize; sends wait in the queue meanwhile. */
  reconnecting: {
    tags: ['reconnecting'],
    initial: 'reinitializing',
    // Reports of POSTs still in flight are handled by each sub-state, next to its own.
    on: {
      send: [{ guard: 'isCancellation', actions: ['cancelRequest', 'queueSend'] }, { actions: 'queueSend' }],
    },
    states: {
      reinitializing: {
        entry: 'reinitialize',
        on: {
          'post.done': [
            { guard: 'isRecovery', target: 'confirming', actions: ['adoptSession', 'stopPost'] },
            { actions: ['deliverResponse', 'stopPost'] },
          ],
          'post.failed': recoveryPostFailed,
        },
      },
      confirming: {
        entry: 'confirmInitialized',
        on: {
          'post.done': [
            {
              guard: 'isRecovery',
              target: '#connection.open',
              actions: ['stopPost', 'countRecovery', 'emitSessionChanged', 'flushQueue'],
            },
            { actions: ['deliverResponse', 'stopPost'] },
          ],
          'post.failed': recoveryPostFailed,
        },
      },
    },
  },
} as const satisfies Record<string, ConnectionState>;
