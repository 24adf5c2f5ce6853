import { it, vi } from 'vitest';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { startServer } from '../../test/support/mcp-server.js';
import { newClient, textOf } from '../../test/support/harness.js';
it('dbg', async () => {
  const server = await startServer({ sse: true });
  const client = newClient({ roots: {} });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work/a', name: 'a' }] }));
  const t = new StreamableHTTPClientTransport(server.url); vi.spyOn(t, 'send');
  t.onerror = (e) => console.log('ERR', e);
  await client.connect(t);
  const r = await client.callTool({ name: 'roots' });
  console.log(JSON.stringify(r), textOf(r));
  for (const q of server.requests) console.log(q.method, JSON.stringify(q.body));
  await client.close(); await server.close();
});
