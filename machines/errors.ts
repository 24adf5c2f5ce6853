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
    this.sessionMissing = details.sessionMissing ?? false;
    this.challenge = details.challenge;
  }
}

/** The server broke the protocol: a bad session ID, an unexpected content type, a bad message. */
export class ProtocolError extends McpTransportError {}

/** One server-sent event was larger than `maxMessageBytes`; its stream was ended. */
export class MessageTooLargeError extends ProtocolError {}

/** A stream sent nothing for `streamIdleTimeout` ms and was treated as dropped (and resumed, if it can be). */
export class StreamIdleError extends McpTransportError {}

/** A stream ended or broke before the response it was carrying arrived, and could not resume. */
export class StreamEndedError extends McpTransportError {}

/** The session is gone on the server and was not (or could not be) re-established. */
export class SessionExpiredError extends McpTransportError {}

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
