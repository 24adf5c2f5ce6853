/**
 * The messages and errors the connection chart reasons about: which message is which, the
 * synthetic answer to a failed call (P10), session fingerprints (X1), POST child ids.
 */
import type { AuthChallenge, JSONRPCId, JSONRPCMessage, JSONRPCRequest, JSONRPCResponse, MessageSink, SendTicket } from '../types.js';
import { isUnauthorized, statusOf, StreamableHTTPError } from '../errors.js';

export const INITIALIZE = 'initialize';
export const INITIALIZED = 'notifications/initialized';
const CANCELLED = 'notifications/cancelled';
/** H1: the one protocol revision that allowed JSON-RPC batches. */
export const BATCHING_PROTOCOL = '2025-03-26';

export function isRequest(message: JSONRPCMessage | JSONRPCMessage[], method: string): boolean {
  return !Array.isArray(message) && 'method' in message && message.method === method;
}

/** The message as a JSON-RPC request (an id and a method), or undefined. */
export function asRequest(message: JSONRPCMessage | JSONRPCMessage[]): JSONRPCRequest | undefined {
  return !Array.isArray(message) && 'id' in message && 'method' in message ? message : undefined;
}

/**
 * A message the data plane may carry while the chart allows it (its `dataPlane` tag): any but
 * those the chart must see itself: an initialize, a cancellation (R8 stops the cancelled
 * request's stream first).
 */
export function isDirectCall(message: JSONRPCMessage): boolean {
  return !('method' in message) || (message.method !== INITIALIZE && message.method !== CANCELLED);
}

/**
 * The lowest POST child id not in use: ids, and so the `xstate.done.actor.<id>` event types the
 * chart memoizes transitions for, come from a bounded set (as many as POSTs in flight at once),
 * not one new type per call for the life of the machine object.
 */
export function freePostId(posts: Readonly<Record<string, unknown>>): `post-${number}` {
  let n = 0;
  while (posts[`post-${n}`] !== undefined) n++;
  return `post-${n}`;
}

/** The request an outgoing `notifications/cancelled` names (R8). */
export function cancelledRequestId(message: JSONRPCMessage | JSONRPCMessage[]): JSONRPCId | undefined {
  if (!isRequest(message, CANCELLED) || Array.isArray(message) || !('params' in message)) return undefined;
  const id = message.params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The HTTP status behind an error, looked for along its `cause` chain (a SessionExpiredError's 404). */
export function statusAlong(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const status = statusOf(e);
    if (status !== undefined) return status;
  }
  return undefined;
}

/** The `WWW-Authenticate` challenge an error carries, if it is an HTTP error that has one. */
export function challengeOf(error: unknown): AuthChallenge | undefined {
  return error instanceof StreamableHTTPError ? error.challenge : undefined;
}

/** The synthetic answer to a call that failed, so a waiting client rejects at once (P10). */
export function failureResponse(id: JSONRPCRequest['id'], error: Error): JSONRPCResponse {
  const status = statusAlong(error);
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: -32000,
      message: error.message,
      data: {
        type: error.name,
        ...(status === undefined ? {} : { status }),
        ...(error.cause instanceof Error ? { cause: error.cause.message } : {}),
      },
    },
  };
}

/**
 * Settles a call with an error (P10): a caller still awaiting send() gets the typed error there
 * (the SDK Client rejects the call with it, UnauthorizedError included); only a call whose send()
 * had resolved gets a synthetic response for each request, so it fails at once, not at its timeout.
 */
export function failCall(sink: MessageSink, requestIds: readonly JSONRPCId[], ticket: SendTicket, error: Error): void {
  if (ticket.failed(error) || isUnauthorized(error)) return;
  for (const id of requestIds) sink.deliver(failureResponse(id, error));
}

/** A short, stable, non-reversible tag for a session ID, for events and logs (X1). */
export function fingerprint(sessionId: string | undefined): string | undefined {
  if (sessionId === undefined) return undefined;
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    hash ^= sessionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `#${hash.toString(16).padStart(8, '0')}`;
}

export const noTicket: SendTicket = { accepted: () => undefined, failed: () => false };
