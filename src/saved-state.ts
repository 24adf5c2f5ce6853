import { z } from 'zod';
import type { JSONRPCRequest, RestoredSession } from '../machines/events.js';
import { McpTransportError } from '../machines/errors.js';
import { sessionIdSchema, validateMessage } from './schema.js';

/**
 * W1: what a new transport needs to continue a session after a page reload. Plain JSON (store it
 * in `sessionStorage`); it holds the session ID (treat it like a cookie) and never a token.
 */
export interface SavedTransportState {
  /** Format of this object. */
  v: 1;
  /** The endpoint the session belongs to: a transport for another URL refuses the state. */
  endpoint: string;
  sessionId: string;
  protocolVersion?: string | undefined;
  /** Where the standalone stream resumes (`Last-Event-ID`), so nothing sent during the reload is lost. */
  standaloneLastEventId?: string | undefined;
  /** The client's `initialize` request, repeated if the server no longer knows the session (F3). */
  initialize?: JSONRPCRequest | undefined;
}

/** Visible ASCII, as a header value must be (R11). */
const headerValue = z.string().min(1).max(1024).regex(/^[\x21-\x7E]+$/, 'must be visible ASCII (0x21-0x7E)');

const savedStateSchema = z.object({
  v: z.literal(1),
  endpoint: z.string(),
  sessionId: sessionIdSchema,
  protocolVersion: headerValue.optional(),
  standaloneLastEventId: headerValue.optional(),
  initialize: z.unknown().optional(),
});

/**
 * Checks a saved state read back from storage (or anywhere else a caller got it); throws a
 * `McpTransportError` that says what is wrong, never an exception from deep inside.
 */
export function parseSavedState(value: unknown): SavedTransportState {
  const checked = savedStateSchema.safeParse(value);
  if (!checked.success) throw new McpTransportError(`not a saved transport state: ${z.prettifyError(checked.error)}`);
  const { initialize, ...state } = checked.data;
  if (initialize === undefined) return state;
  const message = validateMessage(initialize);
  if (!message.ok || !('method' in message.message) || !('id' in message.message) || message.message.method !== 'initialize') {
    throw new McpTransportError('not a saved transport state: `initialize` is not an initialize request');
  }
  return { ...state, initialize: message.message };
}

/** The chart's view of a checked state, for a transport on `url`. */
export function restoredSession(state: SavedTransportState, url: URL): { sessionId: string; restored: RestoredSession } {
  if (URL.canParse(state.endpoint) ? new URL(state.endpoint).href !== url.href : true) {
    throw new McpTransportError(`the saved state belongs to ${state.endpoint}, not to ${url.href}; refusing to send its session ID elsewhere`);
  }
  return {
    sessionId: state.sessionId,
    restored: {
      protocolVersion: state.protocolVersion,
      standaloneLastEventId: state.standaloneLastEventId,
      initializeRequest: state.initialize,
    },
  };
}
