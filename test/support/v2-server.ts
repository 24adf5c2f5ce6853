/**
 * The v2 SDK's real server (`@modelcontextprotocol/server` 2.x: `McpServer` behind
 * `createMcpHandler`) on 127.0.0.1, served through a small `node:http` ↔ `Request` adapter
 * (`@modelcontextprotocol/node` stops at 2.1). It speaks 2026-07-28 and, unless `legacy: 'reject'`,
 * the stateless 2025 fallback. A request log lets tests see what went over the wire.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import * as z from 'zod';
import { createMcpHandler, McpServer, type McpHttpHandler } from '@modelcontextprotocol/server';
import { listenLocal, parseBody, readBytes, RequestLog, rpcMethodOf, shutDown } from './http.js';

export interface V2LoggedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  rpc: string | undefined;
  /** Settles when the server side of this exchange closed (response ended or connection dropped). */
  ended: Promise<void>;
}

export interface V2ServerOptions {
  /** 'reject': modern only; default: modern with the stateless legacy fallback. */
  legacy?: 'reject' | 'stateless';
  /** SSE keep-alive comment interval (0: none). */
  keepAliveMs?: number;
  /** How the handler answers a request: 'sse' always with an event stream; default 'auto'. */
  responseMode?: 'auto' | 'json' | 'sse';
  /** A hook in front of the handler: answer a request yourself (return true) or let it through. */
  intercept?: (req: IncomingMessage, res: ServerResponse, body: unknown) => boolean | Promise<boolean>;
}

export interface V2TestServer {
  url: URL;
  handler: McpHttpHandler;
  requests: V2LoggedRequest[];
  waitFor(match: (request: V2LoggedRequest) => boolean, timeoutMs?: number): Promise<V2LoggedRequest>;
  close(): Promise<void>;
}

/** The tools every v2 test server offers. */
export function buildV2Server(): McpServer {
  const server = new McpServer({ name: 'v2-test-server', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('echo', { description: 'Echoes its text', inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool(
    'slow',
    { description: 'Sends progress, then answers after ms', inputSchema: z.object({ ms: z.number(), steps: z.number().optional() }) },
    async ({ ms, steps }, ctx) => {
      const count = steps ?? 0;
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= count; i++) {
        if (token !== undefined)
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: count } });
      }
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: `slept ${ms}` }] };
    },
  );
  return server;
}

/**
 * Serves a fetch-style handler (`handler.fetch`, tmcp's `transport.respond`) on a node:http server:
 * the request as a WHATWG Request, the Response streamed back (a 404 when it gives none).
 */
export async function serveFetch(
  respond: (request: Request) => Promise<Response | null>,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
): Promise<void> {
  const controller = new AbortController();
  res.on('close', () => {
    controller.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'DELETE';
  const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    signal: controller.signal,
    ...(hasBody ? { body: new Uint8Array(body) } : {}),
  });
  const response = (await respond(request)) ?? new Response(null, { status: 404 });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    res.end();
    return;
  }
  const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

/** What every test server logs of a request: its method, headers, parsed body and JSON-RPC method. */
export interface RequestFields {
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  rpc: string | undefined;
}

/**
 * A `node:http` server on the whole request body: `handle` gets the bytes and what a log keeps of
 * them; a handler that throws answers 500.
 */
export function fetchServer(
  handle: (req: IncomingMessage, res: ServerResponse, bytes: Buffer, fields: RequestFields) => Promise<void>,
): Server {
  return createServer((req, res) => {
    void (async () => {
      const bytes = await readBytes(req);
      const body = parseBody(bytes);
      await handle(req, res, bytes, { method: req.method ?? '', headers: req.headers, body, rpc: rpcMethodOf(body) });
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
}

export async function startV2Server(options: V2ServerOptions = {}): Promise<V2TestServer> {
  const handler = createMcpHandler(() => buildV2Server(), {
    ...(options.legacy === 'reject' ? { legacy: 'reject' as const } : {}),
    ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
    ...(options.responseMode === undefined ? {} : { responseMode: options.responseMode }),
  });
  const log = new RequestLog<V2LoggedRequest>('at the v2 server');
  const server = fetchServer(async (req, res, bytes, fields) => {
    log.add({
      ...fields,
      ended: new Promise((resolve) =>
        res.on('close', () => {
          resolve();
        }),
      ),
    });
    if (options.intercept !== undefined && (await options.intercept(req, res, fields.body))) return;
    await serveFetch((request) => handler.fetch(request), req, res, bytes);
  });
  const port = await listenLocal(server);
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    handler,
    requests: log.entries,
    waitFor: (match, timeoutMs) => log.waitFor(match, timeoutMs),
    async close() {
      await handler.close();
      await shutDown(server);
    },
  };
}
