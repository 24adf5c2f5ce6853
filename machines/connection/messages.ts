/**
 * The messages and errors the connection chart reasons about: which message is which, the
 * session a message goes with (H3), the synthetic answer to a failed call (P10), session
 * fingerprints (X1), POST child ids.
 */
import type { AuthChallenge, JSONRPCId, JSONRPCMessage, JSONRPCRequest, JSONRPCResponse, MessageSink, SendTicket } from '../types.js';
import { isUnauthorized, statusOf, StreamableHTTPError, withTransportError } from '../errors.js';

export const INITIALIZE = 'initialize';
export const INITIALIZED = 'notifications/initialized';
export const CANCELLED = 'notifications/cancelled';
/** E7: the 2026-07-28 era's long-lived stream of change notifications. */
export const LISTEN = 'subscriptions/listen';
/** E1: the 2026-07-28 era's probe, sent before the era is known. */
export const DISCOVER = 'server/discover';
/** E3: where a 2026-07-28 request names its protocol version (SEP-2243). */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
/** E1: the first revision of the sessionless era. */
export const FIRST_MODERN_VERSION = '2026-07-28';
/** E9: JSON-RPC code of an unsupported protocol version (2026-07-28). */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** E5: requests that only read, and so may be sent again when their answer was lost. */
const readOnly = new Set(['resources/read', 'prompts/get', 'server/discover', 'completion/complete']);

/** E5: a read-only request (`…/list`, `resources/read`, `prompts/get`, `completion/complete`, `server/discover`). */
export function isReadOnlyRequest(message: JSONRPCMessage | JSONRPCMessage[]): boolean {
  const request = asRequest(message);
  return request !== undefined && (request.method.endsWith('/list') || readOnly.has(request.method));
}

/** Revisions compare as dates: 2026-07-28 and later are the modern (sessionless) era. */
export function isModernVersion(version: string | undefined): boolean {
  return version !== undefined && version >= FIRST_MODERN_VERSION;
}

/**
 * E3: the protocol version a request claims in its `_meta` envelope, if it has one. Only a
 * request (method and id) carries the claim that its headers are derived from.
 */
export function envelopeVersion(message: JSONRPCMessage | JSONRPCMessage[]): string | undefined {
  if (Array.isArray(message) || !('method' in message) || !('id' in message)) return undefined;
  const meta = message.params?._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const version = (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY];
  return typeof version === 'string' ? version : undefined;
}
/** H1: the one protocol revision that allowed JSON-RPC batches. */
export const BATCHING_PROTOCOL = '2025-03-26';

export function isRequest(message: JSONRPCMessage | JSONRPCMessage[], method: string): boolean {
  return !Array.isArray(message) && 'method' in message && message.method === method;
}

/** The ids of the requests in a message or batch (notifications and responses have none to answer). */
export function requestIdsOf(message: JSONRPCMessage | JSONRPCMessage[]): JSONRPCId[] {
  const list = Array.isArray(message) ? message : [message];
  const ids: JSONRPCId[] = [];
  for (const m of list) if ('method' in m && 'id' in m) ids.push(m.id);
  return ids;
}

/** A message's authorization so far, before any (A1, A2). */
export const NO_ATTEMPTS = { auth: 0, stepUps: 0 } as const;

/** H3: what an initialize goes with: no session and no protocol version. */
export const NO_SESSION = { sessionId: undefined, protocolVersion: undefined } as const;

/** H3: the session and version a message goes with: none for an initialize, even when stale ones are cached. */
export function sessionOf(
  context: { sessionId: string | undefined; protocolVersion: string | undefined },
  message: JSONRPCMessage | JSONRPCMessage[],
): { sessionId: string | undefined; protocolVersion: string | undefined } {
  return isRequest(message, INITIALIZE) ? NO_SESSION : context;
}

/** The message as a JSON-RPC request (an id and a method), or undefined. */
export function asRequest(message: JSONRPCMessage | JSONRPCMessage[]): JSONRPCRequest | undefined {
  return !Array.isArray(message) && 'id' in message && 'method' in message ? message : undefined;
}

/**
 * The lowest POST child id not in use: ids, and so the `xstate.done.actor.<id>` event types the
 * chart memoizes transitions for, come from a bounded set (as many as POSTs in flight at once),
 * not one new type per call for the life of the machine object.
 */
export function freePostId<P extends 'post' | 'listen' = 'post'>(posts: Readonly<Record<string, unknown>>, prefix?: P): `${P}-${number}` {
  const kind = prefix ?? 'post';
  let n = 0;
  while (posts[`${kind}-${n}`] !== undefined) n++;
  return `${kind}-${n}` as `${P}-${number}`;
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
      data: withTransportError(
        {
          type: error.name,
          ...(status === undefined ? {} : { status }),
          ...(error.cause instanceof Error ? { cause: error.cause.message } : {}),
        },
        error,
      ),
    },
  };
}

/**
 * Settles a call with an error (P10): a caller still awaiting send() gets the typed error there
 * (the SDK Client rejects the call with it, UnauthorizedError included); only a call whose send()
 * had resolved gets a synthetic response for each request, so it fails at once, not at its timeout.
 */
export function failCall(sink: MessageSink, requestIds: readonly JSONRPCId[], ticket: SendTicket, error: Error): void {
  // E7: a caller that listens for its stream's end (the v2 SDK's onRequestStreamEnd) learns of it there.
  if (ticket.failed(error) || ticket.ended?.() === true || isUnauthorized(error)) return;
  for (const id of requestIds) sink.deliver(failureResponse(id, error));
}

/**
 * E1, E8: a 4xx (not 401/403) to the era probe, as the JSON-RPC error the v2 SDK Client's
 * negotiation reads: the body's own JSON-RPC error when it has one (-32022 with the server's
 * versions), else one naming the status. Either way the Client falls back or corrects its offer.
 */
export function probeRefusal(id: JSONRPCId, error: Error): JSONRPCResponse {
  const status = statusOf(error);
  const body = error instanceof StreamableHTTPError ? error.body : undefined;
  let parsed: unknown;
  try {
    parsed = body === undefined || body === '' ? undefined : JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const rpc: unknown = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? parsed.error : undefined;
  if (typeof rpc === 'object' && rpc !== null && 'code' in rpc && typeof rpc.code === 'number') {
    const message = 'message' in rpc && typeof rpc.message === 'string' ? rpc.message : error.message;
    return { jsonrpc: '2.0', id, error: { code: rpc.code, message, ...('data' in rpc ? { data: rpc.data } : {}) } };
  }
  return { jsonrpc: '2.0', id, error: { code: -32600, message: error.message, data: { status } } };
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
