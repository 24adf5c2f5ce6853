/**
 * Where a sequential call's client CPU goes (issue 32: "a profile, top functions by file"). A study,
 * not a row of `npm run bench`:
 *
 *   npm run build && node --import tsx scripts/studies/profile-calls.ts [--kind=this|sdk|raw] [--mode=modern|modern-sse|json|sse] [--calls=3000] [--top=25] [--what=calls|listen|paced-progress|paced-log] [--variant=alone|v2] [--inflight=1]
 *
 * Starts bench/server.ts, connects one client as the bench does (bench/clients.ts), makes 500
 * unrecorded echo calls, then profiles `calls` sequential echo calls with the inspector's sampling
 * profiler (this process only; the server runs in its own). Prints self time per call by file
 * group (this transport, the SDK, zod, xstate, Node's internals, GC, ...) and the top functions.
 */
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { createClient, echo, type ClientKind } from '../../bench/clients.js';
import { startServer, stopAll } from '../../bench/processes.js';
import { streamReady, type Mode } from '../../bench/scenarios.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const kind = (arg('kind') ?? 'this') as ClientKind;
const mode = (arg('mode') ?? 'modern') as Mode;
const calls = Number(arg('calls') ?? 3000);
const top = Number(arg('top') ?? 25);
/** calls: sequential echo calls; listen (modern modes): list_changed notifications on a subscriptions/listen stream, 1,000 per `notify` call. */
const what = arg('what') ?? 'calls';
/** calls: how many echo calls are in flight at once (each step waits for all of them). */
const inflight = Number(arg('inflight') ?? 1);
/** alone: the transport with no Client (bench/clients.ts `BareDriver`), as the bench's "transport alone" rows. */
/** v2: the 2.x Client in the 2025 era (the bench's `-v2` rows). */
const variant = arg('variant') === 'alone' ? 'alone' : arg('variant') === 'v2' ? 'v2' : undefined;
/** paced-progress, paced-log (issue 44): 500 notifications per step, each in a packet of its own (the server waits 1 ms after each). */
const paced = what === 'paced-progress' || what === 'paced-log';
const perStep = what === 'listen' ? 1000 : paced ? 500 : 1;

type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

/** The file group a frame's url belongs to. */
function groupOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  if (url.includes('/dist/node/') || url.includes('/wt/perf/src/') || url.includes('/machines/')) return 'this transport (dist/node)';
  if (url.includes('/xstate/')) return 'xstate';
  if (url.includes('/zod/')) return 'zod';
  if (url.includes('eventsource-parser')) return 'eventsource-parser';
  if (url.includes('/@modelcontextprotocol/sdk/')) return '@modelcontextprotocol/sdk';
  if (url.includes('/@modelcontextprotocol/'))
    return `@modelcontextprotocol/${url.split('/@modelcontextprotocol/')[1]?.split('/')[0] ?? ''}`;
  if (url.includes('/bench/')) return 'bench';
  if (url.startsWith('node:internal/deps/undici')) return 'node:undici (fetch)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  return url.split('/node_modules/')[1]?.split('/')[0] ?? url;
}

async function main() {
  const { base } = await startServer();
  const client = createClient(kind, `${base}/${mode}`, mode, {}, variant);
  await client.connect();
  let received = 0;
  let expected = 0;
  let arrived: (() => void) | undefined;
  client.onNote = () => {
    if (++received === expected) arrived?.();
  };
  if (what === 'paced-log') await streamReady(client, { kind, mode, base });
  /** One unit of work: an echo call, or 1,000 notifications on the listen stream (waited for on a promise, bounded). */
  const note = () => {
    if (++received === expected) arrived?.();
  };
  const step =
    what === 'listen' || paced
      ? async () => {
          expected = received + perStep;
          const all = new Promise<void>((resolve) => (arrived = resolve));
          await (what === 'paced-progress'
            ? client.call('progress', { steps: perStep, paceMs: 1 }, note)
            : client.call('notify', paced ? { count: perStep, paceMs: 1 } : { count: perStep }));
          let timer: NodeJS.Timeout | undefined;
          if (received < expected) await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
          clearTimeout(timer);
          if (received !== expected) throw new Error(`received ${received} notifications, expected ${expected}`);
        }
      : inflight > 1
        ? async () => {
            await Promise.all(Array.from({ length: inflight }, () => echo(client, 'hello')));
          }
        : () => echo(client, 'hello');
  if (what === 'listen') await client.listen?.();
  for (let i = 0; i < (perStep > 1 ? 2 : Math.ceil(500 / inflight)); i++) await step();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await session.post('Profiler.start');
  const deadline = performance.now() + 20_000;
  let made = 0;
  while (made < (perStep > 1 ? calls * perStep : calls) && performance.now() < deadline) {
    await step();
    made += perStep > 1 ? perStep : inflight;
  }
  const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
  const cpu = process.cpuUsage(cpu0);
  const ms = performance.now() - t0;
  session.disconnect();
  await client.close().catch(() => undefined);
  await stopAll();

  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    busy += us;
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1} [${group}]`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  const per = (us: number) => (us / made).toFixed(1).padStart(7);
  console.log(
    `${kind} ${mode}: ${made} ${what === 'listen' ? 'list_changed notifications' : paced ? `${what} notifications` : 'sequential echo calls'}; client CPU ${per(cpu.user + cpu.system)} µs each (process.cpuUsage, profiler included), wall ${((ms * 1000) / made).toFixed(0)} µs/call; sampled JS+GC busy ${per(busy)} µs/call`,
  );
  console.log('µs/call  file group (self time)');
  for (const [g, us] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`${per(us)}  ${g}`);
  console.log('µs/call  function (self time)');
  for (const [f, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${per(us)}  ${f}`);
  // --parents=NAME: where a function's self time is called from (three frames up), e.g. an unnamed native.
  const parentsOf = arg('parents');
  if (parentsOf === undefined) return;
  const parent = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
  const chains = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)?.callFrame.functionName !== parentsOf) continue;
    const frames: string[] = [];
    for (let p = parent.get(id); p !== undefined && frames.length < Number(arg('depth') ?? 3); p = parent.get(p.id))
      frames.push(
        `${p.callFrame.functionName || '(anonymous)'} ${p.callFrame.url.split('/').slice(-2).join('/')}:${p.callFrame.lineNumber + 1}`,
      );
    const key = frames.join(' < ');
    chains.set(key, (chains.get(key) ?? 0) + us);
  }
  console.log(`µs/call  ${parentsOf} called from`);
  for (const [c, us] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`${per(us)}  ${c}`);
}

await main().catch(async (error: unknown) => {
  console.error(error);
  await stopAll();
  process.exitCode = 1;
});
