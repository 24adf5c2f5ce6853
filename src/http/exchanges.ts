import type {
  GetResult,
  JSONRPCMessage,
  JSONRPCResponse,
  MessageSink,
  PostResult,
} from '../../machines/events.js';
import type { PostRequestInput } from '../../machines/post-stream.js';
import { ProtocolError, StreamableHTTPError } from '../../machines/errors.js';
import { cut, isResponse, sessionIdSchema, validateMessage } from '../schema.js';
import { HttpClient, redirectTarget, type Exchange, type HttpResponse } from './client.js';
import { parseChallenge } from './auth.js';
import { mediaType } from './headers.js';

/** Largest error body read to look for a JSON-RPC error in it (P7). */
const errorBodyLimit = 64 * 1024;

export interface ExchangeOptions {
  strict: boolean;
  maxMessageBytes: number;
}

function networkError(error: unknown, what: string): Error {
  if (error instanceof Error && error.name === 'AbortError') return error;
  if (error instanceof StreamableHTTPError || error instanceof ProtocolError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StreamableHTTPError(`${what} failed before any response: ${reason}`, { cause: error });
}

/** Done with a response: an unread body is cancelled (cheap, and frees the connection), then the request unlinked. */
function finish(exchange: Exchange): void {
  if (!exchange.response.bodyUsed && exchange.response.body !== null) exchange.response.body.cancel().catch(() => undefined);
  exchange.release();
}

async function bodyText(response: HttpResponse, limit: number): Promise<string> {
  try {
    const text = await response.text();
    return text.length > limit ? text.slice(0, limit) : text;
  } catch {
    return '';
  }
}

/** H5/H6: the session ID on a response, checked before anything can put it in a header. */
function responseSessionId(response: HttpResponse): string | undefined {
  const raw = response.headers.get('mcp-session-id');
  if (raw === null) return undefined;
  const checked = sessionIdSchema.safeParse(raw);
  if (!checked.success) {
    throw new ProtocolError(
      `server sent an invalid session ID (${checked.error.issues[0]?.message ?? 'invalid'}); refusing it`,
    );
  }
  return raw;
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
  return new StreamableHTTPError(`${what}: HTTP ${status} ${reason}${body ? `: ${cut(body, 200)}` : ''}`, {
    status,
    statusText,
    body: cut(body),
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
  if (!checked.ok) return undefined;
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
  signal: AbortSignal,
): Promise<PostResult> {
  if (input.endpoint !== undefined) return postLegacy(http, input, signal);
  let exchange: Exchange;
  try {
    exchange = await http.request({
      method: 'POST',
      sessionId: input.sessionId,
      protocolVersion: input.protocolVersion,
      body: JSON.stringify(input.message),
      signal,
    });
  } catch (error) {
    throw networkError(error, 'POST');
  }
  const { response } = exchange;
  let handedOff = false;
  try {
    if (!response.ok) {
      const sessionMissing = response.status === 404 && input.sessionId !== undefined;
      const body = await bodyText(response, errorBodyLimit);
      if (!sessionMissing) {
        const answer = errorResponseFor(body, input.requestIds);
        if (answer !== undefined) return { kind: 'json', sessionId: undefined, response: answer };
      }
      throw statusError(exchange, 'POST', body, sessionMissing, http.url);
    }
    const sessionId = responseSessionId(response);
    const type = mediaType(response.headers.get('content-type'));
    if (input.requestIds.length === 0) {
      // P1: a notification or response is accepted by any 2xx; a body is discarded.
      if (response.status !== 202 && response.status !== 204 && options.strict) {
        throw new ProtocolError(`server answered a notification with ${response.status} ${type || 'and no content type'}`);
      }
      return { kind: 'accepted', sessionId };
    }
    if (type === 'text/event-stream' && response.body !== null) {
      HttpClient.detach(exchange, signal);
      handedOff = true;
      return { kind: 'sse', sessionId, stream: { body: response.body, release: exchange.release } };
    }
    if (type === 'application/json') {
      return { kind: 'json', sessionId, response: await deliverJsonBody(response, input.requestIds, sink) };
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
async function postLegacy(http: HttpClient, input: PostRequestInput, signal: AbortSignal): Promise<PostResult> {
  let exchange: Exchange;
  try {
    exchange = await http.request({
      method: 'POST',
      url: new URL(input.endpoint ?? '', http.url),
      sessionId: undefined,
      protocolVersion: input.protocolVersion,
      body: JSON.stringify(input.message),
      signal,
    });
  } catch (error) {
    throw networkError(error, 'POST');
  }
  try {
    if (!exchange.response.ok) {
      throw statusError(exchange, 'POST (legacy)', await bodyText(exchange.response, 1024), false, http.url);
    }
    return { kind: 'accepted', sessionId: undefined };
  } finally {
    finish(exchange);
  }
}

/**
 * P2: a JSON body is one message or an array, delivered in order. The call's own response is
 * handed back for the chart to deliver when it is the last message (the usual case); otherwise
 * everything is delivered here, in order.
 */
async function deliverJsonBody(
  response: HttpResponse,
  requestIds: PostRequestInput['requestIds'],
  sink: MessageSink,
): Promise<JSONRPCResponse | undefined> {
  const text = await response.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProtocolError(`invalid JSON in response body: ${cut(text)}`, { cause: error });
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
  return single ? (last) : undefined;
}

/**
 * A GET for an event stream: the standalone stream (G1, G2) or a resume (R1, R6).
 * 405 and other refusals say the stream is not offered; 404 with a session is session-missing.
 */
export async function openEventStream(
  http: HttpClient,
  sink: MessageSink,
  spec: { sessionId: string | undefined; protocolVersion: string | undefined; lastEventId: string | undefined; authorization: boolean },
  signal: AbortSignal,
): Promise<GetResult> {
  let exchange: Exchange;
  try {
    exchange = await http.request({
      method: 'GET',
      sessionId: spec.sessionId,
      protocolVersion: spec.protocolVersion,
      lastEventId: spec.lastEventId,
      signal,
    });
  } catch (error) {
    throw networkError(error, 'GET');
  }
  const { response } = exchange;
  const type = mediaType(response.headers.get('content-type'));
  if (response.ok && type === 'text/event-stream' && response.body !== null) {
    HttpClient.detach(exchange, signal);
    return { kind: 'sse', stream: { body: response.body, release: exchange.release } };
  }
  try {
    const body = await bodyText(response, 1024);
    if (response.status === 404 && spec.sessionId !== undefined) throw statusError(exchange, 'GET', body, true, http.url);
    if (response.status === 429 || response.status >= 500) throw statusError(exchange, 'GET', body, false, http.url);
    if (response.status === 401 && spec.authorization) throw statusError(exchange, 'GET', body, false, http.url);
    if (response.status === 405) return { kind: 'unsupported', status: 405, warning: undefined };
    const warning = response.ok
      ? new ProtocolError(`GET stream answered with ${type ? `content type "${type}"` : 'no content type'}; no server stream`)
      : statusError(exchange, 'GET stream refused', body, false, http.url);
    sink.warn(warning);
    return { kind: 'unsupported', status: response.status, warning };
  } finally {
    finish(exchange);
  }
}

/** F1: DELETE the session; any status is fine for close, and the caller decides for terminate. */
export async function deleteSession(
  http: HttpClient,
  spec: { sessionId: string; protocolVersion: string | undefined },
  signal: AbortSignal,
): Promise<{ status: number }> {
  let exchange: Exchange;
  try {
    exchange = await http.request({ method: 'DELETE', ...spec, signal });
  } catch (error) {
    throw networkError(error, 'DELETE');
  }
  try {
    await bodyText(exchange.response, 1024);
    return { status: exchange.response.status };
  } finally {
    finish(exchange);
  }
}
