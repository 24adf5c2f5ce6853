/**
 * A small scripted MCP server on 127.0.0.1: a real `node:http` server whose answers each test
 * writes. By default it behaves like a minimal stateful MCP server (initialize → InitializeResult
 * with an `mcp-session-id`, notifications and responses → 202, other requests → an empty result,
 * GET → 405, DELETE → 200); a test overrides the answer for a JSON-RPC method or an HTTP method
 * with any status, headers and body, including bodies written as timed or gated chunks, SSE
 * streams that never end, streams cut mid-body, and sockets destroyed before any header. Every
 * request is recorded.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fieldOf, listenLocal, openSockets, parseBody, readText, RequestLog, shutDown } from './http.js';

export type RpcId = string | number | null;

export interface RecordedRequest {
  /** Arrival order, from 0. */
  seq: number;
  /** HTTP method. */
  method: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body (undefined when empty, the raw text when not JSON). */
  body: unknown;
  /** JSON-RPC method of the body, if any. */
  rpc: string | undefined;
  /** JSON-RPC id of the body, if it has one. */
  id: RpcId | undefined;
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
  /** Keep the response open after the body is written (a stream the server never ends). */
  keepOpen?: boolean;
  /** Destroy the socket before any byte of the response is written (a network error). */
  destroy?: boolean;
  /** Write nothing at all: the request is accepted and never answered (until the server closes). */
  hang?: boolean;
  /**
   * Cut the connection once the body is written (flushed): the response never ends properly,
   * so the client sees its body break mid-stream (a network drop after headers).
   */
  abort?: boolean;
  /**
   * `mcp-session-id` on this reply: a value, or null for none. Default: the server's session ID
   * (none when the server has none), as the SDK server puts it on every response.
   */
  sessionId?: string | null;
}

export type Script = Reply | ((request: RecordedRequest) => Reply);

export interface Match {
  /** HTTP method to match. */
  http?: 'POST' | 'GET' | 'DELETE';
  /** JSON-RPC method of the POST body to match. */
  rpc?: string;
}

export interface ScriptedServerOptions {
  /** Session ID put on the initialize response (and by default on every response); null for none. */
  sessionId?: string | null;
  /** serverInfo of the InitializeResult. */
  serverInfo?: { name: string; version: string };
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
  url: URL;
  /** The session ID the server hands out (null: none). */
  sessionId: string | null;
  requests: RecordedRequest[];
  /** Errors thrown while a script ran (a bad script, or a header Node refused). */
  scriptErrors: Error[];
  /**
   * Answers requests that match with `script`, `times` times (default: always). Overrides are
   * tried newest first; the built-in defaults come last.
   */
  on(match: Match, script: Script, times?: number): void;
  /** The first recorded request that matches, now or when it arrives; rejects after `timeoutMs`. */
  waitFor(match: Match | ((request: RecordedRequest) => boolean), timeoutMs?: number): Promise<RecordedRequest>;
  /** Recorded requests that match. */
  filter(match: Match | ((request: RecordedRequest) => boolean)): RecordedRequest[];
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

/** A field of the body, or of a batch's first message. */
function field(body: unknown, name: 'method' | 'id'): unknown {
  return fieldOf(Array.isArray(body) ? (body as unknown[])[0] : body, name);
}

function matches(match: Match | ((request: RecordedRequest) => boolean), request: RecordedRequest): boolean {
  if (typeof match === 'function') return match(request);
  return (match.http === undefined || match.http === request.method) && (match.rpc === undefined || match.rpc === request.rpc);
}

export async function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const sessionId = options.sessionId === undefined ? `session-${Math.random().toString(36).slice(2)}` : options.sessionId;
  const serverInfo = options.serverInfo ?? { name: 'scripted', version: '1.0.0' };
  const log = new RequestLog<RecordedRequest>('at the scripted server');
  const requests = log.entries;
  const scriptErrors: Error[] = [];
  const overrides: { match: Match; script: Script; times: number }[] = [];
  const timers = new Map<NodeJS.Timeout, () => void>();
  let closing = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.set(timer, resolve);
    });

  const defaultReply = (request: RecordedRequest): Reply => {
    switch (request.method) {
      case 'POST': {
        if (request.rpc === 'initialize') {
          return json(result(request.id, { protocolVersion: PROTOCOL_VERSION, capabilities: {}, serverInfo }));
        }
        // Notifications and responses are accepted; any other request gets an empty result.
        if (request.rpc === undefined || request.id === undefined) return { status: 202 };
        return json(result(request.id));
      }
      case 'GET':
        return { status: 405, headers: { allow: 'POST, DELETE' } };
      case 'DELETE':
        return { status: 200 };
      default:
        return { status: 405 };
    }
  };

  const replyFor = (request: RecordedRequest): Reply => {
    for (let i = overrides.length - 1; i >= 0; i--) {
      const override = overrides[i]!;
      if (!matches(override.match, request)) continue;
      override.times -= 1;
      if (override.times <= 0) overrides.splice(i, 1);
      return typeof override.script === 'function' ? override.script(request) : override.script;
    }
    return defaultReply(request);
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

  const write = async (res: ServerResponse, reply: Reply): Promise<void> => {
    const headers: Record<string, string | string[]> = { ...reply.headers };
    const id = reply.sessionId === undefined ? sessionId : reply.sessionId;
    if (id !== null) headers['mcp-session-id'] = id;
    const status = reply.status ?? 200;
    if (reply.statusText === undefined) res.writeHead(status, headers);
    else res.writeHead(status, reply.statusText, headers);
    const body = reply.body;
    const abort = reply.abort === true;
    if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) {
      if (abort) {
        res.flushHeaders();
        if (body !== undefined) await flushed(res, body);
        res.destroy();
      } else if (reply.keepOpen === true) {
        res.flushHeaders();
        if (body !== undefined) res.write(body);
      } else {
        res.end(body);
      }
      return;
    }
    res.flushHeaders();
    for (const chunk of body) {
      if (chunk.delayMs !== undefined) await sleep(chunk.delayMs);
      if (chunk.until !== undefined) await Promise.race([chunk.until, closingGate]);
      if (res.destroyed || closing) return;
      if (abort) await flushed(res, chunk.data);
      else res.write(chunk.data);
    }
    if (abort) res.destroy();
    else if (reply.keepOpen !== true) res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawBody = await readText(req);
    const body = parseBody(rawBody);
    const method = field(body, 'method');
    const id = field(body, 'id');
    let resolveClosed!: (value: { aborted: boolean }) => void;
    const closed = new Promise<{ aborted: boolean }>((resolve) => {
      resolveClosed = resolve;
    });
    res.on('close', () => {
      resolveClosed({ aborted: !res.writableFinished });
    });
    const request: RecordedRequest = {
      seq: requests.length,
      method: req.method ?? '',
      headers: req.headers,
      rawBody,
      body,
      rpc: typeof method === 'string' ? method : undefined,
      id: typeof id === 'string' || typeof id === 'number' || id === null ? id : undefined,
      closed,
    };
    log.add(request);
    const reply = replyFor(request);
    if (reply.destroy === true) {
      req.socket.destroy();
      return;
    }
    if (reply.hang === true) return;
    await write(res, reply);
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

  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    sessionId,
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
    },
  };
}
