/**
 * Memory figures, each in a fresh child process (forked by bench/run.ts with --expose-gc), so
 * neither RSS nor heap is blurred by the other scenarios. Reports over IPC and exits.
 *
 *   held    three sessions opened and closed → N/2 sessions held, each with its standalone GET
 *           stream confirmed open by the server → heap and RSS after forced GC → N/2 more → again;
 *           per session = the second half's growth / (N/2). The first half also pays for code
 *           compiled and hidden classes made once (about 0.7 MiB, seen in heap snapshots:
 *           bench/README.md, "Studies"), which is not per session; it is reported apart
 *           (`heapKiBPerSessionFirstHalf`). Then all are closed (with DELETE).
 *   growth  a whole session first (open, calls, close: module-level state and compiled code are
 *           then in the baseline) → heap after GC (the baseline) → one session, warmed up → heap
 *           after GC → N echo calls (a few in flight) → heap after GC (the growth) → close → heap
 *           after GC (back to the baseline?). Each figure also without compiled code (V8's code and
 *           bytecode with their metadata, `v8.getHeapCodeStatistics()`): heap snapshots show that
 *           what differs after close is compiled code that V8 optimises, deoptimises and flushes
 *           (±0.3 MiB from run to run), while no object of the session remains.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapCodeStatistics } from 'node:v8';
import { clientKinds, createClient, type BenchClient, type ClientKind } from './clients.js';
import { endpointUrl, forceGc, serverStats, streamReady, type Mode } from './scenarios.js';

export interface MemoryRequest {
  measure: 'held' | 'growth';
  kind: ClientKind;
  mode: Mode;
  base: string;
  /** Sessions held, or calls made. */
  count: number;
  seconds: number;
  concurrency: number;
}

export type MemoryReply = { ok: true; metrics: Record<string, number>; errors: string[] } | { ok: false; error: string };

interface Settled extends NodeJS.MemoryUsage {
  /** heapUsed without compiled code: machine code, bytecode and their metadata. */
  dataHeap: number;
}

async function settledMemory(): Promise<Settled> {
  for (let i = 0; i < 3; i++) {
    forceGc();
    await sleep(20);
  }
  forceGc();
  const usage = process.memoryUsage();
  const code = getHeapCodeStatistics();
  return { ...usage, dataHeap: usage.heapUsed - code.code_and_metadata_size - code.bytecode_and_metadata_size };
}

async function pool(total: number, concurrency: number, deadline: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < total && performance.now() < deadline) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return next;
}

async function connected(request: MemoryRequest): Promise<BenchClient> {
  const client = createClient(request.kind, endpointUrl(request.base, request.mode), request.mode);
  await client.connect();
  await streamReady(client, request);
  return client;
}

async function held(request: MemoryRequest): Promise<MemoryReply> {
  for (let i = 0; i < 3; i++) await (await connected(request)).close();
  const before = await settledMemory();
  const clients: BenchClient[] = [];
  const t0 = performance.now();
  const half = Math.max(1, Math.floor(request.count / 2));
  const hold = async (count: number): Promise<Settled> => {
    await pool(count, request.concurrency, t0 + request.seconds * 1000, async () => {
      const client = createClient(request.kind, endpointUrl(request.base, request.mode), request.mode);
      await client.connect();
      if (request.mode === 'modern') await client.listen();
      clients.push(client);
    });
    // Every session's standalone GET (or listen) stream must be open on the server before measuring.
    const deadline = performance.now() + 15_000;
    while (request.kind !== 'floor' && performance.now() < deadline) {
      if ((await serverStats(request.base))[request.mode].openGets >= clients.length) break;
      await sleep(20);
    }
    return settledMemory();
  };
  const middle = await hold(half);
  const firstHalf = clients.length;
  const after = await hold(request.count - half);
  await pool(clients.length, request.concurrency, performance.now() + 30_000, async (i) => {
    await clients[i]?.close();
  });
  const secondHalf = clients.length - firstHalf;
  return {
    ok: true,
    metrics: {
      heapKiBPerSession: (after.heapUsed - middle.heapUsed) / 1024 / secondHalf,
      rssKiBPerSession: (after.rss - middle.rss) / 1024 / secondHalf,
      heapDataKiBPerSession: (after.dataHeap - middle.dataHeap) / 1024 / secondHalf,
      heapKiBPerSessionFirstHalf: (middle.heapUsed - before.heapUsed) / 1024 / firstHalf,
      sessions: clients.length,
    },
    errors: clients.flatMap((c) => c.errors.map((e) => e.message)).slice(0, 5),
  };
}

async function warmCalls(client: BenchClient, request: MemoryRequest): Promise<void> {
  await pool(Math.min(2_000, request.count), request.concurrency, performance.now() + 30_000, async () => {
    await client.echo('warm');
  });
}

async function growth(request: MemoryRequest): Promise<MemoryReply> {
  // A whole session first, so that code compiled on the way is in both baselines.
  const warm = await connected(request);
  await warmCalls(warm, request);
  await warm.close();
  const beforeSession = await settledMemory();
  const client = await connected(request);
  await warmCalls(client, request);
  const baseline = await settledMemory();
  const calls = await pool(request.count, request.concurrency, performance.now() + request.seconds * 1000, async () => {
    await client.echo('hello');
  });
  const after = await settledMemory();
  await client.close();
  const closed = await settledMemory();
  const MiB = 1024 * 1024;
  return {
    ok: true,
    metrics: {
      heapGrowthMiB: (after.heapUsed - baseline.heapUsed) / MiB,
      heapGrowthDataMiB: (after.dataHeap - baseline.dataHeap) / MiB,
      heapAfterCloseMiB: (closed.heapUsed - beforeSession.heapUsed) / MiB,
      heapAfterCloseDataMiB: (closed.dataHeap - beforeSession.dataHeap) / MiB,
      calls,
    },
    errors: client.errors.map((e) => e.message).slice(0, 5),
  };
}

function isRequest(value: unknown): value is MemoryRequest {
  if (typeof value !== 'object' || value === null) return false;
  const kind: unknown = (value as { kind?: unknown }).kind;
  return clientKinds.some((k) => k === kind);
}

if (process.send !== undefined) {
  // The parent going away ends this process too.
  process.on('disconnect', () => process.exit(1));
  const request: unknown = JSON.parse(process.argv[2] ?? '{}');
  const run = isRequest(request)
    ? request.measure === 'held'
      ? held(request)
      : growth(request)
    : Promise.reject(new Error('memory: bad request'));
  run.then(
    (reply) => {
      process.send?.(reply, () => process.exit(0));
    },
    (error: unknown) => {
      const reply: MemoryReply = { ok: false, error: error instanceof Error ? error.message : String(error) };
      process.send?.(reply, () => process.exit(1));
    },
  );
}
