/**
 * The 2026-07-28 era (E1–E10): sessionless. No initialize, no standalone GET, no DELETE, no
 * resumption; every request is its own POST whose headers its body implies (E3), cancelled by
 * closing its stream (E6). Long-lived change notifications come on `subscriptions/listen` POST
 * streams, each a child of its own (E7).
 *
 * The era is decided while `connecting`: the v2 SDK Client probes with `server/discover` and then
 * tells the version with `setProtocolVersion`; a 2026-07-28 version there moves the chart here.
 * A transport that knew the era (a saved state, or an earlier start) comes here at once, and
 * answers the Client's probe with the server's earlier answer instead of asking again (E10).
 */
import { assertEvent, assign, emit, enqueueActions } from 'xstate';
import { ModernOnlyServerError, ProtocolError, statusOf, withTransportError } from '../errors.js';
import { actions, guards, isOffline, networkRegion, type ConnectionState } from './base.js';
import { healthRegion, openAnswer, openFailure } from './health.js';
import { DIRECT_CALLS, takeOverCall } from './direct.js';
import {
  asRequest,
  DISCOVER,
  envelopeVersion,
  INITIALIZE,
  isModernVersion,
  isReadOnlyRequest,
  isRequest,
  probeRefusal,
  UNSUPPORTED_PROTOCOL_VERSION,
} from './messages.js';
import { authorizeFrom } from './authorization.js';
import type { ConnectionContext, ConnectionEvent } from './types.js';

/** E9: the versions a -32022 refusal of `initialize` names, when every one of them is modern. */
function modernOnlyVersions(event: ConnectionEvent): string[] | undefined {
  if (event.type !== 'post.done' || !isRequest(event.message, INITIALIZE)) return undefined;
  const response = event.response;
  if (response === undefined || !('error' in response) || response.error.code !== UNSUPPORTED_PROTOCOL_VERSION) return undefined;
  const data: unknown = response.error.data;
  const supported = typeof data === 'object' && data !== null && 'supported' in data ? data.supported : undefined;
  if (!Array.isArray(supported) || supported.length === 0) return undefined;
  const versions = supported.filter((v): v is string => typeof v === 'string');
  return versions.length === supported.length && versions.every((v) => isModernVersion(v)) ? versions : undefined;
}

/** What an era-probe result says, if the event is one: the server's `server/discover` answer. */
function discoverResult(event: ConnectionEvent): Record<string, unknown> | undefined {
  if (event.type !== 'post.done' || !isRequest(event.message, DISCOVER)) return undefined;
  const response = event.response;
  return response !== undefined && 'result' in response ? response.result : undefined;
}

export const modernGuards = guards({
  /** E1: the Client settled on a 2026-07-28 (or later) version. */
  isModernVersionSet: ({ event }) => event.type === 'protocolVersion.set' && isModernVersion(event.version),
  /** E10: the era is known from before (a saved state, or an earlier start of this transport). */
  knowsModernEra: ({ context }) => context.era === 'modern' || context.options.restored?.era === 'modern',
  /** E10: the Client probes again, and the server's earlier answer is at hand. */
  isProbeAnsweredFromBefore: ({ context, event }) =>
    event.type === 'send' &&
    context.discover !== undefined &&
    envelopeVersion(event.message) !== undefined &&
    isRequest(event.message, DISCOVER),
  isDiscoverResult: ({ event }) => discoverResult(event) !== undefined,
  /**
   * E1, E8: the era probe (a request with the 2026-07-28 envelope) refused with a 4xx other than
   * 401/403: the answer the Client's negotiation reads, not a failure of the transport.
   */
  isProbeRefused: ({ event }) => {
    if (event.type !== 'post.failed' || envelopeVersion(event.message) === undefined) return false;
    const status = statusOf(event.error);
    return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
  },
  /**
   * U12: the era is not confirmed yet: the Client set 2026-07-28 before its probe (the AI SDK's
   * order) and no `server/discover` answer is known (none kept, none restored).
   */
  isUnconfirmedProbeRefused: ({ context, event }) => {
    if (context.discover !== undefined || event.type !== 'post.failed' || !isRequest(event.message, DISCOVER)) return false;
    if (envelopeVersion(event.message) === undefined) return false;
    const status = statusOf(event.error);
    return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
  },
  /** U12: the Client fell back to a 2025 version before any probe answer confirmed this era (the AI SDK's fallback). */
  isLegacyVersionUnconfirmed: ({ context, event }) =>
    event.type === 'protocolVersion.set' && !isModernVersion(event.version) && context.discover === undefined,
  /** E9: initialize refused with -32022 by a server that offers only 2026-07-28 versions. */
  isModernOnlyRefusal: ({ event }) => modernOnlyVersions(event) !== undefined,
  /** E5: the caller opted in (`reissue: 'reads'`) and the request whose stream was cut only reads. */
  canReissue: ({ context, event }) =>
    event.type === 'post.interrupted' && context.options.reissue === 'reads' && isReadOnlyRequest(event.message),
  /** E4: a 2026-07-28 answer carried a session ID: there are no sessions in this era. */
  carriesSessionId: ({ context, event }) =>
    event.type === 'post.done' && event.sessionId !== undefined && !context.sessionIdMismatchReported,
});

export const modernActions = actions({
  enterModern: assign({ era: 'modern' as const, sessionId: undefined, initializeRequest: undefined }),
  /** U12: back to negotiating: this era was never confirmed, and the Client settled on a 2025 version. */
  leaveModern: assign({ era: undefined }),
  keepDiscover: assign(({ event }) => ({ discover: discoverResult(event) })),
  /** E10: the probe is answered with the server's earlier answer, under the probe's own id. */
  answerProbeFromBefore: ({ context, event }) => {
    assertEvent(event, 'send');
    const request = asRequest(event.message);
    if (request === undefined || context.discover === undefined) return;
    event.ticket.accepted();
    context.sink.deliver({ jsonrpc: '2.0', id: request.id, result: context.discover });
  },
  /** E8: the probe's refusal goes to the Client as the probe's JSON-RPC error (its negotiation reads it). */
  answerProbeRefusal: ({ context, event }) => {
    assertEvent(event, 'post.failed');
    const request = asRequest(event.message);
    if (request === undefined) return;
    event.ticket.accepted();
    context.sink.deliver(probeRefusal(request.id, event.error));
  },
  /** E9: the Client hears why in words that name the fix, and the transport fails with the same typed error. */
  failModernOnly: enqueueActions(({ context, event, enqueue }) => {
    assertEvent(event, 'post.done');
    const versions = modernOnlyVersions(event) ?? [];
    const request = asRequest(event.message);
    const offered = request?.params?.protocolVersion;
    const error = new ModernOnlyServerError(versions, typeof offered === 'string' ? offered : undefined);
    if (request !== undefined) {
      context.sink.deliver({
        jsonrpc: '2.0',
        id: request.id,
        // findTransportError finds the typed error behind the Client's McpError by this data (U12).
        error: { code: UNSUPPORTED_PROTOCOL_VERSION, message: error.message, data: withTransportError({ supported: versions }, error) },
      });
    }
    enqueue.assign({ error });
  }),
  /**
   * E5: the request goes once more under a new id (a POST child that does not re-issue again);
   * its answer, or its failure, reaches the caller under the caller's id.
   */
  reissue: assign(({ context, event, spawn, self }) => {
    assertEvent(event, 'post.interrupted');
    const request = asRequest(event.message);
    return takeOverCall(context, event, spawn, isOffline(self), request === undefined ? undefined : `${String(request.id)}:reissued`);
  }),
  /** E4: one warning; the ID is never sent back. */
  ignoreSessionId: enqueueActions(({ enqueue }) => {
    enqueue.assign({ sessionIdMismatchReported: true });
    enqueue(
      emit({
        type: 'warning' as const,
        error: new ProtocolError('server sent an Mcp-Session-Id in the 2026-07-28 era, which has no sessions; ignoring it'),
      }),
    );
  }),
});

/** Answers in `connecting` that belong to the era probe (E1, E8, E9, E10), ahead of the initialize's own. */
export const probeAnswers = {
  'post.done': [
    { guard: 'isModernOnlyRefusal', target: 'failed', actions: ['stopPost', 'failModernOnly'] },
    { guard: 'isDiscoverResult', actions: ['keepDiscover', 'keepProbe', 'deliverResponse', 'stopPost'] },
  ],
  'post.failed': [{ guard: 'isProbeRefused', actions: ['answerProbeRefusal', 'stopPost'] }],
  'protocolVersion.set': { guard: 'isModernVersionSet', target: 'modern', actions: 'setVersion' },
} as const;

export const modernState = {
  type: 'parallel',
  tags: ['modern'],
  entry: 'enterModern',
  on: {
    send: [
      { guard: 'isProbeAnsweredFromBefore', actions: 'answerProbeFromBefore' },
      { guard: 'isCancellation', actions: ['cancelRequest', 'spawnPost'] },
      { actions: 'spawnPost' },
    ],
    'post.done': [
      { guard: 'isDiscoverResult', actions: ['keepDiscover', 'keepProbe', 'deliverResponse', 'stopPost'] },
      // W6: an answer all the same (a success ends degraded, as openAnswer's does)
      { guard: 'carriesSessionId', actions: ['ignoreSessionId', 'deliverResponse', 'stopPost', 'reportAnswer'] },
      openAnswer,
    ],
    'post.failed': [
      // U12: a probe sent after the Client set 2026-07-28 (the AI SDK's order), refused: its answer, as in `connecting` (E8).
      { guard: 'isUnconfirmedProbeRefused', actions: ['answerProbeRefusal', 'stopPost'] },
      authorizeFrom('modern'),
      // F4: no response at all (the server is down): the chart waits for it, and calls fail typed meanwhile.
      { guard: 'isUnreachable', target: 'waiting', actions: ['answerFailure', 'stopPost'] },
      openFailure,
    ],
    // U12: the Client settled on 2025-11-25 after a refused probe: negotiation goes on in `connecting` (initialize next).
    'protocolVersion.set': [
      { guard: 'isLegacyVersionUnconfirmed', target: 'connecting', actions: ['setVersion', 'leaveModern'] },
      { actions: 'setVersion' },
    ],
    // W6, E7: a listen stream open again is a success too (the 2025 era's standalone stream says so as it reopens).
    'post.listening': { actions: 'reportAnswer' },
    // E5: opted in, a read-only call cut short goes once more; anything else fails at once (the root's handler).
    'post.interrupted': { guard: 'canReissue', actions: 'reissue' },
    // E4: nothing to DELETE, nothing to terminate.
    close: '#connection.closing',
    'session.terminate': { actions: 'acknowledgeTerminate' },
  },
  states: {
    /** Every request goes out on the direct path: the chart hears only what is not a happy answer. */
    calls: {
      initial: 'open',
      states: { open: { tags: ['connected', DIRECT_CALLS], entry: 'openDirectGate', exit: 'closeDirectGate' } },
    },
    network: networkRegion,
    health: healthRegion,
  },
} as const satisfies ConnectionState;

export type { ConnectionContext };
