/**
 * Benchmark server, its own process (its CPU is never the client's), on 127.0.0.1; the first line
 * on stdout is `{"port": N}`; it ends on SIGTERM/SIGINT or when its stdin closes (the parent died).
 *   /json, /sse   the 1.x SDK's real McpServer + StreamableHTTPServerTransport, stateful; /json with
 *                 enableJsonResponse, /sse answering POSTs with event streams
 *   /modern       the 2.x SDK's createMcpHandler (2026-07-28 only, responseMode 'auto': echo answers in
 *                 JSON), over node:http as test/support/v2-server.ts; /modern-sse the same, responseMode 'sse'
 *   GET /stats    sessions and open GET (modern: listen) streams per endpoint, server CPU, connections
 *   POST /reset   closes every session (between scenarios; the count is reported as a leak)
 * Tools: `echo {text}`; `progress {steps}`: progress notifications on the POST's stream, then the
 * result; `notify {count}`: logging notifications on the session's standalone GET stream, outside any
 * request (modern: `handler.notify.toolsChanged()` to every listen stream), then the result;
 * `notify {count, burst: true}`: the same with `server.notification()` not awaited (issue 32's anomaly);
 * `big {bytes}`: a text of `bytes` characters (S8: one event of that size on /sse). `progress` and
 * `notify` with `paceMs`: each notification sent (and awaited) that long after the one before, so
 * that each arrives in a packet (and a read) of its own: the paced rows (issue 44).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

type Mode = 'json' | 'sse';
/** A session, with its standalone GET responses that are still open. */
type Session = { mcp: McpServer; transport: StreamableHTTPServerTransport; gets: Set<ServerResponse> };
type Endpoint = { mode: Mode; sessions: Map<string, Session> };

/** `openGets`: standalone GET streams whose 200 headers were written and still open (modern, sessionless: listen streams). */
export type EndpointStats = { sessions: number; openGets: number };
/** `cpu`: the server's `process.cpuUsage()`, µs; `connections`: TCP connections accepted; `get` (with `?session=ID`): whether it has a GET stream open. */
export type ServerStats = Record<Mode | 'modern' | 'modern-sse', EndpointStats> & {
  cpu: { user: number; system: number };
  connections: number;
  get?: boolean;
};

const endpoints: Record<Mode, Endpoint> = {
  json: { mode: 'json', sessions: new Map() },
  sse: { mode: 'sse', sessions: new Map() },
};

function buildServer(): McpServer {
  const mcp = new McpServer({ name: 'bench-server', version: '1.0.0' }, { capabilities: { logging: {} } });
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  mcp.registerTool(
    'progress',
    { inputSchema: { steps: z.number().int(), paceMs: z.number().optional() } },
    async ({ steps, paceMs }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps && token !== undefined; i++) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
        if (paceMs !== undefined) await sleep(paceMs);
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] };
    },
  );
  mcp.registerTool('big', { inputSchema: { bytes: z.number().int() } }, ({ bytes }) => ({
    content: [{ type: 'text', text: 'x'.repeat(bytes) }],
  }));
  const notifyArgs = { count: z.number().int(), burst: z.boolean().optional(), paceMs: z.number().optional() };
  mcp.registerTool('notify', { inputSchema: notifyArgs }, async ({ count, burst, paceMs }, extra) => {
    // No relatedRequestId: the server transport writes these to the standalone GET stream.
    const note = (i: number) => ({ method: 'notifications/message' as const, params: { level: 'info' as const, data: { i } } });
    for (let i = 0; i < count && burst === true; i++) void mcp.server.notification(note(i));
    for (let i = 0; i < count && burst !== true; i++) {
      await mcp.server.sendLoggingMessage({ level: 'info', data: { i } }, extra.sessionId);
      if (paceMs !== undefined) await sleep(paceMs);
    }
    return { content: [{ type: 'text', text: `sent ${count}` }] };
  });
  return mcp;
}

type Handler = ReturnType<typeof createMcpHandler>;
function buildServerV2(handler: () => Handler): McpServerV2 {
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
    for (let i = 0; i < count; i++) handler().notify.toolsChanged();
    return { content: [{ type: 'text', text: `sent ${count}` }] };
  });
  return mcp;
}

const handlers: Record<'auto' | 'sse', Handler> = {
  // 5,000 held listen subscriptions: above the handler's default limit.
  auto: createMcpHandler(() => buildServerV2(() => handlers.auto), { legacy: 'reject', maxSubscriptions: 20_000 }),
  sse: createMcpHandler(() => buildServerV2(() => handlers.sse), { legacy: 'reject', responseMode: 'sse' }),
};
const listens = new Set<ServerResponse>();

/** The request as a WHATWG Request to the 2.x handler, its Response streamed back. */
async function handleModern(handler: Handler, req: IncomingMessage, res: ServerResponse, bytes: Buffer): Promise<void> {
  const controller = new AbortController();
  res.on('close', () => {
    controller.abort();
    listens.delete(res);
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) for (const v of [value ?? []].flat()) headers.append(name, v);
  const body = req.method === 'POST' ? { body: new Uint8Array(bytes) } : {};
  const init = { method: req.method ?? 'GET', headers, signal: controller.signal, ...body };
  const response = await handler.fetch(new Request(`http://127.0.0.1${req.url ?? '/'}`, init));
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

const parseJson = (bytes: Buffer): unknown => (bytes.length === 0 ? undefined : JSON.parse(bytes.toString('utf8')));

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'method' in body && body.method === 'initialize';
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const openGets = (session: Session) => [...session.gets].filter((r) => r.headersSent && r.statusCode === 200 && !r.writableEnded).length;
const endpointStats = ({ sessions }: Endpoint): EndpointStats => ({
  sessions: sessions.size,
  openGets: [...sessions.values()].reduce((n, session) => n + openGets(session), 0),
});

/** Closes every session; how many there were. */
async function reset(): Promise<number> {
  const sessions = Object.values(endpoints).flatMap((endpoint) => {
    const all = [...endpoint.sessions.values()];
    endpoint.sessions.clear();
    return all;
  });
  for (const { transport, mcp } of sessions) {
    await transport.close().catch(() => undefined);
    await mcp.close().catch(() => undefined);
  }
  return sessions.length;
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
    onsessioninitialized: (id) => void endpoint.sessions.set(id, { mcp, transport, gets: new Set() }),
    onsessionclosed: (id) => void endpoint.sessions.delete(id),
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
}

const http = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const work = async () => {
    if (url.pathname === '/modern' || url.pathname === '/modern-sse') {
      await handleModern(handlers[url.pathname === '/modern' ? 'auto' : 'sse'], req, res, await readBytes(req));
    } else if (url.pathname === '/json' || url.pathname === '/sse') {
      await handleMcp(endpoints[url.pathname === '/json' ? 'json' : 'sse'], req, res);
    } else if (url.pathname === '/stats' && req.method === 'GET') {
      const stats: ServerStats = {
        json: endpointStats(endpoints.json),
        sse: endpointStats(endpoints.sse),
        modern: { sessions: 0, openGets: listens.size },
        'modern-sse': { sessions: 0, openGets: listens.size },
        cpu: process.cpuUsage(),
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
