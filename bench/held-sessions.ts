/**
 * Held sessions: memory per open session, each with its standalone GET stream. Runs in a fresh
 * child process per measurement (forked by bench/run.ts with --expose-gc), so RSS is not blurred by
 * pages the other clients' scenarios mapped earlier. Reports over IPC and exits.
 *
 *   baseline (after a warm-up session and forced GC) → open N sessions (bounded in count and time,
 *   a few at a time) → wait until the server holds all their GET streams → forced GC → measure →
 *   close them all (with DELETE).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { clientKinds, createClient, type BenchClient, type ClientKind } from './clients.js';
import { endpointUrl, forceGc, serverStats, waitForGet, type Mode } from './scenarios.js';

export interface HeldRequest {
  kind: ClientKind;
  mode: Mode;
  base: string;
  sessions: number;
  seconds: number;
  concurrency: number;
}

export interface HeldResult {
  ok: true;
  opened: number;
  openGets: number;
  heapKiBPerSession: number;
  rssKiBPerSession: number;
  externalKiBPerSession: number;
  openMs: number;
  closeMs: number;
  errors: string[];
}

export interface HeldFailure {
  ok: false;
  error: string;
}

async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 3; i++) {
    forceGc();
    await sleep(20);
  }
  forceGc();
  return process.memoryUsage();
}

async function pool(total: number, concurrency: number, deadline: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < total && performance.now() < deadline) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return next;
}

async function measure(request: HeldRequest): Promise<HeldResult> {
  const url = endpointUrl(request.base, request.mode);
  for (let i = 0; i < 3; i++) {
    const warm = createClient(request.kind, url);
    await warm.connect();
    await waitForGet(request.base, warm.sessionId);
    await warm.close();
  }
  const before = await settledMemory();

  const clients: BenchClient[] = [];
  const t0 = performance.now();
  await pool(request.sessions, request.concurrency, t0 + request.seconds * 1000, async () => {
    const client = createClient(request.kind, url);
    await client.connect();
    clients.push(client);
  });
  // Every session's standalone GET stream must be open on the server before measuring.
  let openGets = 0;
  const getsDeadline = performance.now() + 15_000;
  while (performance.now() < getsDeadline) {
    openGets = (await serverStats(request.base))[request.mode].openGets;
    if (openGets >= clients.length) break;
    await sleep(20);
  }
  const openMs = performance.now() - t0;
  const after = await settledMemory();

  const t1 = performance.now();
  await pool(clients.length, request.concurrency, t1 + 30_000, async (i) => {
    await clients[i]?.close();
  });
  const closeMs = performance.now() - t1;
  const n = clients.length;
  const errors = clients.flatMap((c) => c.errors.map((e) => e.message)).slice(0, 5);
  return {
    ok: true,
    opened: n,
    openGets,
    heapKiBPerSession: (after.heapUsed - before.heapUsed) / 1024 / n,
    rssKiBPerSession: (after.rss - before.rss) / 1024 / n,
    externalKiBPerSession: (after.external - before.external) / 1024 / n,
    openMs,
    closeMs,
    errors,
  };
}

function isRequest(value: unknown): value is HeldRequest {
  if (typeof value !== 'object' || value === null) return false;
  const kind: unknown = (value as { kind?: unknown }).kind;
  return clientKinds.some((k) => k === kind);
}

const main = async () => {
  const request: unknown = JSON.parse(process.argv[2] ?? '{}');
  if (!isRequest(request)) throw new Error('held-sessions: bad request');
  return measure(request);
};

if (process.send !== undefined) {
  // The parent going away ends this process too.
  process.on('disconnect', () => process.exit(1));
  main().then(
    (result) => {
      process.send?.(result, () => process.exit(0));
    },
    (error: unknown) => {
      const failure: HeldFailure = { ok: false, error: error instanceof Error ? error.message : String(error) };
      process.send?.(failure, () => process.exit(1));
    },
  );
}
