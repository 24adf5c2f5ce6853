/**
 * The official SDK's real server (McpServer + StreamableHTTPServerTransport) on 127.0.0.1, with a
 * request log and a small hook to answer chosen requests with a chosen status. Tests start one
 * per case and close it; nothing here is mocked.
 */
import { createServer, type IncomingMessage, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';

export interface LoggedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** The JSON-RPC method of a POST body, if any. */
  rpc: string | undefined;
  /** Settles when the server side of this exchange closed (response ended or connection dropped). */
  ended: Promise<void>;
}

export interface Fault {
  /** HTTP method to match. */
  method: 'POST' | 'GET' | 'DELETE';
  /** JSON-RPC method of the POST body to match, if given. */
  rpc?: string;
  status: number;
  body?: string;
  contentType?: string;
  /** How many matching requests to answer this way (default 1). */
  times?: number;
  /** A further condition on the request (e.g. the tool's arguments), if given. */
  match?: (request: LoggedRequest) => boolean;
}

export interface ServerOptions {
  /** true: SSE responses to POSTs (the default); false: enableJsonResponse. */
  sse?: boolean;
  /** false: sessionless (a new server per request). Default true. */
  stateful?: boolean;
  /**
   * Resumable streams: true uses the SDK's example event store (default when stateful); a
   * function makes the store of each new session (test/support/event-store.ts has one that
   * replays in order); false: none.
   */
  eventStore?: boolean | (() => EventStore);
  /** Listen on this port (a restarted backend keeps its port); default: a free one. */
  port?: number;
  /** The server's `retryInterval`: a `retry:` line in the priming event of each stream. */
  retryInterval?: number;
  /** The server's SSE keep-alive comment interval (SDK default 15 s). */
  keepAliveMs?: number;
  /** Offer a resource and a prompt besides the tools (for the CLI's listings). Default false. */
  catalog?: boolean;
}

export interface TestServer {
  url: URL;
  port: number;
  requests: LoggedRequest[];
  /** Session IDs the server closed (DELETE or shutdown). */
  closedSessions: string[];
  sessions: Map<string, { server: McpServer; transport: StreamableHTTPServerTransport }>;
  fault(fault: Fault): void;
  /** Resolves with the next request log entry that matches. */
  waitFor(match: (request: LoggedRequest) => boolean, timeoutMs?: number): Promise<LoggedRequest>;
  close(): Promise<void>;
}

function buildServer(catalog = false): McpServer {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool(
    'echo',
    { description: 'echoes its text', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'progress',
    {
      description: 'reports progress n times (waiting delayMs before each, if given), then answers (with its tag, if given)',
      inputSchema: { steps: z.number().int(), delayMs: z.number().int().optional(), tag: z.string().optional() },
    },
    async ({ steps, delayMs, tag }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (delayMs !== undefined && delayMs > 0) {
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          // The client cancelled (or the session closed): stop, as a well-behaved tool does.
          if (extra.signal.aborted) break;
        }
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps },
          });
        }
      }
      return { content: [{ type: 'text', text: tag === undefined ? `done ${steps}` : `done ${steps} ${tag}` }] };
    },
  );
  server.registerTool('roots', { description: 'asks the client for its roots' }, async (extra) => {
    const result = await extra.sendRequest({ method: 'roots/list' }, z.object({ roots: z.array(z.unknown()) }).loose());
    return { content: [{ type: 'text', text: JSON.stringify(result.roots) }] };
  });
  if (catalog) {
    server.registerResource('readme', 'fixture://readme', { description: 'a short text', mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: 'hello' }],
    }));
    server.registerPrompt('greet', { description: 'a greeting', argsSchema: { name: z.string() } }, ({ name }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}.` } }],
    }));
  }
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function rpcOf(body: unknown): string | undefined {
  if (typeof body === 'object' && body !== null && 'method' in body && typeof body.method === 'string') return body.method;
  return undefined;
}

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const sse = options.sse ?? true;
  const stateful = options.stateful ?? true;
  const useEventStore = options.eventStore ?? stateful;
  const requests: LoggedRequest[] = [];
  const closedSessions: string[] = [];
  const sessions: TestServer['sessions'] = new Map();
  const faults: Fault[] = [];
  const waiters: { match: (r: LoggedRequest) => boolean; resolve: (r: LoggedRequest) => void }[] = [];

  const takeFault = (entry: LoggedRequest): Fault | undefined => {
    const index = faults.findIndex(
      (f) =>
        f.method === entry.method &&
        (f.rpc === undefined || f.rpc === entry.rpc) &&
        (f.match === undefined || f.match(entry)),
    );
    if (index === -1) return undefined;
    const fault = faults[index] as Fault;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) faults.splice(index, 1);
    return fault;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const ended = new Promise<void>((resolve) => {
      res.once('close', () => {
        resolve();
      });
    });
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const entry: LoggedRequest = { method: req.method ?? '', headers: req.headers, body, rpc: rpcOf(body), ended };
    requests.push(entry);
    for (const waiter of [...waiters]) {
      if (waiter.match(entry)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    }
    const fault = takeFault(entry);
    if (fault) {
      res.writeHead(fault.status, fault.contentType ? { 'content-type': fault.contentType } : {});
      res.end(fault.body ?? '');
      return;
    }
    if (!stateful) {
      const server = buildServer(options.catalog);
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: !sse });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (!session) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (entry.rpc !== 'initialize') {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null }));
      return;
    }
    const server = buildServer(options.catalog);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: !sse,
      ...(useEventStore === false
        ? {}
        : { eventStore: useEventStore === true ? new InMemoryEventStore() : useEventStore() }),
      ...(options.retryInterval === undefined ? {} : { retryInterval: options.retryInterval }),
      ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
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
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;

  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    port,
    requests,
    closedSessions,
    sessions,
    fault: (fault) => faults.push(fault),
    waitFor: (match, timeoutMs = 5_000) => {
      const seen = requests.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error('waitFor: no matching request'));
        }, timeoutMs);
        waiters.push({
          match,
          resolve: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
        });
      });
    },
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
