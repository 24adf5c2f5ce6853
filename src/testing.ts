/**
 * W4: `mcp-xstate-transport/testing`. Puts a real transport (the real chart, the real HTTP and SSE
 * code) into any state of its chart without a network, for an app's own tests: its `fetch` is a
 * scripted in-memory MCP server, and its network signal is driven by hand.
 *
 *   const { transport } = await transportIn('reconnecting');
 *   render(<Badge transport={transport} />); // shows "reconnecting"
 */
import type { SnapshotFrom } from 'xstate';
import type { ConnectionMachine } from '../machines/connection/index.js';
import type { JSONRPCMessage, JSONRPCRequest } from '../machines/types.js';
import { StreamableHTTPClientTransport } from './transport.js';
import type { StreamableHTTPClientTransportOptions } from './options.js';
import type { FetchLike } from './http/client.js';
import { manualNetwork, type NetworkSignal } from './network.js';

export { manualNetwork } from './network.js';

const protocolVersion = '2025-11-25';

/** A request the in-memory server keeps unanswered until its signal aborts. */
export type Held = 'initialize' | 'get' | 'discovery';

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

/**
 * A small MCP server in memory, speaking Streamable HTTP through a `fetch` function: initialize
 * (with a session ID), notifications (202), `ping` and `tools/list`, the standalone GET stream, DELETE.
 * Knobs make it hold or refuse requests, forget its sessions, or ask for authorization.
 */
export class InMemoryMcpServer {
  readonly requests: SeenRequest[] = [];
  private readonly sessions = new Set<string>();
  private readonly streams = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
  private readonly held = new Set<Held>();
  private initializeStatus: number | undefined;
  private networkError: Error | undefined;
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

  /** Ends every open standalone stream (as a proxy's timeout would): the transport waits, then reconnects (G4). */
  endStreams(): this {
    for (const stream of this.streams.values()) stream.close();
    this.streams.clear();
    return this;
  }

  /** Requests without an Authorization header are answered 401; the OAuth discovery that follows is held. */
  requireAuthorization(): this {
    this.authorization = true;
    return this.hold('discovery');
  }

  /** Sends a message on every open standalone stream, with an event id. */
  notify(message: JSONRPCMessage): void {
    const bytes = new TextEncoder().encode(`id: e${this.nextEvent++}\ndata: ${JSON.stringify(message)}\n\n`);
    for (const stream of this.streams.values()) stream.enqueue(bytes);
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
    const result = { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'in-memory', version: '1.0.0' } };
    return json(200, { jsonrpc: '2.0', id: request.id, result }, { 'mcp-session-id': session });
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

/** The states `transportIn` can put a transport in: one per tag of the chart, and idle. */
export type TestState = 'idle' | 'connecting' | 'connected' | 'offline' | 'reconnecting' | 'authorizing' | 'failed' | 'closed';

export interface TransportInOptions {
  /** Further options for the transport (`fetch` and `network` are the test's own). */
  transport?: Omit<StreamableHTTPClientTransportOptions, 'fetch' | 'network'>;
  /**
   * `failed`: how it fails. An HTTP status refuses initialize with it (StreamableHTTPError with
   * that status); an Error fails initialize as the network would (its cause); 'session-expired'
   * forgets the session under `sessionRecovery: 'fail'` (SessionExpiredError). Default 500.
   */
  failure?: number | Error | 'session-expired';
  /**
   * Does the handshake: by default the helper sends initialize and notifications/initialized
   * itself; pass `(transport) => client.connect(transport)` to let an SDK Client do it.
   */
  connect?: (transport: StreamableHTTPClientTransport) => Promise<void>;
  /** Longest wait for the state, in ms. Default 2,000. */
  timeout?: number;
}

export interface TestTransport {
  transport: StreamableHTTPClientTransport;
  server: InMemoryMcpServer;
  /** The transport's network signal: `network.setOnline(false)` goes offline (W2). */
  network: NetworkSignal & { setOnline(online: boolean): void };
}

const initializeRequest: JSONRPCRequest = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'mcp-xstate-transport-testing', version: '1.0.0' } },
};

/** An OAuth client with no tokens: each request meets a 401 and authorization begins (A1). */
const tokenlessProvider = {
  redirectUrl: 'http://127.0.0.1/callback',
  clientMetadata: { client_name: 'testing', redirect_uris: ['http://127.0.0.1/callback'] },
  clientInformation: () => undefined,
  saveClientInformation: () => undefined,
  tokens: () => undefined,
  saveTokens: () => undefined,
  redirectToAuthorization: () => undefined,
  saveCodeVerifier: () => undefined,
  codeVerifier: () => '',
};

/**
 * Waits (bounded) until `check` holds. Polled, not subscribed: the streams are child actors, whose
 * changes do not show as changes of the root snapshot.
 */
async function settled(
  transport: StreamableHTTPClientTransport,
  check: (snapshot: SnapshotFrom<ConnectionMachine>) => boolean,
  timeout: number,
  state: TestState,
): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!check(transport.actor.getSnapshot())) {
    if (Date.now() > deadline) {
      throw new Error(
        `transportIn('${state}'): not there within ${timeout} ms; the chart is in ${JSON.stringify(transport.actor.getSnapshot().value)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The default handshake: initialize, then notifications/initialized once its result arrived. */
async function handshake(transport: StreamableHTTPClientTransport): Promise<void> {
  const answered = new Promise<void>((resolve) => {
    const previous = transport.onmessage;
    transport.onmessage = (message) => {
      previous?.(message);
      if ('id' in message && message.id === initializeRequest.id && !('method' in message)) resolve();
    };
  });
  await transport.start();
  await transport.send(initializeRequest);
  await answered;
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

/**
 * W4: a real transport in the given state, over an in-memory server (no network). The states
 * are the chart's, as its tags name them; `failed` takes the failure to fail with. Close the
 * transport at the end of the test.
 */
export async function transportIn(state: TestState, options: TransportInOptions = {}): Promise<TestTransport> {
  const server = new InMemoryMcpServer();
  const network = manualNetwork(true);
  const failure = options.failure ?? 500;
  const transport = new StreamableHTTPClientTransport(server.url, {
    ...(state === 'authorizing' ? { authProvider: tokenlessProvider } : {}),
    ...(state === 'failed' ? { legacyFallback: false } : {}),
    ...(state === 'failed' && failure === 'session-expired' ? { sessionRecovery: 'fail' as const } : {}),
    ...options.transport,
    fetch: server.fetch,
    network,
  });
  const until = (check: (snapshot: SnapshotFrom<ConnectionMachine>) => boolean) =>
    settled(transport, check, options.timeout ?? 2_000, state);
  const connect = options.connect ?? handshake;
  const connected = async () => {
    await connect(transport);
    // Settled: the session is open and the standalone stream listens (or is off).
    await until(
      (snapshot) =>
        snapshot.hasTag('connected') &&
        (snapshot.children.standalone === undefined || snapshot.children.standalone.getSnapshot().matches('listening')),
    );
  };
  /** A request whose outcome the test does not wait for (it is refused or queued by design). */
  const ping = () => {
    transport.send({ jsonrpc: '2.0', id: 'testing-ping', method: 'ping' }).catch(() => undefined);
  };

  switch (state) {
    case 'idle':
      break;
    case 'connecting':
      server.hold('initialize');
      void connect(transport).catch(() => undefined);
      await until((snapshot) => snapshot.hasTag('connecting'));
      break;
    case 'connected':
      await connected();
      break;
    case 'offline':
      await connected();
      network.setOnline(false);
      await until((snapshot) => snapshot.hasTag('offline'));
      break;
    case 'reconnecting':
      await connected();
      server.forgetSessions().hold('initialize');
      ping();
      await until((snapshot) => snapshot.hasTag('reconnecting'));
      break;
    case 'authorizing':
      server.requireAuthorization();
      void connect(transport).catch(() => undefined);
      await until((snapshot) => snapshot.hasTag('authorizing'));
      break;
    case 'failed':
      if (failure === 'session-expired') {
        await connected();
        server.forgetSessions();
        ping();
      } else {
        server.refuseInitialize(failure);
        await connect(transport).catch(() => undefined);
      }
      await until((snapshot) => snapshot.hasTag('failed'));
      break;
    case 'closed':
      await connected();
      await transport.close();
      break;
  }
  return { transport, server, network };
}
