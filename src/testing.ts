/**
 * W4, W7: `mcp-xstate-transport/testing`. Puts a real transport (the real chart, the real HTTP and
 * SSE code) into any state of its chart without a network, in either protocol era, for an app's
 * own tests: its `fetch` is a scripted in-memory MCP server, and its network signal is driven by
 * hand. W8: the chart's own paths, to walk a UI through every state (`chartPaths`, `walkPath`).
 *
 *   const { transport } = await transportIn('reconnecting');
 *   render(<Badge transport={transport} />); // shows "reconnecting"
 */
import { waitFor, type SnapshotFrom, type StateValue } from 'xstate';
import { connectionMachine, type ConnectionMachine } from '../machines/connection/index.js';
import { DISCOVER, FIRST_MODERN_VERSION, LISTEN, PROTOCOL_VERSION_META_KEY } from '../machines/connection/messages.js';
import type { JSONRPCMessage, JSONRPCRequest } from '../machines/types.js';
import { StreamableHTTPClientTransport } from './transport.js';
import { connectionStatus, type ConnectionStatus } from './ui.js';
import type { StreamableHTTPClientTransportOptions } from './options.js';
import type { FetchLike } from './http/client.js';
import { manualNetwork, type NetworkSignal } from './network.js';

export { manualNetwork } from './network.js';

const protocolVersion = '2025-11-25';

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
    const result = { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'in-memory', version: '1.0.0' } };
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

/** The states `transportIn` can put a transport in: one per tag of the chart, and idle. */
export type TestState =
  'idle' | 'connecting' | 'connected' | 'degraded' | 'offline' | 'reconnecting' | 'waiting' | 'authorizing' | 'failed' | 'closed';

/**
 * E1, W7: the protocol era of a test transport: `streamable` (2025-11-25, sessions; the default) or
 * `modern` (2026-07-28, sessionless: the handshake is the `server/discover` probe).
 */
export type TestEra = 'streamable' | 'modern';

/** W7: the states of the 2026-07-28 era; `reconnecting` (session recovery) and `failed` belong to the 2025 one. */
export const modernTestStates = ['idle', 'connecting', 'connected', 'degraded', 'offline', 'waiting', 'authorizing', 'closed'] as const;

export interface TransportInOptions {
  /** Further options for the transport (`fetch` and `network` are the test's own). */
  transport?: Omit<StreamableHTTPClientTransportOptions, 'fetch' | 'network'>;
  /** W7: the protocol era (default `streamable`, 2025-11-25). */
  era?: TestEra;
  /**
   * `failed`: how it fails. An HTTP status refuses initialize with it (StreamableHTTPError with
   * that status); an Error fails initialize as the network would (its cause); 'session-expired'
   * forgets the session under `sessionRecovery: 'fail'` (SessionExpiredError). Default 500.
   * `degraded`: the outage's HTTP status, or an Error for a network failure. Default 503.
   * `waiting` (F4): 2025-11-25: the session is forgotten and re-initialize refused with this HTTP
   * status (or fails with this Error), with `maxRetries: 0` unless `transport` says otherwise;
   * 2026-07-28: the server fails as the network would (this Error). `server.restore()` ends it.
   */
  failure?: number | Error | 'session-expired';
  /**
   * Does the handshake: by default the helper sends initialize and notifications/initialized
   * itself (2026-07-28: the `server/discover` probe, then `setProtocolVersion`); pass
   * `(transport) => client.connect(transport)` to let an SDK Client do it.
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
  /** The era it speaks. */
  era: TestEra;
}

const clientInfo = { name: 'mcp-xstate-transport-testing', version: '1.0.0' };

const initializeRequest: JSONRPCRequest = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo },
};

/** W7: the `_meta` envelope every 2026-07-28 request carries (E3). */
function envelope(): Record<string, unknown> {
  return {
    [PROTOCOL_VERSION_META_KEY]: FIRST_MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': clientInfo,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}

/** A request as the given era writes it: 2026-07-28 requests carry the envelope. */
export function testRequest(era: TestEra, id: string | number, method: string, params: Record<string, unknown> = {}): JSONRPCRequest {
  return { jsonrpc: '2.0', id, method, params: era === 'modern' ? { ...params, _meta: envelope() } : params };
}

/** W7: a `subscriptions/listen` request for tools/list_changed (2026-07-28): its stream stays open. */
export function listenRequest(id: string | number = 'testing-listen'): JSONRPCRequest {
  return testRequest('modern', id, LISTEN, { notifications: { toolsListChanged: true } });
}

/** An OAuth client with no tokens: each request meets a 401 and authorization begins (A1). */
export const tokenlessProvider = {
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
 * Waits (bounded) until `check` holds, with xstate's `waitFor` on the transport's actor. The
 * streams are child actors, but each of the standalone stream's opens and waits reaches the
 * chart (W6), so the root snapshot changes when they do.
 */
async function settled(
  transport: StreamableHTTPClientTransport,
  check: (snapshot: SnapshotFrom<ConnectionMachine>) => boolean,
  timeout: number,
  state: string,
): Promise<void> {
  try {
    await waitFor(transport.actor, check, { timeout });
  } catch (error) {
    throw new Error(
      `transportIn('${state}'): not there within ${timeout} ms; the chart is in ${JSON.stringify(transport.actor.getSnapshot().value)}`,
      { cause: error },
    );
  }
}

/** Sends `request` and resolves with its answer (whatever it is). */
async function ask(transport: StreamableHTTPClientTransport, request: JSONRPCRequest): Promise<JSONRPCMessage> {
  const answered = new Promise<JSONRPCMessage>((resolve) => {
    const previous = transport.onmessage;
    transport.onmessage = (message) => {
      previous?.(message);
      if ('id' in message && message.id === request.id && !('method' in message)) {
        transport.onmessage = previous;
        resolve(message);
      }
    };
  });
  await transport.send(request);
  return answered;
}

/** The default handshake: initialize, then notifications/initialized once its result arrived. */
async function handshake(transport: StreamableHTTPClientTransport): Promise<void> {
  await transport.start();
  await ask(transport, initializeRequest);
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

/** W7, E1: the 2026-07-28 handshake, as the v2 Client does it: the `server/discover` probe, then the version. */
async function modernHandshake(transport: StreamableHTTPClientTransport): Promise<void> {
  await transport.start();
  await ask(transport, testRequest('modern', 'testing-discover', DISCOVER));
  transport.setProtocolVersion(FIRST_MODERN_VERSION);
}

/** W7: the handshake `transportIn` does by default in the given era. */
export function defaultHandshake(era: TestEra): (transport: StreamableHTTPClientTransport) => Promise<void> {
  return era === 'modern' ? modernHandshake : handshake;
}

/**
 * W4, W7: a real transport in the given state, over an in-memory server (no network), in either
 * era. The states are the chart's, as its tags name them; `failed` and `degraded` take the failure
 * to fail with. Close the transport at the end of the test.
 */
export async function transportIn(state: TestState, options: TransportInOptions = {}): Promise<TestTransport> {
  const era = options.era ?? 'streamable';
  if (era === 'modern' && !(modernTestStates as readonly TestState[]).includes(state)) {
    throw new TypeError(
      `transportIn('${state}', { era: 'modern' }): the 2026-07-28 era has no such state (no sessions to recover or expire); ` +
        `its states: ${modernTestStates.join(', ')}`,
    );
  }
  const server = new InMemoryMcpServer();
  const network = manualNetwork(true);
  const failure = options.failure ?? (state === 'degraded' ? 503 : 500);
  const transport = new StreamableHTTPClientTransport(server.url, {
    ...(state === 'authorizing' ? { authProvider: tokenlessProvider } : {}),
    ...(state === 'failed' ? { legacyFallback: false } : {}),
    ...(state === 'failed' && failure === 'session-expired' ? { sessionRecovery: 'fail' as const } : {}),
    // F4: no quick retries of the re-initialize: the first refusal makes the chart wait.
    ...(state === 'waiting' ? { reconnectionOptions: { maxRetries: 0 } } : {}),
    ...options.transport,
    fetch: server.fetch,
    network,
  });
  const until = (check: (snapshot: SnapshotFrom<ConnectionMachine>) => boolean) =>
    settled(transport, check, options.timeout ?? 2_000, state);
  const connect = options.connect ?? defaultHandshake(era);
  const connected = async () => {
    await connect(transport);
    // Settled: the connection is open and the standalone stream listens (or is off; none in 2026-07-28).
    await until(
      (snapshot) =>
        snapshot.hasTag('connected') &&
        (era === 'modern' || snapshot.children.standalone === undefined || snapshot.children.standalone.getSnapshot().matches('listening')),
    );
  };
  /** A request whose outcome the test does not wait for (it is refused or queued by design). */
  const ping = () => {
    transport.send(testRequest(era, 'testing-ping', 'ping')).catch(() => undefined);
  };

  switch (state) {
    case 'idle':
      break;
    case 'connecting':
      server.hold(era === 'modern' ? 'discover' : 'initialize');
      void connect(transport).catch(() => undefined);
      await until((snapshot) => snapshot.hasTag('connecting'));
      break;
    case 'connected':
      await connected();
      break;
    case 'degraded':
      await connected();
      server.outage(failure === 'session-expired' ? 503 : failure);
      ping();
      await until((snapshot) => snapshot.hasTag('degraded'));
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
    case 'waiting': {
      await connected();
      const down = failure instanceof Error ? failure : new TypeError('fetch failed: ECONNREFUSED (in-memory server down)');
      if (era === 'modern') server.outage(down);
      else
        server
          .forgetSessions()
          .refuseInitialize(options.failure === undefined || options.failure === 'session-expired' ? 503 : options.failure);
      ping();
      await until((snapshot) => snapshot.hasTag('waiting'));
      break;
    }
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
  return { transport, server, network, era };
}

/*
 * W8: the connection chart's paths, for an app's own tests. A path is what happens to a
 * connection, step by step (the server fails, the network goes, the client closes), with the
 * states of the real chart each step leads to. The paths are generated by exploring the real
 * chart: every step is taken on a real transport over the in-memory server, from every state
 * reached so far, breadth first, and the state the chart settles in is what the path records.
 * A changed chart gives changed paths; nothing here restates the chart.
 *
 *   for (const path of await chartPaths({ era: 'modern' })) {
 *     await walkPath(path, { onSnapshot: (snapshot) => check(render(snapshot)) });
 *   }
 */
/** What can happen to a connection in a path: the server's doing, the network's, or the client's. */
export type StepName =
  | 'connect'
  | 'refuse'
  | 'authorize'
  | 'outage'
  | 'restore'
  | 'offline'
  | 'online'
  | 'restart'
  | 'endStream'
  | 'listen'
  | 'toolsChanged'
  | 'close';

/** One step of a path: what happened, and where the chart settled. */
export interface ChartStep {
  name: StepName;
  /** What happened, in words. */
  says: string;
  /** The chart's active states once it settled, as ids without the `connection.` root (`open.health.degraded`). */
  states: readonly string[];
  /** What `connectionStatus` says there. */
  status: ConnectionStatus;
}

export interface ChartPath {
  era: TestEra;
  steps: readonly ChartStep[];
  /** Every state the chart was in along the path, on the way too (a recovery's `reconnecting`), first visits in order. */
  visited: readonly string[];
}

/** The world beside the chart: what the server and the client did that the chart's state does not show. */
interface World {
  outage: boolean;
  /** 2026-07-28: a `subscriptions/listen` stream is open. */
  listening: boolean;
}

/** A transport being walked: the test transport, the world, and what it heard. */
interface Walk extends TestTransport {
  world: World;
  heard: JSONRPCMessage[];
  calls: number;
  until(check: (snapshot: SnapshotFrom<ConnectionMachine>) => boolean, what: string): Promise<void>;
}

interface StepDefinition {
  says: string;
  eras: readonly TestEra[];
  /** Whether the step can be taken in this status and world. */
  can(status: ConnectionStatus, world: World, era: TestEra): boolean;
  /** Takes it, and resolves once the chart settled where it leads. */
  take(walk: Walk): Promise<void>;
}

const both = ['streamable', 'modern'] as const;

/** Open and quiet: steady, online, and (2025-11-25) the standalone stream listening. */
function settledOpen(walk: Walk, snapshot: SnapshotFrom<ConnectionMachine>): boolean {
  if (connectionStatus(snapshot) !== 'connected') return false;
  if (walk.era === 'modern') return true;
  const standalone = snapshot.children.standalone;
  return standalone === undefined || standalone.getSnapshot().matches('listening');
}

/** A call the walk makes (ping): refused (the outage), or sent and then answered. */
async function call(walk: Walk): Promise<void> {
  const id = `walk-${++walk.calls}`;
  try {
    await walk.transport.send(testRequest(walk.era, id, 'ping'));
  } catch {
    return;
  }
  await walk.until(() => walk.heard.some((message) => 'id' in message && message.id === id), `the call ${id} answered`);
}

const steps: Record<StepName, StepDefinition> = {
  connect: {
    says: 'the client connects (the handshake of its era)',
    eras: both,
    can: (status, world) => (status === 'idle' || status === 'closed') && !world.outage,
    take: async (walk) => {
      await defaultHandshake(walk.era)(walk.transport);
      await walk.until((snapshot) => settledOpen(walk, snapshot), 'connected');
    },
  },
  refuse: {
    says: 'the client connects; the server refuses initialize with HTTP 500',
    eras: ['streamable'],
    can: (status) => status === 'idle',
    take: async (walk) => {
      walk.server.refuseInitialize(500);
      await defaultHandshake(walk.era)(walk.transport).catch(() => undefined);
      await walk.until((snapshot) => snapshot.hasTag('failed'), 'failed');
    },
  },
  authorize: {
    says: 'the client connects; the server asks for authorization (401), and its discovery is slow',
    eras: both,
    can: (status) => status === 'idle',
    take: async (walk) => {
      walk.server.requireAuthorization();
      void defaultHandshake(walk.era)(walk.transport).catch(() => undefined);
      await walk.until((snapshot) => snapshot.hasTag('authorizing'), 'authorizing');
    },
  },
  outage: {
    says: 'the server answers every request HTTP 503 (its streams break); a call fails',
    eras: both,
    can: (status, world) => status === 'connected' && !world.outage,
    take: async (walk) => {
      walk.server.outage(503);
      walk.world.outage = true;
      walk.world.listening = false;
      await call(walk);
      await walk.until((snapshot) => snapshot.hasTag('degraded'), 'degraded');
    },
  },
  restore: {
    says: 'the server is back; the next call is answered',
    eras: both,
    can: (status, world) => status === 'degraded' && world.outage,
    take: async (walk) => {
      walk.server.restore();
      walk.world.outage = false;
      await call(walk);
      await walk.until((snapshot) => settledOpen(walk, snapshot), 'connected');
    },
  },
  offline: {
    says: "the host's network goes offline",
    eras: both,
    can: (status) => status === 'connected' || status === 'degraded',
    take: async (walk) => {
      walk.network.setOnline(false);
      await walk.until((snapshot) => snapshot.hasTag('offline'), 'offline');
    },
  },
  online: {
    says: "the host's network comes back",
    eras: both,
    can: (status) => status === 'offline',
    take: async (walk) => {
      walk.network.setOnline(true);
      await walk.until(
        (snapshot) => (walk.world.outage ? connectionStatus(snapshot) === 'degraded' : settledOpen(walk, snapshot)),
        walk.world.outage ? 'degraded' : 'connected',
      );
    },
  },
  restart: {
    says: 'the server restarts (its sessions are gone); the next call recovers a new session',
    eras: ['streamable'],
    can: (status, world) => status === 'connected' && !world.outage,
    take: async (walk) => {
      const before = walk.transport.sessionId;
      walk.server.forgetSessions();
      await call(walk);
      await walk.until((snapshot) => settledOpen(walk, snapshot) && snapshot.context.sessionId !== before, 'a new session');
    },
  },
  endStream: {
    says: 'the server ends the standalone stream cleanly (a proxy timeout); the transport reopens it',
    eras: ['streamable'],
    can: (status, world) => status === 'connected' && !world.outage,
    take: async (walk) => {
      const gets = () => walk.server.requests.filter((request) => request.method === 'GET').length;
      const before = gets();
      walk.server.endStreams();
      await walk.until((snapshot) => gets() > before && settledOpen(walk, snapshot), 'the stream reopened');
    },
  },
  listen: {
    says: 'the client opens a subscriptions/listen stream; the server acknowledges it',
    eras: ['modern'],
    can: (status, world) => status === 'connected' && !world.listening && !world.outage,
    take: async (walk) => {
      const acknowledged = () =>
        walk.heard.some((message) => 'method' in message && message.method === 'notifications/subscriptions/acknowledged');
      walk.heard.length = 0;
      await walk.transport.send(listenRequest(`walk-listen-${++walk.calls}`));
      walk.world.listening = true;
      await walk.until(() => acknowledged(), 'the listen acknowledged');
    },
  },
  toolsChanged: {
    says: 'the server says its tools changed (notifications/tools/list_changed)',
    eras: both,
    can: (status, world, era) => status === 'connected' && !world.outage && (era === 'streamable' || world.listening),
    take: async (walk) => {
      const changes = () =>
        walk.heard.filter((message) => 'method' in message && message.method === 'notifications/tools/list_changed').length;
      const before = changes();
      walk.server.toolsChanged();
      await walk.until(() => changes() > before, 'the notification');
    },
  },
  close: {
    says: 'the client closes the transport',
    eras: both,
    can: (status) => status !== 'idle' && status !== 'closed',
    take: async (walk) => {
      await walk.transport.close();
      walk.world.listening = false;
      await walk.until((snapshot) => snapshot.hasTag('closed'), 'closed');
    },
  },
};

/** W8: the steps a path of this era can take, with what each says. */
export function chartSteps(era: TestEra): { name: StepName; says: string }[] {
  return (Object.keys(steps) as StepName[])
    .filter((name) => steps[name].eras.includes(era))
    .map((name) => ({ name, says: steps[name].says }));
}

/** Every active state of a snapshot's value, ancestors too, as ids without the root (`open`, `open.health`, `open.health.degraded`). */
export function activeStateIds(value: StateValue, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix + value];
  return Object.entries(value).flatMap(([key, child]) => [
    prefix + key,
    ...(child === undefined ? [] : activeStateIds(child, `${prefix}${key}.`)),
  ]);
}

interface StateNodeLike {
  id: string;
  states: Record<string, StateNodeLike>;
}

/** W7, W8: every state of the real connection chart (`under` one of them: its descendants), as ids without the root. */
export function chartStateIds(under?: string): string[] {
  const ids: string[] = [];
  const visit = (node: StateNodeLike) => {
    for (const child of Object.values(node.states)) {
      ids.push(child.id.replace(/^connection\./, ''));
      visit(child);
    }
  };
  visit(connectionMachine.root);
  return under === undefined ? ids : ids.filter((id) => id.startsWith(`${under}.`));
}

/** W8: a path in one line: `connect → outage → restore`. */
export function describePath(path: ChartPath): string {
  return path.steps.length === 0 ? '(no step)' : path.steps.map((step) => step.name).join(' → ');
}

/** The chart went somewhere else than the path says: the chart changed since the paths were made, or a step is not settled. */
export class PathDivergedError extends Error {
  override name = 'PathDivergedError';
}

export interface WalkOptions {
  /** Every snapshot of the transport's actor along the walk, as the chart moves (render the UI here). */
  onSnapshot?: (snapshot: SnapshotFrom<ConnectionMachine>, transport: StreamableHTTPClientTransport) => void;
  /** After each step, once the chart settled (assert what the UI shows here). */
  onStep?: (step: ChartStep, snapshot: SnapshotFrom<ConnectionMachine>, test: TestTransport) => void | Promise<void>;
  /** Longest wait for a step to settle, in ms. Default 2,000. */
  timeout?: number;
}

export interface WalkedPath extends TestTransport {
  /** Every state the chart was in along the walk, first visits in order. */
  visited: string[];
}

/** Reconnects come at once: the walk waits for what the chart does, not for timers. */
const walkReconnection = { initialReconnectionDelay: 5, maxReconnectionDelay: 20, reconnectionDelayGrowFactor: 1.5, jitter: false };

function sameStates(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Takes `names` on a fresh transport over a fresh in-memory server; the caller closes it. */
async function walkSteps(
  era: TestEra,
  names: readonly StepName[],
  options: WalkOptions & { expected?: readonly ChartStep[] },
): Promise<{ walk: Walk; taken: ChartStep[]; visited: string[] }> {
  const server = new InMemoryMcpServer();
  const network = manualNetwork(true);
  const transport = new StreamableHTTPClientTransport(server.url, {
    ...(names.includes('authorize') ? { authProvider: tokenlessProvider } : {}),
    legacyFallback: false,
    reconnectionOptions: walkReconnection,
    fetch: server.fetch,
    network,
  });
  const timeout = options.timeout ?? 2_000;
  const visited = new Set<string>();
  const note = (snapshot: SnapshotFrom<ConnectionMachine>) => {
    for (const id of activeStateIds(snapshot.value)) visited.add(id);
    options.onSnapshot?.(snapshot, transport);
  };
  note(transport.actor.getSnapshot());
  const subscription = transport.actor.subscribe(note);
  const walk: Walk = {
    transport,
    server,
    network,
    era,
    world: { outage: false, listening: false },
    heard: [],
    calls: 0,
    async until(check, what) {
      // Polled (bounded): some of what a step waits for is the server's, not the chart's.
      for (let waited = 0; !check(transport.actor.getSnapshot()); waited += 5) {
        if (waited >= timeout) {
          throw new PathDivergedError(
            `walking ${era} ${names.join(' → ')}: not ${what} within ${timeout} ms; the chart is in ${JSON.stringify(transport.actor.getSnapshot().value)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
  transport.onmessage = (message) => {
    walk.heard.push(message);
  };
  const taken: ChartStep[] = [];
  try {
    for (const [index, name] of names.entries()) {
      const definition = steps[name];
      const status = connectionStatus(transport.actor.getSnapshot());
      if (!definition.eras.includes(era) || !definition.can(status, walk.world, era)) {
        throw new PathDivergedError(`walking ${era} ${names.join(' → ')}: '${name}' cannot be taken in ${status}`);
      }
      await definition.take(walk);
      const snapshot = transport.actor.getSnapshot();
      note(snapshot);
      const step: ChartStep = { name, says: definition.says, states: activeStateIds(snapshot.value), status: connectionStatus(snapshot) };
      const expected = options.expected?.[index];
      if (expected !== undefined && (!sameStates(expected.states, step.states) || expected.status !== step.status)) {
        throw new PathDivergedError(
          `walking ${era} ${names.join(' → ')}: after '${name}' the chart is in ${step.states.join(', ')} (${step.status}); ` +
            `the path says ${expected.states.join(', ')} (${expected.status})`,
        );
      }
      taken.push(step);
      await options.onStep?.(step, snapshot, walk);
    }
  } catch (error) {
    subscription.unsubscribe();
    await transport.close().catch(() => undefined);
    throw error;
  }
  subscription.unsubscribe();
  return { walk, taken, visited: [...visited] };
}

export interface ChartPathsOptions {
  /** The protocol era (default `streamable`, 2025-11-25). */
  era?: TestEra;
  /** At most this many paths (default 60). */
  max?: number;
  /** At most this many steps in a path (default 4). */
  depth?: number;
  /** Longest wait for a step to settle while exploring, in ms. Default 2,000. */
  timeout?: number;
}

interface Node {
  names: StepName[];
  status: ConnectionStatus;
  world: World;
}

const made = new Map<string, Promise<ChartPath[]>>();

/**
 * W8: the chart's paths in one era, generated from the real chart: breadth first from `idle`,
 * every step that can be taken is taken on a real transport, and each (state, step) pair the
 * exploration meets ends one path (the shortest way to the state, then the step). Paths that are
 * the start of a longer one are left out. Bounded by `max` paths and `depth` steps. Made once per
 * process for the same options (each path is a real walk; it takes a few seconds).
 */
export function chartPaths(options: ChartPathsOptions = {}): Promise<ChartPath[]> {
  const era = options.era ?? 'streamable';
  const max = options.max ?? 60;
  const depth = options.depth ?? 4;
  const key = JSON.stringify([era, max, depth]);
  let paths = made.get(key);
  if (paths === undefined) {
    paths = explore(era, max, depth, options.timeout);
    made.set(key, paths);
    // A failed exploration is not kept: the next call explores again.
    paths.catch(() => made.delete(key));
  }
  return paths;
}

async function explore(era: TestEra, max: number, depth: number, timeout: number | undefined): Promise<ChartPath[]> {
  const keyOf = (states: readonly string[], world: World) => JSON.stringify([states, world.outage, world.listening]);
  // Where a transport starts (no step taken): the chart's initial state.
  const start = await walkSteps(era, [], {});
  const first = start.walk.transport.actor.getSnapshot();
  await start.walk.transport.close().catch(() => undefined);
  const seen = new Set<string>([keyOf(activeStateIds(first.value), { outage: false, listening: false })]);
  const queue: Node[] = [{ names: [], status: connectionStatus(first), world: { outage: false, listening: false } }];
  const found: ChartPath[] = [];
  // Bounded: every node is a new (state, world) pair within `depth` steps, and at most `max` paths are made.
  for (let node = queue.shift(); node !== undefined && found.length < max; node = queue.shift()) {
    if (node.names.length >= depth) continue;
    for (const { name } of chartSteps(era)) {
      if (found.length >= max) break;
      if (!steps[name].can(node.status, node.world, era)) continue;
      const names = [...node.names, name];
      const { walk, taken, visited } = await walkSteps(era, names, timeout === undefined ? {} : { timeout });
      await walk.transport.close().catch(() => undefined);
      const last = taken[taken.length - 1];
      if (last === undefined) continue;
      found.push({ era, steps: taken, visited });
      const next = keyOf(last.states, walk.world);
      if (!seen.has(next)) {
        seen.add(next);
        queue.push({ names, status: last.status, world: { ...walk.world } });
      }
    }
  }
  // A path that is the start of another adds nothing the longer one does not walk.
  return found.filter(
    (path) =>
      !found.some((other) => other.steps.length > path.steps.length && path.steps.every((step, i) => step.name === other.steps[i]?.name)),
  );
}

/**
 * W8: drives a real transport along a path, over a fresh in-memory server: each step is taken and
 * the chart must settle where the path says (else PathDivergedError). `onSnapshot` sees every
 * snapshot on the way, `onStep` each settled step. Resolves with the transport (close it) and
 * the states it visited.
 */
export async function walkPath(path: ChartPath, options: WalkOptions = {}): Promise<WalkedPath> {
  const { walk, visited } = await walkSteps(
    path.era,
    path.steps.map((step) => step.name),
    { ...options, expected: path.steps },
  );
  return { transport: walk.transport, server: walk.server, network: walk.network, era: walk.era, visited };
}
