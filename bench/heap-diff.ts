/* eslint-disable @typescript-eslint/no-non-null-assertion -- indexes into the parsed snapshot arrays, in range by construction */
/**
 * Diff of two V8 heap snapshots taken in one process (bench/heap-snapshots.ts): the objects in
 * the second that are not in the first, grouped three ways.
 *
 *   node --import tsx bench/heap-diff.ts BEFORE.heapsnapshot AFTER.heapsnapshot [--per=50] [--top=25] [--paths=Name,Name]
 *
 *   by kind     node type and constructor / name, count and bytes (self sizes)
 *   by owner    each new object charged to its nearest dominator that is a named owner (an Actor,
 *               the transport, the SDK Client, a socket, …; see `owners`), so the table says which
 *               structure keeps it alive, with that owner's retained size; `--per` divides by the
 *               number of sessions
 *   roots       the new objects whose immediate dominator is old: where new memory hangs off
 *               pre-existing structures (module-level maps, caches, agents), with a retaining path
 *   --paths     how many objects of each named constructor are alive, with a retaining path
 *               from a GC root for the first three
 *   --partition every new object charged to one owner (see `partition`)
 *   --tree=Owner  one instance of that owner (as the partition names it) as a tree of what it claims
 *   --new-objects  every new JS object's retaining path, grouped
 *   --show      the properties of the live objects of each named constructor
 */
import { readFileSync } from 'node:fs';

interface RawSnapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface Graph {
  count: number;
  type: string[];
  name: string[];
  id: Float64Array;
  self: Float64Array;
  /** first edge of node i in `edgeTo` / `edgeName` / `edgeType`; edges of i end at firstEdge[i + 1] */
  firstEdge: Uint32Array;
  edgeTo: Uint32Array;
  edgeType: string[];
  edgeName: string[];
}

function load(file: string): Graph {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as RawSnapshot;
  const { meta } = raw.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const [fType, fName, fId, fSelf, fEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f));
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f));
  if ([fType, fName, fId, fSelf, fEdges, eType, eName, eTo].some((i) => i === undefined || i < 0))
    throw new Error('unknown snapshot format');
  const count = raw.nodes.length / nf;
  const edgeCount = raw.edges.length / ef;
  const g: Graph = {
    count,
    type: new Array<string>(count),
    name: new Array<string>(count),
    id: new Float64Array(count),
    self: new Float64Array(count),
    firstEdge: new Uint32Array(count + 1),
    edgeTo: new Uint32Array(edgeCount),
    edgeType: new Array<string>(edgeCount),
    edgeName: new Array<string>(edgeCount),
  };
  let edge = 0;
  for (let i = 0; i < count; i++) {
    const base = i * nf;
    g.type[i] = nodeTypes[raw.nodes[base + fType!]!] ?? '?';
    g.name[i] = raw.strings[raw.nodes[base + fName!]!] ?? '?';
    g.id[i] = raw.nodes[base + fId!]!;
    g.self[i] = raw.nodes[base + fSelf!]!;
    g.firstEdge[i] = edge;
    edge += raw.nodes[base + fEdges!]!;
  }
  g.firstEdge[count] = edge;
  for (let e = 0; e < edgeCount; e++) {
    const base = e * ef;
    const type = edgeTypes[raw.edges[base + eType!]!] ?? '?';
    const nameOrIndex = raw.edges[base + eName!]!;
    g.edgeType[e] = type;
    g.edgeName[e] = type === 'element' || type === 'hidden' ? `[${nameOrIndex}]` : (raw.strings[nameOrIndex] ?? '?');
    g.edgeTo[e] = raw.edges[base + eTo!]! / nf;
  }
  return g;
}

/** Immediate dominators from the root (node 0), weak edges ignored (Cooper, Harvey, Kennedy). */
function dominators(g: Graph): Int32Array {
  const order = new Int32Array(g.count).fill(-1); // postorder number
  const byOrder: number[] = [];
  const stack: number[] = [0];
  const cursor = new Uint32Array(g.count);
  const seen = new Uint8Array(g.count);
  seen[0] = 1;
  for (let i = 0; i < g.count; i++) cursor[i] = g.firstEdge[i]!;
  while (stack.length > 0) {
    const node = stack[stack.length - 1]!;
    const end = g.firstEdge[node + 1]!;
    let pushed = false;
    while (cursor[node]! < end) {
      const e = cursor[node]!++;
      if (g.edgeType[e] === 'weak') continue;
      const to = g.edgeTo[e]!;
      if (seen[to] === 0) {
        seen[to] = 1;
        stack.push(to);
        pushed = true;
        break;
      }
    }
    if (!pushed) {
      stack.pop();
      order[node] = byOrder.length;
      byOrder.push(node);
    }
  }
  // Predecessors of reachable nodes.
  const predCount = new Uint32Array(g.count + 1);
  for (let n = 0; n < g.count; n++) {
    if (seen[n] === 0) continue;
    for (let e = g.firstEdge[n]!; e < g.firstEdge[n + 1]!; e++) if (g.edgeType[e] !== 'weak') predCount[g.edgeTo[e]! + 1]!++;
  }
  for (let n = 0; n < g.count; n++) predCount[n + 1]! += predCount[n]!;
  const preds = new Uint32Array(predCount[g.count]!);
  const fill = predCount.slice();
  for (let n = 0; n < g.count; n++) {
    if (seen[n] === 0) continue;
    for (let e = g.firstEdge[n]!; e < g.firstEdge[n + 1]!; e++) if (g.edgeType[e] !== 'weak') preds[fill[g.edgeTo[e]!]!++] = n;
  }
  const idom = new Int32Array(g.count).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (order[a]! < order[b]!) a = idom[a]!;
      while (order[b]! < order[a]!) b = idom[b]!;
    }
    return a;
  };
  let changed = true;
  while (changed) {
    changed = false;
    for (let k = byOrder.length - 1; k >= 0; k--) {
      const node = byOrder[k]!;
      if (node === 0) continue;
      let next = -1;
      for (let p = predCount[node]!; p < predCount[node + 1]!; p++) {
        const pred = preds[p]!;
        if (idom[pred] === -1) continue;
        next = next === -1 ? pred : intersect(pred, next);
      }
      if (next !== -1 && idom[node] !== next) {
        idom[node] = next;
        changed = true;
      }
    }
  }
  return idom;
}

/** Retained sizes over the dominator tree. */
function retained(g: Graph, idom: Int32Array): Float64Array {
  const size = Float64Array.from(g.self);
  // Children before parents: walk nodes by depth, deepest first.
  const depth = new Int32Array(g.count).fill(-1);
  depth[0] = 0;
  const depthOf = (n: number): number => {
    const chain: number[] = [];
    let x = n;
    while (depth[x] === -1 && idom[x] !== -1) {
      chain.push(x);
      x = idom[x]!;
    }
    let d = depth[x] === -1 ? 0 : depth[x]!;
    for (let i = chain.length - 1; i >= 0; i--) depth[chain[i]!] = ++d;
    return depth[n]!;
  };
  const nodes: number[] = [];
  for (let n = 1; n < g.count; n++) if (idom[n] !== -1) nodes.push(n);
  nodes.sort((a, b) => depthOf(b) - depthOf(a));
  for (const n of nodes) size[idom[n]!]! += size[n]!;
  return size;
}

/** Constructors that own a part of a session's memory, nearest first. */
const owners = new Set([
  'Actor',
  'StreamableHTTPClientTransport',
  'Client',
  'SdkClientDriver',
  'HttpClient',
  'DataPlane',
  'Socket',
  'TLSSocket',
  'ClientRequest',
  'IncomingMessage',
  'ServerResponse',
  'Agent',
  'AbortController',
  'AbortSignal',
  'ReadableStream',
  'WritableStream',
  'TransformStream',
  'TextDecoderStream',
  'EventSourceParserStream',
  'Response',
  'Request',
  'Headers',
  'Ajv',
  'Zod',
  'HTTPParser',
  'Timeout',
]);

function label(g: Graph, n: number): string {
  const type = g.type[n]!;
  const name = g.name[n]!;
  if (type === 'object' || type === 'native') return name;
  if (type === 'closure') return `closure ${name || '(anonymous)'}`;
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return `(${type})`;
  if (type === 'code' || type === 'hidden' || type === 'array' || type === 'object shape') return `(${type}) ${name.slice(0, 40)}`;
  return `(${type}) ${name.slice(0, 40)}`;
}

/** Shortest paths from the root over strong edges (one BFS per graph, kept). */
const bfsTrees = new WeakMap<Graph, { parent: Int32Array; parentEdge: Int32Array }>();

function retainingPath(g: Graph, target: number): string {
  let tree = bfsTrees.get(g);
  if (tree === undefined) {
    const parent = new Int32Array(g.count).fill(-1);
    const parentEdge = new Int32Array(g.count).fill(-1);
    parent[0] = 0;
    const queue = [0];
    for (let q = 0; q < queue.length; q++) {
      const n = queue[q]!;
      for (let e = g.firstEdge[n]!; e < g.firstEdge[n + 1]!; e++) {
        if (g.edgeType[e] === 'weak') continue;
        const to = g.edgeTo[e]!;
        if (parent[to] !== -1) continue;
        parent[to] = n;
        parentEdge[to] = e;
        queue.push(to);
      }
    }
    tree = { parent, parentEdge };
    bfsTrees.set(g, tree);
  }
  const { parent, parentEdge } = tree;
  if (parent[target] === -1) return '(unreachable)';
  const steps: string[] = [];
  for (let n = target; n !== 0; n = parent[n]!) steps.push(`${label(g, n)} [${g.edgeName[parentEdge[n]!]}]`);
  return steps.reverse().join(' → ');
}

/** An owner's name in the partition: actors by their id (the connection actor by its system id). */
function ownerName(g: Graph, n: number): string | undefined {
  if (g.type[n] !== 'object' || !owners.has(g.name[n]!)) return undefined;
  if (g.name[n] !== 'Actor') return g.name[n];
  let id = '';
  let systemId = '';
  for (let e = g.firstEdge[n]!; e < g.firstEdge[n + 1]!; e++) {
    const to = g.edgeTo[e]!;
    if (g.type[to] !== 'string') continue;
    if (g.edgeName[e] === 'src' && id === '') id = g.name[to]!;
    if (g.edgeName[e] === 'systemId') systemId = g.name[to]!;
  }
  return `Actor ${systemId || id || '(anonymous)'}`;
}

/** Owners from the outside in: each claims the new objects it reaches without passing another owner. */
const partitionOrder = [
  'SdkClientDriver',
  'Client',
  'Ajv',
  'StreamableHTTPClientTransport',
  'HttpClient',
  'DataPlane',
  'Actor connection',
  'Actor standaloneStream',
  'Actor',
  'AbortController',
  'AbortSignal',
  'ClientRequest',
  'IncomingMessage',
  'Socket',
  'HTTPParser',
  'Timeout',
];

/**
 * Every new object charged to one owner: owners claim in `partitionOrder` (any owner not listed
 * comes last), each by a walk over strong edges through new objects that are not owners. What no
 * owner reaches is `(unowned)`.
 */
function partition(g: Graph, isNew: (n: number) => boolean, per: number, top: number, trees: string[]): void {
  const rank = (name: string) => {
    const exact = partitionOrder.indexOf(name);
    if (exact >= 0) return exact;
    const prefix = partitionOrder.indexOf(name.split(' ')[0]!);
    return prefix >= 0 ? prefix + 0.5 : partitionOrder.length;
  };
  const ownerOf = new Map<number, string>();
  for (let n = 0; n < g.count; n++) {
    const name = isNew(n) ? ownerName(g, n) : undefined;
    if (name !== undefined) ownerOf.set(n, name);
  }
  const claimed = new Int32Array(g.count).fill(-1);
  const via = new Int32Array(g.count).fill(-1); // the edge that claimed a node
  const instances = [...ownerOf].sort((x, y) => rank(x[1]) - rank(y[1]));
  for (const [start] of instances) {
    claimed[start] = start;
    const stack = [start];
    while (stack.length > 0) {
      const n = stack.pop()!;
      for (let e = g.firstEdge[n]!; e < g.firstEdge[n + 1]!; e++) {
        if (g.edgeType[e] === 'weak') continue;
        const to = g.edgeTo[e]!;
        if (claimed[to] !== -1 || !isNew(to) || ownerOf.has(to)) continue;
        claimed[to] = start;
        via[to] = e;
        stack.push(to);
      }
    }
  }
  // --tree: one instance's claimed objects as the tree of edges that claimed them, with sizes.
  const edgeFrom = new Int32Array(g.edgeTo.length);
  for (let n = 0; n < g.count; n++) for (let e = g.firstEdge[n]!; e < g.firstEdge[n + 1]!; e++) edgeFrom[e] = n;
  for (const tree of trees) {
    const start = instances.find(([, name]) => name === tree)?.[0];
    if (start === undefined) continue;
    const kids = new Map<number, number[]>();
    const sizes = new Map<number, number>();
    for (let n = 0; n < g.count; n++) {
      if (claimed[n] !== start || n === start) continue;
      const parent = edgeFrom[via[n]!]!;
      kids.set(parent, [...(kids.get(parent) ?? []), n]);
    }
    const sizeOf = (n: number): number => {
      const known = sizes.get(n);
      if (known !== undefined) return known;
      const total = g.self[n]! + (kids.get(n) ?? []).reduce((sum, k) => sum + sizeOf(k), 0);
      sizes.set(n, total);
      return total;
    };
    const print = (n: number, depth: number, edge: string) => {
      console.log(`${'  '.repeat(depth + 1)}${sizeOf(n).toString().padStart(6)} B  ${edge}${label(g, n)}`);
      if (depth >= 7) return;
      for (const k of (kids.get(n) ?? []).sort((x, y) => sizeOf(y) - sizeOf(x))) {
        if (sizeOf(k) >= 64) print(k, depth + 1, `${g.edgeName[via[k]!]}: `);
      }
    };
    console.log(`\ntree of one ${tree}:`);
    print(start, 0, '');
  }
  const groups = new Map<string, { instances: Set<number>; bytes: number; count: number; kinds: Map<string, number> }>();
  for (let n = 0; n < g.count; n++) {
    if (!isNew(n)) continue;
    const owner = claimed[n]!;
    const name = owner === -1 ? '(unowned)' : ownerOf.get(owner)!;
    const group = groups.get(name) ?? { instances: new Set<number>(), bytes: 0, count: 0, kinds: new Map<string, number>() };
    if (owner !== -1) group.instances.add(owner);
    group.bytes += g.self[n]!;
    group.count++;
    const kind = g.type[n] === 'code' ? '(compiled code)' : `${g.type[n]}: ${label(g, n)}`;
    group.kinds.set(kind, (group.kinds.get(kind) ?? 0) + g.self[n]!);
    groups.set(name, group);
  }
  const total = [...groups.values()].reduce((sum, x) => sum + x.bytes, 0);
  console.log(`\npartition by owner (per ${per}; instances, objects, KiB, and the largest kinds inside):`);
  console.log(`  ${(total / per / 1024).toFixed(2).padStart(7)} KiB  total`);
  for (const [name, group] of [...groups].sort((x, y) => y[1].bytes - x[1].bytes).slice(0, top)) {
    const kinds = [...group.kinds]
      .sort((x, y) => y[1] - x[1])
      .slice(0, 5)
      .map(([k, b]) => `${k} ${(b / per / 1024).toFixed(1)}`)
      .join('; ');
    console.log(
      `  ${(group.bytes / per / 1024).toFixed(2).padStart(7)} KiB  ${(group.instances.size / per).toFixed(1).padStart(4)} × ${name} (${(group.count / per).toFixed(0)} objects): ${kinds}`,
    );
  }
}

function table(rows: [string, number, number][], per: number, top: number): string {
  rows.sort((a, b) => b[2] - a[2]);
  const total = rows.reduce((sum, r) => sum + r[2], 0);
  const lines = rows
    .slice(0, top)
    .map(([k, count, bytes]) => `  ${(bytes / per / 1024).toFixed(2).padStart(9)} KiB  ${(count / per).toFixed(1).padStart(7)}  ${k}`);
  return [`  ${(total / per / 1024).toFixed(2).padStart(9)} KiB  total (${rows.length} groups)`, ...lines].join('\n');
}

function main(): void {
  const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const opt = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
  const per = Number(opt('per', '1'));
  const top = Number(opt('top', '25'));
  const paths = opt('paths', '').split(',').filter(Boolean);
  const [beforeFile, afterFile] = files;
  if (beforeFile === undefined || afterFile === undefined) throw new Error('usage: heap-diff BEFORE AFTER');
  const before = load(beforeFile);
  const oldIds = new Set<number>();
  for (let i = 0; i < before.count; i++) oldIds.add(before.id[i]!);
  const g = load(afterFile);
  const idom = dominators(g);
  const size = retained(g, idom);
  const isNew = (n: number) => !oldIds.has(g.id[n]!);

  const byKind = new Map<string, [number, number]>();
  const byOwner = new Map<string, [number, number]>();
  const ownerRetained = new Map<string, [number, number]>();
  const roots = new Map<string, [number, number, number]>();
  let newCount = 0;
  for (let n = 0; n < g.count; n++) {
    if (idom[n] === -1 || !isNew(n)) continue;
    newCount++;
    const kind = `${g.type[n]}: ${label(g, n)}`;
    const k = byKind.get(kind) ?? [0, 0];
    k[0]++;
    k[1] += g.self[n]!;
    byKind.set(kind, k);
    let owner = n;
    while (owner !== 0 && !(g.type[owner] === 'object' && owners.has(g.name[owner]!))) owner = idom[owner]!;
    const ownerName = owner === 0 ? '(no named owner)' : isNew(owner) ? g.name[owner]! : `old ${g.name[owner]!}`;
    const o = byOwner.get(ownerName) ?? [0, 0];
    o[0]++;
    o[1] += g.self[n]!;
    byOwner.set(ownerName, o);
    if (owner === n) {
      const r = ownerRetained.get(ownerName) ?? [0, 0];
      r[0]++;
      r[1] += size[n]!;
      ownerRetained.set(ownerName, r);
    }
    const dom = idom[n]!;
    if (!isNew(dom)) {
      const key = `${label(g, n)}  ⟵  ${label(g, dom)}`;
      const r = roots.get(key) ?? [0, 0, n];
      r[0]++;
      r[1] += size[n]!;
      roots.set(key, r);
    }
  }
  console.log(`${afterFile} minus ${beforeFile}: ${newCount} new objects, per ${per}`);
  // Comparison of live totals (as DevTools' comparison view): growth, whatever was replaced.
  const totals = (graph: Graph, live: (n: number) => boolean) => {
    const m = new Map<string, [number, number]>();
    for (let n = 0; n < graph.count; n++) {
      if (!live(n)) continue;
      const key =
        graph.type[n] === 'code' ? '(compiled code: code, bytecode, feedback, deopt data)' : `${graph.type[n]}: ${label(graph, n)}`;
      const t = m.get(key) ?? [0, 0];
      t[0]++;
      t[1] += graph.self[n]!;
      m.set(key, t);
    }
    return m;
  };
  const idomBefore = dominators(before);
  const a = totals(before, (n) => idomBefore[n] !== -1);
  const b = totals(g, (n) => idom[n] !== -1);
  const delta: [string, number, number][] = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const [ca, ba] = a.get(key) ?? [0, 0];
    const [cb, bb] = b.get(key) ?? [0, 0];
    if (cb !== ca || bb !== ba) delta.push([key, cb - ca, bb - ba]);
  }
  const sumA = [...a.values()].reduce((s, [, x]) => s + x, 0);
  const sumB = [...b.values()].reduce((s, [, x]) => s + x, 0);
  console.log(
    `\nlive totals: ${(sumA / 1024).toFixed(0)} KiB → ${(sumB / 1024).toFixed(0)} KiB; change by kind (count, bytes), largest first:`,
  );
  delta.sort((x, y) => Math.abs(y[2]) - Math.abs(x[2]));
  console.log(`  ${((sumB - sumA) / per / 1024).toFixed(2).padStart(9)} KiB  total`);
  for (const [key, count, bytes] of delta.slice(0, top))
    console.log(`  ${(bytes / per / 1024).toFixed(2).padStart(9)} KiB  ${(count / per).toFixed(1).padStart(7)}  ${key}`);
  console.log('\nby kind (self size):');
  console.log(
    table(
      [...byKind].map(([k, [c, b]]) => [k, c, b]),
      per,
      top,
    ),
  );
  console.log('\nby nearest named owner (self sizes of the objects it keeps alive that no nearer owner does):');
  console.log(
    table(
      [...byOwner].map(([k, [c, b]]) => [k, c, b]),
      per,
      top,
    ),
  );
  console.log('\nnamed owners, retained size (all they dominate, nested owners included):');
  console.log(
    table(
      [...ownerRetained].map(([k, [c, b]]) => [k, c, b]),
      per,
      top,
    ),
  );
  console.log('\nroots: new objects whose immediate dominator is old (retained size):');
  const rootRows = [...roots].sort((a, b) => b[1][1] - a[1][1]).slice(0, top);
  console.log(
    table(
      [...roots].map(([k, [c, b]]) => [k, c, b]),
      per,
      top,
    ),
  );
  for (const [key, [, bytes, node]] of rootRows.slice(0, 8)) {
    if (bytes / per < 256) continue;
    console.log(`\n  path to ${key}:\n    ${retainingPath(g, node)}`);
  }
  for (const name of paths) {
    const found = [];
    for (let n = 0; n < g.count; n++) if (g.name[n] === name && g.type[n] === 'object' && idom[n] !== -1) found.push(n);
    console.log(`\n${name}: ${found.length} alive (${found.filter(isNew).length} new)`);
    for (const n of found.slice(0, 3))
      console.log(`  ${isNew(n) ? 'new' : 'old'} ${(size[n]! / 1024).toFixed(1)} KiB retained: ${retainingPath(g, n)}`);
  }
  const trees = opt('tree', '').split(',').filter(Boolean);
  if (process.argv.includes('--partition') || trees.length > 0) partition(g, isNew, per, top, trees);
  if (process.argv.includes('--new-objects')) {
    // Each new JS object (type object) with its retaining path, grouped by that path's shape.
    const groups = new Map<string, number>();
    for (let n = 0; n < g.count; n++) {
      if (idom[n] === -1 || !isNew(n) || g.type[n] !== 'object') continue;
      const path = retainingPath(g, n).replace(/\[\d+\]/g, '[i]');
      groups.set(path, (groups.get(path) ?? 0) + 1);
    }
    console.log('\nnew objects by retaining path:');
    for (const [path, count] of [...groups].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${count} × ${path}`);
  }
  for (const name of opt('show', '').split(',').filter(Boolean)) {
    const found: number[] = [];
    for (let n = 0; n < g.count; n++) if (g.name[n] === name && g.type[n] === 'object' && idom[n] !== -1) found.push(n);
    for (const n of found.slice(0, 40)) {
      const fields: string[] = [];
      for (let e = g.firstEdge[n]!; e < g.firstEdge[n + 1]!; e++) {
        if (g.edgeType[e] !== 'property') continue;
        const to = g.edgeTo[e]!;
        const value = g.type[to] === 'string' || g.type[to] === 'number' ? JSON.stringify(g.name[to]!.slice(0, 40)) : label(g, to);
        fields.push(`${g.edgeName[e]}=${value}`);
      }
      console.log(`\n${isNew(n) ? 'new' : 'old'} ${name} ${(size[n]! / 1024).toFixed(1)} KiB: ${fields.join(', ')}`);
    }
  }
}

main();
