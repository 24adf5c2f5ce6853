/**
 * N7: a stale keep-alive connection never costs a call. The v2 SDK's real server (and the 1.x
 * server) on 127.0.0.1 behind a TCP proxy that closes a connection exactly as the client's next
 * request goes out on it (test/support/stale-proxy.ts): the request is sent again once, on a new
 * connection (Node's HTTP client only); never after a byte of its answer, never when it failed on
 * a fresh connection. Each one is a warning (the inspector sees it) and, with O1, a
 * `mcp.client.retry` event on the call's span.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { StreamableHTTPClientTransport, StreamableHTTPError, type StreamableHTTPClientTransportOptions } from '../../src/node.js';
import { startV2Server } from '../support/v2-server.js';
import { startStaleProxy } from '../support/stale-proxy.js';
import { cleanups, runCleanups, serve } from '../support/cleanups.js';

afterEach(runCleanups);

const calls = 10;

/** The v2 Client over this transport to the v2 server (JSON answers) through the stale proxy. */
async function v2Rig(options: StreamableHTTPClientTransportOptions = {}) {
  const server = await startV2Server({ legacy: 'reject' });
  cleanups.push(() => server.close());
  const proxy = await startStaleProxy(server.url);
  cleanups.push(() => proxy.close());
  const transport = new StreamableHTTPClientTransport(proxy.url(server.url.pathname), options);
  const client = new Client({ name: 'n7', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const warnings: Error[] = [];
  client.onerror = (error) => {
    warnings.push(error);
  };
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { server, proxy, client, transport, warnings };
}

/** `calls` echo calls, each settled: its text or its error. */
async function echoes(client: { callTool(params: { name: string; arguments: { text: string } }): Promise<unknown> }) {
  const results: unknown[] = [];
  for (let i = 0; i < calls; i++) {
    try {
      const result = (await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } })) as { content?: unknown };
      results.push(result.content);
    } catch (error) {
      results.push(error);
    }
  }
  return results;
}

const answers = Array.from({ length: calls }, (_, i) => [{ type: 'text', text: `call ${i}` }]);
const n7Warnings = (warnings: readonly Error[]) => warnings.filter((w) => w.message.includes('(N7)'));

describe('N7: a request the server closed its kept-alive connection under is sent again once', () => {
  /** 10 calls, the server closing the kept-alive connection (`how`) as each goes out: each answered, sent again on a connection of its own, a warning each. */
  async function raced(how: 'fin' | 'reset'): Promise<void> {
    const { proxy, client, warnings } = await v2Rig();
    proxy.how = how;
    proxy.fault = 'close-reused';
    const closedBefore = proxy.closed;
    const connectionsBefore = proxy.connections;

    expect(await echoes(client)).toEqual(answers);
    // Every call met the race (the test shows what it says it shows), and each was sent again on a connection of its own.
    expect(proxy.closed - closedBefore).toBe(calls);
    expect(proxy.connections - connectionsBefore).toBe(calls);
    const told = n7Warnings(warnings);
    expect(told).toHaveLength(calls);
    expect(told[0]?.message).toContain(how === 'fin' ? 'socket hang up' : 'ECONNRESET');
  }

  it('N7: the server closes the idle keep-alive connection (FIN: "socket hang up") as each of 10 calls goes out: 10/10 answered, each sent again on a new connection, each a warning', async () => {
    await raced('fin');
  }, 30_000);

  it('N7: the same when the server resets it (RST: ECONNRESET)', async () => {
    await raced('reset');
  }, 30_000);

  it('N7: the same on the 1.x Client and server (2025 era, with a session)', async () => {
    const server = await serve({});
    const proxy = await startStaleProxy(server.url);
    cleanups.push(() => proxy.close());
    const client = new ClientV1({ name: 'n7', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(proxy.url(server.url.pathname), { standaloneStream: false }));
    cleanups.push(() => client.close());
    proxy.fault = 'close-reused';
    const closedBefore = proxy.closed;

    expect(await echoes(client)).toEqual(answers);
    // A call may find no idle connection (the one before still ending) and open a fresh one: no race then.
    expect(proxy.closed - closedBefore).toBeGreaterThanOrEqual(calls - 1);
  }, 30_000);

  it('N7: a reset after the first byte of an answer is not sent again: the call fails typed, the server saw it once', async () => {
    const { proxy, client } = await v2Rig();
    proxy.how = 'reset';
    proxy.fault = 'cut-reused-answer';
    const forwardedBefore = proxy.forwarded;

    const error = await client.callTool({ name: 'echo', arguments: { text: 'once' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect(proxy.forwarded - forwardedBefore).toBe(1);
    expect(proxy.closed).toBe(1);
    // The transport lives on: the next call (fault gone) is answered.
    proxy.fault = 'none';
    expect(await client.callTool({ name: 'echo', arguments: { text: 'after' } })).toMatchObject({ content: [{ text: 'after' }] });
  }, 30_000);

  it('N7: a request that fails on a fresh connection is not sent again: the call fails typed', async () => {
    const server = await startV2Server({ legacy: 'reject' });
    cleanups.push(() => server.close());
    const proxy = await startStaleProxy(server.url);
    cleanups.push(() => proxy.close());
    // Every connection is closed as its first request arrives: there is never a kept-alive one.
    proxy.fault = 'close-fresh';
    const transport = new StreamableHTTPClientTransport(proxy.url(server.url.pathname), {});
    const warnings: Error[] = [];
    transport.onerror = (error) => {
      warnings.push(error);
    };
    await transport.start();
    cleanups.push(() => transport.close());

    const error = await transport.send({ jsonrpc: '2.0', id: 1, method: 'server/discover' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect(proxy.connections).toBe(1);
    expect(proxy.closed).toBe(1);
    expect(n7Warnings(warnings)).toHaveLength(0);
  }, 30_000);

  it("N7: a caller's fetch decides for itself: the transport sends nothing again", async () => {
    const { proxy, client, warnings } = await v2Rig({ fetch: (url, init) => fetch(url, init) });
    proxy.fault = 'close-reused';
    const results = await echoes(client);
    expect(n7Warnings(warnings)).toHaveLength(0);
    // Node's fetch (undici) retries what it considers safe itself; whatever it did, no warning of ours.
    expect(results).toHaveLength(calls);
  }, 30_000);

  it('N7, O1: each retry is a mcp.client.retry event on the span of the call it carried', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    cleanups.push(() => provider.shutdown());
    const { proxy, client } = await v2Rig({ telemetry: { tracer: provider.getTracer('n7') } });
    proxy.fault = 'close-reused';

    expect(await client.callTool({ name: 'echo', arguments: { text: 'traced' } })).toMatchObject({ content: [{ text: 'traced' }] });
    const call = exporter.getFinishedSpans().find((span) => span.name === 'tools/call echo');
    expect(call?.events.map((event) => event.name)).toEqual(['mcp.client.retry']);
    expect(call?.events[0]?.attributes).toEqual({ 'mcp.client.retry.cause': 'ECONNRESET' });
  }, 30_000);
});
