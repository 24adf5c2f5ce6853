/**
 * Header assembly. The caller's headers are normalised once, at construction; each request
 * then spreads one small object instead of rebuilding a `Headers` (a hot-path cost in the SDK).
 */

import { isModernVersion, PROTOCOL_VERSION_META_KEY } from '../../machines/connection/messages.js';
import type { JSONRPCMessage } from '../../machines/types.js';

/** Headers the transport owns: a caller's `requestInit.headers` cannot override them (H8, E3). */
const transportOwned = new Set([
  'content-type',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'mcp-method',
  'mcp-name',
]);

/**
 * E2, E3: a caller's per-request headers (the v2 SDK's `headers` send option, e.g. SEP-2243
 * `Mcp-Param-*`), lower-cased, without the reserved ones; undefined when none is left.
 */
export function perRequestHeaders(
  given: Readonly<Record<string, string>> | undefined,
  authOwned: boolean,
): Record<string, string> | undefined {
  if (given === undefined) return undefined;
  let out: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(given)) {
    const key = name.toLowerCase();
    if (transportOwned.has(key) || (authOwned && (key === 'authorization' || key === 'dpop'))) continue;
    (out ??= {})[key] = value;
  }
  return out;
}

/** E3: which body field `Mcp-Name` mirrors, per method (SEP-2243). */
const nameSource: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

const sentinelPrefix = '=?base64?';
const sentinelSuffix = '?=';

/** E3: a value that is not a plain, trimmed, visible-ASCII header value goes in the base64 sentinel. */
export function headerSafe(value: string): string {
  let plain = value.length > 0 && value === value.trim() && !(value.startsWith(sentinelPrefix) && value.endsWith(sentinelSuffix));
  for (let i = 0; plain && i < value.length; i++) {
    const c = value.charCodeAt(i);
    plain = c === 9 || (c >= 32 && c <= 126);
  }
  if (plain) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `${sentinelPrefix}${btoa(binary)}${sentinelSuffix}`;
}

/**
 * E3, E12: the SEP-2243 headers a message's body implies: `MCP-Protocol-Version` from its `_meta`
 * envelope, `Mcp-Method`, and `Mcp-Name` where the method names a target. A notification carries
 * them too (E12: strict servers refuse one without, -32020), from its own envelope or, without
 * one, from the connection's modern `protocolVersion`. Undefined for a message of the 2025 era (no
 * envelope claim), which is sent as before.
 */
export function bodyHeaders(
  message: JSONRPCMessage | JSONRPCMessage[],
  protocolVersion?: string,
): { version: string; headers: Record<string, string> } | undefined {
  if (Array.isArray(message) || !('method' in message)) return undefined;
  const meta = message.params?._meta;
  const claim = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] : undefined;
  let version = typeof claim === 'string' ? claim : undefined;
  // A request's claim is its era (the probe's included); a notification goes as modern only in that era.
  if (!('id' in message) && !isModernVersion(version)) version = isModernVersion(protocolVersion) ? protocolVersion : undefined;
  if (version === undefined) return undefined;
  const headers: Record<string, string> = { 'mcp-method': message.method };
  const field = nameSource[message.method];
  const name = field === undefined ? undefined : message.params?.[field];
  if (typeof name === 'string') headers['mcp-name'] = headerSafe(name);
  return { version, headers };
}

export interface BaseHeaders {
  /** The caller's headers, lower-cased, without the transport-owned ones. */
  custom: Record<string, string>;
  /** Accept for POST, with the caller's own Accept types appended (H2). */
  postAccept: string;
  /** Accept for GET. */
  getAccept: string;
}

export function normalizeHeaders(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (init === undefined) return out;
  new Headers(init).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

export function baseHeaders(init: HeadersInit | undefined, authOwned: boolean): BaseHeaders {
  const all = normalizeHeaders(init);
  const custom: Record<string, string> = {};
  for (const [key, value] of Object.entries(all)) {
    if (transportOwned.has(key) || (authOwned && key === 'authorization')) continue;
    custom[key] = value;
  }
  const extra = (all.accept ?? '')
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '' && !/^(application\/json|text\/event-stream)\b/i.test(type));
  const append = extra.length > 0 ? `, ${extra.join(', ')}` : '';
  return {
    custom,
    postAccept: `application/json, text/event-stream${append}`,
    getAccept: `text/event-stream${append}`,
  };
}

/** Lower-cased media type without parameters: `Text/Event-Stream; charset=utf-8` → `text/event-stream` (P2). */
export function mediaType(contentType: string | null): string {
  if (contentType === null) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}
