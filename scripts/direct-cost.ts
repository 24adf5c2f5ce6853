/**
 * Issue 33, item 2: what one registry of calls in flight (the chart's `context.posts`) would cost
 * a direct call. A real transport (`transportIn('connected')`, the in-memory server: no sockets)
 * measured in client CPU per sequential `ping`: on the direct path; through the chart (a POST
 * child, as any call the chart routes, forced here by `onresumptiontoken`); and one chart event
 * that only assigns (`protocolVersion.set` with the version it has), the least a registration
 * in `context.posts` would cost, twice per call (the call added, the call settled).
 *
 *   npx tsx scripts/direct-cost.ts [--rounds=5]
 *
 * Not part of `npm test`; figures, not assertions (ARCHITECTURE.md, "The direct path").
 */
import { transportIn } from '../src/testing.js';

const rounds = Number(/^--rounds=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? 5);
const { transport } = await transportIn('connected');
let nextId = 1_000;

function call(viaChart: boolean): Promise<void> {
  const id = nextId++;
  return new Promise<void>((resolve, reject) => {
    const previous = transport.onmessage;
    transport.onmessage = (message) => {
      if ('id' in message && message.id === id) {
        transport.onmessage = previous;
        resolve();
      }
    };
    transport.send({ jsonrpc: '2.0', id, method: 'ping' }, viaChart ? { onresumptiontoken: () => undefined } : undefined).catch(reject);
  });
}

/** Client CPU per call, in µs. */
async function perCall(viaChart: boolean, calls: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) await call(viaChart);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

/** Client CPU per chart event that only assigns, in µs. */
function perEvent(events: number): number {
  const version = transport.protocolVersion ?? '2025-11-25';
  const start = process.cpuUsage();
  for (let i = 0; i < events; i++) transport.actor.send({ type: 'protocolVersion.set', version });
  const used = process.cpuUsage(start);
  return (used.user + used.system) / events;
}

// Warm-up: the JIT settles before anything is measured.
for (let i = 0; i < 2; i++) {
  await perCall(false, 2_000);
  await perCall(true, 2_000);
  perEvent(5_000);
}
console.log('client CPU, µs: direct call | charted call | one chart event (assign)');
for (let round = 0; round < rounds; round++) {
  const direct = await perCall(false, 3_000);
  const charted = await perCall(true, 3_000);
  console.log(`${direct.toFixed(1)} | ${charted.toFixed(1)} | ${perEvent(20_000).toFixed(1)}`);
}
await transport.close();
