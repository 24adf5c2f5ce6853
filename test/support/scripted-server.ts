/**
 * The one scriptable MCP server of the tests: a real `node:http` server on 127.0.0.1 whose
 * answers the test writes. One place parses requests, routes POST, GET and DELETE, speaks JSON
 * or server-sent events, and records what it received (and what became of each request).
 *
 * Two sets of defaults, and the same scripts and handles on both:
 * - `defaults: 'mcp'` (the hostile tests, the demo): a minimal stateful MCP server. initialize
 *   gets an InitializeResult with an `mcp-session-id`, notifications and responses get 202,
 *   other requests an empty result, GET gets 405 (or, with `standalone: true`, an event stream
 *   kept open, which `notify()` writes to), DELETE gets 200. A test overrides the answer for a
 *   JSON-RPC method, an HTTP method, a path or an id with any status, headers and body: timed or
 *   gated chunks, SSE streams that never end, streams cut mid-body, sockets destroyed before any
 *   header, requests held until the test answers them.
 * - `defaults: 'park'` (the model's puppet): nothing is answered by itself. Every request to the
 *   MCP endpoint, to the legacy message endpoint (`POST /messages`) and to the OAuth token
 *   endpoint (`POST /token`) is held until the test answers it, so each answer is a step of a
 *   model path, taken exactly when the path says; only OAuth discovery documents are answered
 *   at once (anything else: 404).
 *
 * A held request, or an event stream left open, is answered, written to, ended or dropped with
 * `answer()`, `write()`, `endStream()` and `drop()`; `held()` lists them and `nextChange()`
 * resolves at the next arrival, answer or departure (the client giving a request up).
 * `waitFor()`, `filter()` and `only()` pick recorded requests by what they are (HTTP method,
 * JSON-RPC method, id, path), never by position.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fieldOf, listenLocal, only, openSockets, parseBody, readText, RequestLog, shutDown } from './http.js';

export type RpcId = string | number | null;

/**
 * What became of a request: parked (held, no answer yet), streaming (answered, its body still
 * being written or kept open), done (answered and ended), gone (the connection closed before
 * the answer ended: the client gave up, or the server cut it).
 */
export type RequestState = 'parked' | 'streaming' | 'done' | 'gone';

export interface RecordedRequest {
  /** Arrival order, from 0. */
  seq: number;
  /** HTTP method. */
  method: string;
  /** Path of the URL, without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body (undefined when empty, the raw text when not JSON). */
  body: unknown;
  /** JSON-RPC method of the body (of a batch's first message), if any. */
  rpc: string | undefined;
  /** JSON-RPC id of the body (of a batch's first message), if it has one. */
  id: RpcId | undefined;
  /** The `mcp-session-id` the request carried. */
  session: string | undefined;
  /** What became of it so far (see RequestState). */
  state: RequestState;
  /** Resolves when the server side of this response closes; `aborted` when the client went away first. */
  closed: Promise<{ aborted: boolean }>;
}

/** One write of a body: `delayMs` is waited, then `until` is awaited, before it is written. */
export interface Chunk {
  data: string | Uint8Array;
  delayMs?: number;
  /** A gate the test opens: the chunk is written once this settles (or the server closes). */
  until?: PromiseLike<unknown>;
}

export interface Reply {
  status?: number;
  statusText?: string;
  /** An array value sends the field once per value (a repeated header field). */
  headers?: Record<string, string | string[]>;
  body?: string | Uint8Array | readonly Chunk[];
  /** Keep the response open after the body is written (a stream the server never ends; `write()` adds to it). */
  keepOpen?: boolean;
  /** Destroy the socket before any byte of the response is written (a network error). */
  destroy?: boolean;
  /**
   * Write nothing yet: the request is held (`parked`) until the test answers it with `answer()`,
   * or drops it, or the server closes.
   */
  hang?: boolean;
  /**
   * Cut the connection once the body is written (flushed): the response never ends properly,
   * so the client sees its body break mid-stream (a network drop after headers).
   */
  abort?: boolean;
  /**
   * `mcp-session-id` on this reply: a value, or null for none. Default: the session the request
   * carried or initialize was given (none when the server hands out none), as the SDK server
   * puts it on every response.
   */
  sessionId?: string | null;
}

export type Script = Reply | ((request: RecordedRequest) => Reply);

export interface Match {
  /** HTTP method to match. */
  http?: 'POST' | 'GET' | 'DELETE';
  /** JSON-RPC method of the POST body to match. */
  rpc?: string;
  /** JSON-RPC id of the body to match. */
  id?: RpcId;
  /** Path of the URL to match. */
  path?: string;
}

export type Matcher = Match | ((request: RecordedRequest) => boolean);

export interface ScriptedServerOptions {
  /** 'mcp' (default): a minimal MCP server answers what no script answers; 'park': every request waits for the test. */
  defaults?: 'mcp' | 'park';
  /**
   * Session IDs: one value given to every initialize (default: a random one in 'mcp', none in
   * 'park'), null for none, or a function called once per initialize for a session per client
   * (then requests for a session it does not know, or one deleted, get 404).
   */
  sessionId?: string | null | (() => string);
  /** serverInfo of the InitializeResult. */
  serverInfo?: { name: string; version: string };
  /** capabilities of the InitializeResult (default none). */
  capabilities?: Record<string, unknown>;
  /** The default GET opens a standalone event stream that stays open (`notify()` writes to it) instead of 405. */
  standalone?: boolean;
}

export interface SseEvent {
  id?: string;
  event?: string;
  /** A string is sent as is (split on newlines into data lines); anything else is JSON-encoded. */
  data?: unknown;
  retry?: number;
  /** A comment line. */
  comment?: string;
}

export interface ScriptedServer {
  /** The MCP endpoint (`/mcp`). */
  url: URL;
  origin: string;
  /** Where the protected-resource metadata is (named in 401 challenges); served in 'park' mode. */
  resourceMetadataUrl: string;
  /** The session ID the server hands out when it is one fixed value (null: none, or one per client). */
  sessionId: string | null;
  /** With a session per client: the sessions initialize handed out and no DELETE ended, in order. */
  sessions: string[];
  /** Sessions a DELETE ended, in order. */
  closedSessions: string[];
  /** Every request received, in arrival order (discovery documents included). */
  requests: RecordedRequest[];
  /** Errors thrown while a script ran (a bad script, or a header Node refused). */
  scriptErrors: Error[];
  /**
   * Answers requests that match with `script`, `times` times (default: always). Overrides are
   * tried newest first; the defaults come last.
   */
  on(match: Match, script: Script, times?: number): void;
  /** The first recorded request that matches, now or when it arrives; rejects after `timeoutMs`. */
  waitFor(match: Matcher, timeoutMs?: number): Promise<RecordedRequest>;
  /** Recorded requests that match, in arrival order. */
  filter(match: Matcher): RecordedRequest[];
  /** The one recorded request that matches; throws (naming what was seen) when there is none or more than one. */
  only(match: Matcher): RecordedRequest;
  /** Requests waiting for an answer or holding an open stream. */
  held(): RecordedRequest[];
  /** Answers a held request. */
  answer(request: RecordedRequest, reply: Reply): void;
  /** Writes to an open event stream (an event, a comment). */
  write(request: RecordedRequest, text: string): void;
  /** Writes a message as an event on every open standalone stream (of `session`, when given). */
  notify(message: unknown, session?: string): void;
  /** Ends an open event stream cleanly. */
  endStream(request: RecordedRequest): void;
  /** Destroys the connection of a request (a network error for the client). */
  drop(request: RecordedRequest): void;
  /** Resolves at the next arrival, answer or departure. */
  nextChange(): Promise<void>;
  close(): Promise<void>;
}

export const PROTOCOL_VERSION = '2025-11-25';

/** A JSON body. */
export function json(body: unknown, reply: Omit<Reply, 'body'> = {}): Reply {
  return {
    ...reply,
    status: reply.status ?? 200,
    headers: { 'content-type': 'application/json', ...reply.headers },
    body: JSON.stringify(body),
  };
}

/** The text of an event stream. */
export function sseText(events: readonly SseEvent[]): string {
  let text = '';
  for (const event of events) {
    if (event.comment !== undefined) text += `: ${event.comment}\n`;
    if (event.id !== undefined) text += `id: ${event.id}\n`;
    if (event.event !== undefined) text += `event: ${event.event}\n`;
    if (event.retry !== undefined) text += `retry: ${event.retry}\n`;
    if (event.data !== undefined) {
      const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
      for (const line of data.split('\n')) text += `data: ${line}\n`;
    }
    text += '\n';
  }
  return text;
}

/** An event-stream body. */
export function sse(events: readonly SseEvent[], reply: Omit<Reply, 'body'> = {}): Reply {
  return {
    ...reply,
    status: reply.status ?? 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers },
    body: sseText(events),
  };
}

/** A JSON-RPC result for a request. */
export function result(id: RpcId | undefined, value: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, result: value };
}

/** A JSON-RPC error response. */
export function rpcError(id: RpcId | undefined, code: number, message: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, error: { code, message } };
}

/** A header of a recorded request as one string (Node joins repeated headers with ', '). */
export function headerOf(request: RecordedRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A field of the body, or of a batch's first message. */
function field(body: unknown, name: 'method' | 'id'): unknown {
  return fieldOf(Array.isArray(body) ? (body as unknown[])[0] : body, name);
}

export function matches(match: Matcher, request: RecordedRequest): boolean {
  if (typeof match === 'function') return match(request);
  return (
    (match.http === undefined || match.http === request.method) &&
    (match.rpc === undefined || match.rpc === request.rpc) &&
    (match.id === undefined || match.id === request.id) &&
    (match.path === undefined || match.path === request.path)
  );
}

/** How a match reads in an error message. */
function describeMatch(match: Matcher): string {
  return typeof match === 'function' ? 'the predicate' : JSON.stringify(match);
}

/** How a request reads in an error message. */
export function describeRequest(request: RecordedRequest): string {
  return `#${request.seq} ${request.method} ${request.path}${request.rpc === undefined ? '' : ` ${request.rpc}`}${request.id === undefined ? '' : ` id=${String(request.id)}`}`;
}

/** The one request of `requests` that matches; throws (listing what was seen) when none or several do. */
export function onlyOf(requests: readonly RecordedRequest[], match: Matcher): RecordedRequest {
  return only(requests, `request matching ${describeMatch(match)} among ${requests.map(describeRequest).join(', ')}`, (request) =>
    matches(match, request),
  );
}

/** The OAuth discovery documents the 'park' defaults serve at once. */
function discovery(origin: string, path: string): Record<string, unknown> | undefined {
  if (path.startsWith('/.well-known/oauth-protected-resource')) {
    return { resource: `${origin}/mcp`, authorization_servers: [`${origin}/`] };
  }
  if (path.startsWith('/.well-known/oauth-authorization-server') || path.startsWith('/.well-known/openid-configuration')) {
    return {
      issuer: `${origin}/`,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
    };
  }
  return undefined;
}

export async function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const park = options.defaults === 'park';
  const perClient = typeof options.sessionId === 'function' ? options.sessionId : undefined;
  const fixedSession: string | null =
    typeof options.sessionId === 'function'
      ? null
      : options.sessionId === undefined
        ? park
          ? null
          : `session-${Math.random().toString(36).slice(2)}`
        : options.sessionId;
  const serverInfo = options.serverInfo ?? { name: 'scripted', version: '1.0.0' };
  const capabilities = options.capabilities ?? {};
  const log = new RequestLog<RecordedRequest>('at the scripted server');
  const requests = log.entries;
  const scriptErrors: Error[] = [];
  const overrides: { match: Match; script: Script; times: number }[] = [];
  const timers = new Map<NodeJS.Timeout, () => void>();
  /** The responses of requests that are held or stream: what answer(), write(), endStream() and drop() act on. */
  const responses = new Map<RecordedRequest, ServerResponse>();
  /** Open standalone streams (the default GET with `standalone: true`), with their session. */
  const standaloneStreams = new Map<RecordedRequest, string | undefined>();
  const sessions: string[] = [];
  const closedSessions: string[] = [];
  let nextEvent = 1;
  let closing = false;
  let origin = '';

  let waiters: (() => void)[] = [];
  const changed = () => {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.set(timer, resolve);
    });

  /** The session a reply names by default: the request's own, or the one initialize hands out. */
  const sessionFor = (request: RecordedRequest): string | null => {
    if (perClient === undefined) return fixedSession;
    if (request.rpc === 'initialize' && request.method === 'POST') {
      const session = perClient();
      sessions.push(session);
      return session;
    }
    return request.session !== undefined && sessions.includes(request.session) ? request.session : null;
  };

  const mcpDefault = (request: RecordedRequest): Reply => {
    if (perClient !== undefined && request.rpc !== 'initialize' && (request.session === undefined || !sessions.includes(request.session))) {
      return json(rpcError(null, -32001, 'Session not found'), { status: request.session === undefined ? 400 : 404 });
    }
    switch (request.method) {
      case 'POST': {
        if (request.rpc === 'initialize') {
          return json(result(request.id, { protocolVersion: PROTOCOL_VERSION, capabilities, serverInfo }));
        }
        // Notifications and responses are accepted; any other request gets an empty result.
        if (request.rpc === undefined || request.id === undefined) return { status: 202 };
        return json(result(request.id));
      }
      case 'GET':
        if (options.standalone === true) {
          standaloneStreams.set(request, request.session);
          return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, keepOpen: true };
        }
        return { status: 405, headers: { allow: 'POST, DELETE' } };
      case 'DELETE':
        if (request.session !== undefined) {
          const at = sessions.indexOf(request.session);
          if (at >= 0) sessions.splice(at, 1);
          closedSessions.push(request.session);
          for (const [stream, session] of standaloneStreams) if (session === request.session) endStream(stream);
        }
        return { status: 200 };
      default:
        return { status: 405 };
    }
  };

  const parkDefault = (request: RecordedRequest): Reply => {
    const document = request.method === 'GET' ? discovery(origin, request.path) : undefined;
    if (document !== undefined) return json(document);
    const held =
      request.path === '/mcp' ||
      (request.path === '/messages' && request.method === 'POST') ||
      (request.path === '/token' && request.method === 'POST');
    return held ? { hang: true } : { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
  };

  const replyFor = (request: RecordedRequest): Reply => {
    for (let i = overrides.length - 1; i >= 0; i--) {
      const override = overrides[i]!;
      if (!matches(override.match, request)) continue;
      override.times -= 1;
      if (override.times <= 0) overrides.splice(i, 1);
      return typeof override.script === 'function' ? override.script(request) : override.script;
    }
    return park ? parkDefault(request) : mcpDefault(request);
  };

  /** Settles when the server starts closing: pending gates stop waiting then. */
  let wakeGates!: () => void;
  const closingGate = new Promise<void>((resolve) => {
    wakeGates = resolve;
  });

  /** Writes `data` and resolves once it was handed to the socket. */
  const flushed = (res: ServerResponse, data: string | Uint8Array) =>
    new Promise<void>((resolve) => {
      res.write(data, () => {
        resolve();
      });
    });

  /** The request is answered and ended: nothing more is written to it. */
  const finish = (request: RecordedRequest, state: 'done' | 'gone') => {
    request.state = state;
    responses.delete(request);
    standaloneStreams.delete(request);
    changed();
  };

  /**
   * Writes a reply. Everything up to the body of a string reply happens before the first await,
   * so a held request answered with `answer()` is answered (and its state set) at once.
   */
  const write = async (request: RecordedRequest, res: ServerResponse, reply: Reply): Promise<void> => {
    const headers: Record<string, string | string[]> = { ...reply.headers };
    const id = reply.sessionId === undefined ? sessionFor(request) : reply.sessionId;
    if (id !== null) headers['mcp-session-id'] = id;
    const status = reply.status ?? 200;
    if (reply.statusText === undefined) res.writeHead(status, headers);
    else res.writeHead(status, reply.statusText, headers);
    const body = reply.body;
    const abort = reply.abort === true;
    if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) {
      if (abort) {
        request.state = 'streaming';
        res.flushHeaders();
        if (body !== undefined) await flushed(res, body);
        res.destroy();
      } else if (reply.keepOpen === true) {
        request.state = 'streaming';
        res.flushHeaders();
        if (body !== undefined) res.write(body);
        changed();
      } else {
        res.end(body);
        finish(request, 'done');
      }
      return;
    }
    request.state = 'streaming';
    res.flushHeaders();
    for (const chunk of body) {
      if (chunk.delayMs !== undefined) await sleep(chunk.delayMs);
      if (chunk.until !== undefined) await Promise.race([chunk.until, closingGate]);
      if (res.destroyed || closing) return;
      if (abort) await flushed(res, chunk.data);
      else res.write(chunk.data);
    }
    if (abort) res.destroy();
    else if (reply.keepOpen !== true) {
      res.end();
      finish(request, 'done');
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawBody = await readText(req);
    const body = parseBody(rawBody);
    const method = field(body, 'method');
    const id = field(body, 'id');
    const sessionHeader = req.headers['mcp-session-id'];
    let resolveClosed!: (value: { aborted: boolean }) => void;
    const closed = new Promise<{ aborted: boolean }>((resolve) => {
      resolveClosed = resolve;
    });
    const request: RecordedRequest = {
      seq: requests.length,
      method: req.method ?? '',
      path: new URL(req.url ?? '/', 'http://127.0.0.1').pathname,
      headers: req.headers,
      rawBody,
      body,
      rpc: typeof method === 'string' ? method : undefined,
      id: typeof id === 'string' || typeof id === 'number' || id === null ? id : undefined,
      session: Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader,
      state: 'parked',
      closed,
    };
    responses.set(request, res);
    res.on('close', () => {
      resolveClosed({ aborted: !res.writableFinished });
      if (request.state === 'parked' || request.state === 'streaming') finish(request, 'gone');
    });
    log.add(request);
    changed();
    const reply = replyFor(request);
    if (reply.destroy === true) {
      req.socket.destroy();
      return;
    }
    if (reply.hang === true) return;
    await write(request, res, reply);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      scriptErrors.push(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`script error: ${String(error)}`);
      } else {
        res.destroy();
      }
    });
  });
  const sockets = openSockets(server);
  const port = await listenLocal(server);
  origin = `http://127.0.0.1:${port}`;

  const responseOf = (request: RecordedRequest): ServerResponse => {
    const res = responses.get(request);
    if (res === undefined) throw new Error(`request ${describeRequest(request)} is not held any more`);
    return res;
  };

  function endStream(request: RecordedRequest): void {
    const res = responseOf(request);
    res.end();
    finish(request, 'done');
  }

  return {
    url: new URL(`${origin}/mcp`),
    origin,
    resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
    sessionId: fixedSession,
    sessions,
    closedSessions,
    requests,
    scriptErrors,
    on(match, script, times = Number.POSITIVE_INFINITY) {
      overrides.push({ match, script, times });
    },
    waitFor(match, timeoutMs) {
      return log.waitFor((request) => matches(match, request), timeoutMs);
    },
    filter(match) {
      return requests.filter((request) => matches(match, request));
    },
    only(match) {
      return onlyOf(requests, match);
    },
    held: () => requests.filter((request) => request.state === 'parked' || request.state === 'streaming'),
    answer(request, reply) {
      const res = responseOf(request);
      if (request.state !== 'parked') throw new Error(`request ${describeRequest(request)} was already answered`);
      write(request, res, reply).catch((error: unknown) => {
        scriptErrors.push(error instanceof Error ? error : new Error(String(error)));
        res.destroy();
      });
    },
    write(request, text) {
      const res = responseOf(request);
      if (request.state !== 'streaming') throw new Error(`request ${describeRequest(request)} holds no open stream`);
      res.write(text);
    },
    notify(message, session) {
      for (const [request, of] of standaloneStreams) {
        if (session !== undefined && of !== session) continue;
        responses.get(request)?.write(sseText([{ id: `e${nextEvent++}`, data: message }]));
      }
    },
    endStream,
    drop(request) {
      const res = responseOf(request);
      finish(request, 'gone');
      res.socket?.destroy();
      res.destroy();
    },
    nextChange: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
      }),
    async close() {
      closing = true;
      wakeGates();
      // Pending chunk delays end now; their writers see `closing` and stop.
      for (const [timer, wake] of timers) {
        clearTimeout(timer);
        wake();
      }
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await shutDown(server);
      changed();
    },
  };
}
