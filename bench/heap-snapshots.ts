/**
 * Heap snapshots for the memory targets of issue 14 (items 3 and 5), analysed by
 * bench/heap-diff.ts. Each snapshot is taken after forced GCs; object ids are stable within the
 * process, so a diff lists exactly the objects that are new.
 *
 *   node --expose-gc --import tsx bench/heap-snapshots.ts --what=close [--client=this] [--calls=5000] [--warm-calls=N] [--cycles=3]
 *     warm-up session (open, --warm-calls calls, default --calls, close) → `close-0` → then per cycle: open, N calls, close →
 *     `close-<cycle>`. A later cycle adding nothing shows what stays is built once, not grown.
 *   node --expose-gc --import tsx bench/heap-snapshots.ts --what=held [--client=this] [--sessions=50]
 *     three sessions opened and closed → `held-0` → N sessions held, each GET stream open on the
 *     server → `held-<N>` → N more → `held-<2N>`. The second step is the honest per-session
 *     figure: code compiled and shapes made while the first N opened are not in it.
 *
 * Snapshots go to --dir (default /tmp/heap-snapshots) as <client>-<label>.heapsnapshot.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeHeapSnapshot } from 'node:v8';
import { clientKinds, createClient, type BenchClient, type ClientKind } from './clients.js';
import { runMain, startServer, stopAll } from './processes.js';
import { endpointUrl, forceGc, serverStats, waitForGet } from './scenarios.js';

function option(name: string, fallback: string): string {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length) ?? fallback;
}

const kind = option('client', 'this') as ClientKind;
if (!clientKinds.includes(kind)) throw new Error(`--client must be one of ${clientKinds.join(', ')}`);
const what = option('what', 'close');
const dir = option('dir', '/tmp/heap-snapshots');
const calls = Number(option('calls', '5000'));
const warmCalls = Number(option('warm-calls', String(calls)));
const cycleCount = Number(option('cycles', '3'));
const sessions = Number(option('sessions', '50'));
const concurrency = 8;

async function settle(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    forceGc();
    await sleep(10);
  }
  forceGc();
  return process.memoryUsage().heapUsed / 1024;
}

async function snapshot(label: string): Promise<void> {
  const heap = await settle();
  const file = writeHeapSnapshot(join(dir, `${kind}-${label}.heapsnapshot`));
  console.log(`${label}: heapUsed ${heap.toFixed(0)} KiB → ${file}`);
}

async function session(url: string, base: string, count: number): Promise<void> {
  const client = createClient(kind, url);
  await client.connect();
  await waitForGet(base, client.sessionId);
  let next = 0;
  const deadline = performance.now() + 120_000;
  const worker = async () => {
    while (next < count && performance.now() < deadline) {
      next++;
      await client.echo('hello');
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await client.close();
}

async function main(): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const server = await startServer();
  try {
    const url = endpointUrl(server.base, 'sse');
    if (what === 'close') {
      await session(url, server.base, warmCalls);
      await snapshot('close-0');
      for (let cycle = 1; cycle <= cycleCount; cycle++) {
        await session(url, server.base, calls);
        await snapshot(`close-${cycle}`);
      }
      return;
    }
    for (let i = 0; i < 3; i++) await session(url, server.base, 20);
    await snapshot('held-0');
    const clients: BenchClient[] = [];
    for (const label of [`held-${sessions}`, `held-${2 * sessions}`]) {
      for (let i = 0; i < sessions; i++) {
        const client = createClient(kind, url);
        await client.connect();
        clients.push(client);
      }
      const deadline = performance.now() + 15_000;
      while (performance.now() < deadline && (await serverStats(server.base)).sse.openGets < clients.length) await sleep(20);
      await snapshot(label);
    }
    for (const client of clients) await client.close();
    console.log(
      `errors: ${
        clients
          .flatMap((c) => c.errors.map((e) => e.message))
          .slice(0, 3)
          .join('; ') || 'none'
      }`,
    );
  } finally {
    await stopAll();
  }
}

runMain(main);
