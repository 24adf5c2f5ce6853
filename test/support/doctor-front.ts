/**
 * N4: a small node:http front on 127.0.0.1 in front of a real SDK server (1.x or v2), the way a
 * reverse proxy or a framework sits in front of one in production: it answers CORS preflights
 * and adds the CORS headers a browser needs, and forwards everything else unchanged, streams
 * included. Each option plants one misconfiguration for `mcp-xstate-transport doctor` to find.
 */
import { createServer, request as forwardRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenLocal, shutDown } from './http.js';

export interface FrontOptions {
  /** Answer the standalone GET with this status instead of forwarding it (404, 406). */
  getStatus?: number;
  /**
   * 'full' (the default): CORS for any origin, Mcp-Session-Id exposed; 'no-expose': no
   * Access-Control-Expose-Headers; 'no-mcp-method': Access-Control-Allow-Headers without
   * Mcp-Method and Mcp-Name (as deployed servers were found, N6).
   */
  cors?: 'full' | 'no-expose' | 'no-mcp-method';
  /** Answer every request with a 307 to this URL (another origin). */
  redirectTo?: URL;
  /** Answer every MCP request 401 with this WWW-Authenticate, and the well-known metadata 404 (unless `metadata`). */
  unauthorized?: string | ((self: URL) => string);
  /** With `unauthorized`: the protected-resource metadata (RFC 9728) at /.well-known/oauth-protected-resource/mcp. */
  metadata?: Record<string, unknown>;
  /** Add a Set-Cookie to every answer (an affinity cookie). */
  cookie?: string;
}

export interface Front {
  url: URL;
  /** Every request the front saw: method and path. */
  requests: { method: string; path: string }[];
  close(): Promise<void>;
}

const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

function corsHeaders(options: FrontOptions): Record<string, string> {
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    'access-control-allow-headers':
      options.cors === 'no-mcp-method'
        ? 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id'
        : 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, last-event-id',
    ...(options.cors === 'no-expose' ? {} : { 'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate' }),
  };
}

export async function startFront(backend: URL, options: FrontOptions = {}): Promise<Front> {
  const requests: Front['requests'] = [];
  const cors = corsHeaders(options);
  const extra: Record<string, string> = { ...cors, ...(options.cookie === undefined ? {} : { 'set-cookie': options.cookie }) };

  /** The front's own URL, once it listens (for a challenge that names it). */
  let self = new URL(backend.href);
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? '', path });
    if (options.redirectTo !== undefined) {
      res.writeHead(307, { location: options.redirectTo.href }).end();
      return;
    }
    if (options.unauthorized !== undefined) {
      if (path === '/.well-known/oauth-protected-resource/mcp' && options.metadata !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(options.metadata));
      } else if (path.startsWith('/.well-known/')) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      else {
        const challenge = typeof options.unauthorized === 'string' ? options.unauthorized : options.unauthorized(self);
        res.writeHead(401, { 'www-authenticate': challenge, 'content-type': 'text/plain' }).end('unauthorized');
      }
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors).end();
      return;
    }
    if (req.method === 'GET' && options.getStatus !== undefined) {
      res.writeHead(options.getStatus, { ...extra, 'content-type': 'application/json' }).end('{}');
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !hopByHop.has(name) && name !== 'host'));
    const upstream = forwardRequest(
      { host: backend.hostname, port: backend.port, path, method: req.method, headers: { ...headers, host: backend.host } },
      (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !hopByHop.has(name) && !name.startsWith('access-control-')) out[name] = value;
        }
        res.writeHead(answer.statusCode ?? 502, { ...out, ...extra });
        res.flushHeaders();
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };

  const server: Server = createServer(handle);
  const port = await listenLocal(server);
  self = new URL(`http://127.0.0.1:${port}${backend.pathname}`);
  return {
    url: self,
    requests,
    close: () => shutDown(server),
  };
}
