import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
// The legacy transport is deprecated in the SDK; it is exactly what L1 must still talk to.

import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { ProtocolError, StreamableHTTPClientTransport } from '../../src/index.js';
import { listenLocal, readText, shutDown } from '../support/http.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

/** The SDK's real 2024-11-05 server: GET opens the stream, POSTs go to the endpoint it announces. */
interface LegacyServer {
  url: URL;
  requests: { method: string; path: string }[];
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  return JSON.parse(await readText(req)) as unknown;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<{ server: Server; url: URL }> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  const port = await listenLocal(server);
  return { server, url: new URL(`http://127.0.0.1:${port}/mcp`) };
}

async function startLegacyServer(options: { endpointOrigin?: string; postStatus?: number } = {}): Promise<LegacyServer> {
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  const transports = new Map<string, SSEServerTransport>();
  const servers: McpServer[] = [];
  const requests: LegacyServer['requests'] = [];
  const { server, url } = await listen(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: req.method ?? '', path });
    if (req.method === 'POST' && path === '/mcp') {
      // Not a Streamable HTTP server: the POST of initialize is refused.
      res.writeHead(options.postStatus ?? 405).end();
      return;
    }
    if (req.method === 'GET' && path === '/mcp' && options.endpointOrigin !== undefined) {
      // The SDK's SSEServerTransport always announces a relative endpoint: write a foreign one by hand.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: endpoint\ndata: ${options.endpointOrigin}/messages?sessionId=x\n\n`);
      return;
    }
    if (req.method === 'GET' && path === '/mcp') {
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      const mcp = new McpServer({ name: 'legacy', version: '1.0.0' });
      mcp.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
      servers.push(mcp);
      await mcp.connect(transport);
      return;
    }
    if (req.method === 'POST' && path === '/messages') {
      const sessionId = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
      const transport = transports.get(sessionId);
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handlePostMessage(req, res, await readJson(req));
      return;
    }
    res.writeHead(404).end();
  });
  return {
    url,
    requests,
    close: async () => {
      for (const mcp of servers) await mcp.close();
      await shutDown(server);
    },
  };
}

afterEach(runCleanups);

describe('legacy HTTP+SSE fallback', () => {
  for (const status of [400, 404, 405]) {
    it(`L1, L2: an initialize answered ${status} falls back to the 2024-11-05 transport; the SDK Client works unchanged`, async () => {
      const legacy = await startLegacyServer({ postStatus: status });
      cleanups.push(() => legacy.close());
      const transport = new StreamableHTTPClientTransport(legacy.url);
      const states: string[] = [];
      transport.actor.subscribe((snapshot) => states.push(JSON.stringify(snapshot.value)));
      const client = new Client({ name: 'legacy-test', version: '1.0.0' });
      cleanups.push(() => client.close());
      await client.connect(transport);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'over the old transport' } });
      expect(result.content).toEqual([{ type: 'text', text: 'over the old transport' }]);
      expect(states).toContain(JSON.stringify({ legacy: 'awaitingEndpoint' }));
      expect(transport.actor.getSnapshot().matches({ legacy: 'ready' })).toBe(true);
      expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
      // One refused POST to the URL, then GET, then every message to the endpoint.
      expect(legacy.requests.filter((r) => r.method === 'POST' && r.path === '/mcp')).toHaveLength(1);
      expect(legacy.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
      expect(legacy.requests.filter((r) => r.path === '/messages').length).toBeGreaterThanOrEqual(3);
      expect(transport.sessionId).toBeUndefined();
    });
  }

  it('L1: an endpoint on another origin is refused and the connection fails with a ProtocolError', async () => {
    const legacy = await startLegacyServer({ endpointOrigin: 'http://127.0.0.2:9' });
    cleanups.push(() => legacy.close());
    const transport = new StreamableHTTPClientTransport(legacy.url);
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const client = new Client({ name: 'legacy-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow(/origin/);
    expect(errors.some((e) => e instanceof ProtocolError || e.cause instanceof ProtocolError)).toBe(true);
    expect(legacy.requests.filter((r) => r.path === '/messages')).toHaveLength(0);
    await transport.close();
  });

  it('L1: legacyFallback: false makes a 405 to initialize an ordinary failure', async () => {
    const legacy = await startLegacyServer();
    cleanups.push(() => legacy.close());
    const transport = new StreamableHTTPClientTransport(legacy.url, { legacyFallback: false });
    const client = new Client({ name: 'legacy-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow(/405/);
    expect(legacy.requests.filter((r) => r.method === 'GET')).toHaveLength(0);
    await transport.close();
  });

  for (const status of [401, 403]) {
    it(`L1: ${status} to initialize never falls back`, async () => {
      const legacy = await startLegacyServer({ postStatus: status });
      cleanups.push(() => legacy.close());
      const transport = new StreamableHTTPClientTransport(legacy.url);
      const client = new Client({ name: 'legacy-test', version: '1.0.0' });
      await expect(client.connect(transport)).rejects.toThrow(String(status));
      expect(legacy.requests.filter((r) => r.method === 'GET')).toHaveLength(0);
      await transport.close();
    });
  }
});
