import type { JSONRPCId, JSONRPCMessage } from '../machines/types.js';
import { formatStack, InvalidMessageError, MessageTooDeepError } from '../machines/errors.js';
import { isRecord } from './record.js';

/**
 * Validation at the edge: what the server sends and what a caller hands to `send()`.
 * A hand check, as strict as the JSON-RPC 2.0 shapes the SDK's own schemas accept (extra keys
 * pass, as with zod's loose objects): no schema library on the hot path, so a browser bundle
 * stays small and the first import stays quick. What comes from outside once (options, a saved
 * state, a recording) is checked with zod/mini instead (validation.ts, U9).
 */

type Checked = Record<string, unknown>;

function isRequestId(value: unknown): boolean {
  return typeof value === 'string' || Number.isInteger(value);
}

/** The first thing wrong with a message, or undefined when it is a JSON-RPC message. */
function problemOf(message: Checked): string | undefined {
  if (message.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if ('method' in message) {
    if (typeof message.method !== 'string') return 'method must be a string';
    if ('id' in message && !isRequestId(message.id)) return 'id must be a string or an integer';
    if (message.params !== undefined && !isRecord(message.params)) return 'params must be an object';
    return undefined;
  }
  if ('error' in message) {
    if (message.id !== undefined && message.id !== null && !isRequestId(message.id)) return 'id must be a string, an integer or null';
    const error = message.error;
    if (!isRecord(error)) return 'error must be an object';
    if (!Number.isInteger(error.code)) return 'error.code must be an integer';
    if (typeof error.message !== 'string') return 'error.message must be a string';
    return undefined;
  }
  if (!isRequestId(message.id)) return 'id must be a string or an integer';
  if (!isRecord(message.result)) return 'result must be an object';
  return undefined;
}

export type Validation = { ok: true; message: JSONRPCMessage } | { ok: false; reason: string };

/** Checks a decoded JSON value; the original object is returned untouched, never a copy. */
export function validateMessage(value: unknown): Validation {
  return isJsonRpcMessage(value) ? { ok: true, message: value } : { ok: false, reason: lastMessageProblem() };
}

/**
 * The same check with nothing allocated, for the per-message path (every server-sent event):
 * after false, `lastMessageProblem()` says why.
 */
/** What `send()` rejects with for a value that is no JSON-RPC message; undefined for a message. */
export function invalidMessage(value: unknown): InvalidMessageError | undefined {
  const checked = validateMessage(value);
  return checked.ok ? undefined : new InvalidMessageError(`not a JSON-RPC message: ${checked.reason}`);
}

export function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  if (isRecord(value)) return isMessage(value);
  lastProblem = 'not a JSON-RPC message object';
  return false;
}

/** Why the last `isJsonRpcMessage` said false; read right after it. */
export const lastMessageProblem = (): string => lastProblem ?? 'invalid';

/** What the last failed `isMessage` found; read right after the call (single-threaded). */
let lastProblem: string | undefined;

function isMessage(value: Checked): value is Checked & JSONRPCMessage {
  lastProblem = problemOf(value);
  return lastProblem === undefined;
}

/** H6: a session ID is visible ASCII (0x21–0x7E), 1 to 1,024 characters. The problem, or undefined. */
export function sessionIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'empty';
  if (id.length > 1024) return 'longer than 1,024 characters';
  if (!/^[\x21-\x7E]+$/.test(id)) return 'session ID must be visible ASCII (0x21-0x7E)';
  return undefined;
}

export function isResponse(message: JSONRPCMessage): message is Extract<JSONRPCMessage, { result: unknown } | { error: unknown }> {
  return 'result' in message || 'error' in message;
}

/** Text for an error message: at most 1 KB, so a huge body never ends up in a log. */
export function cut(text: string, limit = 1024): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}

/**
 * S7: the deepest nesting of a message the transport hands on, the message itself being level 1.
 * The SDK Clients validate with zod, which recurses per level: 2,000 levels overflow its stack
 * under a test runner, 100,000 anywhere. MCP's own shapes are a few levels deep.
 */
export const maxMessageDepth = 512;

/**
 * S7: whether a value parsed from `textLength` characters of JSON nests deeper than
 * `maxMessageDepth`. Walked with a stack of its own (a recursive walk would overflow the same
 * way), and only when the text is long enough to nest that deep (two characters a level): a
 * short message costs one comparison, a long one a walk over its objects and arrays only.
 */
export function nestsTooDeep(value: unknown, textLength: number): boolean {
  if (textLength < 2 * maxMessageDepth || typeof value !== 'object' || value === null) return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  for (let value = values.pop(), depth = depths.pop() ?? 1; value !== undefined; value = values.pop(), depth = depths.pop() ?? 1) {
    const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
    for (const child of children) {
      if (typeof child !== 'object' || child === null) continue;
      if (depth + 1 > maxMessageDepth) return true;
      values.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** S7: the error for a message nested too deep, its stack formatted at once (nothing of the message kept, P12). */
export function messageTooDeep(): MessageTooDeepError {
  const error = new MessageTooDeepError(
    `a message from the server nests deeper than ${maxMessageDepth} levels, the most this transport hands on; refused`,
  );
  formatStack(error);
  return error;
}

/** S7: whether a value (checked or not) is the response to one of `requestIds`. */
export function answersOneOf(value: unknown, requestIds: readonly JSONRPCId[]): boolean {
  return (
    isRecord(value) &&
    ('result' in value || 'error' in value) &&
    (typeof value.id === 'string' || typeof value.id === 'number') &&
    requestIds.includes(value.id)
  );
}
