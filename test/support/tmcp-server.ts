/**
 * tmcp (`tmcp` 1.20 with `@tmcp/transport-http` 0.9), a third-party 2026-07-28 server that is
 * strict about the SEP-2243 headers (`Mcp-Method`, `MCP-Protocol-Version` on every POST, a
 * notification's included: -32020 otherwise), on 127.0.0.1 through the same node:http ↔ Request
 * adapter as the v2 SDK's server. A request log with each answer's status lets tests see both sides.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { McpServer } from 'tmcp';
import { HttpTransport } from '@tmcp/transport-http';
import { listenLocal, RequestLog, shutDown } from './http.js';
import { fetchServer, serveFetch } from './v2-server.js';

export interface TmcpLoggedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  rpc: string | undefined;
  /** The HTTP status tmcp answered with. */
  status: Promise<number>;
}

export interface TmcpTestServer {
  url: URL;
  requests: TmcpLoggedRequest[];
  waitFor(match: (request: TmcpLoggedRequest) => boolean, timeoutMs?: number): Promise<TmcpLoggedRequest>;
  close(): Promise<void>;
}

export async function startTmcpServer(): Promise<TmcpTestServer> {
  const mcp = new McpServer(
    { name: 'tmcp-test-server', version: '1.0.0', description: 'tmcp under test' },
    { adapter: undefined, capabilities: { tools: { listChanged: true } } },
  );
  mcp.tool({ name: 'hello', description: 'Says hello' }, () => ({ content: [{ type: 'text', text: 'hello' }] }));
  const transport = new HttpTransport(mcp, { path: '/mcp' });
  const log = new RequestLog<TmcpLoggedRequest>('at the tmcp server');
  const server = fetchServer(async (req, res, bytes, fields) => {
    log.add({
      ...fields,
      status: new Promise((resolve) =>
        res.on('close', () => {
          resolve(res.statusCode);
        }),
      ),
    });
    await serveFetch((request) => transport.respond(request), req, res, bytes);
  });
  const port = await listenLocal(server);
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    requests: log.entries,
    waitFor: (match, timeoutMs) => log.waitFor(match, timeoutMs),
    close: () => shutDown(server),
  };
}
