/**
 * Typed errors. Pure values: the charts create some of them (a stream that ended without a
 * response, a closed transport), the provided I/O creates the rest.
 */

import type { AuthChallenge } from './types.js';

/** Base class of every error this transport raises; `cause` keeps the original error. */
export class McpTransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An HTTP exchange failed: a status the call cannot use, or the network before any status. */
export class StreamableHTTPError extends McpTransportError {
  /** The HTTP status; undefined when the request never got a response. */
  readonly status: number | undefined;
  /** The official SDK's name for `status`. */
  readonly code: number | undefined;
  readonly statusText: string;
  /** The response body as text, cut to 1 KB. */
  readonly body: string;
  /** The response's media type (`text/html`), '' when none or no response. */
  readonly contentType: string;
  /** The server no longer knows the session this request carried (404). */
  readonly sessionMissing: boolean;
  /** What a 401 or 403 asked for in `WWW-Authenticate`. */
  readonly challenge: AuthChallenge | undefined;

  constructor(
    message: string,
    details: {
      status?: number | undefined;
      statusText?: string;
      body?: string;
      contentType?: string;
      sessionMissing?: boolean;
      challenge?: AuthChallenge | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.code = details.status;
    this.statusText = details.statusText ?? '';
    this.body = details.body ?? '';
    this.contentType = details.contentType ?? '';
    this.sessionMissing = details.sessionMissing ?? false;
    this.challenge = details.challenge;
  }
}

/** The v2 SDK's registry symbols (`Symbol.for`, shared by every copy of the SDK): its error brands, its auth-seam stamp. */
const sdkErrorBrands = Symbol.for('mcp.sdk.errorBrands');
const sdkAuthSeamEscape = Symbol.for('mcp.authSeamEscape');

/** A7: the v2 SDK's codes for an authorization failure (`SdkErrorCode.ClientHttpAuthentication`, `…Forbidden`). */
export type HttpAuthErrorCode = 'CLIENT_HTTP_AUTHENTICATION' | 'CLIENT_HTTP_FORBIDDEN';

/**
 * A7: under the v2 SDK Client, a 401 or 403 the transport did not resolve (no `authProvider`, or
 * the flow gave up), shaped as the SDK's own `SdkHttpError`: `code` CLIENT_HTTP_AUTHENTICATION or
 * CLIENT_HTTP_FORBIDDEN, `data` with the status, its text and the body, `status`, `statusText`,
 * and the `WWW-Authenticate` challenge. It carries the SDK's error brands, so
 * `instanceof SdkHttpError` (and `SdkError`) holds without this package importing the SDK (an
 * optional peer), and the SDK's auth-seam stamp, so the Client's era probe rejects `connect()`
 * with it as it is. `cause` is the transport's own error (a StreamableHTTPError).
 */
export class HttpAuthError extends McpTransportError {
  readonly code: HttpAuthErrorCode;
  readonly status: 401 | 403;
  readonly statusText: string;
  readonly data: { status: 401 | 403; statusText: string; text: string };
  readonly challenge: AuthChallenge | undefined;

  constructor(from: StreamableHTTPError, status: 401 | 403, cause: Error) {
    const denied = status === 403;
    super(
      `${denied ? 'the server denied access' : 'the server requires authorization'} (HTTP ${status})` +
        (from.challenge?.error === undefined ? '' : `: ${from.challenge.error}`),
      { cause },
    );
    this.code = denied ? 'CLIENT_HTTP_FORBIDDEN' : 'CLIENT_HTTP_AUTHENTICATION';
    this.status = status;
    this.statusText = from.statusText;
    this.data = { status, statusText: from.statusText, text: from.body };
    this.challenge = from.challenge;
    Object.defineProperty(this, sdkErrorBrands, { value: new Set(['mcp.SdkError', 'mcp.SdkHttpError']), configurable: true });
    Object.defineProperty(this, sdkAuthSeamEscape, { value: true, configurable: true });
  }
}

/** The 401 or 403 behind an error, looked for along its `cause` chain (a failed legacy fallback keeps it there). */
function authFailureIn(error: Error): { from: StreamableHTTPError; status: 401 | 403 } | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof StreamableHTTPError && (e.status === 401 || e.status === 403)) return { from: e, status: e.status };
  }
  return undefined;
}

/**
 * A7: the error a caller of the v2 SDK Client is given for `error`: a 401 or 403 the transport did
 * not resolve as the SDK types it (HttpAuthError); anything else, the SDK's UnauthorizedError
 * included, as it is.
 */
export function asSdkAuthError(error: Error): Error {
  if (error instanceof HttpAuthError) return error;
  const failure = authFailureIn(error);
  return failure === undefined ? error : new HttpAuthError(failure.from, failure.status, error);
}

/** The server broke the protocol: a bad session ID, an unexpected content type, a bad message. */
export class ProtocolError extends McpTransportError {}

/** One server-sent event was larger than `maxMessageBytes`; its stream was ended. */
export class MessageTooLargeError extends ProtocolError {}

/**
 * S7: a message nested deeper than the transport hands on (the SDK Clients' validation recurses
 * once per level, and a deep enough answer overflows the stack): never delivered; the call it
 * answers fails with this, and nothing else is affected. Too large in depth, so its stream is
 * never resumed to get it again.
 */
export class MessageTooDeepError extends MessageTooLargeError {}

/** A stream sent nothing for `streamIdleTimeout` ms and was treated as dropped (and resumed, if it can be). */
export class StreamIdleError extends McpTransportError {}

/** A stream ended or broke before the response it was carrying arrived, and could not resume. */
export class StreamEndedError extends McpTransportError {}

/**
 * R12: a POST stream's resumes were answered but delivered nothing (empty streams, comments only),
 * so its call was given up within 15 s of the stream's first end instead of spending its whole budget.
 */
export class EmptyResumesError extends StreamEndedError {
  /** How many resumes came back empty in a row. */
  readonly emptyResumes: number;
  /** How long after the stream's first end the call was given up, in ms. */
  readonly sinceFirstEndMs: number;

  constructor(emptyResumes: number, sinceFirstEndMs: number, options?: { cause?: unknown }) {
    super(
      `request stream could not be resumed: ${emptyResumes} resume${emptyResumes === 1 ? '' : 's'} answered with an empty stream (no event, no message) in ${Math.round(sinceFirstEndMs)} ms since it ended`,
      options,
    );
    this.emptyResumes = emptyResumes;
    this.sinceFirstEndMs = sinceFirstEndMs;
  }
}

/** The session is gone on the server and was not (or could not be) re-established. */
export class SessionExpiredError extends McpTransportError {}

/**
 * F4: the transport cannot reach a working server for now (a session that could not be
 * re-established within its budget, a 2026-07-28 server that refuses connections) and waits to
 * try again; nothing is lost for good. A call made now fails at once with this error, which
 * names the cause and when the next attempt is due; `cause` is the latest failure.
 */
export class TransportWaitingError extends McpTransportError {
  /** The attempt the wait leads to (1-based, counted since the connection last worked). */
  readonly attempt: number;
  /** When the next attempt is due, on the clock of `options.now` (epoch ms by default). */
  readonly nextAttemptAt: number;
  constructor(cause: Error, attempt: number, nextAttemptAt: number, delayMs: number) {
    super(
      `the transport is waiting to reconnect (attempt ${attempt} in ${Math.max(Math.round(delayMs), 0)} ms, or at the next call): ${cause.message}`,
      { cause },
    );
    this.attempt = attempt;
    this.nextAttemptAt = nextAttemptAt;
  }
}

/** The transport was closed, or never started. */
export class TransportClosedError extends McpTransportError {}

/** The transport failed and stays failed until `start()` again; `cause` tells why. */
export class TransportFailedError extends McpTransportError {}

/** A message given to `send()` was not a JSON-RPC message. */
export class InvalidMessageError extends McpTransportError {}

/**
 * E9: the server speaks only the 2026-07-28 era and refused this client's `initialize`: the
 * client is one that cannot negotiate it (`@modelcontextprotocol/sdk` 1.x, or the v2 Client in
 * its default `'legacy'` mode). `supported` lists the server's versions.
 */
/**
 * The key under which the `data` of a JSON-RPC error this transport made up for a caller (E9's
 * refusal, a call failed after `send()` resolved, P10) holds the typed error it stands for. Not
 * enumerable: never serialized, never logged; `findTransportError` follows it from the Client's
 * `McpError`, whose `data` is that object.
 */
export const TRANSPORT_ERROR: unique symbol = Symbol.for('mcp-xstate-transport.error');

/** `data` with `error` behind it under `TRANSPORT_ERROR`. */
export function withTransportError<T extends object>(data: T, error: Error): T {
  Object.defineProperty(data, TRANSPORT_ERROR, { value: error, enumerable: false });
  return data;
}

export class ModernOnlyServerError extends ProtocolError {
  readonly supported: readonly string[];
  constructor(supported: readonly string[], offered: string | undefined) {
    super(
      `the server speaks only MCP ${supported.join(', ')} (sessionless), and refused initialize` +
        `${offered === undefined ? '' : ` with ${offered}`}. Use the v2 SDK Client (@modelcontextprotocol/client) with ` +
        `versionNegotiation: { mode: 'auto' } over this transport; @modelcontextprotocol/sdk 1.x cannot speak 2026-07-28`,
    );
    this.supported = supported;
  }
}

/** U9: one thing wrong with a value that came from outside: where it is, and what belongs there. */
export interface InputIssue {
  /** The field, as a dotted path (`reconnectionOptions.maxRetries`, `restoreState.sessionId`, `delay`). */
  readonly field: string;
  /** The shape the field must have (`a non-negative integer`, `'same-origin' or 'follow'`). */
  readonly expected: string;
  /** What kind of value was there instead (`a string`, `null`, `nothing`), never the value itself. */
  readonly received?: string | undefined;
}

function issueText(issues: readonly InputIssue[]): string {
  return issues
    .map(
      (issue) =>
        `${issue.field === '' ? '' : `${issue.field}: `}expected ${issue.expected}${issue.received === undefined ? '' : `, got ${issue.received}`}`,
    )
    .join('; ');
}

/**
 * U9: a constructor option has the wrong shape. `field` and `expected` name the first problem,
 * `issues` every one. The message names fields and shapes only, never a given value (a token, a
 * header, a session ID stay out of it, X1).
 */
export class InvalidOptionsError extends McpTransportError {
  readonly field: string;
  readonly expected: string;
  readonly issues: readonly InputIssue[];
  constructor(issues: readonly InputIssue[], prefix = 'invalid options') {
    super(`${prefix}: ${issueText(issues)}`);
    this.issues = issues;
    this.field = issues[0]?.field ?? '';
    this.expected = issues[0]?.expected ?? '';
  }
}

/**
 * U9, W1: a saved transport state (`restoreState`, `parseSavedState`) has the wrong shape; fields
 * are named as in the state (`sessionId`), or under `restoreState.` when it came as the option.
 * Nothing was started with it.
 */
export class InvalidSavedStateError extends InvalidOptionsError {
  constructor(issues: readonly InputIssue[]) {
    super(issues, 'not a saved transport state');
  }
}

/** U9, W5: a line of a recording given to the chart view is not a recorder line; `line` is its number, from 1. */
export class InvalidRecordingError extends McpTransportError {
  readonly line: number;
  readonly field: string;
  readonly expected: string;
  constructor(line: number, issues: readonly InputIssue[]) {
    super(`not a recording: line ${line}: ${issueText(issues)}`);
    this.line = line;
    this.field = issues[0]?.field ?? '';
    this.expected = issues[0]?.expected ?? '';
  }
}

/** W2: `send()` while the network is known to be gone: refused at once, nothing queued; the session lives on. */
export class OfflineError extends McpTransportError {}

/** The HTTP status an error carries itself (a StreamableHTTPError's, or any error's numeric `status`). */
export function statusOf(error: unknown): number | undefined {
  return error instanceof Error && 'status' in error && typeof error.status === 'number' ? error.status : undefined;
}

/**
 * W6: the error says the server (or the way to it) is failing, not the call: a 5xx or 429 answer,
 * the network before any status, a body that broke mid-answer, or a stream that broke (not one the
 * server ended cleanly, nor one ended for breaking the protocol). 4xx answers and refusals are the
 * call's own business.
 */
export function isServerTrouble(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) {
    const status = error.status;
    return status === undefined || status < 400 || status === 429 || status >= 500;
  }
  return error instanceof StreamEndedError && error.cause instanceof Error && !(error.cause instanceof ProtocolError);
}

/** True for an error raised because the server answered 404 to a request carrying a session. */
export function isSessionMissing(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.sessionMissing;
}

/** The SDK's UnauthorizedError (an OAuth redirect is needed), recognised by name: the SDK is an optional peer. */
export function isUnauthorized(error: unknown): error is Error {
  return error instanceof Error && (error.name === 'UnauthorizedError' || error.constructor.name === 'UnauthorizedError');
}

/** Errors that already say what state the transport is in are kept; others are wrapped. */
export function asFailure(error: unknown): Error {
  if (
    error instanceof SessionExpiredError ||
    error instanceof TransportFailedError ||
    error instanceof ModernOnlyServerError ||
    isUnauthorized(error)
  ) {
    return error;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TransportFailedError(`transport failed: ${message}`, { cause: error });
}

/** Any thrown value as an Error (fetch and streams can reject with anything). */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/**
 * Why a session is gone. A session given as the `sessionId` option is most often gone because an
 * earlier transport's `close()` ended it with `DELETE`: the message says how to keep it.
 */
export function sessionExpiredMessage(presetSession: boolean): string {
  return presetSession
    ? 'the server no longer knows this session (given as the sessionId option). If an earlier close() ended it with DELETE, ' +
        'close that transport with terminateOnClose: false to keep a session you mean to resume'
    : 'the server no longer knows this session';
}

/**
 * Formats an error's stack now. Until then V8 keeps the captured frames, and with them the
 * scopes of the functions on the stack: an error kept for long must not keep those alive (P12).
 */
export function formatStack(error: Error): void {
  if (error.stack === undefined) error.stack = error.message;
}
