/**
 * U11: the SDK 1.x server as its own docs set it up: `createMcpExpressApp()` (express, with the
 * SDK's Host validation) and a `StreamableHTTPServerTransport` on POST /mcp, stateless. Any other
 * path gets express's own 404 page (HTML), as a user meets it with a wrong path.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { listenLocal, shutDown } from './http.js';

/** The members of express's app this file uses (express ships no types; @types/express is not a dependency). */
interface ExpressApp {
  (req: IncomingMessage, res: ServerResponse): void;
  post(path: string, handler: (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => void): void;
}

export async function startExpressServer(): Promise<{ url: URL; close(): Promise<void> }> {
  const app = createMcpExpressApp() as unknown as ExpressApp;
  app.post('/mcp', (req, res) => {
    const server = new McpServer({ name: 'express-fixture', version: '1.0.0' });
    const transport = new StreamableHTTPServerTransport({});
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server
      .connect(transport)
      .then(() => transport.handleRequest(req, res, req.body))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  const http = createServer(app);
  const port = await listenLocal(http);
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), close: () => shutDown(http) };
}
