/**
 * Benchmark server, run as its own process (`node --import tsx bench/server.ts`) so that its CPU
 * is never counted as the client's. The official SDK's real `McpServer` +
 * `StreamableHTTPServerTransport`, stateful (one McpServer per session), on 127.0.0.1:
 *
 *   POST|GET|DELETE /json   enableJsonResponse: true (a POST is answered with application/json)
 *   POST|GET|DELETE /sse    a POST is answered with text/event-stream
 *   POST /modern            the 2.x SDK's `createMcpHandler` (2026-07-28 only, sessionless), served
 *                           over node:http as test/support/v2-server.ts does
 *   GET  /stats             sessions and open standalone GET streams per endpoint, server CPU
 *   POST /reset             closes every session (between scenarios; the count is reported as a leak)
 *
 * Tools: `echo {text}`, `progress {steps}` (progress notifications on the POST's stream, then the
 * result), `notify {count, tag}` (logging notifications on the session's standalone GET stream,
 * sent outside any request's context; returns once all are written). On /modern, `notify` publishes
 * `count` tools/list_changed notifications (`handler.notify.toolsChanged()`) to every open
 * `subscriptions/listen` stream.
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
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

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
  /** Sessionless: `openGets` counts open subscriptions/listen streams. */
  modern: EndpointStats;
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
  mcp.registerTool('notify', { inputSchema: { count: z.number().int() } }, async ({ count }, extra) => {
    // No relatedRequestId: the server transport writes these to the standalone GET stream.
    for (let i = 0; i < count; i++) await mcp.server.sendLoggingMessage({ level: 'info', data: { i } }, extra.sessionId);
    return { content: [{ type: 'text', text: `sent ${count}` }] };
  });
  return mcp;
}

function buildServerV2(): McpServerV2 {
  const mcp = new McpServerV2({ name: 'bench-server', version: '2.0.0' }, { capabilities: { tools: { listChanged: true } } });
  mcp.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  mcp.registerTool('progress', { inputSchema: z.object({ steps: z.number().int() }) }, async ({ steps }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps && token !== undefined; i++) {
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
    }
    return { content: [{ type: 'text', text: `done ${steps}` }] };
  });
  mcp.registerTool('notify', { inputSchema: z.object({ count: z.number().int() }) }, ({ count }) => {
    for (let i = 0; i < count; i++) handler.notify.toolsChanged();
    return { content: [{ type: 'text', text: `sent ${count}` }] };
  });
  return mcp;
}

const handler = createMcpHandler(() => buildServerV2(), { legacy: 'reject' });
const listens = new Set<ServerResponse>();

/** The request as a WHATWG Request to the 2.x handler, its Response streamed back. */
async function handleModern(req: IncomingMessage, res: ServerResponse, bytes: Buffer): Promise<void> {
  const controller = new AbortController();
  res.on('close', () => {
    controller.abort();
    listens.delete(res);
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) for (const v of [value ?? []].flat()) headers.append(name, v);
  const body = req.method === 'POST' ? { body: new Uint8Array(bytes) } : {};
  const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    signal: controller.signal,
    ...body,
  });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) return void res.end();
  if (bytes.includes('subscriptions/listen')) listens.add(res);
  const stream = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(bytes: Buffer): unknown {
  try {
    return bytes.length === 0 ? undefined : (JSON.parse(bytes.toString('utf8')) as unknown);
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
  const body = req.method === 'POST' ? parseJson(await readBytes(req)) : undefined;
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
    if (url.pathname === '/modern') {
      await handleModern(req, res, await readBytes(req));
    } else if (url.pathname === '/json' || url.pathname === '/sse') {
      await handleMcp(endpoints[url.pathname === '/json' ? 'json' : 'sse'], req, res);
    } else if (url.pathname === '/stats' && req.method === 'GET') {
      const stats: ServerStats = {
        json: endpointStats(endpoints.json),
        sse: endpointStats(endpoints.sse),
        modern: { sessions: 0, openGets: listens.size },
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
