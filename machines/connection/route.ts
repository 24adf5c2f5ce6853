/**
 * Which message the direct path may carry and where each goes (`directRoute`): what the facade
 * reads of the chart's snapshot on every send. Apart from direct.ts (the chart's side, which uses
 * xstate) so that the facade can route without loading the chart engine (issue 44: the browser
 * entry loads the engine on start()).
 */
import type { ChartOptions, JSONRPCMessage } from '../types.js';
import { CANCELLED, DISCOVER, INITIALIZE, INITIALIZED, isRequest, LISTEN, NO_SESSION, sessionOf } from './messages.js';

/**
 * The tags by which the chart tells the facade what it may POST itself: a plain call (while the
 * gate is open), the initialize (`connecting`), notifications/initialized (`initializing`).
 */
export const DIRECT_CALLS = 'directCalls';
export const DIRECT_INITIALIZE = 'directInitialize';
export const DIRECT_INITIALIZED_NOTICE = 'directInitializedNotice';

/**
 * A message the direct path may carry while the gate is open: any but those the chart must see
 * itself: an initialize, a cancellation (R8 stops the cancelled request's stream first), the era
 * probe (E1, E10) and a `subscriptions/listen` (a child, E7).
 */
export function isDirectCall(message: JSONRPCMessage): boolean {
  if (!('method' in message)) return true;
  const method = message.method;
  return method !== INITIALIZE && method !== CANCELLED && method !== LISTEN && method !== DISCOVER;
}

/**
 * Whether a POST without a POST child is possible at all: not while streams are watched for
 * idleness (R9), which only a POST child does.
 */
export function handshakeIsDirect(context: { options: Pick<ChartOptions, 'streamIdleTimeout'> }): boolean {
  return context.options.streamIdleTimeout === undefined;
}

/** What `directRoute` reads of the chart's snapshot. */
export interface RouteSnapshot {
  context: { options: Pick<ChartOptions, 'streamIdleTimeout'>; sessionId: string | undefined; protocolVersion: string | undefined };
  hasTag(tag: string): boolean;
}

/** What `directRoute` reads of the caller's send options. */
export interface RouteOptions {
  resumptionToken?: string | undefined;
  onresumptiontoken?: ((token: string) => void) | undefined;
}

/** Where a direct call goes: the session and protocol version it carries (H3). */
export interface DirectRoute {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
}

/**
 * Where a message goes: on the direct path (with the session it carries), or, undefined, through
 * the chart. Direct: a plain call (no resumption, no batch, no message the chart must see) while
 * the chart takes direct calls, or the handshake message the chart is waiting for (unless only a
 * POST child can carry it: R9's idle watch).
 */
export function directRoute(
  snapshot: RouteSnapshot,
  message: JSONRPCMessage | JSONRPCMessage[],
  options: RouteOptions | undefined,
): DirectRoute | undefined {
  if (Array.isArray(message) || options?.resumptionToken !== undefined || options?.onresumptiontoken !== undefined) return undefined;
  if (snapshot.hasTag(DIRECT_CALLS)) return isDirectCall(message) ? sessionOf(snapshot.context, message) : undefined;
  if (!handshakeIsDirect(snapshot.context)) return undefined;
  if (snapshot.hasTag(DIRECT_INITIALIZED_NOTICE)) return isRequest(message, INITIALIZED) ? sessionOf(snapshot.context, message) : undefined;
  return snapshot.hasTag(DIRECT_INITIALIZE) && isRequest(message, INITIALIZE) ? NO_SESSION : undefined;
}
