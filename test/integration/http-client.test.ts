/**
 * H11: which HTTP client carries the requests, and what must not change with it. This file runs in
 * both vitest projects: `node` (the Node entry, requests through node:http) and `fetch`.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getGlobalDispatcher, ProxyAgent, setGlobalDispatcher } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { rejection, Started, textOf } from '../support/harness.js';
import { startForwardProxy, type ForwardProxy } from '../support/forward-proxy.js';
import { result, sseText, type Chunk } from '../support/scripted-server.js';
import { cleanups, runCleanups, scripted } from '../support/cleanups.js';

/** Set by the vitest project (vitest.config.ts). */
const client = process.env.HTTP_CLIENT === 'node' ? 'node' : 'fetch';

const started = new Started();
afterEach(async () => {
  vi.restoreAllMocks();
  await started.closeAll();
  await runCleanups();
});

async function proxy(): Promise<ForwardProxy> {
  const forward = await startForwardProxy();
  cleanups.push(() => forward.close());
  return forward;
}

/** A Client over a transport for `url`, closed after the test. */
async function connect(url: URL, options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1] = {}) {
  const transport = new StreamableHTTPClientTransport(url, options);
  const sdk = started.client(new Client({ name: 'h11', version: '0' }));
  await sdk.connect(transport);
  return { transport, client: sdk };
}

describe('H11: the HTTP client', () => {
  it(`H11: without a user fetch, requests go through ${client === 'node' ? 'node:http, never the global fetch' : 'the global fetch'}`, async () => {
    const server = await started.serve();
    const globalFetch = vi.spyOn(globalThis, 'fetch');
    const { client: sdk } = await connect(server.url);
    expect(textOf(await sdk.callTool({ name: 'echo', arguments: { text: 'which client' } }))).toBe('which client');
    await sdk.close();
    expect(server.requests.map((r) => r.method)).toContain('DELETE');
    if (client === 'node') expect(globalFetch).not.toHaveBeenCalled();
    else expect(globalFetch.mock.calls.length).toBeGreaterThanOrEqual(server.requests.length);
  });

  it('H11: a custom global dispatcher (setGlobalDispatcher: a proxy) carries every request, whichever client is in use', async () => {
    const server = await started.serve();
    const forward = await proxy();
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(new ProxyAgent(forward.url.href));
    cleanups.push(() => {
      setGlobalDispatcher(previous);
      return Promise.resolve();
    });
    const { client: sdk } = await connect(server.url);
    expect(textOf(await sdk.callTool({ name: 'echo', arguments: { text: 'via proxy' } }))).toBe('via proxy');
    await sdk.close();
    // Every connection to the server was opened by the proxy: nothing went around it.
    expect(forward.tunnels.length + forward.forwarded.length).toBeGreaterThan(0);
    expect(forward.tunnels.every((t) => t === `127.0.0.1:${server.port}`)).toBe(true);
    expect(server.requests.map((r) => r.method)).toEqual(expect.arrayContaining(['POST', 'GET', 'DELETE']));
  });

  it('H11: a requestInit field only fetch honours (an undici dispatcher) sends the requests through fetch with it', async () => {
    const server = await started.serve();
    const forward = await proxy();
    const dispatcher = new ProxyAgent(forward.url.href);
    cleanups.push(() => dispatcher.close());
    const requestInit = { headers: { 'x-through': 'dispatcher' }, dispatcher } as RequestInit;
    const { client: sdk } = await connect(server.url, { requestInit });
    expect(textOf(await sdk.callTool({ name: 'echo', arguments: { text: 'dispatched' } }))).toBe('dispatched');
    await sdk.close();
    expect(forward.tunnels.length).toBeGreaterThan(0);
    expect(server.requests.every((r) => r.headers['x-through'] === 'dispatcher')).toBe(true);
  });

  it('H11, H8: requestInit headers reach the server on POST, GET and DELETE', async () => {
    const server = await started.serve();
    const { client: sdk } = await connect(server.url, {
      requestInit: { headers: { 'x-team': 'blue' }, credentials: 'include', cache: 'no-store' },
    });
    await sdk.listTools();
    await sdk.close();
    expect(new Set(server.requests.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of server.requests) expect(request.headers['x-team'], request.method).toBe('blue');
  });

  it('H11: every request carries the Host of its URL and keep-alive, and a POST the Content-Length of its body, as fetch sends them', async () => {
    const server = await started.serve();
    const { client: sdk } = await connect(server.url);
    await sdk.listTools();
    await sdk.close();
    expect(new Set(server.requests.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of server.requests) {
      expect(request.headers.host, request.method).toBe(server.url.host);
      expect(request.headers.connection, request.method).toBe('keep-alive');
      expect(request.headers['user-agent'], request.method).toBeDefined();
      if (request.method === 'POST')
        expect(request.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(request.body))));
      else expect(request.headers['content-length']).toBeUndefined();
    }
  });

  it(`H11: a Host header of the caller (requestInit) ${client === 'node' ? "is sent instead of the URL's, as node:http sends it" : "is not sent: fetch sends the URL's"}`, async () => {
    const server = await started.serve();
    const host = `localhost:${server.port}`;
    const { client: sdk } = await connect(server.url, { requestInit: { headers: { host } } });
    await sdk.listTools();
    await sdk.close();
    expect(new Set(server.requests.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of server.requests) expect(request.headers.host, request.method).toBe(client === 'node' ? host : server.url.host);
  });

  it(`H11: credentials in the URL ${client === 'node' ? 'go as Basic authorization (as node:http sends them)' : 'are refused by fetch before any request'}; a requestInit Authorization header wins over them`, async () => {
    const server = await started.serve();
    const withUserinfo = new URL(server.url);
    withUserinfo.username = 'ann%20lee';
    withUserinfo.password = 'p%C3%A4ss';
    if (client === 'fetch') {
      await expect(connect(withUserinfo)).rejects.toThrow();
      expect(server.requests).toHaveLength(0);
      return;
    }
    const { client: sdk } = await connect(withUserinfo);
    await sdk.close();
    const basic = `Basic ${Buffer.from('ann lee:päss').toString('base64')}`;
    for (const request of server.requests) expect(request.headers.authorization, request.method).toBe(basic);
    const before = server.requests.length;
    const { client: other } = await connect(withUserinfo, { requestInit: { headers: { authorization: 'Bearer given' } } });
    await other.close();
    for (const request of server.requests.slice(before)) expect(request.headers.authorization, request.method).toBe('Bearer given');
  });

  it('H11: a header field the server repeats is read as fetch reads it: every value, joined with ", "', async () => {
    const server = await scripted();
    // Node's own parsed headers keep only the first Content-Type; fetch joins them, and so does this client.
    server.on({ rpc: 'tools/call' }, (request) => ({
      headers: { 'content-type': ['application/json', 'application/json'] },
      body: JSON.stringify(result(request.id, { content: [] })),
    }));
    const { client: sdk } = await connect(server.url, { standaloneStream: false });
    const error = await rejection(sdk.callTool({ name: 'echo', arguments: {} }));
    expect(String(error)).toContain('"application/json, application/json"');
  });
});

const compress = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;

describe('H11: compressed answers are decoded as fetch decodes them', () => {
  for (const coding of ['gzip', 'deflate', 'br'] as const) {
    it(`H11, P2, P3: a ${coding} JSON answer and a ${coding} event stream split across writes are read`, async () => {
      const server = await scripted();
      server.on({ rpc: 'tools/list' }, (request) => ({
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
        body: compress[coding](Buffer.from(JSON.stringify(result(request.id, { tools: [] })))),
      }));
      server.on({ rpc: 'tools/call' }, (request) => {
        const bytes = compress[coding](
          Buffer.from(
            sseText([
              { event: 'message', data: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'before' } } },
              { id: '1', event: 'message', data: result(request.id, { content: [{ type: 'text', text: `squeezed ${coding}` }] }) },
            ]),
          ),
        );
        const half = Math.floor(bytes.length / 2);
        const chunks: Chunk[] = [{ data: bytes.subarray(0, half) }, { data: bytes.subarray(half), delayMs: 20 }];
        return { headers: { 'content-type': 'text/event-stream', 'content-encoding': coding }, body: chunks };
      });
      const { client: sdk } = await connect(server.url, { standaloneStream: false });
      const logged: unknown[] = [];
      sdk.fallbackNotificationHandler = (notification) => {
        logged.push(notification.params?.data);
        return Promise.resolve();
      };
      expect((await sdk.listTools()).tools).toEqual([]);
      expect(textOf(await sdk.callTool({ name: 'echo', arguments: {} }))).toBe(`squeezed ${coding}`);
      expect(logged).toEqual(['before']);
      const [call] = server.filter({ rpc: 'tools/call' });
      expect(String(call?.headers['accept-encoding'])).toContain('gzip');
    });
  }

  it('H11, S5: the event-size limit counts decoded bytes: a small gzip body of one large event ends the call', async () => {
    const server = await scripted();
    server.on({ rpc: 'tools/call' }, (request) => ({
      headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' },
      body: gzipSync(
        Buffer.from(
          sseText([{ event: 'message', data: result(request.id, { content: [{ type: 'text', text: 'x'.repeat(256 * 1024) }] }) }]),
        ),
      ),
    }));
    const { client: sdk } = await connect(server.url, { standaloneStream: false, maxMessageBytes: 64 * 1024 });
    const error = await rejection(sdk.callTool({ name: 'echo', arguments: {} }));
    expect(String(error)).toContain('maxMessageBytes');
  });
});
