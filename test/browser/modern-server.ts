/**
 * The v2 SDK's real server (`@modelcontextprotocol/server` 2.x, `createMcpHandler`: 2026-07-28,
 * with the stateless 2025 fallback) on 127.0.0.1 behind CORS, so the status page on another
 * origin can use it: preflights are answered and the 2026-07-28 request headers (SEP-2243) are
 * allowed. `toolsChanged()` reaches every open `subscriptions/listen` stream; `setAvailable(false)`
 * is an outage (every open exchange cut, every request answered 503).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as z from 'zod';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { listenLocal, parseBody, readBytes, rpcMethodOf, shutDown } from '../support/http.js';
import { buildV2Server, serveFetch } from '../support/v2-server.js';
import { corsHeaders } from './cors-server.js';

/** The 2025 front's CORS headers, and the 2026-07-28 request headers the page's transport sends. */
export const modernCorsHeaders = {
  ...corsHeaders,
  'access-control-allow-headers': `${corsHeaders['access-control-allow-headers']}, mcp-method, mcp-name`,
} as const;

export interface ModernCorsServer {
  url: URL;
  /** The JSON-RPC methods the server was asked, in order. */
  readonly rpcs: readonly string[];
  /** `notifications/tools/list_changed` to every listen stream that asked for it. */
  toolsChanged(): void;
  setAvailable(available: boolean): void;
  close(): Promise<void>;
}

export async function startModernCorsServer(): Promise<ModernCorsServer> {
  const handler = createMcpHandler(() => {
    const server = buildV2Server();
    // The page's second button: a tool that reports progress (the 2025 server's `progress`).
    server.registerTool(
      'progress',
      { description: 'Sends progress, then answers', inputSchema: z.object({ steps: z.number(), delayMs: z.number() }) },
      async ({ steps, delayMs }, ctx) => {
        const token = ctx.mcpReq._meta?.progressToken;
        for (let i = 1; i <= steps; i++) {
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          if (token !== undefined)
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
        }
        return { content: [{ type: 'text', text: `done ${steps}` }] };
      },
    );
    return server;
  });
  const rpcs: string[] = [];
  const open = new Set<ServerResponse>();
  let available = true;

  const serve = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, modernCorsHeaders);
      res.end();
      return;
    }
    if (!available) {
      res.writeHead(503, { ...modernCorsHeaders, 'content-type': 'text/plain' });
      res.end('unavailable');
      return;
    }
    open.add(res);
    res.once('close', () => open.delete(res));
    void (async () => {
      const bytes = await readBytes(req);
      const rpc = rpcMethodOf(parseBody(bytes));
      if (rpc !== undefined) rpcs.push(rpc);
      await serveFetch(
        async (request) => {
          const response = await handler.fetch(request);
          const headers = new Headers(response.headers);
          for (const [name, value] of Object.entries(modernCorsHeaders)) headers.set(name, value);
          return new Response(response.body, { status: response.status, headers });
        },
        req,
        res,
        bytes,
      );
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500, modernCorsHeaders);
      res.end();
    });
  };

  const front: Server = createServer(serve);
  const port = await listenLocal(front);
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    rpcs,
    toolsChanged() {
      handler.notify.toolsChanged();
    },
    setAvailable(next) {
      available = next;
      if (!next) for (const res of open) res.destroy();
    },
    async close() {
      await handler.close();
      await shutDown(front);
    },
  };
}
