/**
 * Authorization (A1, A2): the SDK's OAuth flow runs while POSTs, the standalone GET and resumes
 * that met 401 (or 403 insufficient_scope) wait with every new send, and go again once authorized.
 *
 * Where it returns to is `authReturn`, a hand-written history: a history state would return to
 * the state last left, but answers that arrive while authorizing still move the session on (an
 * InitializeResult turns a return to `connecting` into one to `initializing`), so the return
 * point is data that `returnTo` updates.
 */
import { assertEvent, assign, enqueueActions } from 'xstate';
import type { ErrorActorEvent } from 'xstate';
import { asFailure, isUnauthorized, toError } from '../errors.js';
import { actions, guards, type ConnectionState } from './base.js';
import { challengeOf, failCall, requestIdsOf } from './messages.js';
import type { AuthReturn, QueuedSend } from './types.js';

/** Why the flow failed, handed to the guard and actions as typed params. */
const flowError = ({ event }: { event: ErrorActorEvent }) => ({ error: toError(event.error) });

export const authorizationGuards = guards({
  returnsTo: ({ context }, params: { state: AuthReturn }) => context.authReturn === params.state,
  needsUserMidSession: ({ context }, params: { error: Error }) => context.authReturn === 'open' && isUnauthorized(params.error),
  needsUserInModernEra: ({ context }, params: { error: Error }) => context.authReturn === 'modern' && isUnauthorized(params.error),
});

export const authorizationActions = actions({
  holdStandaloneChallenge: assign(({ context, event }) => {
    assertEvent(event, 'standalone.unauthorized');
    return { authChallenge: challengeOf(event.error) ?? context.authChallenge };
  }),
  /** The calls that met the 401/403 fail with the SDK's UnauthorizedError; sends queued meanwhile go on. */
  failAuthorizationTriggers: enqueueActions(({ context, enqueue }, params: { error: Error }) => {
    const kept: QueuedSend[] = [];
    for (const queued of context.queue) {
      if (queued.attempts === undefined) kept.push(queued);
      else queued.ticket.failed(params.error);
    }
    enqueue.assign({ queue: kept });
  }),
  /** Authorization did not complete: every waiting message fails with its reason (the SDK's UnauthorizedError for a redirect). */
  failQueued: enqueueActions(({ context, enqueue }, params: { error: Error }) => {
    for (const queued of context.queue) failCall(context.sink, requestIdsOf(queued.message), queued.ticket, params.error);
    enqueue.assign({ queue: [], error: asFailure(params.error) });
  }),
});

/** A POST met 401 or 403 in `state`: it waits for authorization, which returns there. */
export function authorizeFrom<S extends AuthReturn>(state: S) {
  return {
    guard: 'needsAuthorization',
    target: 'authorizing',
    actions: ['stopPost', 'holdForAuthorization', { type: 'returnTo', params: { state } }],
  } as const;
}

export const authorizingState = {
  tags: ['authorizing'],
  entry: 'abandonTerminate',
  invoke: {
    src: 'authorize',
    input: ({ context }) => ({ challenge: context.authChallenge }),
    onDone: [
      { guard: { type: 'returnsTo', params: { state: 'connecting' } }, target: 'connecting', actions: 'flushQueue' },
      { guard: { type: 'returnsTo', params: { state: 'initializing' } }, target: 'initializing', actions: 'flushQueue' },
      { guard: { type: 'returnsTo', params: { state: 'modern' } }, target: 'modern', actions: 'flushQueue' },
      { target: 'open', actions: 'flushQueue' },
    ],
    onError: [
      // Mid-session, a flow that needs the user fails only the calls that met the 401/403 (F5).
      {
        guard: { type: 'needsUserInModernEra', params: flowError },
        target: 'modern',
        actions: [{ type: 'failAuthorizationTriggers', params: flowError }, 'flushQueue'],
      },
      {
        guard: { type: 'needsUserMidSession', params: flowError },
        target: 'open',
        actions: [{ type: 'failAuthorizationTriggers', params: flowError }, 'flushQueue'],
      },
      { target: 'failed', actions: { type: 'failQueued', params: flowError } },
    ],
  },
  on: {
    send: { actions: 'queueSend' },
    // Answers to what was sent before the 401 still move the session on.
    'post.done': [
      {
        guard: 'isInitializeResult',
        actions: ['adoptSession', 'deliverResponse', 'stopPost', { type: 'returnTo', params: { state: 'initializing' } }],
      },
      { guard: 'isInitializedAccepted', actions: ['stopPost', { type: 'returnTo', params: { state: 'open' } }] },
      { actions: ['deliverResponse', 'stopPost'] },
    ],
    'post.failed': [
      { guard: 'needsAuthorization', actions: ['stopPost', 'holdForAuthorization'] },
      { actions: ['answerFailure', 'stopPost'] },
    ],
  },
} as const satisfies ConnectionState;
