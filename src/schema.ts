import { z } from 'zod';
import type { JSONRPCMessage } from '../machines/events.js';

/** Validation at the edge: what the server sends and what a caller hands to `send()`. */

const plainObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  { error: 'expected an object' },
);
const requestId = z.union([z.string(), z.number().int()]);

const requestSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: requestId,
  method: z.string(),
  params: plainObject.optional(),
});
const notificationSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.string(),
  params: plainObject.optional(),
});
const resultSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: requestId,
  result: plainObject,
});
const errorSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: requestId.nullable().optional(),
  error: z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});

/** Picks the one schema that can apply, so a message costs one object parse, not a union's four. */
function schemaFor(value: object): z.ZodType {
  if ('method' in value) return 'id' in value ? requestSchema : notificationSchema;
  if ('error' in value) return errorSchema;
  return resultSchema;
}

export type Validation = { ok: true; message: JSONRPCMessage } | { ok: false; reason: string };

const isPlainObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);
const isRequestId = (value: unknown): boolean => typeof value === 'string' || Number.isInteger(value);

/**
 * The schemas above, written out for the common case: true only for a message they accept (so
 * false merely means "ask zod", which then names what is wrong). It keeps zod off the hot path:
 * every send() and every message received is checked.
 */
function plainlyValid(value: Record<string, unknown>): boolean {
  if (value.jsonrpc !== '2.0') return false;
  if ('method' in value) {
    if (typeof value.method !== 'string' || ('id' in value && !isRequestId(value.id))) return false;
    return value.params === undefined || isPlainObject(value.params);
  }
  if ('error' in value) {
    const error = value.error;
    if (!isPlainObject(error)) return false;
    const { code, message } = error as Record<string, unknown>;
    return Number.isInteger(code) && typeof message === 'string' && (value.id == null || isRequestId(value.id));
  }
  return isRequestId(value.id) && isPlainObject(value.result);
}

/** Checks a decoded JSON value; the original object is returned untouched, never a copy. */
export function validateMessage(value: unknown): Validation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON-RPC message object' };
  }
  if (plainlyValid(value as Record<string, unknown>)) return { ok: true, message: value as JSONRPCMessage };
  const result = schemaFor(value).safeParse(value);
  if (!result.success) return { ok: false, reason: z.prettifyError(result.error) };
  return { ok: true, message: value as JSONRPCMessage };
}

/** H6: a session ID is visible ASCII (0x21–0x7E), 1 to 1,024 characters. */
export const sessionIdSchema = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[\x21-\x7E]+$/, 'session ID must be visible ASCII (0x21-0x7E)');

export function isResponse(message: JSONRPCMessage): message is Extract<JSONRPCMessage, { result: unknown } | { error: unknown }> {
  return 'result' in message || 'error' in message;
}

/** Text for an error message: at most 1 KB, so a huge body never ends up in a log. */
export function cut(text: string, limit = 1024): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}
