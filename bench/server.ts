/**
 * Benchmark server, run as its own process (`node --import tsx bench/server.ts`) so that its CPU
 * is never counted as the client's. The official SDK's real `McpServer` +
 * `StreamableHTTPServerTransport`, stateful (one McpServer per session), on 127.0.0.1:
 *
 *   POST|GET|DELETE /json   enableJsonResponse: true (a POST is answered with application/json)
 *   POST|GET|DELETE /sse    a POST is answered with text/event-stream
 *   GET  /stats             sessions and open standalone GET streams per endpoint, server CPU
 *   POST /reset             closes every session (between scenarios; the count is reported as a leak)
 *
 * Tools: `echo {text}`, `progress {steps}` (progress notifications on the POST's stream, then the
 * result), `notify {count, tag}` (logging notifications on the session's standalone GET stream,
 * sent outside any request's context; returns once all are written).
 *
 * The first line on stdout is `{"port": N}`. The process ends on SIGTERM/SIGINT or when its stdin
 * closes (the parent died), so it never outlives the benchmark.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

type Mode = 'json' | 'sse';

interface Session {
  mcp: McpServer;
  transport: StreamableHTTPServerTransport;
  /** Standalone GET responses of this session that are still open. */
  gets: Set<ServerResponse>;
}

interface Endpoint {
  mode: Mode;
  sessions: Map<string, Session>;
}

export interface EndpointStats {
  sessions: number;
  /** Standalone GET streams whose 200 headers were written and that are still open. */
  openGets: number;
}

export interface ServerStats {
  json: EndpointStats;
  sse: EndpointStats;
  /** `process.cpuUsage()` of the server process, µs. */
  cpu: { user: number; system: number };
  rss: number;
  /** TCP connections accepted since the server started. */
  connections: number;
  /** With `?session=ID`: whether that session has an open standalone GET stream. */
  get?: boolean;
}

const endpoints: Record<Mode, Endpoint> = {
  json: { mode: 'json', sessions: new Map() },
  sse: { mode: 'sse', sessions: new Map() },
};

function buildServer(): McpServer {
  const mcp = new McpServer({ name: 'bench-server', version: '1.0.0' }, { capabilities: { logging: {} } });
  mcp.registerTool('echo', { description: 'returns its text', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  mcp.registerTool(
    'progress',
    { description: 'sends `steps` progress notifications, then returns', inputSchema: { steps: z.number().int() } },
    async ({ steps }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) {
        for (let i = 1; i <= steps; i++) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps },
          });
        }
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] };
    },
  );
  mcp.registerTool(
    'notify',
    {
      description: 'sends `count` logging notifications on the standalone GET stream, then returns',
      inputSchema: { count: z.number().int(), tag: z.string() },
    },
    async ({ count, tag }, extra) => {
      for (let i = 0; i < count; i++) {
        // No relatedRequestId: the server transport writes these to the standalone GET stream.
        await mcp.server.sendLoggingMessage({ level: 'info', logger: 'bench', data: { tag, i } }, extra.sessionId);
      }
      return { content: [{ type: 'text', text: `sent ${count}` }] };
    },
  );
  return mcp;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'method' in body && body.method === 'initialize';
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function openGets(session: Session): number {
  let n = 0;
  for (const res of session.gets) if (res.headersSent && res.statusCode === 200 && !res.writableEnded) n++;
  return n;
}

function endpointStats(endpoint: Endpoint): EndpointStats {
  let gets = 0;
  for (const session of endpoint.sessions.values()) gets += openGets(session);
  return { sessions: endpoint.sessions.size, openGets: gets };
}

async function closeSession(session: Session): Promise<void> {
  await session.transport.close().catch(() => undefined);
  await session.mcp.close().catch(() => undefined);
}

async function reset(): Promise<number> {
  let closed = 0;
  for (const endpoint of Object.values(endpoints)) {
    const sessions = [...endpoint.sessions.values()];
    endpoint.sessions.clear();
    for (const session of sessions) {
      closed++;
      await closeSession(session);
    }
  }
  return closed;
}

async function handleMcp(endpoint: Endpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = req.method === 'POST' ? await readJson(req) : undefined;
  const header = req.headers['mcp-session-id'];
  const sessionId = Array.isArray(header) ? header[0] : header;
  if (sessionId !== undefined) {
    const session = endpoint.sessions.get(sessionId);
    if (!session) {
      sendJson(res, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      return;
    }
    if (req.method === 'GET') {
      session.gets.add(res);
      res.once('close', () => session.gets.delete(res));
    }
    await session.transport.handleRequest(req, res, body);
    return;
  }
  if (req.method !== 'POST' || !isInitialize(body)) {
    sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no session' }, id: null });
    return;
  }
  const mcp = buildServer();
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: endpoint.mode === 'json',
    onsessioninitialized: (id) => {
      endpoint.sessions.set(id, { mcp, transport, gets: new Set() });
    },
    onsessionclosed: (id) => {
      endpoint.sessions.delete(id);
    },
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
}

const http = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const work = async () => {
    if (url.pathname === '/json' || url.pathname === '/sse') {
      await handleMcp(endpoints[url.pathname === '/json' ? 'json' : 'sse'], req, res);
    } else if (url.pathname === '/stats' && req.method === 'GET') {
      const stats: ServerStats = {
        json: endpointStats(endpoints.json),
        sse: endpointStats(endpoints.sse),
        cpu: process.cpuUsage(),
        rss: process.memoryUsage.rss(),
        connections,
      };
      const asked = url.searchParams.get('session');
      if (asked !== null) {
        const session = endpoints.json.sessions.get(asked) ?? endpoints.sse.sessions.get(asked);
        stats.get = session !== undefined && openGets(session) > 0;
      }
      sendJson(res, 200, stats);
    } else if (url.pathname === '/reset' && req.method === 'POST') {
      sendJson(res, 200, { closed: await reset() });
    } else {
      sendJson(res, 404, { error: 'not found' });
    }
  };
  work().catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  });
});

let connections = 0;
http.on('connection', () => {
  connections++;
});

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  void reset().finally(() => {
    http.closeAllConnections();
    http.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2_000).unref();
  });
}

process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The parent holds our stdin; when it goes away (even by SIGKILL), so do we.
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();

http.listen(0, '127.0.0.1', () => {
  const { port } = http.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
