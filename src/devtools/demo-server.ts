/**
 * The CLI demo's server: the official SDK's `McpServer` behind its `StreamableHTTPServerTransport`
 * on 127.0.0.1, one session per client, with an event store so streams can resume.
 *
 * Node only, and not part of the published package (`npm start`, scripts/demo.ts, uses it): it needs the SDK, a dev
 * dependency. Tests keep their own, richer server in test/support/.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';

export interface DemoServer {
  url: URL;
  /** The live sessions, by session ID: the demo makes one speak first. */
  sessions: Map<string, { server: McpServer; transport: StreamableHTTPServerTransport }>;
  /** Session IDs the server closed (DELETE or shutdown). */
  closedSessions: string[];
  close(): Promise<void>;
}

function buildServer(): McpServer {
  const server = new McpServer({ name: 'demo', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('echo', { description: 'echoes its text', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool(
    'progress',
    { description: 'reports progress n times, then answers', inputSchema: { steps: z.number().int() } },
    async ({ steps }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps && token !== undefined; i++) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] };
    },
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of req) chunks.push(chunk as Uint8Array);
  if (chunks.length === 0) return undefined;
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

export async function startDemoServer(): Promise<DemoServer> {
  const sessions: DemoServer['sessions'] = new Map();
  const closedSessions: string[] = [];

  const http = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const header = req.headers['mcp-session-id'];
      const sessionId = Array.isArray(header) ? header[0] : header;
      const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (existing) return existing.transport.handleRequest(req, res, body);
      if (sessionId !== undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const server = buildServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        onsessioninitialized: (id) => {
          sessions.set(id, { server, transport });
        },
        onsessionclosed: (id) => {
          closedSessions.push(id);
          sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    sessions,
    closedSessions,
    close: async () => {
      for (const { server, transport } of sessions.values()) {
        await transport.close();
        await server.close();
      }
      http.closeAllConnections();
      await new Promise<void>((resolve) => {
        http.close(() => {
          resolve();
        });
      });
    },
  };
}
