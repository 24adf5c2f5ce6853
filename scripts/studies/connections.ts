/**
 * P4 (issue 44, item 4): new TCP connections per 100 sequential SSE-answered calls, each body's
 * end in its own packet (test/support/split-proxy.ts), over this transport and the SDK v2's. A study:
 *
 *   npx tsx scripts/studies/connections.ts [--calls=100] [--delay=5] [--runs=3]
 */
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '../../src/node.js';
import { startV2Server } from '../../test/support/v2-server.js';
import { startSplitProxy } from '../../test/support/split-proxy.js';
import { startServer, stopAll } from '../../bench/processes.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const calls = Number(arg('calls') ?? 100);
const delay = Number(arg('delay') ?? 5);
const runs = Number(arg('runs') ?? 3);
/** bench: the bench's server in its own process (/modern-sse), connections read from its /stats; else the v2 server in this process behind the splitting proxy. */
const where = arg('server') ?? 'proxy';

async function accepted(base: string): Promise<number> {
  const response = await fetch(`${base}/stats`, { headers: { connection: 'close' } });
  return ((await response.json()) as { connections: number }).connections;
}

async function benchOnce(base: string, kind: 'this' | 'sdk'): Promise<number> {
  const url = new URL(`${base}/modern-sse`);
  const client = new Client({ name: 'p4', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(kind === 'this' ? new StreamableHTTPClientTransport(url) : new SdkTransport(url));
  await client.callTool({ name: 'echo', arguments: { text: 'warm' } });
  const before = await accepted(base);
  for (let i = 0; i < calls; i++) await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
  const opened = (await accepted(base)) - before - 1;
  await client.close();
  return opened;
}

let lastMsPerCall = 0;

async function once(kind: 'this' | 'sdk'): Promise<number> {
  const server = await startV2Server({ legacy: 'reject', responseMode: 'sse' });
  const proxy = await startSplitProxy(server.url, delay);
  const url = proxy.url(server.url.pathname);
  const client = new Client({ name: 'p4', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(kind === 'this' ? new StreamableHTTPClientTransport(url) : new SdkTransport(url));
  const before = proxy.connections;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
  lastMsPerCall = (performance.now() - t0) / calls;
  const opened = proxy.connections - before;
  await client.close();
  await proxy.close();
  await server.close();
  return opened;
}

const base = where === 'bench' ? (await startServer()).base : '';
try {
  for (let r = 0; r < runs; r++) {
    for (const kind of ['this', 'sdk'] as const) {
      const opened = where === 'bench' ? await benchOnce(base, kind) : await once(kind);
      const wall = where === 'bench' ? '' : `, ${lastMsPerCall.toFixed(2)} ms per call`;
      console.log(`round ${r + 1} ${kind}: ${opened} new connections / ${calls} calls${wall}`);
    }
  }
} finally {
  await stopAll();
}
