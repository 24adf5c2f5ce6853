/**
 * Memory figures, each in a fresh child process (forked by bench/run.ts with --expose-gc). Reports over IPC and exits.
 *   held    3 sessions opened and closed → N/2 sessions held, each with its GET (or listen) stream open
 *           at the server → heap and RSS after forced GC → N/2 more → again; per session = the second
 *           half's growth / (N/2); the first half also pays for code compiled and hidden classes made
 *           once (~0.7 MiB, bench/README.md, "Studies"), reported apart (`heapKiBPerSessionFirstHalf`).
 *   growth  a whole session (open, calls, close) → heap (baseline) → a session, warmed up → heap → N
 *           echo calls (a few in flight) → heap (growth) → close → heap (back to the baseline?); each
 *           also without compiled code (`v8.getHeapCodeStatistics()`), which V8 optimises, deoptimises
 *           and flushes (±0.3 MiB run to run) while no object of the session remains.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapCodeStatistics } from 'node:v8';
import { createClient, echo, isModern, type BenchClient, type ClientKind, type Variant } from './clients.js';
import { endpointUrl, forceGc, serverStats, streamReady, until, type Mode } from './scenarios.js';

/** `count`: sessions held, or calls made; at most `seconds`, `concurrency` at a time. */
export type MemoryRequest = {
  measure: 'held' | 'growth';
  kind: ClientKind;
  mode: Mode;
  base: string;
  count: number;
  seconds: number;
  concurrency: number;
  /** v2: the 2.x Client in the 2025 era (held). */
  variant?: Variant;
};
export type MemoryReply = { ok: true; metrics: Record<string, number>; errors: string[] } | { ok: false; error: string };

/** Memory after forced GCs; `dataHeap`: heapUsed without compiled code (machine code, bytecode, their metadata). */
async function settledMemory(): Promise<NodeJS.MemoryUsage & { dataHeap: number }> {
  for (let i = 0; i < 3; i++) {
    forceGc();
    await sleep(20);
  }
  forceGc();
  const usage = process.memoryUsage();
  const code = getHeapCodeStatistics();
  return { ...usage, dataHeap: usage.heapUsed - code.code_and_metadata_size - code.bytecode_and_metadata_size };
}

/** Runs `task` for 0..total-1, `concurrency` at a time, until `deadline`; how many were started. */
async function pool(total: number, concurrency: number, deadline: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < total && performance.now() < deadline) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return next;
}

async function connected(request: MemoryRequest): Promise<BenchClient> {
  const client = createClient(request.kind, endpointUrl(request.base, request.mode), request.mode, {}, request.variant);
  await client.connect();
  await streamReady(client, request);
  return client;
}

async function held(request: MemoryRequest): Promise<MemoryReply> {
  for (let i = 0; i < 3; i++) await (await connected(request)).close();
  const before = await settledMemory();
  const clients: BenchClient[] = [];
  const deadline = performance.now() + request.seconds * 1000;
  const hold = async (count: number) => {
    await pool(count, request.concurrency, deadline, async () => {
      const client = createClient(request.kind, endpointUrl(request.base, request.mode), request.mode, {}, request.variant);
      await client.connect();
      if (isModern(request.mode)) await client.listen?.();
      clients.push(client);
    });
    // Every session's standalone GET (or listen) stream must be open on the server before measuring.
    const open = async () => (await serverStats(request.base))[request.mode].openGets >= clients.length;
    if (request.kind !== 'floor') await until(open, 15_000, 20);
    return settledMemory();
  };
  const half = Math.max(1, Math.floor(request.count / 2));
  const middle = await hold(half);
  const firstHalf = clients.length;
  const after = await hold(request.count - half);
  await pool(clients.length, request.concurrency, performance.now() + 30_000, async (i) => {
    await clients[i]?.close();
  });
  const perSession = (a: number, b: number) => (a - b) / 1024 / (clients.length - firstHalf);
  const metrics = {
    heapKiBPerSession: perSession(after.heapUsed, middle.heapUsed),
    rssKiBPerSession: perSession(after.rss, middle.rss),
    heapDataKiBPerSession: perSession(after.dataHeap, middle.dataHeap),
    heapKiBPerSessionFirstHalf: (middle.heapUsed - before.heapUsed) / 1024 / firstHalf,
    sessions: clients.length,
  };
  return { ok: true, metrics, errors: clients.flatMap((c) => c.errors.map((e) => e.message)).slice(0, 5) };
}

async function growth(request: MemoryRequest): Promise<MemoryReply> {
  const calls = (client: BenchClient, count: number, seconds: number) =>
    pool(count, request.concurrency, performance.now() + seconds * 1000, async () => {
      await echo(client, 'hello');
    });
  // A whole session first, so that code compiled on the way is in both baselines.
  const warm = await connected(request);
  await calls(warm, Math.min(2_000, request.count), 30);
  await warm.close();
  const beforeSession = await settledMemory();
  const client = await connected(request);
  await calls(client, Math.min(2_000, request.count), 30);
  const baseline = await settledMemory();
  const made = await calls(client, request.count, request.seconds);
  const after = await settledMemory();
  await client.close();
  const closed = await settledMemory();
  const MiB = 1024 * 1024;
  const metrics = {
    heapGrowthMiB: (after.heapUsed - baseline.heapUsed) / MiB,
    heapGrowthDataMiB: (after.dataHeap - baseline.dataHeap) / MiB,
    heapAfterCloseMiB: (closed.heapUsed - beforeSession.heapUsed) / MiB,
    heapAfterCloseDataMiB: (closed.dataHeap - beforeSession.dataHeap) / MiB,
    calls: made,
  };
  return { ok: true, metrics, errors: client.errors.map((e) => e.message).slice(0, 5) };
}

if (process.send !== undefined) {
  process.on('disconnect', () => process.exit(1)); // the parent going away ends this process too
  const request = JSON.parse(process.argv[2] ?? '{}') as MemoryRequest;
  const reply = (request.measure === 'held' ? held(request) : growth(request)).catch((error: unknown): MemoryReply => ({
    ok: false,
    error: error instanceof Error ? error.message : String(error),
  }));
  void reply.then((r) => process.send?.(r, () => process.exit(r.ok ? 0 : 1)));
}
