/**
 * The SDK Client over this project's transport, through the fault proxy to the SDK's real
 * server: one `rig()` per test, with what the transport delivered and every error the Client
 * saw recorded, and `closeRigs()` for afterEach.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport, type JSONRPCMessage, type StreamableHTTPClientTransportOptions } from '../../src/index.js';
import { startFaultProxy, type FaultProxy, type FaultProxyOptions, type ProxiedRequest } from './fault-proxy.js';
import { newClient } from './harness.js';
import { cleanups, runCleanups } from './cleanups.js';

export interface Rig {
  proxy: FaultProxy;
  transport: StreamableHTTPClientTransport;
  client: Client;
  /** Every message the transport delivered to the Client, in order. */
  delivered: JSONRPCMessage[];
  /** Every error the Client was told about (the transport's onerror included). */
  errors: Error[];
}

/** Small, deterministic backoff for tests: 100 ms (the floor, R4), doubling, no jitter. */
export const fastReconnect = {
  initialReconnectionDelay: 100,
  reconnectionDelayGrowFactor: 2,
  maxReconnectionDelay: 1_000,
  maxRetries: 5,
  jitter: false,
} as const;

export async function startProxy(options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const proxy = await startFaultProxy({ sse: true, ...options });
  cleanups.push(() => proxy.close());
  return proxy;
}

/** A transport through `proxy` (fast reconnects unless given), registered for cleanup. */
export function transportThrough(proxy: FaultProxy, options: StreamableHTTPClientTransportOptions = {}): StreamableHTTPClientTransport {
  const transport = new StreamableHTTPClientTransport(proxy.url, { reconnectionOptions: fastReconnect, ...options });
  cleanups.push(() => transport.close());
  return transport;
}

/** A connected Client over a new transport, with deliveries and errors recorded. */
export async function connectThrough(
  proxy: FaultProxy,
  options: StreamableHTTPClientTransportOptions = {},
  capabilities: ClientCapabilities = {},
  client: Client = newClient(capabilities),
): Promise<Rig> {
  const transport = transportThrough(proxy, options);
  const delivered: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  cleanups.push(() => client.close());
  await client.connect(transport);
  const handler = transport.onmessage;
  transport.onmessage = (message) => {
    delivered.push(message);
    handler?.(message);
  };
  client.onerror = (error) => errors.push(error);
  return { proxy, transport, client, delivered, errors };
}

export async function rig(
  options: { server?: FaultProxyOptions; transport?: StreamableHTTPClientTransportOptions; capabilities?: ClientCapabilities } = {},
): Promise<Rig> {
  const proxy = await startProxy(options.server);
  return connectThrough(proxy, options.transport, options.capabilities);
}

/** Clients, transports, then proxies and servers, newest first (for afterEach). */
export const closeRigs = runCleanups;

export const isResume = (request: ProxiedRequest): boolean => request.method === 'GET' && request.lastEventId !== undefined;
export const isStandaloneOpen = (request: ProxiedRequest): boolean => request.method === 'GET' && request.lastEventId === undefined;
export const isCancellation = (request: ProxiedRequest): boolean => request.rpc === 'notifications/cancelled';

/** Progress notifications for `token` among delivered messages, as their `progress` values. */
export function progressOf(delivered: readonly JSONRPCMessage[], token: string | number): unknown[] {
  const values: unknown[] = [];
  for (const message of delivered) {
    if (!('method' in message) || message.method !== 'notifications/progress') continue;
    const params = message.params;
    if (params?.progressToken === token) values.push(params.progress);
  }
  return values;
}

/** Responses among delivered messages for request `id`. */
export function responsesTo(delivered: readonly JSONRPCMessage[], id: string | number): JSONRPCMessage[] {
  return delivered.filter((message) => !('method' in message) && 'id' in message && message.id === id);
}

// The bounded waits every integration test uses, for the files that import from the rig alone;
// through the rig, a rejection is always an Error.
export { rejectionError as rejection, sleep, within } from './harness.js';
