/**
 * Heap growth over many calls on one session, and after close (issue 14, item 3): heap after a
 * forced GC before the client exists, after a warm-up, at checkpoints during N calls, and after
 * close() with the client dropped. Bounded in count and time.
 *
 *   node --expose-gc --import tsx bench/heap-calls.ts [--client=this|sdk|raw] [--calls=100000]
 *     [--concurrency=8] [--seconds=600] [--mode=sse|json]
 */
import { performance } from 'node:perf_hooks';
import { getHeapCodeStatistics } from 'node:v8';
import { clientKinds, createClient, type BenchClient, type ClientKind } from './clients.js';
import { runMain, startServer, stopAll } from './processes.js';
import { endpointUrl, forceGc, type Mode } from './scenarios.js';

function option(name: string, fallback: string): string {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length) ?? fallback;
}

const kind = option('client', 'this') as ClientKind;
if (!clientKinds.includes(kind)) throw new Error(`--client must be one of ${clientKinds.join(', ')}`);
const calls = Number(option('calls', '100000'));
const concurrency = Number(option('concurrency', '8'));
const seconds = Number(option('seconds', '600'));
const mode = option('mode', 'sse') as Mode;

async function heapKiB(): Promise<number> {
  // Several rounds: weak caches and finalizers settle over a few collections.
  for (let i = 0; i < 4; i++) {
    forceGc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed / 1024;
}

/** Compiled code (machine code, bytecode and their metadata), which V8 grows and flushes as it optimises. */
function codeKiB(): number {
  const code = getHeapCodeStatistics();
  return (code.code_and_metadata_size + code.bytecode_and_metadata_size) / 1024;
}

async function main(): Promise<void> {
  const server = await startServer();
  try {
    const url = endpointUrl(server.base, mode);
    // A first session, opened and closed, so module-level state is built before the baseline.
    const warm = createClient(kind, url);
    await warm.connect();
    for (let i = 0; i < 200; i++) await warm.echo('warm');
    await warm.close();
    const baseline = await heapKiB();
    const baselineCode = codeKiB();

    let client: BenchClient | undefined = createClient(kind, url);
    await client.connect();
    for (let i = 0; i < 200; i++) await client.echo('warm');
    const start = await heapKiB();
    const startCode = codeKiB();
    const rows: { calls: number; heapKiB: number; codeKiB: number }[] = [{ calls: 0, heapKiB: start, codeKiB: startCode }];
    const deadline = performance.now() + seconds * 1000;
    const checkpoint = Math.max(1, Math.floor(calls / 5));
    let done = 0;
    while (done < calls && performance.now() < deadline) {
      const batch = Math.min(checkpoint, calls - done);
      let next = 0;
      const active = client;
      const worker = async () => {
        while (next < batch && performance.now() < deadline) {
          next++;
          await active.echo('hello');
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      done += next;
      const heap = await heapKiB();
      const code = codeKiB();
      rows.push({ calls: done, heapKiB: heap, codeKiB: code });
      console.log(`${kind}: ${done} calls, heap ${heap.toFixed(0)} KiB (compiled code ${code.toFixed(0)} KiB)`);
    }
    await client.close();
    client = undefined;
    const afterClose = await heapKiB();
    const afterCloseCode = codeKiB();
    const end = rows[rows.length - 1] ?? { calls: 0, heapKiB: start, codeKiB: startCode };
    console.log(
      JSON.stringify(
        {
          client: kind,
          mode,
          calls: done,
          baselineKiB: Math.round(baseline),
          sessionStartKiB: Math.round(start),
          growthKiB: Math.round(end.heapKiB - start),
          growthWithoutCodeKiB: Math.round(end.heapKiB - end.codeKiB - (start - startCode)),
          growthBytesPerCall: done === 0 ? 0 : Math.round(((end.heapKiB - start) * 1024) / done),
          afterCloseOverBaselineKiB: Math.round(afterClose - baseline),
          afterCloseOverBaselineWithoutCodeKiB: Math.round(afterClose - afterCloseCode - (baseline - baselineCode)),
          checkpoints: rows.map((row) => ({ calls: row.calls, heapKiB: Math.round(row.heapKiB), codeKiB: Math.round(row.codeKiB) })),
        },
        null,
        2,
      ),
    );
  } finally {
    await stopAll();
  }
}

runMain(main);
