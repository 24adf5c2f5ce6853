import type { JSONRPCRequest, RestoredSession } from '../machines/types.js';
import type { ConnectionContext } from '../machines/connection/index.js';
import type { StandaloneStreamContext } from '../machines/standalone-stream.js';
import { resumePoint } from '../machines/standalone-resume.js';
import { InvalidSavedStateError, McpTransportError } from '../machines/errors.js';
import { sessionIdProblem, validateMessage } from './schema.js';
import { anObject, issuesOf, shape } from './validation.js';
import * as z from './validation.js';

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

/** Visible ASCII, as a header value must be (R11). */
const headerValue = () => {
  const expected = 'visible ASCII (0x21-0x7E), 1 to 1,024 characters';
  return z.string(expected).check(z.refine((value: string) => value.length <= 1024 && /^[\x21-\x7E]+$/.test(value), expected));
};

let savedStateSchema: z.ZodMiniType | undefined;

/** U9: the saved state's shape (zod/mini), built on first use. */
function schema(): z.ZodMiniType {
  savedStateSchema ??= z
    .looseObject(
      {
        v: z.literal(1, '1 (the saved-state format)'),
        endpoint: z.string('the endpoint URL, a string'),
        era: z.optional(z.literal('modern', "'modern', or absent")),
        sessionId: z.optional(
          z
            .string('a session ID, a string')
            .check(
              z.refine(
                (id: string) => sessionIdProblem(id) === undefined,
                'a session ID: visible ASCII (0x21-0x7E), 1 to 1,024 characters',
              ),
            ),
        ),
        discover: z.optional(anObject('an object (the server/discover result)')),
        protocolVersion: z.optional(headerValue()),
        standaloneLastEventId: z.optional(headerValue()),
        initialize: z.optional(
          shape<JSONRPCRequest>('an initialize request (JSON-RPC 2.0, with an id and method "initialize")', (value) => {
            const message = validateMessage(value);
            return message.ok && 'method' in message.message && 'id' in message.message && message.message.method === 'initialize';
          }),
        ),
      },
      'an object (what saveState() returned)',
    )
    .check(
      z.check((ctx) => {
        const state = ctx.value as Record<string, unknown>;
        const modern = state.era === 'modern';
        // E10: a 2026-07-28 state has no session; a 2025 one has one.
        if (modern && state.sessionId !== undefined) {
          ctx.issues.push({
            code: 'custom',
            path: ['sessionId'],
            message: "absent in a 2026-07-28 (era: 'modern') state",
            input: undefined,
          });
        } else if (!modern && state.sessionId === undefined) {
          ctx.issues.push({ code: 'custom', path: ['sessionId'], message: 'a session ID, a string', input: undefined });
        }
      }),
    );
  return savedStateSchema;
}

/**
 * U9: checks a value said to be a saved state; throws `InvalidSavedStateError` naming each field
 * of the wrong shape, under `prefix` (`restoreState` for the option), never its value.
 */
export function checkSavedState(value: unknown, prefix = ''): SavedTransportState {
  const issues = issuesOf(schema(), value, prefix);
  if (issues.length > 0) throw new InvalidSavedStateError(issues);
  const given = value as SavedTransportState;
  // A copy of the known fields only: nothing else a caller stored is carried on.
  const state: SavedTransportState = { v: 1, endpoint: given.endpoint };
  if (given.sessionId !== undefined) state.sessionId = given.sessionId;
  if (given.era === 'modern') {
    state.era = 'modern';
    if (given.discover !== undefined) state.discover = given.discover;
  }
  if (given.protocolVersion !== undefined) state.protocolVersion = given.protocolVersion;
  if (given.standaloneLastEventId !== undefined) state.standaloneLastEventId = given.standaloneLastEventId;
  if (given.initialize !== undefined) state.initialize = given.initialize;
  return state;
}

/**
 * Checks a saved state read back from storage (or anywhere else a caller got it); throws an
 * `InvalidSavedStateError` (a `McpTransportError`) that names the field and the shape it must
 * have, never an exception from deep inside, and never the field's value.
 */
export function parseSavedState(value: unknown): SavedTransportState {
  return checkSavedState(value);
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

/**
 * W1: what a new transport needs to continue this connection (`saveState()`), from the chart's
 * context and its standalone stream's, or undefined when there is no session to continue (not
 * connected yet, re-establishing one, the legacy transport). Plain JSON with no token.
 */
export function savedStateOf(
  endpoint: URL,
  context: Pick<
    ConnectionContext,
    'era' | 'protocolVersion' | 'discover' | 'sessionId' | 'legacyEndpoint' | 'options' | 'initializeRequest'
  >,
  standalone: Pick<StandaloneStreamContext, 'seenIds' | 'lastEventId'> | undefined,
): SavedTransportState | undefined {
  // E10: a 2026-07-28 connection keeps its era and the probe's answer; it has no session.
  if (context.era === 'modern') {
    return {
      v: 1,
      endpoint: endpoint.href,
      era: 'modern',
      ...(context.protocolVersion === undefined ? {} : { protocolVersion: context.protocolVersion }),
      ...(context.discover === undefined ? {} : { discover: context.discover }),
    };
  }
  if (context.sessionId === undefined || context.legacyEndpoint !== undefined) return undefined;
  const standaloneLastEventId = standalone === undefined ? context.options.restored?.standaloneLastEventId : resumePoint(standalone);
  return {
    v: 1,
    endpoint: endpoint.href,
    sessionId: context.sessionId,
    ...(context.protocolVersion === undefined ? {} : { protocolVersion: context.protocolVersion }),
    ...(standaloneLastEventId === undefined ? {} : { standaloneLastEventId }),
    ...(context.initializeRequest === undefined ? {} : { initialize: context.initializeRequest }),
  };
}
