/**
 * W4, W7: the in-memory MCP server the testing door's transports talk to: a `fetch` function
 * speaking Streamable HTTP in both eras, with knobs to hold, refuse, forget or fail.
 */
import { DISCOVER, FIRST_MODERN_VERSION, LISTEN, PROTOCOL_VERSION_META_KEY } from '../../machines/connection/messages.js';
import type { JSONRPCMessage, JSONRPCRequest } from '../../machines/types.js';
import type { FetchLike } from '../http/client.js';

/** The 2025-11-25 version the server's initialize answers with and the helpers' initialize asks for. */
export const streamableVersion = '2025-11-25';

/** W7: the key under which a 2026-07-28 notification names the `subscriptions/listen` it belongs to. */
const SUBSCRIPTION_ID_META_KEY = 'io.modelcontextprotocol/subscriptionId';

/**
 * A request the in-memory server keeps unanswered until its signal aborts: `initialize`, the
 * standalone `get`, the OAuth `discovery`, or (W7) the 2026-07-28 era probe `server/discover`.
 */
export type Held = 'initialize' | 'get' | 'discovery' | 'discover';

/** What the in-memory server saw, in order. */
export interface SeenRequest {
  method: string;
  /** The JSON-RPC method of a POST body. */
  rpc: string | undefined;
  url: string;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A promise that never settles on its own: it rejects when the request is aborted (close, a timeout). */
function heldUntilAborted(signal: AbortSignal | null | undefined): Promise<Response> {
  return new Promise((_, reject) => {
    const abort = () => {
      reject(signal?.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
    };
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
  });
}

function headerOf(init: RequestInit | undefined, name: string): string | undefined {
  return new Headers(init?.headers).get(name) ?? undefined;
}

/** The protocol version a 2026-07-28 request names in its `_meta` envelope (E3), if it has one. */
function envelopeOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('params' in body)) return undefined;
  const params: unknown = body.params;
  const meta: unknown = typeof params === 'object' && params !== null && '_meta' in params ? params._meta : undefined;
  const version: unknown =
    typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] : undefined;
  return typeof version === 'string' ? version : undefined;
}

/** What a 2026-07-28 result carries beside its own fields. */
const modernResult = { resultType: 'complete', ttlMs: 0, cacheScope: 'private' } as const;

/**
 * A small MCP server in memory, speaking Streamable HTTP through a `fetch` function, in both eras.
 * 2025-11-25: initialize (with a session ID), notifications (202), `ping` and `tools/list`, the
 * standalone GET stream, DELETE. W7, 2026-07-28 (any request whose `_meta` names the version):
 * `server/discover`, `ping` and `tools/list` without a session, and `subscriptions/listen` streams
 * that `toolsChanged()` and `notify()` reach. Knobs make it hold or refuse requests, forget its
 * sessions, ask for authorization, or fail everything for a while (`outage`).
 */
export class InMemoryMcpServer {
  readonly requests: SeenRequest[] = [];
  private readonly sessions = new Set<string>();
  private readonly streams = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
  /** W7: the open `subscriptions/listen` streams, by the listen request's id. */
  private readonly listens = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
  private readonly held = new Set<Held>();
  private initializeStatus: number | undefined;
  private networkError: Error | undefined;
  private failing: number | Error | undefined;
  private authorization = false;
  private nextSession = 1;
  private nextEvent = 1;

  constructor(readonly url = new URL('http://mcp.test/mcp')) {}

  /** The transport's `fetch`. */
  readonly fetch: FetchLike = (input, init) => Promise.resolve().then(() => this.answer(new URL(input), init));

  /** Requests of this kind get no answer (until aborted): the chart waits where they leave it. */
  hold(what: Held): this {
    this.held.add(what);
    return this;
  }

  release(what: Held): this {
    this.held.delete(what);
    return this;
  }

  /** Initialize is answered with this HTTP status (a failure), or, given an Error, fails as the network would. */
  refuseInitialize(failure: number | Error): this {
    if (typeof failure === 'number') this.initializeStatus = failure;
    else this.networkError = failure;
    return this;
  }

  /** Every session is forgotten: later requests for them are answered 404 (the server restarted). */
  forgetSessions(): this {
    this.sessions.clear();
    return this;
  }

  /** Ends every open standalone and listen stream (as a proxy's timeout would): the transport waits, then reconnects (G4). */
  endStreams(): this {
    for (const stream of [...this.streams.values(), ...this.listens.values()]) stream.close();
    this.streams.clear();
    this.listens.clear();
    return this;
  }

  /**
   * W6: an outage. Every request to the endpoint, in either era, is answered with this HTTP status
   * (503 by default), or fails as the network would given an Error, until `restore()`; the open
   * streams break. The sessions live on behind it.
   */
  outage(failure: number | Error = 503): this {
    this.failing = failure;
    // The streams break with the failure asked for, so that a degraded reason names it from the start.
    const broken = typeof failure === 'number' ? new Error(`in-memory server: outage, HTTP ${failure}`) : failure;
    for (const stream of [...this.streams.values(), ...this.listens.values()]) stream.error(broken);
    this.streams.clear();
    this.listens.clear();
    return this;
  }

  /** The outage is over: requests are answered again (initialize too, F4). */
  restore(): this {
    this.failing = undefined;
    this.initializeStatus = undefined;
    this.networkError = undefined;
    return this;
  }

  /** W7: `notifications/tools/list_changed` on every open standalone stream and every listen stream. */
  toolsChanged(): void {
    this.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  /** Requests without an Authorization header are answered 401; the OAuth discovery that follows is held. */
  requireAuthorization(): this {
    this.authorization = true;
    return this.hold('discovery');
  }

  /**
   * Sends a message on every open standalone stream, with an event id, and (W7) a notification on
   * every listen stream, naming its subscription in `_meta`.
   */
  notify(message: JSONRPCMessage): void {
    const bytes = new TextEncoder().encode(`id: e${this.nextEvent++}\ndata: ${JSON.stringify(message)}\n\n`);
    for (const stream of this.streams.values()) stream.enqueue(bytes);
    if (!('method' in message) || 'id' in message) return;
    for (const [id, stream] of this.listens) {
      const meta: unknown = message.params?._meta;
      const params = { ...message.params, _meta: { ...(typeof meta === 'object' ? meta : {}), [SUBSCRIPTION_ID_META_KEY]: id } };
      stream.enqueue(new TextEncoder().encode(`data: ${JSON.stringify({ ...message, params })}\n\n`));
    }
  }

  private answer(url: URL, init: RequestInit | undefined): Promise<Response> | Response {
    const method = init?.method ?? 'GET';
    const body: unknown = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    const rpc = typeof body === 'object' && body !== null && 'method' in body && typeof body.method === 'string' ? body.method : undefined;
    this.requests.push({ method, rpc, url: url.href });
    if (url.href !== this.url.href) {
      // OAuth discovery and token requests.
      return this.held.has('discovery') ? heldUntilAborted(init?.signal) : json(404, { error: 'not_found' });
    }
    if (this.authorization && headerOf(init, 'authorization') === undefined) {
      return json(
        401,
        { error: 'unauthorized' },
        {
          'www-authenticate': `Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource', this.url).href}"`,
        },
      );
    }
    if (this.failing !== undefined) {
      return typeof this.failing === 'number' ? json(this.failing, { error: 'unavailable' }) : Promise.reject(this.failing);
    }
    if (method === 'POST' && envelopeOf(body) !== undefined) return this.modern(body as JSONRPCRequest, init);
    const session = headerOf(init, 'mcp-session-id');
    if (method === 'POST' && rpc === 'initialize') return this.initialize(body as JSONRPCRequest, init);
    if (session === undefined || !this.sessions.has(session)) {
      return json(session === undefined ? 400 : 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
    }
    if (method === 'DELETE') {
      this.sessions.delete(session);
      this.streams.get(session)?.close();
      this.streams.delete(session);
      return new Response(null, { status: 200 });
    }
    if (method === 'GET') return this.held.has('get') ? heldUntilAborted(init?.signal) : this.openStream(session, init?.signal);
    if (typeof body === 'object' && body !== null && 'id' in body && 'method' in body) {
      const id = (body as JSONRPCRequest).id;
      if (rpc === 'ping') return json(200, { jsonrpc: '2.0', id, result: {} });
      if (rpc === 'tools/list') return json(200, { jsonrpc: '2.0', id, result: { tools: [] } });
      return json(200, { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${rpc ?? '?'}` } });
    }
    return new Response(null, { status: 202 });
  }

  private initialize(request: JSONRPCRequest, init: RequestInit | undefined): Promise<Response> | Response {
    if (this.networkError !== undefined) return Promise.reject(this.networkError);
    if (this.initializeStatus !== undefined) return json(this.initializeStatus, { error: 'refused' });
    if (this.held.has('initialize')) return heldUntilAborted(init?.signal);
    const session = `in-memory-${this.nextSession++}`;
    this.sessions.add(session);
    const result = { protocolVersion: streamableVersion, capabilities: { tools: {} }, serverInfo: { name: 'in-memory', version: '1.0.0' } };
    return json(200, { jsonrpc: '2.0', id: request.id, result }, { 'mcp-session-id': session });
  }

  /** W7: a 2026-07-28 request: sessionless, every answer on its own POST. */
  private modern(request: JSONRPCRequest, init: RequestInit | undefined): Promise<Response> | Response {
    const id = request.id;
    if (request.method === DISCOVER) {
      if (this.held.has('discover')) return heldUntilAborted(init?.signal);
      const result = {
        supportedVersions: [FIRST_MODERN_VERSION],
        capabilities: { tools: { listChanged: true } },
        ...modernResult,
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'in-memory', version: '1.0.0' } },
      };
      return json(200, { jsonrpc: '2.0', id, result });
    }
    if (request.method === LISTEN) return this.openListen(request, init?.signal);
    if (request.method === 'ping') return json(200, { jsonrpc: '2.0', id, result: { ...modernResult } });
    if (request.method === 'tools/list') return json(200, { jsonrpc: '2.0', id, result: { tools: [], ...modernResult } });
    return json(200, { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${request.method}` } });
  }

  /** W7: a `subscriptions/listen` stream: acknowledged at once, then open until the client or the server ends it. */
  private openListen(request: JSONRPCRequest, signal: AbortSignal | null | undefined): Response {
    const key = String(request.id);
    const notifications: unknown = request.params?.notifications;
    const acknowledged = {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: notifications ?? {}, _meta: { [SUBSCRIPTION_ID_META_KEY]: key } },
    };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.listens.set(key, controller);
        controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(acknowledged)}\n\n`));
        signal?.addEventListener(
          'abort',
          () => {
            if (this.listens.get(key) === controller) this.listens.delete(key);
            controller.error(signal.reason);
          },
          { once: true },
        );
      },
      cancel: () => {
        if (this.listens.get(key) !== undefined) this.listens.delete(key);
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }

  private openStream(session: string, signal: AbortSignal | null | undefined): Response {
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.streams.set(session, controller);
        signal?.addEventListener(
          'abort',
          () => {
            if (this.streams.get(session) === controller) this.streams.delete(session);
            controller.error(signal.reason);
          },
          { once: true },
        );
      },
      cancel: () => {
        if (this.streams.get(session) === undefined) return;
        this.streams.delete(session);
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }
}
