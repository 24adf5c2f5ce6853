/**
 * Recovery (F3) and the waiting state (F4). The server forgot the session (404, P8): with
 * `sessionRecovery: 'reinitialize'` a new session is made from the cached initialize while sends
 * wait in the queue. A re-initialize that fails is tried again with the backoff (R4) within a
 * budget (`reconnection.maxRetries`); past it, or for a cause a quick retry cannot fix, the chart
 * waits (`waiting`): calls fail at once with a TransportWaitingError naming the cause and the next
 * attempt, and the chart tries again when that is due and at the next call, until the server
 * answers. In the 2026-07-28 era (no session) a server that cannot be reached is waited for the
 * same way; the attempt is the era probe the Client sent (`probing`). Only `sessionRecovery:
 * 'fail'` ends the transport here (SessionExpiredError).
 */
import { and, assertEvent, assign, emit, enqueueActions } from 'xstate';
import {
  isServerTrouble,
  isSessionMissing,
  ProtocolError,
  SessionExpiredError,
  sessionExpiredMessage,
  StreamableHTTPError,
  StreamEndedError,
  TransportWaitingError,
} from '../errors.js';
import { reconnectDelay } from '../backoff.js';
import { isOffline, actions, guards, otherAnswer, otherFailure, type ConnectionState } from './base.js';
import { asRequest, DISCOVER, failCall, fingerprint, INITIALIZED, isRequest, requestIdsOf } from './messages.js';
import { noTicket } from '../types.js';
import { spawnPosts } from './posts.js';
import type { ConnectionContext, ConnectionEvent, QueuedSend } from './types.js';

/** F3: how often one request is re-sent after meeting a lost session; the next loss fails that request alone (F5). */
export const MAX_RESENDS = 3;

type Failed = Extract<ConnectionEvent, { type: 'post.failed' }>;

/**
 * F3: the request that met a lost session, to be sent again on the next one; or, once it was
 * re-sent MAX_RESENDS times, failed alone with a SessionExpiredError (its cause the last 404).
 */
export function resendOrFail(context: ConnectionContext, event: Failed): QueuedSend | undefined {
  const recoveries = event.attempts.recoveries ?? 0;
  if (recoveries >= MAX_RESENDS) {
    failCall(
      context.sink,
      requestIdsOf(event.message),
      event.ticket,
      new SessionExpiredError(`the request was re-sent ${recoveries} times after a lost session and met a lost session each time`, {
        cause: event.error,
      }),
    );
    return undefined;
  }
  return { message: event.message, ticket: event.ticket, origin: 'retry', attempts: { ...event.attempts, recoveries: recoveries + 1 } };
}

/** Why the chart waits: the report that ended its last attempt, or what it waited for before. */
function causeOf(context: ConnectionContext, event: ConnectionEvent): Error {
  if (event.type === 'post.failed') return event.error;
  if (event.type === 'post.done') {
    return new ProtocolError(
      isRequest(event.message, DISCOVER)
        ? 'the era probe was not answered with a result'
        : 're-initialize was not answered with an InitializeResult',
    );
  }
  return context.recoveryWait?.cause ?? new StreamEndedError('the server could not be reached');
}

export const recoveryGuards = guards({
  /** F3: recover when asked to and when there is an initialize to repeat (each request's re-sends are bounded apart). */
  canRecover: ({ context }) => context.options.sessionRecovery === 'reinitialize' && context.initializeRequest !== undefined,
  /** A 404 met while recovering: the request waits for the new session (within its re-sends, F3). */
  canRequeue: ({ event }) => event.type === 'post.failed' && isSessionMissing(event.error) && event.origin !== 'recovery',
  /** A report about the chart's own recovery POST. */
  isRecovery: ({ event }) => (event.type === 'post.done' || event.type === 'post.failed') && event.origin === 'recovery',
  /**
   * F3: the recovery POST failed for a cause a retry may fix (the network, 429, 5xx, an answer cut
   * before its response, the new session lost at once) and the budget is not spent.
   */
  recoveryBudgetLeft: ({ context, event }) =>
    event.type === 'post.failed' &&
    (isServerTrouble(event.error) || isSessionMissing(event.error) || event.error instanceof StreamEndedError) &&
    context.recoveryAttempts < context.options.reconnection.maxRetries,
  /** F4: the 2026-07-28 era (no session): the attempt from `waiting` is the era probe. */
  isModernEra: ({ context }) => context.era === 'modern',
  /** F4: the Client's era probe is at hand to repeat. */
  hasProbe: ({ context }) => context.probeRequest !== undefined,
  /** F4: a 2026-07-28 request got no response at all (the connection refused, reset, or the host unknown): the server is gone for now. */
  isUnreachable: ({ event }) =>
    event.type === 'post.failed' && event.error instanceof StreamableHTTPError && event.error.status === undefined,
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
  /** Forget the expired session; the request that met the 404 waits for the new one (within its re-sends). */
  beginRecovery: assign(({ context, event }) => {
    const again = event.type === 'post.failed' ? resendOrFail(context, event) : undefined;
    return {
      expiredSessionId: context.sessionId,
      sessionId: undefined,
      sessionMissing: false,
      queue: again === undefined ? context.queue : [...context.queue, again],
    };
  }),
  /** A message that met a 404 waits for the new session (F3: at most MAX_RESENDS times, then it fails alone). */
  requeue: assign(({ context, event }) => {
    assertEvent(event, 'post.failed');
    const again = resendOrFail(context, event);
    return { queue: again === undefined ? context.queue : [...context.queue, again] };
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
  /** F4: the Client's era probe, kept to be repeated while waiting (2026-07-28). */
  keepProbe: assign(({ event }) => {
    assertEvent(event, 'post.done');
    return { probeRequest: asRequest(event.message) };
  }),
  /** F4: the era probe again, to see whether the server is back (its answer is the chart's, not the Client's). */
  probe: assign(({ context, spawn, self }) =>
    context.probeRequest === undefined
      ? {}
      : spawnPosts(context, spawn, [{ message: context.probeRequest, ticket: noTicket, origin: 'recovery' }], isOffline(self)),
  ),
  /** R4, W3: the next attempt planned once, as the wait begins: which, when it is due, and why. */
  planRecoveryWait: assign(({ context, event }) => {
    const attempt = context.recoveryAttempts + 1;
    const delayMs = reconnectDelay(attempt, undefined, context.options.reconnection, context.options.random);
    return {
      recoveryAttempts: attempt,
      recoveryWait: { attempt, delayMs, dueAt: context.options.now() + delayMs, cause: causeOf(context, event) },
    };
  }),
  /** F4: the calls held for the attempt that failed fail now, typed, with the cause and the next attempt. */
  failHeldCalls: enqueueActions(({ context, enqueue }) => {
    const wait = context.recoveryWait;
    if (context.queue.length === 0 || wait === undefined) return;
    const error = new TransportWaitingError(wait.cause, wait.attempt, wait.dueAt, wait.delayMs);
    for (const queued of context.queue) failCall(context.sink, requestIdsOf(queued.message), queued.ticket, error);
    enqueue.assign({ queue: [] });
  }),
  /** The connection works again: the next trouble starts a fresh budget. */
  endRecovery: assign({ recoveryAttempts: 0, recoveryWait: undefined }),
});

/** Reports of other POSTs while recovering: a 404 waits for the new session, anything else is answered. */
const recoveryPostFailed = [
  { guard: and(['isRecovery', 'recoveryBudgetLeft']), target: '#connection.reconnecting.backoff', actions: 'stopPost' },
  { guard: 'isRecovery', target: '#connection.waiting', actions: 'stopPost' },
  { guard: 'canRequeue', actions: ['requeue', 'stopPost'] },
  otherFailure,
] as const;

/** F4: a call made while waiting is held for an attempt made at once: answered if the server is back, failed typed if not. */
const attemptNow = [
  { guard: 'isCancellation', target: 'retrying', actions: ['cancelRequest', 'queueSend'] },
  { target: 'retrying', actions: 'queueSend' },
] as const;

export const recoveryStates = {
  /** The server forgot the session (P8): re-establish it (F3) or, with `sessionRecovery: 'fail'`, fail with SessionExpiredError. */
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
            { guard: and(['isRecovery', 'isInitializeResult']), target: 'confirming', actions: ['adoptSession', 'stopPost'] },
            { guard: 'isRecovery', target: '#connection.waiting', actions: 'stopPost' },
            otherAnswer,
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
              actions: ['stopPost', 'countRecovery', 'endRecovery', 'emitSessionChanged', 'flushQueue'],
            },
            otherAnswer,
          ],
          'post.failed': recoveryPostFailed,
        },
      },
      /** F3: the re-initialize failed for a transient cause: tried again after the backoff (R4), within the budget. */
      backoff: {
        tags: ['backoff'],
        entry: 'planRecoveryWait',
        after: { recoveryDelay: 'reinitializing' },
        on: {
          'post.done': otherAnswer,
          'post.failed': [{ guard: 'canRequeue', actions: ['requeue', 'stopPost'] }, otherFailure],
        },
      },
    },
  },
  /**
   * F4: no working server for now, and nothing lost for good. Calls are held for an attempt made
   * at once (failed typed, naming the cause and the next attempt, if it fails too); the chart
   * tries again when the planned wait is over (W3: `recoveryWait` says when); it is connected
   * again when the server answers, with the same transport.
   */
  waiting: {
    tags: ['waiting'],
    entry: ['planRecoveryWait', 'failHeldCalls'],
    after: { recoveryDelay: 'retrying' },
    on: {
      send: attemptNow,
      'post.done': otherAnswer,
      'post.failed': otherFailure,
    },
  },
  /** F4: the attempt, in the connection's era: a new session (2025-11-25), or the era probe (2026-07-28). */
  retrying: {
    always: [
      { guard: and(['isModernEra', 'hasProbe']), target: 'probing' },
      { guard: 'isModernEra', target: 'modern', actions: ['endRecovery', 'flushQueue'] },
      { guard: 'canRecover', target: 'reconnecting' },
      { target: 'failed', actions: 'expireSession' },
    ],
  },
  /** F4, 2026-07-28: the era probe again; its answer means the server is back. */
  probing: {
    tags: ['reconnecting'],
    entry: 'probe',
    on: {
      send: [{ guard: 'isCancellation', actions: ['cancelRequest', 'queueSend'] }, { actions: 'queueSend' }],
      'post.done': [{ guard: 'isRecovery', target: 'modern', actions: ['stopPost', 'endRecovery', 'flushQueue'] }, otherAnswer],
      'post.failed': [{ guard: 'isRecovery', target: 'waiting', actions: 'stopPost' }, otherFailure],
    },
  },
} as const satisfies Record<string, ConnectionState>;
