/**
 * Lifecycle: the states where no session runs (idle, closed, failed) and what holds in every
 * state (a protocol version set by the SDK, warnings emitted, sends refused where nothing else
 * takes them).
 *
 * idle, closed and failed are siblings, not children of one parent: their names are the
 * chart's public state values (tests, the model, recordings compare them), so `start` is
 * written once below and given to each.
 */
import { assertEvent, assign, emit, enqueueActions } from 'xstate';
import { asFailure, McpTransportError } from '../errors.js';
import { versionFields, actions, guards, type ConnectionState } from './base.js';
import type { ConnectionContext } from './types.js';

/** F2: a stopped transport starts again from a fresh session (or resumes a given one). */
function freshSession(context: ConnectionContext): ConnectionContext {
  const restored = context.options.restored;
  return {
    ...context,
    // E10: the era (and the probe's answer) are kept for the transport's life, or come restored;
    // E1: a given (or restored) session is a 2025 one, though no initialize says so this time.
    era: restored?.era ?? (context.options.sessionId === undefined ? context.era : 'streamable'),
    discover: restored?.discover ?? context.discover,
    sessionId: context.options.sessionId,
    // W1: a restored session goes on with its version, its stream's place, and its initialize (for F3);
    // E10: a restart in the 2026-07-28 era keeps the version it spoke (no handshake sets it again).
    ...versionFields(restored?.protocolVersion ?? (context.era === 'modern' ? context.protocolVersion : undefined)),
    initializeRequest: restored?.initializeRequest,
    standaloneResumeFrom: restored?.standaloneLastEventId,
    sessionMissing: false,
    expiredSessionId: undefined,
    queue: [],
    error: undefined,
    legacyEndpoint: undefined,
    fallbackCause: undefined,
    recoveriesWithoutProgress: 0,
    recoveryAttempts: 0,
    recoveryWait: undefined,
    sessionIdMismatchReported: false,
  };
}

export const lifecycleGuards = guards({
  hasPresetSession: ({ context }) => context.options.sessionId !== undefined,
});

export const lifecycleActions = actions({
  startFresh: assign(({ context }) => freshSession(context)),
  setVersion: assign(({ event }) => {
    assertEvent(event, 'protocolVersion.set');
    return versionFields(event.version);
  }),
  /** Warnings of the host's I/O leave through the same channel as the chart's own; one with a `once` key only the first time. */
  emitWarning: enqueueActions(({ context, event, enqueue }) => {
    assertEvent(event, 'warning');
    const once = event.once;
    if (once !== undefined) {
      if (context.warned.includes(once)) return;
      enqueue.assign({ warned: [...context.warned, once] });
    }
    enqueue.emit({ type: 'warning' as const, error: event.error });
  }),
  /** B2: terminateSession() where there is no open session to end: nothing to do, or not now. */
  terminateNotNow: ({ context, event }) => {
    assertEvent(event, 'session.terminate');
    if (context.sessionId === undefined) event.ticket.accepted();
    else event.ticket.failed(new McpTransportError('terminateSession() is possible only while the session is open'));
  },
  emitFailed: emit(({ context }) => ({
    type: 'failed' as const,
    error: context.error ?? asFailure(new Error('unknown failure')),
  })),
  emitClosed: emit({ type: 'closed' as const }),
  forgetError: assign({ error: undefined }),
  /** The session ended with close(): `transport.sessionId` no longer names it. */
  forgetClosedSession: assign({ sessionId: undefined }),
});

/** What every state takes unless it says otherwise. */
export const everywhere = {
  'protocolVersion.set': { actions: 'setVersion' },
  warning: { actions: 'emitWarning' },
  close: '.closing',
  send: { actions: 'rejectSend' },
  'session.terminate': { actions: 'terminateNotNow' },
  // E6: a request's requestSignal aborted: its POST child (or queued copy) stops, wherever the chart is.
  'request.abort': { actions: 'abortRequest' },
  // A direct call's stream ended early: wherever the chart is, a POST child takes it over
  // (the chart ends direct calls on close and failure, so none reports after those).
  'post.interrupted': { actions: 'spawnInterrupted' },
} as const satisfies ConnectionState['on'];

/** F2: `start` from a stopped transport. */
const start = [
  { guard: 'knowsModernEra', target: 'modern', actions: ['startFresh', 'startDirectCalls'] },
  { guard: 'hasPresetSession', target: 'open', actions: ['startFresh', 'startDirectCalls'] },
  { target: 'connecting', actions: ['startFresh', 'startDirectCalls'] },
] as const;

export const lifecycleStates = {
  idle: {
    on: { start, 'session.terminate': { actions: 'rejectSend' } },
  },
  closed: {
    tags: ['closed'],
    entry: ['forgetError', 'forgetClosedSession', 'emitSessionEnded', 'emitClosed'],
    on: { start, 'session.terminate': { actions: 'rejectSend' }, close: {} },
  },
  failed: {
    tags: ['failed'],
    entry: [{ type: 'stopEverything', params: { answer: true } }, 'emitSessionEnded', 'emitFailed'],
    on: { start, 'session.terminate': { actions: 'rejectSend' } },
  },
} as const satisfies Record<string, ConnectionState>;
