/**
 * The direct path, the chart's side of it: the calls the facade POSTs itself (src/data-plane.ts)
 * with no chart event and no actor per call. Here are the chart's words to it (events it emits,
 * which the facade hears: the plane's start and end, its gate, opened on entry and closed on exit
 * by the states that allow direct calls, W6's health, R8's cancel), which message may take it and
 * where each goes (`directRoute`, in route.ts, which the facade reads without the engine), and the POST child that takes a cut call over. The words they
 * exchange (`DirectCallsCommand`, `DirectCallReport`) are in types.ts with the chart's other
 * events, and the session a message goes with (`sessionOf`, H3) in messages.ts: this file takes
 * from them and none of them from it.
 */
import { assertEvent, assign, emit } from 'xstate';
import type { JSONRPCId } from '../types.js';
import type { PostStreamInput } from '../post-stream.js';
import { freePostId, NO_ATTEMPTS, requestIdsOf } from './messages.js';
import { actions, isOffline } from './base.js';
import type { ConnectionContext, DirectCallReport } from './types.js';

export { directRoute, DIRECT_CALLS, DIRECT_INITIALIZE, DIRECT_INITIALIZED_NOTICE, handshakeIsDirect, isDirectCall } from './route.js';
export type { DirectRoute, RouteOptions, RouteSnapshot } from './route.js';

/**
 * A direct call whose stream ended before its response, taken over by a POST child: to resume it
 * (R1) or fail it (R2; E5 in the 2026-07-28 era), or, given `reissueAs`, to send it once more
 * under that id (E5). The direct path accepted the call already.
 */
export function takeOverCall(
  context: ConnectionContext,
  event: DirectCallReport,
  spawn: (src: 'postStream', options: { id: `post-${number}`; input: PostStreamInput }) => unknown,
  offline: boolean,
  reissueAs: JSONRPCId | undefined,
): Pick<ConnectionContext, 'posts'> {
  const posts = { ...context.posts };
  const id = freePostId(posts);
  spawn('postStream', {
    id,
    input: {
      message: event.message,
      ticket: event.ticket,
      origin: 'caller',
      attempts: NO_ATTEMPTS,
      sessionId: event.sessionId,
      protocolVersion: event.protocolVersion,
      options: context.options,
      interrupted: reissueAs === undefined ? event.interrupted : undefined,
      reissueAs,
      // W2: a stream cut while the host is offline waits paused, spending no attempt.
      offline,
      // E5: in the 2026-07-28 era it is not resumed: the call fails at once.
      modern: context.era === 'modern',
      headers: event.headers,
    },
  });
  posts[id] = { ticket: event.ticket, requestIds: requestIdsOf(event.message), origin: 'caller' };
  return { posts };
}

/**
 * The chart's words to the direct path, emitted (the plane is the facade's, not an actor of the
 * chart: a held session weighs one actor less, docs/benchmark.md, issue 44). The action names
 * are the chart's, as when they spoke to a child.
 */
export const directActions = actions({
  /** The direct path runs for the connection's life: from start() until it closes or fails (`direct.end`). */
  startDirectCalls: emit({ type: 'direct.start' as const }),
  /** Entry of a state that allows direct calls. */
  openDirectGate: emit({ type: 'direct.open' as const }),
  /** Exit of such a state. */
  closeDirectGate: emit({ type: 'direct.close' as const }),
  /**
   * W6: entry and exit of `health.degraded`. The health region outlives the direct path while
   * the session closes (`closing` ends it): the facade, without a plane then, ignores them.
   */
  directCallsDegraded: emit({ type: 'direct.degraded' as const }),
  directCallsSteady: emit({ type: 'direct.steady' as const }),
  /**
   * A direct call's stream ended before its response: a POST child takes it over, to resume it
   * (R1) or fail it (R2). The direct path accepted the call already.
   */
  spawnInterrupted: assign(({ context, event, spawn, self }) => {
    assertEvent(event, 'post.interrupted');
    return takeOverCall(context, event, spawn, isOffline(self), undefined);
  }),
});
