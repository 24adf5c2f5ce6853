/**
 * Bytes allocated per sequential echo call, by file group and by function (issue 44, the modern
 * JSON row): the inspector's sampling heap profiler with the objects young and old GCs collected
 * included, so the figure is what a call allocates, not what it keeps. Unlike CPU samples it does
 * not move with the machine's load, so it shows a few hundred bytes cut per call where the
 * bench's CPU rows cannot.
 *
 *   npm run build && node --import tsx scripts/studies/alloc-calls.ts [--kind=this|sdk|raw] [--mode=modern] [--calls=3000] [--top=25] [--what=calls|paced-progress] [--variant=v2]
 *
 * `--what=paced-progress`: per progress notification instead, 500 to a call, each in a packet of
 * its own (the bench's paced rows; `--mode=sse`, `--variant=v2` for the 2.x `Client`).
 */
import { Session } from 'node:inspector/promises';
import { createClient, echo, type ClientKind } from '../../bench/clients.js';
import { startServer, stopAll } from '../../bench/processes.js';
import type { Mode } from '../../bench/scenarios.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const kind = (arg('kind') ?? 'this') as ClientKind;
const mode = (arg('mode') ?? 'modern') as Mode;
const calls = Number(arg('calls') ?? 3000);
const top = Number(arg('top') ?? 25);
const paced = arg('what') === 'paced-progress';
const variant = arg('variant') === 'v2' ? 'v2' : undefined;

type HeapNode = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: HeapNode[] };

function groupOf(url: string): string {
  if (url === '') return '(native)';
  if (url.includes('/dist/node/')) return 'this transport (dist/node)';
  if (url.includes('/zod/')) return 'zod';
  if (url.includes('/@modelcontextprotocol/'))
    return `@modelcontextprotocol/${url.split('/@modelcontextprotocol/')[1]?.split('/')[0] ?? ''}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  return url.split('/node_modules/')[1]?.split('/')[0] ?? url;
}

async function main() {
  const { base } = await startServer();
  const client = createClient(kind, `${base}/${mode}`, mode, {}, variant);
  await client.connect();
  let received = 0;
  const note = () => {
    received++;
  };
  /** One unit: an echo call, or (paced) a progress notification: 500 to a call, waited for, bounded. */
  const step = paced
    ? async () => {
        const expected = received + 500;
        await client.call('progress', { steps: 500, paceMs: 1 }, note);
        for (let i = 0; i < 100 && received < expected; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    : () => echo(client, 'hello');
  const perStep = paced ? 500 : 1;
  for (let i = 0; i < 500 / perStep + 2; i++) await step();
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < calls / perStep; i++) await step();
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: HeapNode } };
  session.disconnect();
  await client.close();
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const group = groupOf(url);
    groups.set(group, (groups.get(group) ?? 0) + node.selfSize);
    if (group === 'this transport (dist/node)') {
      const key = `${functionName || '(anonymous)'} ${url.split('/dist/node/')[1] ?? url}:${lineNumber}`;
      functions.set(key, (functions.get(key) ?? 0) + node.selfSize);
    }
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const per = (bytes: number) => (bytes / calls).toFixed(0).padStart(7);
  console.log(
    `${kind} ${mode}: ${calls} ${paced ? 'paced progress notifications' : 'sequential echo calls'}; sampled bytes allocated per ${paced ? 'notification' : 'call'} ${per(total)}`,
  );
  for (const [group, bytes] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`${per(bytes)}  ${group}`);
  console.log('bytes/call  this transport, by function');
  for (const [name, bytes] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${per(bytes)}  ${name}`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
