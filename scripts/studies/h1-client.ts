/**
 * Issue 44, H11: what `node:http` with Node's keep-alive `http.Agent` costs per request against
 * the transport's small HTTP/1.1 client (src/http/h1.ts), with nothing else in the way:
 * sequential POSTs of a small JSON-RPC body to a `node:http` server in another process on
 * 127.0.0.1, the same headers either way (for node:http, the request options src/http/node.ts
 * sends: a flat header list, `timeout: 0`, `servername: ''`), each answer read as text; client
 * CPU per request (`process.cpuUsage()`) in alternating rounds. A study, not a row of `npm run bench`:
 *
 *   npx tsx scripts/studies/h1-client.ts [--requests=3000] [--rounds=8]
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type * as Https from 'node:https';
import { RequestControl } from '../../src/http/client.js';
import { h1Request, requestHead } from '../../src/http/h1.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const requests = Number(arg('requests') ?? 3000);
const rounds = Number(arg('rounds') ?? 8);

/** The server: a child process running this file with --serve. */
function serve(): void {
  const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hello' }] } });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address !== null && typeof address !== 'string') process.send?.(address.port);
  });
}

async function main(): Promise<void> {
  const child: ChildProcess = fork(process.argv[1] ?? '', ['--serve'], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) =>
    child.once('message', (message) => {
      resolve(Number(message));
    }),
  );
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
  const headers = ['Host', `127.0.0.1:${port}`, 'content-type', 'application/json', 'accept', 'application/json, text/event-stream'];
  headers.push('content-length', String(Buffer.byteLength(body)));
  const agent = new http.Agent({ keepAlive: true, timeout: 4_000 });
  const head = requestHead('POST', '/', headers);
  if (head === undefined) throw new Error('h1.ts would not write these headers');
  const options = (agent: http.Agent): Https.RequestOptions => ({
    hostname: '127.0.0.1',
    port,
    path: '/',
    method: 'POST',
    headers,
    timeout: 0,
    servername: '',
    agent,
  });
  const viaNode = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(options(agent), (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => {
          Buffer.concat(parts).toString('utf8');
          resolve();
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  const viaH1 = async () => {
    const control = new RequestControl();
    const response = await h1Request('127.0.0.1', port, head, body, control, undefined);
    await response.text();
  };
  const clients: Record<string, () => Promise<void>> = { 'node:http + Node agent': viaNode, 'h1.ts': viaH1 };
  const measure = async (post: () => Promise<void>) => {
    for (let i = 0; i < 300; i++) await post();
    const start = process.cpuUsage();
    for (let i = 0; i < requests; i++) await post();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / requests;
  };
  const figures: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, post] of Object.entries(clients)) (figures[name] ??= []).push(await measure(post));
  }
  for (const [name, values] of Object.entries(figures)) {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    console.log(
      `${name.padEnd(22)} client CPU per request: median ${median.toFixed(1)} µs, min ${(sorted[0] ?? 0).toFixed(1)}, max ${(sorted.at(-1) ?? 0).toFixed(1)}`,
    );
  }
  child.kill();
  agent.destroy();
}

if (process.argv.includes('--serve')) serve();
else await main();
