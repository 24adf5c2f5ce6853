import type { GetResult, JSONRPCMessage, JSONRPCResponse, MessageSink, PostResult } from '../../machines/types.js';
import type { PostRequestInput } from '../../machines/post-stream.js';
import { INITIALIZE, isRequest } from '../../machines/connection/messages.js';
import { formatStack, McpTransportError, MessageTooLargeError, ProtocolError, StreamableHTTPError } from '../../machines/errors.js';
import { cut, isJsonRpcMessage, isResponse, messageTooDeep, nestsTooDeep, sessionIdProblem, validateMessage } from '../schema.js';
import { HttpClient, redirectTarget, RequestControl, type Exchange, type HttpResponse, type RequestSpec } from './client.js';
import { parseChallenge } from './challenge.js';
import { bodyHeaders, mediaType } from './headers.js';
import { bodyOf, bodySummary, decodeUtf8, discardBody, errorBodyText, readBounded } from './body.js';

export interface ExchangeOptions {
  strict: boolean;
  maxMessageBytes: number;
  /** F7: longest wait for a DELETE (close and terminateSession()). */
  deleteTimeout: number;
}

/**
 * F6: what actually went wrong, from the bottom of the cause chain: `connect ECONNREFUSED
 * 127.0.0.1:3999`, `other side closed`, `Headers Overflow Error`, `unknown scheme`; never a bare
 * "fetch failed". Every address of an AggregateError (localhost's ::1 and 127.0.0.1) is named.
 */
export function rootCauseOf(error: unknown): string {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (current instanceof AggregateError && current.errors.length > 0) {
      const inner = [...new Set(current.errors.map((e: unknown) => rootCauseOf(e)))].join('; ');
      messages.push(inner);
      break;
    }
    const message = current instanceof Error ? current.message : typeof current === 'string' ? current : '';
    if (message !== '') messages.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  const root = messages.at(-1) ?? 'unknown error';
  const first = messages[0];
  return first !== undefined && first !== root ? `${root} (${first})` : root;
}

function networkError(error: unknown, what: string): Error {
  if (error instanceof Error && error.name === 'AbortError') return error;
  if (error instanceof McpTransportError) return error;
  return new StreamableHTTPError(`${what} failed before any response: ${rootCauseOf(error)}`, { cause: error });
}

/** Sends one request; a failure before any response is a network error named after the method. */
async function send(http: HttpClient, spec: RequestSpec): Promise<Exchange> {
  try {
    return await http.request(spec);
  } catch (error) {
    throw networkError(error, spec.method);
  }
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
function sessionGone(status: number, body: string, sessionId: string | undefined, sink: MessageSink, what: string): boolean {
  if (sessionId === undefined) return false;
  if (status === 404) return true;
  if (status !== 400 || !complainsOfSession(body)) return false;
  sink.warn(
    new ProtocolError(
      `${what} answered HTTP 400 "${cut(body, 200)}" for an unknown session; the MCP specification asks for 404 (this server copies an older SDK example); treating the session as expired`,
    ),
    'P11',
  );
  return true;
}

/** Done with a response: an unread body is cancelled (cheap, and frees the connection), then the request unlinked. */
function finish(exchange: Exchange): void {
  if (!exchange.response.bodyUsed) discardBody(exchange.response);
  exchange.release();
}

/**
 * H5/H6: the session ID on a response, checked before anything can put it in a header. On the
 * initialize response an invalid one fails; on a later response it is ignored with one warning
 * (H7), and the call it came with is answered normally.
 */
function responseSessionId(response: HttpResponse, initializing: boolean, sink: MessageSink): string | undefined {
  const raw = response.headers.get('mcp-session-id');
  if (raw === null) return undefined;
  const reason = sessionIdProblem(raw);
  if (reason === undefined) return raw;
  if (initializing) throw new ProtocolError(`server sent an invalid session ID (${reason}); refusing it`);
  sink.warn(
    new ProtocolError(`server sent an invalid session ID on a later response (${reason}); ignoring it, keeping the established one`),
    'H7-invalid',
  );
  return undefined;
}

function statusError(exchange: Exchange, what: string, body: string, sessionMissing: boolean, url: URL): StreamableHTTPError {
  const { response } = exchange;
  const { status, statusText } = response;
  const target = redirectTarget(response, url);
  let reason = sessionMissing ? 'session not found' : statusText || 'error';
  if (target !== undefined) {
    target.username = target.password = target.search = target.hash = '';
    reason = `redirect to ${target.href} not followed (redirectPolicy: 'same-origin')`;
  } else if (response.type === 'opaqueredirect') {
    reason = 'redirect not followed: this runtime does not expose its target';
  }
  const challenge = status === 401 || status === 403 ? parseChallenge(response.headers.get('www-authenticate')) : undefined;
  // U11: one line: the status, the content type, the body's first 200 characters (a page's text), and on a 404 or 405 a hint at the path.
  const type = mediaType(response.headers.get('content-type'));
  const summary = body ? `${type === '' ? '' : ` (${type})`}: ${bodySummary(body, type)}` : '';
  const wrongPath = !sessionMissing && (status === 404 || status === 405) && !type.includes('json') && !/\/mcp\/?$/.test(url.pathname);
  const hint = wrongPath ? '; is this the MCP endpoint? (MCP endpoints usually end in /mcp)' : '';
  return new StreamableHTTPError(`${what}: HTTP ${status} ${reason}${summary}${hint}`, {
    status,
    statusText,
    body: cut(body),
    contentType: type,
    sessionMissing,
    challenge,
  });
}

/** P7: a JSON-RPC error for one of the POST's requests, carried by a non-2xx response. */
function errorResponseFor(body: string, requestIds: PostRequestInput['requestIds']): JSONRPCResponse | undefined {
  if (requestIds.length === 0 || body === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const checked = validateMessage(value);
  if (!checked.ok || nestsTooDeep(value, body.length)) return undefined;
  const message = checked.message;
  if ('error' in message && message.id != null && requestIds.includes(message.id)) return message;
  return undefined;
}

/**
 * One POST (H1) and what its response is (P1–P9). Messages in a JSON body other than the
 * call's own response go straight to the sink; the response goes back to the chart.
 */
export async function postMessage(
  http: HttpClient,
  sink: MessageSink,
  options: ExchangeOptions,
  input: PostRequestInput,
  signal: AbortSignal | undefined,
  /** The data plane's own abort handle for this call (see RequestSpec.control). */
  control?: RequestControl,
): Promise<PostResult> {
  if (input.endpoint !== undefined) return postLegacy(http, input, signal);
  // E3, E4, E12: a message of the 2026-07-28 era carries the headers its body implies, and no session.
  const derived = bodyHeaders(input.message, input.protocolVersion);
  const exchange = await send(http, {
    method: 'POST',
    url: undefined,
    sessionId: derived === undefined ? input.sessionId : undefined,
    protocolVersion: derived === undefined ? input.protocolVersion : derived.version,
    lastEventId: undefined,
    headers:
      derived === undefined
        ? input.headers
        : input.headers === undefined
          ? derived.headers
          : Object.assign({}, input.headers, derived.headers),
    body: JSON.stringify(input.message),
    signal,
    control,
  });
  const { response } = exchange;
  let handedOff = false;
  try {
    if (!response.ok) {
      const body = await errorBodyText(response);
      const sessionMissing = sessionGone(response.status, body, input.sessionId, sink, 'POST');
      if (!sessionMissing) {
        const answer = errorResponseFor(body, input.requestIds);
        if (answer !== undefined) return { kind: 'json', sessionId: undefined, response: answer };
      }
      throw statusError(exchange, 'POST', body, sessionMissing, http.url);
    }
    const sessionId = responseSessionId(response, isRequest(input.message, INITIALIZE), sink);
    const type = mediaType(response.headers.get('content-type'));
    if (input.requestIds.length === 0) {
      // P1: a notification or response is accepted by any 2xx; a body is discarded.
      if (response.status !== 202 && response.status !== 204 && options.strict) {
        throw new ProtocolError(`server answered a notification with ${response.status} ${type || 'and no content type'}`);
      }
      return { kind: 'accepted', sessionId };
    }
    const body = type === 'text/event-stream' ? bodyOf(response) : null;
    if (body !== null) {
      exchange.detach();
      handedOff = true;
      return { kind: 'sse', sessionId, stream: exchange.stream(body) };
    }
    if (type === 'application/json') {
      const text = await jsonBodyText(response, options.maxMessageBytes);
      return { kind: 'json', sessionId, response: deliverJsonBody(text, input.requestIds, sink) };
    }
    // P5: a request needs a response; anything else fails that call only.
    throw new ProtocolError(
      `server answered a request with ${response.status} and ${type ? `content type "${type}"` : 'no content type'}; expected application/json or text/event-stream`,
    );
  } finally {
    if (!handedOff) finish(exchange);
  }
}

/** L1: a POST to the legacy message endpoint: any 2xx accepts; every reply comes on the stream. */
async function postLegacy(http: HttpClient, input: PostRequestInput, signal: AbortSignal | undefined): Promise<PostResult> {
  const exchange = await send(http, {
    method: 'POST',
    url: new URL(input.endpoint ?? '', http.url),
    sessionId: undefined,
    protocolVersion: input.protocolVersion,
    lastEventId: undefined,
    headers: undefined,
    body: JSON.stringify(input.message),
    signal,
    control: undefined,
  });
  try {
    if (!exchange.response.ok) {
      throw statusError(exchange, 'POST (legacy)', await errorBodyText(exchange.response), false, http.url);
    }
    return { kind: 'accepted', sessionId: undefined };
  } finally {
    finish(exchange);
  }
}

/** Refused bytes stay out of the error's reach: it is made here, with nothing but the limit in scope (P12). */
function messageTooLarge(limit: number): MessageTooLargeError {
  const error = new MessageTooLargeError(`JSON response body exceeded maxMessageBytes (${limit} bytes); refused`);
  // Formatting the stack now drops the captured frames (and what their scopes hold).
  formatStack(error);
  return error;
}

/** P12: a JSON answer, read to at most maxMessageBytes (after decompression) as it streams. */
async function jsonBodyText(response: HttpResponse, limit: number): Promise<string> {
  let exceeded: boolean;
  let bytes: Uint8Array;
  try {
    ({ bytes, exceeded } = await readBounded(response, limit, { overflow: 'refuse' }));
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') throw error;
    throw new StreamableHTTPError(`POST response body broke: ${rootCauseOf(error)}`, { status: response.status, cause: error });
  }
  if (exceeded) throw messageTooLarge(limit);
  return decodeUtf8(bytes);
}

/**
 * P2: a JSON body is one message or an array, delivered in order. The call's own response is
 * handed back for the chart to deliver when it is the last message (the usual case); otherwise
 * everything is delivered here, in order.
 */
function deliverJsonBody(text: string, requestIds: PostRequestInput['requestIds'], sink: MessageSink): JSONRPCResponse | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProtocolError(`invalid JSON in response body: ${cut(text)}`, { cause: error });
  }
  // S7: nested too deep for the Client's validation: nothing of it is delivered, the call fails.
  if (nestsTooDeep(value, text.length)) throw messageTooDeep();
  // The usual body, one message that is the call's response: checked and handed back with no
  // array and no result object made for it (docs/benchmark.md, "Client CPU per modern sequential call").
  if (!Array.isArray(value) && requestIds.length === 1 && isJsonRpcMessage(value) && isResponse(value) && value.id === requestIds[0]) {
    return value;
  }
  const values: unknown[] = Array.isArray(value) ? value : [value];
  const messages: JSONRPCMessage[] = [];
  for (const item of values) {
    const checked = validateMessage(item);
    if (!checked.ok) throw new ProtocolError(`invalid JSON-RPC message in response body (${checked.reason}): ${cut(text)}`);
    messages.push(checked.message);
  }
  const last = messages[messages.length - 1];
  const single = requestIds.length === 1 && last !== undefined && isResponse(last) && last.id === requestIds[0];
  const direct = single ? messages.length - 1 : messages.length;
  for (let i = 0; i < direct; i++) sink.deliver(messages[i] as JSONRPCMessage);
  if (!single && !messages.some((m) => isResponse(m) && m.id != null && requestIds.includes(m.id))) {
    throw new ProtocolError('JSON response body did not contain the response to the request');
  }
  return single ? last : undefined;
}

/**
 * A GET for an event stream: the standalone stream (G1, G2) or a resume (R1, R6).
 * 405 and other refusals say the stream is not offered; 404 with a session is session-missing.
 */
export async function openEventStream(
  http: HttpClient,
  sink: MessageSink,
  spec: {
    sessionId: string | undefined;
    protocolVersion: string | undefined;
    lastEventId: string | undefined;
    authorization: boolean;
    /**
     * G2: a stream of this session was open before (always so for a resume). Only then does a
     * 404 say the session is gone; on the first GET it says the server has no GET route.
     */
    established: boolean;
    /**
     * G2: a refusal's warning is said here (a resume, the legacy stream); the standalone stream's
     * chart says its own, since only it knows whether the session is closing (F1).
     */
    warnRefusal: boolean;
  },
  signal: AbortSignal,
): Promise<GetResult> {
  const exchange = await send(http, {
    method: 'GET',
    url: undefined,
    sessionId: spec.sessionId,
    protocolVersion: spec.protocolVersion,
    lastEventId: spec.lastEventId,
    headers: undefined,
    body: undefined,
    signal,
    control: undefined,
  });
  const { response } = exchange;
  const type = mediaType(response.headers.get('content-type'));
  const streamBody = response.ok && type === 'text/event-stream' ? bodyOf(response) : null;
  if (streamBody !== null) {
    exchange.detach();
    // Issue 44: nothing here or above reads this answer's fields again (cookies, DPoP's nonce and a
    // redirect were read before it came back); an answer held for the session's life lets them go.
    response.fieldsRead?.();
    return { kind: 'sse', stream: exchange.stream(streamBody) };
  }
  try {
    // G2: a 405 needs no reading: its body is cancelled.
    if (response.status === 405) return { kind: 'unsupported', status: 405, warning: undefined };
    const body = response.ok ? '' : await errorBodyText(response);
    if (spec.established && sessionGone(response.status, body, spec.sessionId, sink, 'GET')) {
      throw statusError(exchange, 'GET', body, true, http.url);
    }
    if (response.status === 429 || response.status >= 500) throw statusError(exchange, 'GET', body, false, http.url);
    if (response.status === 401 && spec.authorization) throw statusError(exchange, 'GET', body, false, http.url);
    const warning = response.ok
      ? new ProtocolError(`GET stream answered with ${type ? `content type "${type}"` : 'no content type'}; no server stream`)
      : statusError(exchange, 'GET stream refused', body, false, http.url);
    if (spec.warnRefusal) sink.warn(warning);
    return { kind: 'unsupported', status: response.status, warning };
  } finally {
    finish(exchange);
  }
}

/**
 * F1: DELETE the session; any status is fine for close, and the caller decides for terminate.
 * F7: the chart bounds it (`after: deleteTimeout` where it runs); leaving that state aborts it.
 */
export async function deleteSession(
  http: HttpClient,
  spec: { sessionId: string; protocolVersion: string | undefined },
  signal: AbortSignal,
): Promise<{ status: number }> {
  const bounded = new RequestControl();
  const stop = () => {
    bounded.abort();
  };
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  let exchange: Exchange;
  try {
    exchange = await http.request({
      method: 'DELETE',
      url: undefined,
      sessionId: spec.sessionId,
      protocolVersion: spec.protocolVersion,
      lastEventId: undefined,
      headers: undefined,
      body: undefined,
      signal: undefined,
      control: bounded,
    });
  } catch (error) {
    throw networkError(error, 'DELETE');
  } finally {
    signal.removeEventListener('abort', stop);
  }
  try {
    // Only the status matters; the body is cancelled unread (P12).
    return { status: exchange.response.status };
  } finally {
    finish(exchange);
  }
}
