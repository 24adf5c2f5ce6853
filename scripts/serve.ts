/**
 * The official SDK's server (McpServer + StreamableHTTPServerTransport) on 127.0.0.1 with the test
 * fixture's tools, a resource and a prompt, until Ctrl-C: something to point the CLI at.
 *   npx tsx scripts/serve.ts [port]
 */
import { startServer } from '../test/support/mcp-server.js';

const port = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
const server = await startServer({ catalog: true, ...(port === undefined ? {} : { port }) });
console.log(`MCP server (the SDK's) on ${server.url.href}; Ctrl-C stops it`);
const stop = () => {
  void server.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
