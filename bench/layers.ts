/**
 * Where a sequential call's client CPU goes, layer by layer, in one process against the
 * benchmark server (JSON endpoint), rounds alternating, medians shown:
 *
 *   node:http   a bare keep-alive `node:http` POST loop (what this transport's Node client sits on)
 *   transport   this transport alone: send() and wait for onmessage, no SDK Client
 *   client      the SDK Client's callTool over this transport
 *
 * Then a session's age: fresh sessions (transport + Client), CPU per call in batches of 1,000
 * calls, to show the first batches of a session costing more than the later ones.
 *
 *   npm run build && node --expose-gc --import tsx bench/layers.ts
 *
 * Diagnostics for the closing notes and the README, not a target table; no test runs it.
 */
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { runMain, startServer, stopAll } from './processes.js';
import { endpointUrl, forceGc } from './scenarios.js';
import { median } from './stats.js';

const builtPackage = '../dist/node/src/node.js';
const { StreamableHTTPClientTransport } = (await import(builtPackage)) as typeof import('../src/node.js');

const calls = 2_000;
const rounds = 8;
const protocolVersion = '2025-11-25';

let nextId = 1;
const echo = (): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id: nextId++,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: 'hello' } },
});

/** A transport driven without the SDK Client: one call at a time, answered through onmessage. */
async function bareTransport(url: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  let answered: (() => void) | undefined;
  transport.onmessage = () => {
    const done = answered;
    answered = undefined;
    done?.();
  };
  const exchange = (message: JSONRPCMessage) =>
    new Promise<void>((resolve, reject) => {
      answered = resolve;
      transport.send(message).catch(reject);
    });
  await transport.start();
  await exchange({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'layers', version: '1.0.0' } },
  });
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  transport.setProtocolVersion(protocolVersion);
  return { transport, call: () => exchange(echo()) };
}

/** The same POST with `node:http` and nothing else: headers built once, the body parsed. */
function bareHttp(url: string, sessionId: string) {
  const agent = new http.Agent({ keepAlive: true });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': sessionId,
    'mcp-protocol-version': protocolVersion,
  };
  const call = () =>
    new Promise<void>((resolve, reject) => {
      const body = Buffer.from(JSON.stringify(echo()));
      const request = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            JSON.parse(Buffer.concat(chunks).toString('utf8'));
            resolve();
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  return { agent, call };
}

async function cpuPerCall(call: () => Promise<void>, n: number): Promise<number> {
  forceGc();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await call();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

runMain(async () => {
  const { base } = await startServer();
  const url = endpointUrl(base, 'json');
  try {
    const bare = await bareTransport(url);
    const client = new Client({ name: 'layers', version: '1.0.0' }, { capabilities: {} });
    const clientTransport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(clientTransport);
    const raw = bareHttp(url, bare.transport.sessionId ?? '');
    const layers: [string, () => Promise<void>][] = [
      ['node:http', raw.call],
      ['transport', bare.call],
      ['client', () => client.callTool({ name: 'echo', arguments: { text: 'hello' } }).then(() => undefined)],
    ];
    const samples = new Map<string, number[]>(layers.map(([name]) => [name, []]));
    for (let round = 0; round <= rounds; round++) {
      for (const [name, call] of layers) {
        const cpu = await cpuPerCall(call, calls);
        if (round > 0) samples.get(name)?.push(cpu);
      }
    }
    console.log(`client CPU per sequential call, µs (median of ${rounds} rounds of ${calls.toLocaleString('en-US')} calls):`);
    for (const [name] of layers) console.log(`  ${name.padEnd(10)} ${median(samples.get(name) ?? []).toFixed(0)}`);
    await client.close();
    await bare.transport.close();
    raw.agent.destroy();

    console.log('a fresh session (transport + Client), CPU µs per call in batches of 1,000:');
    for (let session = 0; session < 4; session++) {
      const fresh = new Client({ name: 'layers', version: '1.0.0' }, { capabilities: {} });
      await fresh.connect(new StreamableHTTPClientTransport(new URL(url)));
      const batches: number[] = [];
      for (let batch = 0; batch < 6; batch++) {
        batches.push(await cpuPerCall(() => fresh.callTool({ name: 'echo', arguments: { text: 'hello' } }).then(() => undefined), 1_000));
      }
      console.log(`  session ${session + 1}: ${batches.map((b) => b.toFixed(0)).join(' ')}`);
      await fresh.close();
    }
  } finally {
    await stopAll();
  }
});
