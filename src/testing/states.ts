/**
 * W4, W7: `transportIn`: a real transport (the real chart, the real HTTP and SSE code) put into
 * any state of its chart over the in-memory server, in either protocol era, and the requests and
 * handshakes it speaks with.
 *
 *   const { transport } = await transportIn('reconnecting');
 *   render(<Badge transport={transport} />); // shows "reconnecting"
 */
import { waitFor, type SnapshotFrom } from 'xstate';
import type { ConnectionMachine } from '../../machines/connection/index.js';
import { DISCOVER, FIRST_MODERN_VERSION, LISTEN, PROTOCOL_VERSION_META_KEY } from '../../machines/connection/messages.js';
import type { JSONRPCMessage, JSONRPCRequest } from '../../machines/types.js';
import { StreamableHTTPClientTransport } from '../transport.js';
import type { StreamableHTTPClientTransportOptions } from '../options.js';
import { manualNetwork, type NetworkSignal } from '../network.js';
import { InMemoryMcpServer, streamableVersion } from './server.js';

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
  params: { protocolVersion: streamableVersion, capabilities: {}, clientInfo },
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
