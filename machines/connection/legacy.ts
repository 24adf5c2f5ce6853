/**
 * Legacy (L1, L2): the server speaks the 2024-11-05 HTTP+SSE transport: one GET stream announces
 * the endpoint for POSTs and carries every message; the API does not change.
 */
import { assertEvent, assign } from 'xstate';
import { ProtocolError, statusOf, StreamableHTTPError } from '../errors.js';
import type { ConnectionContext } from './types.js';
import { DEFAULT_LEGACY_ENDPOINT_TIMEOUT } from '../types.js';
import { actions, guards, type ConnectionState } from './base.js';
import { INITIALIZE, isRequest } from './messages.js';

export const legacyGuards = guards({
  /** L1: 400, 404 or 405 to initialize (never 401/403) means a server of the 2024-11-05 transport. */
  canFallBackToLegacy: ({ context, event }) => {
    if (event.type !== 'post.failed' || !context.options.legacyFallback || !isRequest(event.message, INITIALIZE)) return false;
    const status = statusOf(event.error);
    return status === 400 || status === 404 || status === 405;
  },
});

/** The error of a failed fallback: it names both failures, and keeps the initialize's HTTP status. */
function fallbackFailed(context: ConnectionContext, error: Error): StreamableHTTPError {
  const first = context.fallbackCause;
  return new StreamableHTTPError(`${first?.message ?? 'initialize failed'}; the legacy HTTP+SSE fallback failed too: ${error.message}`, {
    status: statusOf(first),
    cause: error,
  });
}

export const legacyActions = actions({
  /** The initialize goes again to the legacy endpoint once it is known; its failure is kept for the error. */
  holdForLegacy: assign(({ context, event }) => {
    assertEvent(event, 'post.failed');
    return {
      queue: [...context.queue, { message: event.message, ticket: event.ticket, origin: 'retry' as const, attempts: event.attempts }],
      fallbackCause: event.error,
    };
  }),
  adoptEndpoint: assign(({ event }) => {
    assertEvent(event, 'legacy.endpoint');
    return { legacyEndpoint: event.endpoint, era: 'httpSse' as const };
  }),
  /** The fallback failed too: the error names both, and keeps the initialize's HTTP status. */
  failLegacy: assign(({ context, event }) => {
    assertEvent(event, 'legacy.ended');
    return { error: fallbackFailed(context, event.error) };
  }),
  /** F7: the server never named its endpoint within legacyEndpointTimeout (an `after` of this chart). */
  failLegacyTimeout: assign(({ context }) => ({
    error: fallbackFailed(
      context,
      new ProtocolError(
        `legacy fallback: the server sent no endpoint event within ${context.options.legacyEndpointTimeout ?? DEFAULT_LEGACY_ENDPOINT_TIMEOUT} ms (legacyEndpointTimeout)`,
      ),
    ),
  })),
});

export const legacyState = {
  invoke: { src: 'legacyStream', input: {} },
  initial: 'awaitingEndpoint',
  on: {
    'legacy.ended': { target: 'failed', actions: 'failLegacy' },
    'post.done': { actions: ['deliverResponse', 'stopPost'] },
    'post.failed': { actions: ['answerFailure', 'stopPost'] },
  },
  states: {
    awaitingEndpoint: {
      tags: ['connecting'],
      after: { legacyEndpointTimeout: { target: '#connection.failed', actions: 'failLegacyTimeout' } },
      on: {
        send: { actions: 'queueSend' },
        'legacy.endpoint': { target: 'ready', actions: ['adoptEndpoint', 'flushQueue'] },
      },
    },
    ready: {
      tags: ['connected'],
      on: { send: { actions: 'spawnPost' } },
    },
  },
} as const satisfies ConnectionState;
