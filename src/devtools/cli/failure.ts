/** What went wrong, as a message for people and an exit code for scripts. */
import { ProtocolError, StreamableHTTPError } from '../../../machines/errors.js';
import { bodySummary } from '../../http/body.js';
import { seeHelp, UsageError } from './args.js';
import { RpcError } from './session.js';

export const exitCodes = {
  ok: 0,
  failed: 1,
  usage: 2,
  unreachable: 3,
  notMcp: 4,
  unauthorized: 5,
  timeout: 6,
  toolError: 7,
  /** N4: the doctor found a fault. */
  doctorFault: 8,
  /** U10, U11: this machine cannot do what was asked: the --inspect port is in use, an optional peer is missing. */
  unavailable: 9,
} as const;

export type FailureKind = keyof typeof exitCodes;

/** A step that took longer than `--timeout`. */
export class StepTimeoutError extends Error {}

/**
 * U11: a mistake of the user's or a limit of their machine, not a fault of the CLI: a missing
 * file, a malformed recording, a busy port, a missing optional peer. Printed as one line (what,
 * and the fix) with its exit code; never as an internal error with a stack.
 */
export class UserFacingError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export interface Failure {
  kind: FailureKind;
  exitCode: number;
  message: string;
}

/** The error and its causes, outermost first. */
function chain(error: unknown): unknown[] {
  const errors: unknown[] = [];
  for (let e: unknown = error; e !== undefined && errors.length < 6; e = e instanceof Error ? e.cause : undefined) errors.push(e);
  return errors;
}

export function describeError(error: unknown): string {
  return (
    chain(error)
      .map((e) => (e instanceof Error ? e.message : String(e)))
      // A wrapper's message usually repeats its cause's: keep each text once.
      .filter((message, i, all) => message !== '' && !all.slice(0, i).some((earlier) => earlier.includes(message)))
      .join(' ← ')
  );
}

const networkCodes =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|UND_ERR_SOCKET)$/;

function networkCode(error: unknown): string | undefined {
  for (const e of chain(error)) {
    if (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' && networkCodes.test(e.code)) return e.code;
  }
  return undefined;
}

function httpStatus(error: unknown): number | undefined {
  for (const e of chain(error)) if (e instanceof StreamableHTTPError && e.status !== undefined) return e.status;
  return undefined;
}

export function classify(error: unknown, url: string): Failure {
  const detail = describeError(error);
  const failure = (kind: FailureKind, message: string): Failure => ({ kind, exitCode: exitCodes[kind], message });
  if (error instanceof UsageError) return failure('usage', `${error.message}; ${seeHelp}`);
  if (error instanceof StepTimeoutError) return failure('timeout', detail);
  const status = httpStatus(error);
  if (status === 401 || status === 403) {
    return failure(
      'unauthorized',
      `${url} needs authorization (HTTP ${status}); pass a token with --header 'Authorization: Bearer …'  [${detail}]`,
    );
  }
  const code = networkCode(error);
  if (code !== undefined)
    return failure('unreachable', `cannot reach ${url} (${code}): is the server running, and is the address right?  [${detail}]`);
  const answered = chain(error).find((e): e is StreamableHTTPError => e instanceof StreamableHTTPError && e.body !== '');
  if (status !== undefined && answered !== undefined) {
    // U11: one line: the status, the content type, the body's first 200 characters, and where MCP usually is.
    const type = answered.contentType === '' ? '' : `${answered.contentType} `;
    const path = new URL(url).pathname;
    const hint = /\/mcp\/?$/.test(path)
      ? 'check the URL and that the server serves MCP at it'
      : `is ${path} the MCP endpoint? MCP endpoints usually end in /mcp`;
    return failure(
      'notMcp',
      `${url} does not answer as an MCP server (HTTP ${answered.status ?? status}): ${type}"${bodySummary(answered.body, answered.contentType)}"; ${hint}`,
    );
  }
  if (status !== undefined || chain(error).some((e) => e instanceof ProtocolError)) {
    return failure('notMcp', `${url} does not answer as an MCP server${status === undefined ? '' : ` (HTTP ${status})`}  [${detail}]`);
  }
  if (error instanceof RpcError && error.method === 'initialize') {
    return failure('notMcp', `${url} refused initialize: ${detail}`);
  }
  return failure('failed', detail);
}
