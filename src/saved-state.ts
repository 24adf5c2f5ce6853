import type { JSONRPCRequest, RestoredSession } from '../machines/types.js';
import { McpTransportError } from '../machines/errors.js';
import { sessionIdProblem, validateMessage } from './schema.js';

/**
 * W1: what a new transport needs to continue a session after a page reload. Plain JSON (store it
 * in `sessionStorage`); it holds the session ID (treat it like a cookie) and never a token.
 */
export interface SavedTransportState {
  /** Format of this object. */
  v: 1;
  /** The endpoint the session belongs to: a transport for another URL refuses the state. */
  endpoint: string;
  /** The session (2025 era); a 2026-07-28 connection has none (E10). */
  sessionId?: string | undefined;
  /** E10: the connection speaks 2026-07-28: a restored transport goes straight to that era. */
  era?: 'modern' | undefined;
  /** E10: the server's answer to the era probe (`server/discover`), given to the Client instead of asking again. */
  discover?: Record<string, unknown> | undefined;
  protocolVersion?: string | undefined;
  /** Where the standalone stream resumes (`Last-Event-ID`), so nothing sent during the reload is lost. */
  standaloneLastEventId?: string | undefined;
  /** The client's `initialize` request, repeated if the server no longer knows the session (F3). */
  initialize?: JSONRPCRequest | undefined;
}

/** Visible ASCII, as a header value must be (R11); the reason when it is not. */
function headerProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1024) return 'must be a string of 1 to 1,024 characters';
  return /^[\x21-\x7E]+$/.test(value) ? undefined : 'must be visible ASCII (0x21-0x7E)';
}

function refuse(reason: string): never {
  throw new McpTransportError(`not a saved transport state: ${reason}`);
}

/**
 * Checks a saved state read back from storage (or anywhere else a caller got it); throws a
 * `McpTransportError` that says what is wrong, never an exception from deep inside.
 */
export function parseSavedState(value: unknown): SavedTransportState {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('expected an object');
  const given = value as Record<string, unknown>;
  if (given.v !== 1) refuse('v must be 1');
  if (typeof given.endpoint !== 'string') refuse('endpoint must be a string');
  if (given.era !== undefined && given.era !== 'modern') refuse("era must be 'modern' when given");
  const modern = given.era === 'modern';
  if (modern && given.sessionId !== undefined) refuse('a 2026-07-28 (era: modern) state has no sessionId');
  if (!modern && typeof given.sessionId !== 'string') refuse('sessionId must be a string');
  const state: SavedTransportState = { v: 1, endpoint: given.endpoint };
  if (typeof given.sessionId === 'string') {
    const sessionProblem = sessionIdProblem(given.sessionId);
    if (sessionProblem !== undefined) refuse(`sessionId ${sessionProblem}`);
    state.sessionId = given.sessionId;
  }
  if (modern) {
    state.era = 'modern';
    const discover = given.discover;
    if (discover !== undefined) {
      if (typeof discover !== 'object' || discover === null || Array.isArray(discover)) refuse('discover must be an object');
      state.discover = discover as Record<string, unknown>;
    }
  }
  for (const key of ['protocolVersion', 'standaloneLastEventId'] as const) {
    const field = given[key];
    if (field === undefined) continue;
    const problem = headerProblem(field);
    if (problem !== undefined) refuse(`${key} ${problem}`);
    state[key] = field as string;
  }
  if (given.initialize === undefined) return state;
  const message = validateMessage(given.initialize);
  if (!message.ok || !('method' in message.message) || !('id' in message.message) || message.message.method !== 'initialize') {
    refuse('`initialize` is not an initialize request');
  }
  return { ...state, initialize: message.message };
}

/** The chart's view of a checked state, for a transport on `url`. */
export function restoredSession(state: SavedTransportState, url: URL): { sessionId: string | undefined; restored: RestoredSession } {
  if (URL.canParse(state.endpoint) ? new URL(state.endpoint).href !== url.href : true) {
    throw new McpTransportError(
      `the saved state belongs to ${state.endpoint}, not to ${url.href}; refusing to send its session ID elsewhere`,
    );
  }
  return {
    sessionId: state.sessionId,
    restored: {
      era: state.era,
      discover: state.discover,
      protocolVersion: state.protocolVersion,
      standaloneLastEventId: state.standaloneLastEventId,
      initializeRequest: state.initialize,
    },
  };
}
