/**
 * The SDK's real server (test/support/mcp-server.ts) behind a small CORS front on 127.0.0.1, so
 * a page served from another origin can use it: preflights are answered, and `mcp-session-id`
 * is exposed to the page (without that header a browser hides it and no session can exist).
 * Requests and streams are forwarded unchanged; a stream the backend cuts is cut for the browser
 * too. `restartBackend()` swaps in a fresh SDK server behind the same URL: every session is lost.
 */
import { createServer, request as forwardRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenLocal, shutDown } from '../support/http.js';
import { startServer, type ServerOptions, type TestServer } from '../support/mcp-server.js';
import { OrderedEventStore } from '../support/event-store.js';

export const corsHeaders = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers': 'mcp-session-id, mcp-protocol-version, last-event-id, content-type, accept, authorization',
  'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate',
  'access-control-max-age': '600',
} as const;

/** Hop-by-hop headers: they describe one connection, not the message, and are not forwarded. */
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

export interface CorsServer {
  /** The MCP endpoint a page on another origin can use. */
  url: URL;
  /** The SDK server behind the front (a new one after `restartBackend()`). */
  readonly backend: TestServer;
  /** Stops the SDK server (every session and stream is lost) and starts a fresh one. */
  restartBackend(): Promise<void>;
  /** Sends a `notifications/message` to every live session (over its standalone stream). */
  log(text: string): Promise<void>;
  /** Sends `notifications/tools/list_changed` to every live session. */
  toolsChanged(): void;
  /**
   * false: the front cuts every open exchange and answers 503 to everything (an outage while the
   * sessions live on behind it); true: it forwards again.
   */
  setAvailable(available: boolean): void;
  close(): Promise<void>;
}

export async function startCorsServer(given: ServerOptions = {}): Promise<CorsServer> {
  // A store that can replay the standalone stream (W1: a reloaded page resumes it); the SDK's example cannot.
  const options: ServerOptions = { eventStore: () => new OrderedEventStore(), ...given };
  let backend = await startServer(options);
  let available = true;
  const open = new Set<ServerResponse>();

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, corsHeaders);
      res.end();
      return;
    }
    if (!available) {
      res.writeHead(503, { ...corsHeaders, 'content-type': 'text/plain' });
      res.end('unavailable');
      return;
    }
    open.add(res);
    res.once('close', () => open.delete(res));
    const upstream = forwardRequest(
      { host: '127.0.0.1', port: backend.port, method: req.method, path: req.url, headers: req.headers, agent: false },
      (response) => {
        const headers: Record<string, string | string[]> = { ...corsHeaders };
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined && !hopByHop.has(name)) headers[name] = value;
        }
        res.writeHead(response.statusCode ?? 502, headers);
        // An event stream's headers go out at once, as the backend sent them, not with its first event.
        res.flushHeaders();
        response.pipe(res);
        // The backend cut the response (a restart): cut it for the browser as well.
        response.once('close', () => {
          if (!response.complete) res.destroy();
        });
      },
    );
    upstream.once('error', (error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { ...corsHeaders, 'content-type': 'text/plain' });
      res.end(`backend unavailable: ${error.message}`);
    });
    // The browser went away (an aborted fetch, a closed stream): stop the backend exchange too.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };

  const front: Server = createServer(forward);
  const port = await listenLocal(front);

  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    get backend() {
      return backend;
    },
    async restartBackend() {
      await backend.close();
      backend = await startServer(options);
    },
    async log(text) {
      for (const { server } of backend.sessions.values()) await server.sendLoggingMessage({ level: 'info', data: text });
    },
    toolsChanged() {
      for (const { server } of backend.sessions.values()) server.sendToolListChanged();
    },
    setAvailable(next) {
      available = next;
      if (!next) for (const res of open) res.destroy();
    },
    async close() {
      await shutDown(front);
      await backend.close();
    },
  };
}
