/**
 * The official SDK's real server (McpServer + StreamableHTTPServerTransport) on 127.0.0.1, with a
 * request log and a small hook to answer chosen requests with a chosen status. Tests start one
 * per case and close it; nothing here is mocked.
 */
import { createServer, type IncomingMessage, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { listenLocal, parseBody, readText, RequestLog, rpcMethodOf, shutDown } from './http.js';

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
  /** N2: serve https with these `node:https` settings (its certificate and key; `requestCert` and `ca` for mutual TLS). */
  tls?: HttpsServerOptions;
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

export function buildServer(catalog = false): McpServer {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('echo', { description: 'echoes its text', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
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

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const sse = options.sse ?? true;
  const stateful = options.stateful ?? true;
  const useEventStore = options.eventStore ?? stateful;
  const log = new RequestLog<LoggedRequest>('at the SDK server');
  const closedSessions: string[] = [];
  const sessions: TestServer['sessions'] = new Map();
  const faults: Fault[] = [];

  const takeFault = (entry: LoggedRequest): Fault | undefined => {
    const index = faults.findIndex(
      (f) => f.method === entry.method && (f.rpc === undefined || f.rpc === entry.rpc) && (f.match === undefined || f.match(entry)),
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
    const body = req.method === 'POST' ? parseBody(await readText(req)) : undefined;
    const entry: LoggedRequest = { method: req.method ?? '', headers: req.headers, body, rpc: rpcMethodOf(body), ended };
    log.add(entry);
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
      ...(useEventStore === false ? {} : { eventStore: useEventStore === true ? new InMemoryEventStore() : useEventStore() }),
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

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  };
  // An https server is an http one over TLS: the same listening and shutting down.
  const http: Server = options.tls === undefined ? createServer(onRequest) : createHttpsServer(options.tls, onRequest);
  const port = await listenLocal(http, options.port);

  return {
    url: new URL(`${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/mcp`),
    port,
    requests: log.entries,
    closedSessions,
    sessions,
    fault: (fault) => faults.push(fault),
    waitFor: (match, timeoutMs) => log.waitFor(match, timeoutMs),
    close: async () => {
      for (const { server, transport } of sessions.values()) {
        await transport.close();
        await server.close();
      }
      await shutDown(http);
    },
  };
}
