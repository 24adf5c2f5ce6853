/**
 * Issue 32, item 4: the HTTP engine, measured. This transport (from src/, under the 1.x SDK `Client`)
 * over its current Node client (`node:http`, src/http/node.ts) and over a prototype sender on
 * undici 7 (`Agent` → per-origin `Pool`, `dispatcher.request`), nothing else different: no cookie
 * jar on either, no proxy, no TLS. Against the bench server (bench/server.ts, its own process).
 *
 *   npx tsx scripts/engine.ts [--rounds=3] [--rows=seq-json,seq-sse,inflight32,inflight256,sessions,cold]
 *
 * Rows: client CPU per sequential call (JSON and SSE answers), per call at 32 and 256 in flight
 * (SSE), heap per held session (each with its GET stream open; growth over the second half of
 * 5,000, after GC), and cold start (a fresh process: load the engine, make one request). Each
 * engine runs each row in a fresh child process; rounds alternate which engine goes first.
 * Ratios are undici / node:http, per round, then median and range. Not part of `npm test`.
 */
import { execFile, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { ChunkReader, ChunkSource } from '../machines/types.js';
import type { HttpResponse, HttpSend, RequestControl } from '../src/http/client.js';

type Engine = 'node' | 'undici';
const rowNames = ['seq-json', 'seq-sse', 'seq-modern', 'inflight32', 'inflight256', 'sessions', 'cold'] as const;
type Row = (typeof rowNames)[number];
const self = fileURLToPath(import.meta.url);

/** An undici body as the transport reads it (HttpResponse + ChunkSource), as NodeResponse does for node:http. */
class UndiciResponse implements HttpResponse, ChunkSource {
  readonly type = 'basic';
  readonly statusText = '';
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null; getSetCookie(): string[] };
  bodyUsed = false;

  constructor(
    readonly status: number,
    raw: Record<string, string | string[] | undefined>,
    private readonly source: Readable,
  ) {
    this.ok = status >= 200 && status <= 299;
    source.on('error', () => undefined);
    this.headers = {
      get: (name) => {
        const v = raw[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
      getSetCookie: () => {
        const v = raw['set-cookie'];
        return v === undefined ? [] : Array.isArray(v) ? v : [v];
      },
    };
  }

  get chunks(): ChunkSource {
    return this;
  }

  get body(): ReadableStream<Uint8Array> | null {
    throw new Error('not used by the transport on Node');
  }

  read(reader: ChunkReader): { cancel(): void } {
    this.bodyUsed = true;
    let done = false;
    this.source.on('data', (chunk: Buffer) => {
      if (!done) reader.chunk(chunk);
    });
    this.source.once('end', () => {
      if (!done) reader.end();
      done = true;
    });
    this.source.once('error', (error) => {
      if (!done) reader.fail(new TypeError('terminated', { cause: error }));
      done = true;
    });
    return {
      cancel: () => {
        done = true;
        this.discardNow();
      },
    };
  }

  discard(): void {
    if (this.bodyUsed) return;
    this.bodyUsed = true;
    this.discardNow();
  }

  private discardNow(): void {
    if (this.source.readableEnded) return;
    this.source.destroy();
  }

  text(): Promise<string> {
    this.bodyUsed = true;
    return new Promise((resolve, reject) => {
      const parts: Buffer[] = [];
      this.source.on('data', (c: Buffer) => parts.push(c));
      this.source.once('end', () => {
        resolve(Buffer.concat(parts).toString('utf8'));
      });
      this.source.once('error', reject);
    });
  }
}

async function undiciSender(): Promise<HttpSend> {
  const { Agent } = await import('undici');
  const agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000, bodyTimeout: 0, headersTimeout: 0 });
  return async (url: URL, init: RequestInit, control?: RequestControl): Promise<HttpResponse> => {
    // The RequestControl as the EventEmitter-shaped signal undici accepts: no AbortController per request.
    const signal =
      control === undefined
        ? undefined
        : {
            get aborted() {
              return control.aborted;
            },
            get reason(): unknown {
              return control.reason;
            },
            on: (_: string, listener: () => void) => {
              control.onAbort(listener);
            },
            once: (_: string, listener: () => void) => {
              control.onAbort(listener);
            },
            removeListener: () => undefined,
          };
    const headers = Object.assign({}, init.headers as Record<string, string> | undefined);
    try {
      const res = await agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: init.method ?? 'GET',
        headers,
        body: typeof init.body === 'string' ? init.body : null,
        signal,
      });
      return new UndiciResponse(res.statusCode, res.headers, res.body);
    } catch (error) {
      throw control?.aborted === true ? control.reason : new TypeError('fetch failed', { cause: error });
    }
  };
}

/** One row for one engine in this (fresh) process; prints one JSON line. */
async function child(engine: Engine, row: Row, base: string): Promise<void> {
  const { registerSender } = await import('../src/http/client.js');
  const { nodeSend } = await import('../src/http/node.js');
  const send = engine === 'undici' ? await undiciSender() : undefined;
  registerSender((options, viaFetch) => ({ send: send ?? nodeSend(options, viaFetch) }));
  const { StreamableHTTPClientTransport } = await import('../src/index.js');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { Client: ClientV2 } = await import('@modelcontextprotocol/client');
  const modern = row === 'seq-modern';
  const path = row === 'seq-json' ? '/json' : modern ? '/modern' : '/sse';
  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(new URL(base + path));
    if (modern) {
      const c = new ClientV2({ name: 'engine', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await c.connect(transport);
      return { call: (text: string) => c.callTool({ name: 'echo', arguments: { text } }), close: () => c.close() };
    }
    const c = new Client({ name: 'engine', version: '1' }, { capabilities: {} });
    await c.connect(transport);
    return { call: (text: string) => c.callTool({ name: 'echo', arguments: { text } }), close: () => c.close() };
  };
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  if (row === 'sessions') {
    const gc = globalThis.gc;
    if (gc === undefined) throw new Error('run with --expose-gc');
    const held: { close(): Promise<unknown> }[] = [];
    const total = 5_000;
    const batch = 50;
    let half = 0;
    const deadline = Date.now() + 240_000;
    while (held.length < total && Date.now() < deadline) {
      held.push(...(await Promise.all(Array.from({ length: batch }, connect))));
      if (held.length === total / 2) {
        await new Promise((r) => setTimeout(r, 500));
        gc();
        half = process.memoryUsage().heapUsed;
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    gc();
    const full = process.memoryUsage().heapUsed;
    process.send?.({ value: (full - half) / (held.length - total / 2), held: held.length });
    for (let i = 0; i < held.length; i += 200) await Promise.all(held.slice(i, i + 200).map((c) => c.close()));
    process.exit(0);
  }
  const client = await connect();
  const inFlight = row === 'inflight32' ? 32 : row === 'inflight256' ? 256 : 1;
  const calls = inFlight === 1 ? 1_500 : inFlight * 40;
  const runCalls = async (n: number) => {
    if (inFlight === 1) {
      for (let i = 0; i < n; i++) await client.call('x');
      return;
    }
    for (let i = 0; i < n; i += inFlight) await Promise.all(Array.from({ length: inFlight }, () => client.call('x')));
  };
  await runCalls(Math.min(calls, 600)); // warm-up
  const c0 = cpu();
  const w0 = performance.now();
  await runCalls(calls);
  const value = (cpu() - c0) / calls;
  process.send?.({ value, wall: (performance.now() - w0) / calls });
  await client.close();
  process.exit(0);
}

/**
 * Cold start of the engine alone, in a fresh plain `node` (no tsx): load it, make one request,
 * read the answer; ms since the process started (Node's own start is the same for both). The
 * rest of the Node entry is the same whichever engine carries the requests.
 */
const coldCode = `
const [base, engine] = process.argv.slice(1);
let status;
if (engine === 'undici') {
  const { Agent } = await import('undici');
  const res = await new Agent().request({ origin: base, path: '/stats', method: 'GET' });
  await res.body.text();
  status = res.statusCode;
} else {
  const http = (await import('node:http')).default;
  status = await new Promise((resolve, reject) => {
    const req = http.request(base + '/stats', { agent: new http.Agent({ keepAlive: true }) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}
if (status !== 200) throw new Error('status ' + status);
process.stdout.write(JSON.stringify({ value: performance.now() }));
process.exit(0);
`;

function runCold(engine: Engine, base: string): Promise<{ value: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', coldCode, base, engine], { timeout: 30_000 }, (error, stdout) => {
      if (error !== null) reject(new Error(`cold ${engine}`, { cause: error }));
      else resolve(JSON.parse(stdout) as { value: number });
    });
  });
}

function runChild(engine: Engine, row: Row, base: string): Promise<{ value: number }> {
  if (row === 'cold') return runCold(engine, base);
  return new Promise((resolve, reject) => {
    const proc = fork(self, ['child', engine, row, base], {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: { value: number } | undefined;
    const timer = setTimeout(() => proc.kill('SIGKILL'), 300_000);
    proc.on('message', (m) => {
      result = m as { value: number };
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      if (result === undefined) reject(new Error(`${engine} ${row}: exit ${String(code)}`));
      else resolve(result);
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
};

async function main(): Promise<void> {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const rounds = Number(arg('rounds') ?? 3);
  const rows = (arg('rows')?.split(',') ?? rowNames) as Row[];
  const { startServer, stopAll } = await import('../bench/processes.js');
  const { base } = await startServer();
  try {
    for (const row of rows) {
      const figures: Record<Engine, number[]> = { node: [], undici: [] };
      const ratios: number[] = [];
      const n = row === 'cold' ? rounds * 3 : rounds;
      for (let r = 0; r < n; r++) {
        const order: Engine[] = r % 2 === 0 ? ['node', 'undici'] : ['undici', 'node'];
        const got: Partial<Record<Engine, number>> = {};
        for (const engine of order) {
          const { value } = await runChild(engine, row, base);
          got[engine] = value;
          figures[engine].push(value);
          await fetch(`${base}/reset`, { method: 'POST' }).catch(() => undefined);
        }
        ratios.push((got.undici ?? NaN) / (got.node ?? NaN));
      }
      const unit = row === 'cold' ? 'ms' : row === 'sessions' ? 'bytes/session' : 'µs CPU/call';
      const fmt = (xs: number[]) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
      console.log(
        `${row}: node:http ${fmt(figures.node)} ${unit}; undici ${fmt(figures.undici)}; undici/node ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
      );
    }
  } finally {
    await stopAll();
  }
}

if (process.argv[2] === 'child') await child(process.argv[3] as Engine, process.argv[4] as Row, process.argv[5] ?? '');
else await main();
