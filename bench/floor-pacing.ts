/**
 * What the SDK `Client` alone costs per notification, by how the notifications arrive: all in
 * one burst (as the benchmark's floor delivers them) or one per event-loop turn (as a socket
 * delivers them when the server writes each on its own). No transport and no I/O: an in-memory
 * transport hands the `Client` the JSON text a server sends, parsed, either way. The same
 * deliveries without a `Client` show what the turns (and the parse) cost by themselves.
 *
 *   node --expose-gc --import tsx bench/floor-pacing.ts
 *
 * Diagnostics for the closing notes and the README, not a target table; no test runs it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LoggingMessageNotificationSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { forceGc } from './scenarios.js';
import { max, median, min } from './stats.js';

type Pacing = 'burst' | 'one per turn';

const perCall = 1_000;
const windows = 15;

/** Answers `initialize` and `notify` (`perCall` logging notifications, then the result). */
class PacedTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sessionId = 'in-memory';

  constructor(private readonly pacing: Pacing) {}

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!('method' in message) || !('id' in message)) return Promise.resolve();
    const { id } = message;
    const deliver = (m: JSONRPCMessage) => this.onmessage?.(m);
    if (message.method === 'initialize') {
      queueMicrotask(() => {
        deliver({
          jsonrpc: '2.0',
          id,
          result: { protocolVersion: '2025-11-25', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'paced', version: '1' } },
        });
      });
      return Promise.resolve();
    }
    let i = 0;
    const step = () => {
      const text = `{"method":"notifications/message","params":{"level":"info","data":{"tag":"t","i":${i}}},"jsonrpc":"2.0"}`;
      deliver(JSON.parse(text) as JSONRPCMessage);
      i++;
      if (i < perCall) {
        if (this.pacing === 'burst') step();
        else setImmediate(step);
      } else {
        setImmediate(() => {
          deliver({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } });
        });
      }
    };
    setImmediate(step);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}

/**
 * CPU per notification over `windows` windows of two calls each, after five calls of warm-up.
 * `received` counts the notifications so far; the wait lets handlers queued a microtask after
 * their notification (the `Client`'s) run inside the window.
 */
async function perNotification(call: () => Promise<unknown>, received: () => number): Promise<number[]> {
  for (let i = 0; i < 5; i++) await call();
  const samples: number[] = [];
  for (let w = 0; w < windows; w++) {
    forceGc();
    const before = received();
    const cpu = process.cpuUsage();
    await call();
    await call();
    await new Promise((resolve) => setImmediate(resolve));
    const used = process.cpuUsage(cpu);
    samples.push((used.user + used.system) / (received() - before));
  }
  return samples;
}

/** The same deliveries with no `Client`: the event-loop turns and the parse alone. */
function measureTurns(pacing: Pacing): Promise<number[]> {
  const transport = new PacedTransport(pacing);
  let answered: (() => void) | undefined;
  let received = 0;
  transport.onmessage = (message) => {
    if ('id' in message) answered?.();
    else received++;
  };
  const call = () =>
    new Promise<void>((resolve) => {
      answered = resolve;
      void transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'notify' } });
    });
  return perNotification(call, () => received);
}

async function measure(pacing: Pacing): Promise<number[]> {
  const client = new Client({ name: 'paced', version: '1.0.0' }, { capabilities: {} });
  let received = 0;
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
    received++;
  });
  await client.connect(new PacedTransport(pacing));
  const samples = await perNotification(
    () => client.callTool({ name: 'notify', arguments: { count: perCall, tag: 't' } }),
    () => received,
  );
  await client.close();
  return samples;
}

console.log(`client CPU µs per notification (${windows} windows of ${2 * perCall}), median (min, max):`);
const show = (samples: number[]) => `${median(samples).toFixed(1)} (${min(samples).toFixed(1)}, ${max(samples).toFixed(1)})`;
// Alternating, twice each, so neither pacing always runs on a colder process.
for (const pacing of ['burst', 'one per turn', 'burst', 'one per turn'] as const) {
  const withClient = await measure(pacing);
  const turns = await measureTurns(pacing);
  console.log(`  ${pacing.padEnd(13)} the SDK Client: ${show(withClient)}   no Client: ${show(turns)}`);
}
