/**
 * P4 revised: after its response a stream gets a short grace to end by itself, so its keep-alive
 * connection is reused, and a call that starts meanwhile waits for that connection (at most 25 ms)
 * rather than open a new one. Connections are counted by a TCP proxy that sends each body's end in a
 * packet of its own: cutting the body at the response (the old P4) closed the connection each time.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '../../src/node.js';
import { startV2Server } from '../support/v2-server.js';
import { startSplitProxy } from '../support/split-proxy.js';
import { startStaleProxy } from '../support/stale-proxy.js';
import { cleanups, runCleanups, serve } from '../support/cleanups.js';
import { drains } from '../../src/http/node-response.js';

afterEach(runCleanups);

/**
 * P4's patience is the process's (node-response.ts, `drains`): two waits in a row that ran out
 * stop requests waiting for 10 s. A file before this one in the worker (the soak's stalled
 * streams) may have left it so: each test here starts from a process that never waited.
 */
beforeEach(() => {
  drains.misses = 0;
  drains.timedOutAt = Number.NEGATIVE_INFINITY;
});

const calls = 100;

/**
 * The body's end 20 ms after the rest on Node's client (the next call starts before it arrives, on
 * any machine: a connection per call unless the request waits for it); 5 ms on a caller's fetch,
 * whose connection pool is its own.
 */
async function splitProxy(target: URL, delayMs = 20) {
  const proxy = await startSplitProxy(target, delayMs);
  cleanups.push(() => proxy.close());
  return proxy;
}

async function echoes(call: (text: string) => Promise<{ content?: unknown }>): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const result = await call(`call ${i}`);
    expect(result.content).toEqual([{ type: 'text', text: `call ${i}` }]);
  }
}

describe('P4: connections kept after SSE answers', () => {
  /** 100 echo calls from the v2 Client over this transport (with `options`) to the v2 server through the splitting proxy. */
  async function v2Calls(options: StreamableHTTPClientTransportOptions): Promise<void> {
    const server = await startV2Server({ legacy: 'reject', responseMode: 'sse' });
    cleanups.push(() => server.close());
    const proxy = await splitProxy(server.url, options.fetch === undefined ? 20 : 5);
    const client = new Client({ name: 'p4', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(proxy.url(server.url.pathname), options));
    cleanups.push(() => client.close());
    await echoes((text) => client.callTool({ name: 'echo', arguments: { text } }));
    // The proxy did split every answer's end (the test shows what it says it shows).
    expect(proxy.splits).toBeGreaterThanOrEqual(calls);
    expect(proxy.connections).toBeLessThanOrEqual(5);
  }

  it('P4: 100 sequential SSE-answered calls (v2 Client, v2 server, data plane), each body end in its own packet 20 ms after the answer, open at most 5 connections: each call waits for the connection about to be free', async () => {
    await v2Calls({});
  }, 30_000);

  it("P4: the same with the caller's fetch: the body is read to its end within the grace", async () => {
    await v2Calls({ fetch: (url, init) => fetch(url, init) });
  }, 30_000);

  it('P4: the same through the POST stream actor (2025 era, calls charted by streamIdleTimeout), 1.x server answering with SSE, each end 20 ms apart', async () => {
    const server = await serve({ sse: true });
    const proxy = await splitProxy(server.url);
    const client = new ClientV1({ name: 'p4', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(proxy.url(server.url.pathname), {
      streamIdleTimeout: 60_000,
      standaloneStream: false,
    });
    await client.connect(transport);
    cleanups.push(() => client.close());
    await echoes((text) => client.callTool({ name: 'echo', arguments: { text } }) as Promise<{ content?: unknown }>);
    expect(proxy.splits).toBeGreaterThanOrEqual(calls);
    expect(proxy.connections).toBeLessThanOrEqual(5);
  }, 30_000);

  it('P4: 10 sessions one after another (1.x Client and server: initialize, initialized, the GET stream, DELETE on close) open 2 connections in all: every answer that ended leaves its connection, an empty one discarded too', async () => {
    const server = await serve({});
    // The stale proxy without a fault passes bytes unchanged and counts connections.
    const proxy = await startStaleProxy(server.url);
    cleanups.push(() => proxy.close());
    for (let i = 0; i < 10; i++) {
      const client = new ClientV1({ name: 'p4', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(proxy.url(server.url.pathname)));
      await client.close();
    }
    expect(proxy.connections).toBeLessThanOrEqual(2);
  }, 30_000);
});
