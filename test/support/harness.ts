/**
 * Helpers for integration tests that run the SDK's `Client` over this project's transport
 * against the fixture server: a recording fetch, bounded waiting, and small accessors.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPClientTransport, type FetchLike, type StreamableHTTPClientTransportOptions } from '../../src/index.js';
import type { LoggedRequest, TestServer } from './mcp-server.js';

/** The fetch the process had before any test replaced or spied on it. */
export const realFetch: typeof globalThis.fetch = globalThis.fetch.bind(globalThis);

export interface FetchCall {
  method: string;
  url: string;
  headers: Headers;
  init: RequestInit;
  /** The JSON-RPC method of the body, if any. */
  rpc: string | undefined;
}

/** One step of the fetch timeline: a request leaving, or its response headers arriving. */
export type FetchEvent =
  | { phase: 'request'; call: FetchCall }
  | { phase: 'response'; call: FetchCall; status: number }
  | { phase: 'error'; call: FetchCall; error: unknown };

export interface RecordingFetch {
  fetch: FetchLike;
  calls: FetchCall[];
  timeline: FetchEvent[];
  /** Resolves with the first (past or future) timeline event that matches. */
  when(match: (event: FetchEvent) => boolean): Promise<FetchEvent>;
}

function rpcOfBody(body: RequestInit['body']): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value === 'object' && value !== null && 'method' in value && typeof value.method === 'string') {
      return value.method;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * A fetch that records every call (and when its response headers arrived) and forwards to
 * `target` (the real fetch by default). `route` may send chosen calls elsewhere.
 */
export function recordingFetch(options: { route?: (call: FetchCall) => string | URL | undefined } = {}): RecordingFetch {
  const calls: FetchCall[] = [];
  const timeline: FetchEvent[] = [];
  const waiters: { match: (event: FetchEvent) => boolean; resolve: (event: FetchEvent) => void }[] = [];
  const record = (event: FetchEvent) => {
    timeline.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.match(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  };
  const fetch: FetchLike = async (url, init = {}) => {
    const call: FetchCall = {
      method: init.method ?? 'GET',
      url: String(url),
      headers: new Headers(init.headers),
      init,
      rpc: rpcOfBody(init.body),
    };
    calls.push(call);
    record({ phase: 'request', call });
    try {
      const response = await realFetch(options.route?.(call) ?? url, init);
      record({ phase: 'response', call, status: response.status });
      return response;
    } catch (error) {
      record({ phase: 'error', call, error });
      throw error;
    }
  };
  return {
    fetch,
    calls,
    timeline,
    when: (match) => {
      const seen = timeline.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}

/** Waits (bounded) until `condition` holds; throws with `what` if it never does. */
export async function until(condition: () => boolean, what: string, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never happened: ${what}`);
}

/** A client with the given capabilities (none by default). */
export function newClient(capabilities: ClientCapabilities = {}): Client {
  return new Client({ name: 'integration-test', version: '1.0.0' }, { capabilities });
}

/** A transport for `server`, and an SDK Client connected over it. */
export async function connect(
  server: TestServer,
  options: StreamableHTTPClientTransportOptions = {},
  capabilities: ClientCapabilities = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(server.url, options);
  const client = newClient(capabilities);
  await client.connect(transport);
  return { client, transport };
}

/** Names of the chart's running child actors (POST streams, the standalone stream, a DELETE). */
export function childrenOf(transport: StreamableHTTPClientTransport): string[] {
  return Object.keys(transport.actor.getSnapshot().children);
}

/** A header of a logged request as one string (Node joins repeated headers). */
export function header(request: LoggedRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The text of the first content item of a tool result. */
export function textOf(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null || !('content' in result) || !Array.isArray(result.content)) {
    return undefined;
  }
  const first: unknown = result.content[0];
  if (typeof first === 'object' && first !== null && 'text' in first && typeof first.text === 'string') return first.text;
  return undefined;
}

/** The `id` of a logged JSON-RPC body, if any. */
export function idOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null && 'id' in body ? body.id : undefined;
}

/** A port on 127.0.0.1 where nothing listens (a listener was opened there and closed). */
export async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  await new Promise<void>((resolve, reject) => listener.close((error) => (error ? reject(error) : resolve())));
  return port;
}

/** Counts of `process.getActiveResourcesInfo()` by kind. */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** Kinds of which more are active now than in `baseline`, with the surplus. */
export function surplusOver(baseline: Map<string, number>): Record<string, number> {
  const surplus: Record<string, number> = {};
  for (const [kind, count] of activeResources()) {
    const extra = count - (baseline.get(kind) ?? 0);
    if (extra > 0) surplus[kind] = extra;
  }
  return surplus;
}
