/**
 * What a hostile or broken server costs a client (issue 10), measured outside the test suite:
 * time to fail and peak RSS growth for huge and endless bodies, what a MessageTooLargeError
 * keeps alive, and how often a stream is reopened after `retry: 0`.
 *
 *   node --expose-gc --import tsx bench/hostile.ts [path/to/src/index.ts | -] [cases, e.g. 4 or 1,2]
 *
 * The optional path runs the same cases against another checkout (e.g. /work/main/src/index.ts)
 * to compare. Every server is local (127.0.0.1) and writes its bodies lazily, with backpressure,
 * so the figures are the client's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';

type TransportModule = typeof import('../src/index.js');
const target = process.argv[2] !== undefined && process.argv[2] !== '-' ? process.argv[2] : '../src/index.js';
/** Which cases to run (1-5), e.g. `4` alone for a clean retention figure; all by default. */
const only = process.argv[3]?.split(',').map(Number);
const wanted = (n: number) => only === undefined || only.includes(n);
const { StreamableHTTPClientTransport } = (await import(target)) as TransportModule;

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

type Handler = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => void;

async function server(onCall: Handler, onGet?: (req: IncomingMessage, res: ServerResponse) => void) {
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
      const headers = { 'mcp-session-id': 'bench-session' };
      if (req.method === 'GET') {
        if (onGet) onGet(req, res);
        else res.writeHead(405, headers).end();
        return;
      }
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      if (body.method === 'initialize') {
        res.writeHead(200, { ...headers, 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'hostile', version: '1' } },
          }),
        );
        return;
      }
      if (body.id === undefined) return void res.writeHead(202, headers).end();
      onCall(req, res, body);
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`),
    close: () => {
      srv.closeAllConnections();
      return new Promise<void>((resolve) =>
        srv.close(() => {
          resolve();
        }),
      );
    },
  };
}

/** Writes `total` bytes of `piece` with backpressure; stops when the client goes. */
function pump(res: ServerResponse, piece: Buffer, total: number, end = true): void {
  let sent = 0;
  const write = () => {
    while (sent < total && !res.destroyed) {
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', write);
    }
    if (end && !res.destroyed) res.end();
  };
  write();
}

/** Peak RSS growth over the baseline while `run` goes, sampled every 5 ms. */
async function peakRss<T>(run: () => Promise<T>): Promise<{ value: T; peak: number; ms: number }> {
  gc();
  const base = process.memoryUsage().rss;
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss - base);
  }, 5);
  const started = performance.now();
  const value = await run();
  const ms = performance.now() - started;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss - base);
  return { value, peak, ms };
}

async function connected(url: URL, options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1] = {}) {
  const transport = new StreamableHTTPClientTransport(url, options);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => `${(e as Error).constructor.name}: ${(e as Error).message.slice(0, 110)}`,
  );

const rows: string[] = [];

// 1. A 100 MiB JSON answer (default maxMessageBytes 16 MiB).
if (wanted(1)) {
  const s = await server((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'bench-session' });
    res.write('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"');
    pump(res, Buffer.alloc(64 * 1024, 'a'), 100 * 1024 * 1024);
  });
  const { client, transport } = await connected(s.url);
  const r = await peakRss(() => outcome(client.callTool({ name: 'x', arguments: {} }, undefined, { timeout: 60_000 })));
  rows.push(`100 MiB JSON answer: ${r.value} | ${r.ms.toFixed(0)} ms | peak RSS +${mib(r.peak)}`);
  await client.close();
  await transport.close();
  await s.close();
}

// 2. A 255 KiB gzip body inflating to 256 MiB.
if (wanted(2)) {
  const inflated = Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"'),
    Buffer.alloc(256 * 1024 * 1024, 'a'),
    Buffer.from('"}]}}'),
  ]);
  const gz = gzipSync(inflated, { level: 9 });
  const s = await server((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'mcp-session-id': 'bench-session' });
    res.end(gz);
  });
  const { client, transport } = await connected(s.url);
  const r = await peakRss(() => outcome(client.callTool({ name: 'x', arguments: {} }, undefined, { timeout: 60_000 })));
  rows.push(`gzip body ${(gz.length / 1024).toFixed(0)} KiB → 256 MiB: ${r.value} | ${r.ms.toFixed(0)} ms | peak RSS +${mib(r.peak)}`);
  await client.close();
  await transport.close();
  await s.close();
}

// 3. An endless 500 body.
if (wanted(3)) {
  const s = await server((_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    pump(res, Buffer.alloc(16 * 1024, 'e'), Number.MAX_SAFE_INTEGER);
  });
  const { client, transport } = await connected(s.url);
  const r = await peakRss(() => outcome(client.callTool({ name: 'x', arguments: {} }, undefined, { timeout: 20_000 })));
  rows.push(`endless 500 body: ${r.value} | ${r.ms.toFixed(0)} ms | peak RSS +${mib(r.peak)}`);
  await client.close();
  await transport.close();
  await s.close();
}

// 4. What a MessageTooLargeError keeps alive: a 17 MiB server-sent event, the error held.
if (wanted(4)) {
  const s = await server((_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'bench-session' });
    res.write(`id: 1\ndata: {"jsonrpc":"2.0","id":${String(body.id)},"result":{"x":"`);
    pump(res, Buffer.alloc(64 * 1024, 'b'), 17 * 1024 * 1024, false);
  });
  const { client, transport } = await connected(s.url);
  const held: unknown[] = [];
  transport.onerror = (error) => held.push(error);
  gc();
  const before = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  held.push(await client.callTool({ name: 'x', arguments: {} }, undefined, { timeout: 20_000 }).catch((e: unknown) => e));
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc();
  const after = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  rows.push(
    `held MessageTooLargeError (17 MiB event): retains +${mib(after - before)} (heap + array buffers, after gc) | ${held.length} errors held`,
  );
  await client.close();
  await transport.close();
  await s.close();
}

// 5. retry: 0 on the standalone stream, then every reopen answered 503.
if (wanted(5)) {
  let gets = 0;
  const s = await server(
    (_req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'bench-session' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} }));
    },
    (_req, res) => {
      gets++;
      if (gets === 1) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('retry: 0\nid: 1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n');
      } else {
        res.writeHead(503).end('busy');
      }
    },
  );
  const { client, transport } = await connected(s.url);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  rows.push(`retry: 0 then 503s on the standalone GET: ${gets} GETs in 5 s (default reconnectionOptions)`);
  await client.close();
  await transport.close();
  await s.close();
}

console.log(`target: ${target}`);
for (const row of rows) console.log(`- ${row}`);
process.exit(0);
