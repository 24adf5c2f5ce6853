/**
 * The SDKs' real servers for the host tests (U12): the 1.x McpServer behind its
 * StreamableHTTPServerTransport (stateful, SSE answers), and the v2 McpServer behind
 * `createMcpHandler` (2026-07-28, with or without the 2025 fallback), on 127.0.0.1. Each offers
 * `echo` and `wait`, whose handler notes what it saw: when it started, and whether its request's
 * abort signal fired before it finished (what a host's abort reaches on the server).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { listenLocal, parseBody, readText, RequestLog, rpcMethodOf, shutDown } from './http.js';
import { fetchServer, serveFetch } from './v2-server.js';

/** What one `wait` handler saw. */
export interface WaitCall {
  /** Settles with how the handler ended: its request aborted, or its time ran out and it answered. */
  readonly outcome: Promise<'aborted' | 'answered'>;
}

export interface HostRequest {
  method: string;
  headers: IncomingHttpHeaders;
  rpc: string | undefined;
  body: unknown;
  /** Settles when the server side of this exchange closed (response ended or connection dropped). */
  ended: Promise<void>;
}

export interface HostServer {
  url: URL;
  requests: HostRequest[];
  waits: WaitCall[];
  waitFor(match: (request: HostRequest) => boolean): Promise<HostRequest>;
  /** The next `wait` handler to start (or the one started already). */
  nextWait(): Promise<WaitCall>;
  /** From now on the server takes every request and answers none (a frozen process); open streams stay open. */
  freeze(): void;
  close(): Promise<void>;
}

class Waits {
  readonly calls: WaitCall[] = [];
  private readonly waiters: ((call: WaitCall) => void)[] = [];

  /** The handler's body: waits `ms` unless `signal` aborts first. */
  run(ms: number, signal: AbortSignal): Promise<{ content: { type: 'text'; text: string }[] }> {
    let settle: (outcome: 'aborted' | 'answered') => void = () => undefined;
    const outcome = new Promise<'aborted' | 'answered'>((resolve) => {
      settle = resolve;
    });
    const call: WaitCall = { outcome };
    this.calls.push(call);
    this.waiters.shift()?.(call);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        settle('answered');
        resolve({ content: [{ type: 'text', text: `waited ${ms}` }] });
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        settle('aborted');
        resolve({ content: [{ type: 'text', text: 'aborted' }] });
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  next(): Promise<WaitCall> {
    const started = this.calls.at(-1);
    if (started !== undefined) return Promise.resolve(started);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

const logged = (log: RequestLog<HostRequest>, req: IncomingMessage, res: ServerResponse, body: unknown): HostRequest => {
  const entry: HostRequest = {
    method: req.method ?? '',
    headers: req.headers,
    rpc: rpcMethodOf(body),
    body,
    ended: new Promise((resolve) => {
      res.once('close', () => {
        resolve();
      });
    }),
  };
  log.add(entry);
  return entry;
};

/** The 1.x SDK's server: stateful sessions, SSE answers (or JSON with `sse: false`). */
export async function startHostServerV1(options: { sse?: boolean } = {}): Promise<HostServer> {
  const waits = new Waits();
  const log = new RequestLog<HostRequest>('at the 1.x host server');
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const build = () => {
    const server = new McpServerV1({ name: 'host-v1', version: '1.0.0' });
    server.registerTool('echo', { description: 'echoes its text', inputSchema: { text: z.string() } }, ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    server.registerTool('wait', { description: 'waits ms, then answers', inputSchema: { ms: z.number() } }, ({ ms }, extra) =>
      waits.run(ms, extra.signal),
    );
    return server;
  };
  let frozen = false;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = req.method === 'POST' ? parseBody(await readText(req)) : undefined;
    const entry = logged(log, req, res, body);
    if (frozen) return;
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    const known = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (known !== undefined) {
      await known.handleRequest(req, res, body);
      return;
    }
    if (sessionId !== undefined || entry.rpc !== 'initialize') {
      // What the SDK's own examples answer: 404 for a session it does not know, 400 without one.
      res.writeHead(sessionId === undefined ? 400 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: options.sse === false,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    await build().connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const port = await listenLocal(server);
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    requests: log.entries,
    waits: waits.calls,
    waitFor: (match) => log.waitFor(match),
    nextWait: () => waits.next(),
    freeze() {
      frozen = true;
    },
    async close() {
      for (const transport of sessions.values()) await transport.close();
      await shutDown(server);
    },
  };
}

/** The v2 SDK's `createMcpHandler`: 2026-07-28, and the stateless 2025 fallback unless `legacy: 'reject'`. */
export async function startHostServerV2(options: { legacy?: 'reject' } = {}): Promise<HostServer> {
  const waits = new Waits();
  const log = new RequestLog<HostRequest>('at the v2 host server');
  const handler = createMcpHandler(
    () => {
      const server = new McpServerV2({ name: 'host-v2', version: '1.0.0' });
      server.registerTool('echo', { description: 'echoes its text', inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
        content: [{ type: 'text', text }],
      }));
      server.registerTool('wait', { description: 'waits ms, then answers', inputSchema: z.object({ ms: z.number() }) }, ({ ms }, ctx) =>
        waits.run(ms, ctx.mcpReq.signal),
      );
      return server;
    },
    { ...(options.legacy === undefined ? {} : { legacy: options.legacy }), keepAliveMs: 0 },
  );
  let frozen = false;
  const server = fetchServer(async (req, res, bytes, fields) => {
    logged(log, req, res, fields.body);
    if (frozen) return;
    await serveFetch((request) => handler.fetch(request), req, res, bytes);
  });
  const port = await listenLocal(server);
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    requests: log.entries,
    waits: waits.calls,
    waitFor: (match) => log.waitFor(match),
    nextWait: () => waits.next(),
    freeze() {
      frozen = true;
    },
    async close() {
      await handler.close();
      await shutDown(server);
    },
  };
}
