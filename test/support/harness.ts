/**
 * Helpers for integration tests that run the SDK's `Client` over this project's transport
 * against the fixture server: a recording fetch, bounded waiting, and small accessors.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { createHook } from 'node:async_hooks';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { vi } from 'vitest';
import { StreamableHTTPClientTransport, type FetchLike } from '../../src/index.js';
import { directCallsIn } from '../../src/actors.js';
import { startServer, type LoggedRequest, type ServerOptions, type TestServer } from './mcp-server.js';

export { only } from './http.js';

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

/** A one-shot signal: `promise` settles once `fire()` was called. */
export function signal(): { promise: Promise<void>; fire: () => void } {
  let fire: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

/** `promise`, or a rejection naming `what` after `timeoutMs` (a bound, not a measurement). */
export async function within<T>(promise: Promise<T>, what: string, timeoutMs = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A pause (for tests that must let time pass, never as a measurement). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits (bounded) until `condition` holds; throws with `what` if it never does. The bound is a
 * guard against a hang, not a timing: it only ends a wait that failed, so it is generous (a loaded
 * machine, a CLI process started through tsx, takes seconds where a quiet one takes milliseconds).
 */
export async function until(condition: () => boolean, what: string, tries = 800): Promise<void> {
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

/** Names of the chart's running child actors (POST streams, the standalone stream, a DELETE). */
export function childrenOf(transport: StreamableHTTPClientTransport): string[] {
  return Object.keys(transport.actor.getSnapshot().children);
}

/** Whether the standalone GET stream's chart is in `state` (e.g. 'listening', 'backoff', 'degraded', 'unsupported'). */
export function standaloneIn(transport: StreamableHTTPClientTransport, state: string | Record<string, string>): boolean {
  const child = transport.actor.getSnapshot().children.standalone as
    { getSnapshot(): { matches(state: string | Record<string, string>): boolean } } | undefined;
  return child?.getSnapshot().matches(state) ?? false;
}

/** Whether the transport's standalone GET stream is open and being read. */
export function standaloneListening(transport: StreamableHTTPClientTransport): boolean {
  return standaloneIn(transport, 'listening');
}

/**
 * Stops `server` (every session is lost, every connection cut) and starts it again on the SAME port
 * with `start`: to the client the same URL whose backend restarted. In between it waits until the
 * client saw the old one go (its standalone stream broke, so no pooled connection to the old process
 * is left for the next POST) and `downtimeMs` more: an in-process restart can otherwise be quicker
 * than the close of the old connections reaching undici, whose pool then hands the next POST a
 * keep-alive socket about to close, and the call fails with "other side closed" (P6), as the SDK's
 * own transport does. The client sends nothing meanwhile.
 */
export async function restart<T extends { port: number; close(): Promise<void> }>(
  server: T,
  transport: StreamableHTTPClientTransport,
  start: (port: number) => Promise<T>,
  downtimeMs = 200,
): Promise<T> {
  await until(() => standaloneListening(transport), 'the standalone stream to open');
  await server.close();
  await until(() => !standaloneListening(transport), 'the client to see the old server go');
  await sleep(downtimeMs);
  return start(server.port);
}

/** Calls in flight: POST stream children (`post-N`, the only actors that resume or re-send a call) and data-plane calls. */
export function callsInFlight(transport: StreamableHTTPClientTransport): number {
  return childrenOf(transport).filter((id) => id.startsWith('post-')).length + directCallsIn(transport.actor.system);
}

/**
 * The moment after which no call made so far can bring another request: no POST child is left
 * to resume or re-send one, and the data plane holds none (bounded wait; throws naming `what`).
 */
export async function noCallsInFlight(transport: StreamableHTTPClientTransport, what: string): Promise<void> {
  await until(() => callsInFlight(transport) === 0, `no call in flight: ${what}`);
}

/**
 * The state after which the transport sends nothing more: its chart is closed (or stopped) and
 * holds no child, so no wait, timer or stream of it is left to fire (F2).
 */
export function closedForGood(transport: StreamableHTTPClientTransport): boolean {
  const snapshot = transport.actor.getSnapshot();
  return (snapshot.status !== 'active' || snapshot.hasTag('closed')) && childrenOf(transport).length === 0;
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

/** A port on 127.0.0.1 where nothing listens (a listener was opened there and closed). */
export async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  await new Promise<void>((resolve, reject) => {
    listener.close((error) => {
      if (error) reject(error);
      else resolve();
    });
  });
  return port;
}

/** Counts of `process.getActiveResourcesInfo()` by kind. */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The server modes that keep a session: answers as JSON, and as event streams. */
export const statefulModes = [
  { mode: 'JSON, stateful', sse: false },
  { mode: 'SSE, stateful', sse: true },
] as const;

/**
 * What is still active beyond `baseline` and which tracked timers are pending, once both are
 * gone or after a bounded wait (then the test's expectations say what was left).
 */
export async function leftoversOver(
  baseline: Map<string, number>,
  timers: { pending(): string[] },
): Promise<{ surplus: Record<string, number>; pending: string[] }> {
  let surplus: Record<string, number> = {};
  let pending: string[] = [];
  await until(() => {
    surplus = surplusOver(baseline);
    pending = timers.pending();
    return Object.keys(surplus).length === 0 && pending.length === 0;
  }, 'active resources back to the baseline').catch(() => undefined);
  return { surplus, pending };
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

/** The parts of Node's `Timeout` object the timer tracker reads. */
interface NodeTimeout {
  hasRef(): boolean;
  _destroyed?: boolean;
  _idleTimeout?: number;
}

/**
 * Records every timer created from now on, so a test can tell which of them are still pending
 * and keeping the process alive (ref'd, neither fired nor cleared). Counting kinds in
 * `process.getActiveResourcesInfo()` alone can hide a new timer behind one that ended meanwhile.
 */
export function trackTimers(): { pending(): string[]; stop(): void } {
  const timers: { timer: NodeTimeout; origin: string }[] = [];
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const origin = (new Error().stack ?? '')
        .split('\n')
        .slice(1)
        .map((line) => line.trim())
        .filter((line) => !line.includes('node:internal') && !line.includes('node:timers') && !line.includes('harness.ts'))
        .slice(0, 4)
        .join(' < ');
      timers.push({ timer: resource as NodeTimeout, origin });
    },
  });
  hook.enable();
  return {
    pending: () =>
      timers
        .filter(({ timer }) => timer._destroyed !== true && timer.hasRef())
        .map(({ timer, origin }) => `${String(timer._idleTimeout)} ms: ${origin}`),
    stop: () => {
      hook.disable();
    },
  };
}

/** `error` and its causes, outermost first (bounded). */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 8; depth++) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

/** What a function threw (fails the test if it returned). */
export function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw, but the function returned');
}

/** What a promise rejected with (fails the test if it resolved). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** The Error a promise rejected with (fails the test if it resolved, or rejected with a non-Error). */
export async function rejectionError(promise: Promise<unknown>): Promise<Error> {
  const error = await rejection(promise);
  if (error instanceof Error) return error;
  throw new Error(`rejected with a non-Error: ${String(error)}`);
}

/**
 * What a test file starts: fixture servers, transports and Clients. `closeAll()` (in afterEach)
 * closes the Clients, then the transports, then the servers.
 */
export class Started {
  private servers: TestServer[] = [];
  private transports: StreamableHTTPClientTransport[] = [];
  private clients: Client[] = [];

  async serve(options: ServerOptions = {}): Promise<TestServer> {
    const server = await startServer(options);
    this.servers.push(server);
    return server;
  }

  transport(
    server: TestServer,
    options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1] = {},
  ): StreamableHTTPClientTransport {
    const transport = new StreamableHTTPClientTransport(server.url, options);
    this.transports.push(transport);
    return transport;
  }

  client(client: Client = newClient()): Client {
    this.clients.push(client);
    return client;
  }

  /**
   * A Client connected over a new transport for `server`; the transport's errors are collected,
   * and a spy keeps every send() promise, to check what the caller of send() sees (P10).
   */
  async connectClient(
    server: TestServer,
    options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1] = {},
    client: Client = newClient(),
  ) {
    const transport = new StreamableHTTPClientTransport(server.url, options);
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    this.client(client);
    const send = vi.spyOn(transport, 'send');
    await client.connect(transport);
    return { client, transport, errors, send };
  }

  async closeAll(): Promise<void> {
    for (const client of this.clients.splice(0)) await client.close();
    for (const transport of this.transports.splice(0)) await transport.close();
    for (const server of this.servers.splice(0)) await server.close();
  }
}
