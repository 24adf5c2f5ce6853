/**
 * Where a held session's heap goes: opens N sessions of one client (each with its standalone GET
 * stream), and diffs two heap snapshots (before and after, both after forced GC) by object kind.
 * A companion to the held-sessions row of the benchmark; starts and stops its own server.
 *
 *   node --expose-gc --import tsx bench/heap-top.ts --client=this --sessions=100 --mode=sse [--top=20]
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeHeapSnapshot } from 'node:v8';
import { clientKinds, createClient, type BenchClient, type ClientKind } from './clients.js';
import { startServer, stopAll } from './processes.js';
import { endpointUrl, forceGc, serverStats, waitForGet, type Mode } from './scenarios.js';

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Bucket {
  count: number;
  bytes: number;
}

/** Self size and count per "type name" (constructor name for objects, function name for closures). */
function buckets(file: string): Map<string, Bucket> {
  const heap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const out = new Map<string, Bucket>();
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt] ?? 0] ?? '?';
    const rawName = heap.strings[heap.nodes[i + nameAt] ?? 0] ?? '?';
    const name = type === 'object' || type === 'closure' || type === 'native' ? rawName : type === 'hidden' || type === 'array' ? rawName.slice(0, 40) : '';
    const key = `${type} ${name}`.trim();
    const bucket = out.get(key) ?? { count: 0, bytes: 0 };
    bucket.count++;
    bucket.bytes += heap.nodes[i + sizeAt] ?? 0;
    out.set(key, bucket);
  }
  return out;
}

async function snapshot(label: string): Promise<string> {
  for (let i = 0; i < 3; i++) {
    forceGc();
    await sleep(20);
  }
  const file = writeHeapSnapshot(join(os.tmpdir(), `bench-heap-${label}-${String(process.pid)}.heapsnapshot`));
  // Writing the snapshot blocks for seconds: keep-alive sockets the server closed meanwhile are
  // noticed before the next request, instead of a POST being sent on one ("fetch failed").
  await sleep(200);
  return file;
}

async function main(): Promise<void> {
  const get = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const kindArg = get('client') ?? 'this';
  const kind = clientKinds.find((k) => k === kindArg);
  if (kind === undefined) throw new Error(`--client must be one of ${clientKinds.join(', ')}`);
  const mode: Mode = get('mode') === 'json' ? 'json' : 'sse';
  const n = Number(get('sessions') ?? '100');
  const top = Number(get('top') ?? '20');
  const { base } = await startServer();
  const url = endpointUrl(base, mode);
  const open = async (k: ClientKind) => {
    const client = createClient(k, url);
    await client.connect();
    await waitForGet(base, client.sessionId);
    return client;
  };
  for (let i = 0; i < 3; i++) await (await open(kind)).close();
  const before = await snapshot('before');
  const clients: BenchClient[] = [];
  for (let i = 0; i < n; i++) clients.push(await open(kind));
  const gets = (await serverStats(base))[mode].openGets;
  const after = await snapshot('after');
  for (const client of clients) await client.close();

  const a = buckets(before);
  const b = buckets(after);
  rmSync(before);
  rmSync(after);
  const rows: { key: string; bytes: number; count: number }[] = [];
  let total = 0;
  for (const [key, bucket] of b) {
    const old = a.get(key) ?? { count: 0, bytes: 0 };
    const bytes = (bucket.bytes - old.bytes) / n;
    total += bytes;
    rows.push({ key, bytes, count: (bucket.count - old.count) / n });
  }
  rows.sort((x, y) => y.bytes - x.bytes);
  console.log(`${kind} client, ${mode.toUpperCase()} endpoint: ${n} sessions (${gets} GET streams open on the server)`);
  console.log(`snapshot self size per session: ${(total / 1024).toFixed(1)} KiB\n`);
  console.log('| # | bytes/session | objects/session | kind |\n| --- | --- | --- | --- |');
  rows.slice(0, top).forEach((row, i) => {
    console.log(`| ${i + 1} | ${row.bytes.toFixed(0)} | ${row.count.toFixed(1)} | ${row.key} |`);
  });
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    process.exit();
  });
