/**
 * The connection chart: one MCP Streamable HTTP connection (2026-07-28 and 2025-11-25) as a statechart.
 * Each concern keeps its states, guards and actions together in its own file; this file only
 * assembles them:
 *
 *   lifecycle.ts      idle, closed, failed, and what every state takes
 *   session.ts        connecting, initializing, open (session + standalone regions)
 *   authorization.ts  authorizing (A1, A2)
 *   recovery.ts       recovering, reconnecting (F3)
 *   modern.ts         the 2026-07-28 era: sessionless, probed while connecting (E1-E10)
 *   legacy.ts         the 2024-11-05 HTTP+SSE fallback (L1, L2)
 *   closing.ts        close() from an open session or elsewhere, terminateSession() (F1, B2)
 *   direct.ts         the direct path: the chart's words to it, its gate, which message takes it (directRoute)
 *   base.ts           the typed setup, shared guards and actions; types.ts: context and events
 */
import { connectionSetup, sharedActions, sharedGuards } from './base.js';
import { authorizationActions, authorizationGuards, authorizingState } from './authorization.js';
import { closingActions, closingGuards, closingState, standaloneDone } from './closing.js';
import { legacyActions, legacyGuards, legacyState } from './legacy.js';
import { everywhere, lifecycleActions, lifecycleGuards, lifecycleStates } from './lifecycle.js';
import { recoveryActions, recoveryGuards, recoveryStates } from './recovery.js';
import { sessionActions, sessionGuards, sessionStates } from './session.js';
import { modernActions, modernGuards, modernState } from './modern.js';
import { directActions } from './direct.js';
import { healthActions, healthGuards } from './health.js';

export const connectionMachine = connectionSetup
  .extend({
    guards: {
      ...sharedGuards,
      ...lifecycleGuards,
      ...sessionGuards,
      ...authorizationGuards,
      ...recoveryGuards,
      ...legacyGuards,
      ...closingGuards,
      ...modernGuards,
      ...healthGuards,
      standaloneDone,
    },
    actions: {
      ...sharedActions,
      ...lifecycleActions,
      ...sessionActions,
      ...authorizationActions,
      ...recoveryActions,
      ...legacyActions,
      ...closingActions,
      ...modernActions,
      ...directActions,
      ...healthActions,
    },
  })
  .createMachine({
    id: 'connection',
    // Every field named (no spread of the input): the spread was the larger half of making a transport.
    context: ({ input }) => ({
      options: input.options,
      sink: input.sink,
      era: undefined,
      discover: undefined,
      sessionId: undefined,
      protocolVersion: undefined,
      batching: false,
      initializeRequest: undefined,
      sessionMissing: false,
      expiredSessionId: undefined,
      queue: [],
      error: undefined,
      authChallenge: undefined,
      authReturn: 'connecting',
      legacyEndpoint: undefined,
      fallbackCause: undefined,
      warned: [],
      sessionIdMismatchReported: false,
      recoveriesWithoutProgress: 0,
      posts: {},
      terminateTicket: undefined,
      standaloneResumeFrom: undefined,
      degradedBy: undefined,
      recoveryAttempts: 0,
      recoveryWait: undefined,
      probeRequest: undefined,
    }),
    initial: 'idle',
    on: everywhere,
    states: {
      idle: lifecycleStates.idle,
      ...sessionStates,
      modern: modernState,
      authorizing: authorizingState,
      legacy: legacyState,
      ...recoveryStates,
      closing: closingState,
      closed: lifecycleStates.closed,
      failed: lifecycleStates.failed,
    },
  });

export type ConnectionMachine = typeof connectionMachine;

export type * from './types.js';
export type { DirectRoute, RouteOptions, RouteSnapshot } from './route.js';
export { directRoute, DIRECT_CALLS, DIRECT_INITIALIZE, DIRECT_INITIALIZED_NOTICE, handshakeIsDirect, isDirectCall } from './route.js';
export {
  sessionOf,
  failCall,
  failureResponse,
  fingerprint,
  INITIALIZE,
  INITIALIZED,
  isRequest,
  envelopeVersion,
  NO_ATTEMPTS,
  requestIdsOf,
} from './messages.js';
