/**
 * Where a held session's heap goes (issue 32: "name the top retainers per session"). A study, not a
 * row of `npm run bench`:
 *
 *   npm run build && node --expose-gc --import tsx scripts/studies/heap-sessions.ts [--kind=this|sdk] [--variant=v2] [--n=1000] [--top=30] [--why=KIND|KIND] [--json=FILE] [--owners]
 *
 * Starts bench/server.ts, holds `n/5` sessions of one client (SSE mode, each with its GET stream
 * open at the server, as the `held` rows), writes a heap snapshot, holds `n` more, writes another,
 * and charges the difference to the n sessions: bytes per session by object kind (`type:name`; a
 * plain object is named by its first property names, a closure by its function name and script), so
 * the first snapshot holds what is made once (code, hidden classes) and the diff is what each
 * session keeps. Snapshots are parsed after the sessions are closed, then deleted.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { createClient, type BenchClient, type ClientKind, type Variant } from '../../bench/clients.js';
import { startServer, stopAll } from '../../bench/processes.js';
import { forceGc, serverStats, until } from '../../bench/scenarios.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const kind = (arg('kind') ?? 'this') as ClientKind;
const variant = arg('variant') as Variant;
const n = Number(arg('n') ?? 1000);
const top = Number(arg('top') ?? 30);
const dump = arg('json');
/** charge internal objects to the named object holding them */
const owners = process.argv.includes('--owners');
/** an object kind as printed: show what holds objects of it */
const why = arg('why');

type Snapshot = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
};

type Summary = { totals: Map<string, { size: number; count: number }>; retainers: Map<string, number> };

/** Self size and count by object kind; for `why`, the kinds (and edge names) that hold an object of that kind. */
function summarize(file: string, why: string | undefined, owners: boolean): Summary {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const { node_fields: nf, node_types: nt, edge_fields: ef, edge_types: et } = snap.snapshot.meta;
  const nodeSize = nf.length;
  const edgeSize = ef.length;
  const [iType, iName, iSelf, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nf.indexOf(f)) as [
    number,
    number,
    number,
    number,
  ];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f)) as [number, number, number];
  const types = nt[0];
  const edgeTypes = et[0];
  const { nodes, edges, strings } = snap;
  const count = nodes.length / nodeSize;
  const keys: string[] = new Array<string>(count);
  const firstEdge = new Uint32Array(count + 1);
  // Reads that the bounds of the snapshot's own arrays make safe (0 or '' never occur in a well-formed snapshot).
  const N = (i: number) => nodes[i] ?? 0;
  const E = (i: number) => edges[i] ?? 0;
  const S = (i: number) => strings[i] ?? '';
  const K = (i: number) => keys[i] ?? '';
  const F = (i: number) => firstEdge[i] ?? 0;
  const Ty = (i: number) => types[i] ?? '';
  for (let n = 0, edge = 0; n < count; n++) {
    firstEdge[n] = edge;
    edge += N(n * nodeSize + iEdges) * edgeSize;
    firstEdge[n + 1] = edge;
  }
  const edgeName = (e: number) => {
    const t = edgeTypes[E(e + eType)];
    return t === 'element' || t === 'hidden' ? `[${E(e + eName)}]` : S(E(e + eName));
  };
  const keyOf = (n: number): string => {
    const i = n * nodeSize;
    const type = Ty(N(i + iType));
    const name = S(N(i + iName));
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return `(string)`;
    if (type === 'object' && (name === 'Object' || name === 'Array')) {
      const props: string[] = [];
      for (let e = F(n); e < F(n + 1) && props.length < 4; e += edgeSize) {
        if (edgeTypes[E(e + eType)] === 'property') props.push(S(E(e + eName)));
      }
      return `object:${name}{${props.join(',')}}`;
    }
    if (type === 'closure') {
      // where the function was written: the names of the variables its context holds
      const vars: string[] = [];
      for (let e = F(n); e < F(n + 1); e += edgeSize) {
        if (strings[E(e + eName)] !== 'context') continue;
        const ctx = E(e + eTo) / nodeSize;
        for (let f = F(ctx); f < F(ctx + 1) && vars.length < 3; f += edgeSize)
          if (edgeTypes[E(f + eType)] === 'context') vars.push(S(E(f + eName)));
      }
      return `closure:${name === '' ? '(anonymous)' : name} [ctx ${vars.join(',')}]`;
    }
    return `${type}:${name.length > 60 ? `${name.slice(0, 60)}…` : name}`;
  };
  for (let n = 0; n < count; n++) keys[n] = keyOf(n);
  if (owners) {
    // An internal object (context, backing array, Map/Set, hidden class, bound function) is charged to
    // the first named object that holds it (its first strong holder, up to 6 steps up).
    const holder = new Int32Array(count).fill(-1);
    const H = (i: number) => holder[i] ?? -1;
    for (let n = 0; n < count; n++) {
      for (let e = F(n); e < F(n + 1); e += edgeSize) {
        const t = edgeTypes[E(e + eType)];
        if (t === 'weak' || t === 'shortcut') continue;
        const to = E(e + eTo) / nodeSize;
        if (holder[to] === -1 && !K(n).startsWith('synthetic:')) holder[to] = n;
      }
    }
    const generic = (k: string) =>
      /^(array:|hidden:|object shape:|object:system \/ Context|object:(Array|Object)\{(__proto__)?\}|object:Array\{|object:(Set|Map)$|closure:native_bind|\(string\)|number:)/.test(
        k,
      );
    const named = keys.slice();
    const Nm = (i: number) => named[i] ?? '';
    for (let n = 0; n < count; n++) {
      if (!generic(K(n))) continue;
      let h = H(n);
      for (let step = 0; step < 6 && h !== -1 && generic(K(h)); step++) h = H(h);
      if (h !== -1 && !generic(K(h))) named[n] = `${K(h)} (held ${K(n).split(/[:{]/)[0] ?? ''})`;
    }
    for (let n = 0; n < count; n++) keys[n] = Nm(n);
  }
  const totals = new Map<string, { size: number; count: number }>();
  for (let n = 0; n < count; n++) {
    const key = K(n);
    const entry = totals.get(key) ?? { size: 0, count: 0 };
    entry.size += N(n * nodeSize + iSelf);
    entry.count++;
    totals.set(key, entry);
  }
  const retainers = new Map<string, number>();
  const whyKinds = new Set(why?.split('|'));
  if (why !== undefined) {
    for (let n = 0; n < count; n++) {
      for (let e = F(n); e < F(n + 1); e += edgeSize) {
        const to = E(e + eTo) / nodeSize;
        if (!whyKinds.has(K(to)) || edgeTypes[E(e + eType)] === 'weak') continue;
        const r = `${K(to)} <- ${K(n)} .${edgeName(e)}`;
        retainers.set(r, (retainers.get(r) ?? 0) + N(to * nodeSize + iSelf));
      }
    }
  }
  return { totals, retainers };
}

async function main() {
  const { base } = await startServer();
  const url = `${base}/sse`;
  const clients: BenchClient[] = [];
  const hold = async (count: number) => {
    for (let i = 0; i < count; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, count - i) }, async () => {
          // One retry: the first connect after a snapshot may meet a kept-alive socket the server timed out meanwhile.
          const connected = async () => {
            const client = createClient(kind, url, 'sse', {}, variant);
            await client.connect();
            return client;
          };
          clients.push(await connected().catch(connected));
        }),
      );
    }
    if (kind !== 'floor') await until(async () => (await serverStats(base)).sse.openGets >= clients.length, 30_000, 20);
    for (let i = 0; i < 4; i++) {
      forceGc();
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const base0 = Math.max(1, Math.floor(n / 5));
  await hold(base0);
  const heapA = process.memoryUsage().heapUsed;
  const a = writeHeapSnapshot(join(tmpdir(), `heap-a-${process.pid}.heapsnapshot`));
  await hold(n);
  const heapB = process.memoryUsage().heapUsed;
  const b = writeHeapSnapshot(join(tmpdir(), `heap-b-${process.pid}.heapsnapshot`));
  const errors = clients.flatMap((c) => c.errors.map((e) => e.message)).slice(0, 3);
  for (let i = 0; i < clients.length; i += 16) await Promise.all(clients.slice(i, i + 16).map((c) => c.close().catch(() => undefined)));
  // (a close may meet a kept-alive socket the server timed out while the snapshots were written)
  await stopAll();
  clients.length = 0;
  const { totals: sa, retainers: ra } = summarize(a, why, owners);
  rmSync(a);
  const { totals: sb, retainers } = summarize(b, why, owners);
  rmSync(b);
  const rows = [...new Set([...sa.keys(), ...sb.keys()])].map((key) => {
    const x = sa.get(key) ?? { size: 0, count: 0 };
    const y = sb.get(key) ?? { size: 0, count: 0 };
    return { key, bytes: (y.size - x.size) / n, count: (y.count - x.count) / n };
  });
  rows.sort((p, q) => q.bytes - p.bytes);
  if (dump !== undefined) writeFileSync(dump, JSON.stringify(rows));
  const total = rows.reduce((s, r) => s + r.bytes, 0);
  console.log(
    `${kind}${variant === undefined ? '' : ` ${variant}`}: ${n} sessions; snapshot diff ${(total / 1024).toFixed(2)} KiB per session; heapUsed diff ${((heapB - heapA) / 1024 / n).toFixed(2)} KiB`,
  );
  if (errors.length > 0) console.log('errors:', errors);
  console.log('bytes/session  objects/session  kind');
  for (const r of rows.slice(0, top)) console.log(`${r.bytes.toFixed(0).padStart(8)}  ${r.count.toFixed(2).padStart(8)}  ${r.key}`);
  if (why !== undefined) {
    console.log('held by (the growth per session: bytes of the held object, by holder and edge):');
    const held = [...retainers].map(([key, size]): [string, number] => [key, (size - (ra.get(key) ?? 0)) / n]);
    held.sort((p, q) => q[1] - p[1]);
    for (const [key, size] of held.slice(0, top)) console.log(`${size.toFixed(0).padStart(8)}  ${key}`);
  }
}

await main().catch(async (error: unknown) => {
  console.error(error);
  await stopAll();
  process.exitCode = 1;
});
