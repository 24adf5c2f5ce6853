import type { JSONRPCResponse, MessageSink } from '../../machines/types.js';
import type { PostRequestInput } from '../../machines/post-stream.js';
import type { ProtocolError, StreamableHTTPError } from '../../machines/errors.js';
import type { cut, nestsTooDeep, validateMessage } from '../schema.js';
import type { Exchange, redirectTarget } from './client.js';
import type { mediaType } from './headers.js';
import { parseChallenge } from './challenge.js';

/**
 * Reading a refusal (a non-2xx answer): whether it says the session is gone (P8, P11), the
 * JSON-RPC error it may carry for the call (P7), and the typed error with its one-line summary
 * (P9, U11). Loaded with `import()` by the first refusal (src/http/exchanges.ts), in parallel with
 * reading its body, so a page loads none of it while every answer is a success.
 */

/**
 * What the refusal reading uses of the transport's own code, handed over by its caller: a
 * run-time import of those modules would make a bundler split the page's eager code into a chunk
 * shared with this one (the doors test holds it).
 */
export interface RefusalKit {
  StreamableHTTPError: typeof StreamableHTTPError;
  ProtocolError: typeof ProtocolError;
  cut: typeof cut;
  validateMessage: typeof validateMessage;
  nestsTooDeep: typeof nestsTooDeep;
  redirectTarget: typeof redirectTarget;
  mediaType: typeof mediaType;
}

/**
 * P11: a 400 whose JSON-RPC error message speaks of the session ("Bad Request: No valid session
 * ID provided", as older SDK example servers answer an unknown session instead of 404).
 */
function complainsOfSession(body: string): boolean {
  if (!/session/i.test(body)) return false;
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== 'object' || value === null || !('error' in value)) return false;
    const { error } = value;
    return (
      typeof error === 'object' &&
      error !== null &&
      'message' in error &&
      typeof error.message === 'string' &&
      /session/i.test(error.message)
    );
  } catch {
    return false;
  }
}

/** P8, P11: does this refusal of a request that carried `sessionId` say the session is gone? */
export function sessionGone(
  kit: RefusalKit,
  status: number,
  body: string,
  sessionId: string | undefined,
  sink: MessageSink,
  what: string,
): boolean {
  if (sessionId === undefined) return false;
  if (status === 404) return true;
  if (status !== 400 || !complainsOfSession(body)) return false;
  sink.warn(
    new kit.ProtocolError(
      `${what} answered HTTP 400 "${kit.cut(body, 200)}" for an unknown session; the MCP specification asks for 404 (this server copies an older SDK example); treating the session as expired`,
    ),
    'P11',
  );
  return true;
}

/**
 * U11: an error body as one line for a message: an HTML page reduced to its text (tags,
 * scripts and styles dropped), whitespace collapsed, the first `limit` characters. An error
 * message never carries a whole page.
 */
export function bodySummary(body: string, type: string, limit = 200): string {
  let text = body;
  if (type.includes('html') || /^\s*<(!doctype|html)/i.test(text)) {
    text = text
      .replace(/<(script|style)\b[\s\S]*?(<\/\1\s*>|$)/gi, ' ')
      .replace(/<!--[\s\S]*?(-->|$)/g, ' ')
      .replace(/<[^>]*>?/g, ' ')
      .replace(
        /&(lt|gt|amp|quot|#39|nbsp);/g,
        (_all, name: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'" })[name] ?? ' ',
      );
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}

/** P9, U11: the typed error of a refusal: status, reason, content type, the body in one line, a hint at the path. */
export function statusError(
  kit: RefusalKit,
  exchange: Exchange,
  what: string,
  body: string,
  sessionMissing: boolean,
  url: URL,
): StreamableHTTPError {
  const { response } = exchange;
  const { status, statusText } = response;
  const target = kit.redirectTarget(response, url);
  let reason = sessionMissing ? 'session not found' : statusText || 'error';
  if (target !== undefined) {
    target.username = target.password = target.search = target.hash = '';
    reason = `redirect to ${target.href} not followed (redirectPolicy: 'same-origin')`;
  } else if (response.type === 'opaqueredirect') {
    reason = 'redirect not followed: this runtime does not expose its target';
  }
  const challenge = status === 401 || status === 403 ? parseChallenge(response.headers.get('www-authenticate')) : undefined;
  // U11: one line: the status, the content type, the body's first 200 characters (a page's text), and on a 404 or 405 a hint at the path.
  const type = kit.mediaType(response.headers.get('content-type'));
  const summary = body ? `${type === '' ? '' : ` (${type})`}: ${bodySummary(body, type)}` : '';
  const wrongPath = !sessionMissing && (status === 404 || status === 405) && !type.includes('json') && !/\/mcp\/?$/.test(url.pathname);
  const hint = wrongPath ? '; is this the MCP endpoint? (MCP endpoints usually end in /mcp)' : '';
  return new kit.StreamableHTTPError(`${what}: HTTP ${status} ${reason}${summary}${hint}`, {
    status,
    statusText,
    body: kit.cut(body),
    contentType: type,
    sessionMissing,
    challenge,
  });
}

/** P7: a JSON-RPC error for one of the POST's requests, carried by a non-2xx response. */
export function errorResponseFor(kit: RefusalKit, body: string, requestIds: PostRequestInput['requestIds']): JSONRPCResponse | undefined {
  if (requestIds.length === 0 || body === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const checked = kit.validateMessage(value);
  if (!checked.ok || kit.nestsTooDeep(value, body.length)) return undefined;
  const message = checked.message;
  if ('error' in message && message.id != null && requestIds.includes(message.id)) return message;
  return undefined;
}
