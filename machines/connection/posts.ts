/**
 * The POST children, as the chart spawns them: one per send (in order), and which of them a
 * cancelled or aborted request stops. Kept apart from base.ts so each file keeps to one concern.
 */
import type { JSONRPCId } from '../types.js';
import type { PostStreamInput } from '../post-stream.js';
import { freePostId, isRequest, LISTEN, NO_ATTEMPTS, requestIdsOf, sessionOf } from './messages.js';
import type { ConnectionContext, QueuedSend } from './types.js';

function postInput(context: ConnectionContext, send: QueuedSend, offline: boolean): PostStreamInput {
  const { sessionId, protocolVersion } = sessionOf(context, send.message);
  return {
    message: send.message,
    ticket: send.ticket,
    origin: send.origin,
    attempts: send.attempts ?? NO_ATTEMPTS,
    endpoint: context.legacyEndpoint,
    resumptionToken: send.resumptionToken,
    onResumptionToken: send.onResumptionToken,
    sessionId,
    protocolVersion,
    options: context.options,
    offline,
    modern: context.era === 'modern',
    headers: send.headers,
  };
}

/** Spawns one POST child per send, in order, and records who waits on each. */
export function spawnPosts(
  context: ConnectionContext,
  spawn: (src: 'postStream', options: { id: `post-${number}` | `listen-${number}`; input: PostStreamInput }) => unknown,
  sends: readonly QueuedSend[],
  offline: boolean,
): Pick<ConnectionContext, 'posts'> {
  const posts = { ...context.posts };
  for (const send of sends) {
    const id = freePostId(posts, isRequest(send.message, LISTEN) ? 'listen' : 'post');
    spawn('postStream', { id, input: postInput(context, send, offline) });
    posts[id] = { ticket: send.ticket, requestIds: requestIdsOf(send.message), origin: send.origin };
  }
  return { posts };
}

/**
 * R8, E6: the POST children and queued sends of request `id` are told `error`; what is left,
 * and the children to stop.
 */
export function dropRequest(
  context: ConnectionContext,
  id: JSONRPCId,
  error: Error,
): { posts: ConnectionContext['posts']; queue: QueuedSend[]; stopped: string[] } {
  const posts: ConnectionContext['posts'] = {};
  const stopped: string[] = [];
  for (const [childId, post] of Object.entries(context.posts)) {
    if (!post.requestIds.includes(id)) {
      posts[childId] = post;
      continue;
    }
    post.ticket.failed(error);
    stopped.push(childId);
  }
  const queue = context.queue.filter((queued) => !requestIdsOf(queued.message).includes(id));
  for (const dropped of context.queue) if (!queue.includes(dropped)) dropped.ticket.failed(error);
  return { posts, queue, stopped };
}
