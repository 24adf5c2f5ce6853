/**
 * The SDK's real 2024-11-05 (HTTP+SSE) server on 127.0.0.1, for the legacy fallback (L1): GET
 * opens the stream, POSTs go to the endpoint it announces; a POST to the MCP URL is refused.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
// The legacy transport is deprecated in the SDK; it is exactly what L1 must still talk to.

import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { listenLocal, readText, shutDown } from './http.js';

/** The SDK's real 2024-11-05 server: GET opens the stream, POSTs go to the endpoint it announces. */
export interface LegacyServer {
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

export async function startLegacyServer(options: { endpointOrigin?: string; postStatus?: number } = {}): Promise<LegacyServer> {
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
