/**
 * Soak: 500 tool calls, each with 20 progress notifications, 8 in flight, through the fault proxy
 * cutting POST and resume streams at random points chosen by a seeded PRNG (SOAK_SEED overrides
 * the seed). Every call must get exactly its own result and every progress notification exactly
 * once, in order; no reconnect may wait longer than its backoff allows; after close() nothing
 * (timer, socket, stream) is left. The figures are printed.
 */
import { performance } from 'node:perf_hooks';
import { expect, it } from 'vitest';
import { StreamableHTTPClientTransport, type JSONRPCMessage } from '../../src/index.js';
import { startFaultProxy, type ProxiedRequest, type ProxyRule } from '../support/fault-proxy.js';
import { activeResources, leftoversOver, newClient, textOf, trackTimers } from '../support/harness.js';

/** A small, fast, seedable PRNG (mulberry32). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const calls = 500;
const inFlight = 8;
const steps = 20;
const reconnection = {
  initialReconnectionDelay: 10,
  reconnectionDelayGrowFactor: 2,
  maxReconnectionDelay: 200,
  maxRetries: 8,
  jitter: true,
};
/** A stream silent this long is a drop (R9); the proxy holds a few streams silent. */
const streamIdleTimeout = 300;
/** Room above a delay the options allow, for a loaded two-core machine (a bound, not a measurement). */
const slack = 1_000;

/** The longest the options let reconnect number `n` (since the last progress, at most n) wait: full jitter doubles the step. */
function allowedDelay(n: number): number {
  const step = Math.min(
    reconnection.initialReconnectionDelay * reconnection.reconnectionDelayGrowFactor ** (n - 1),
    reconnection.maxReconnectionDelay,
  );
  return 2 * step + slack;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

interface Outcome {
  index: number;
  text: string | undefined;
  error: string | undefined;
  progress: number[];
}

it(
  `soak: ${String(calls)} calls × ${String(steps)} progress notifications, ${String(inFlight)} in flight, streams cut at random (seeded): every result and notification exactly once and in order; no reconnect waits past its backoff; nothing left after close()`,
  { timeout: 120_000 },
  async () => {
    const seed = Number(process.env.SOAK_SEED ?? 0x5eed);
    const random = mulberry32(seed);
    const baseline = activeResources();
    const timers = trackTimers();
    const started = performance.now();
    try {
      // Keep-alive comments every 100 ms keep quiet streams from looking idle (R9).
      const proxy = await startFaultProxy({ sse: true, keepAliveMs: 100 });
      let requests: ProxiedRequest[] = [];
      let outcomes: Outcome[] = [];
      let n7Warnings = 0;
      const delivered: JSONRPCMessage[] = [];
      try {
        const postCuts: ProxyRule = {
          method: 'POST',
          tool: 'progress',
          times: Infinity,
          // A POST stream has 22 events (priming, 20 progress, the result): cut after 1 … 21 of them,
          // or hold it silent after some (the client's streamIdleTimeout turns that into a drop),
          // or send every event twice.
          decide: () => {
            const dice = random();
            if (dice < 0.03) return { stallBodyAfter: 1 + Math.floor(random() * 21), stallBody: 'release' };
            if (dice < 0.06) return { duplicate: true };
            if (dice >= 0.5) return undefined;
            const cutAfter = 1 + Math.floor(random() * 21);
            // A broken body loses what its reader has not read: after the priming event alone, end cleanly.
            const cutMode = cutAfter === 1 || random() < 0.5 ? 'end' : 'destroy';
            return { cutAfter, cutMode, cutMidEvent: cutMode === 'destroy' && random() < 0.3 };
          },
        };
        const resumeCuts: ProxyRule = {
          method: 'GET',
          resume: true,
          times: Infinity,
          // Resumes are refused (503), reset before headers, cut after 0 … 5 events, or replayed twice.
          decide: () => {
            const dice = random();
            if (dice < 0.06) return { respond: { status: 503, body: 'busy' } };
            if (dice < 0.09) return { reset: true };
            if (dice < 0.12) return { duplicate: true };
            if (dice >= 0.4) return undefined;
            return { cutAfter: Math.floor(random() * 6), cutMode: random() < 0.5 ? 'end' : 'destroy' };
          },
        };
        proxy.rule(postCuts);
        proxy.rule(resumeCuts);

        const transport = new StreamableHTTPClientTransport(proxy.url, { reconnectionOptions: reconnection, streamIdleTimeout });
        const client = newClient();
        const errors: Error[] = [];
        try {
          await client.connect(transport);
          client.onerror = (error) => errors.push(error);
          const handler = transport.onmessage;
          transport.onmessage = (message) => {
            delivered.push(message);
            handler?.(message);
          };

          let next = 0;
          const worker = async () => {
            for (let index = next++; index < calls; index = next++) {
              const progress: number[] = [];
              try {
                const result = await client.callTool({ name: 'progress', arguments: { steps, tag: `#${String(index)}` } }, undefined, {
                  onprogress: (p) => progress.push(p.progress),
                });
                outcomes.push({ index, text: textOf(result), error: undefined, progress });
              } catch (error) {
                outcomes.push({ index, text: undefined, error: String(error), progress });
              }
            }
          };
          await Promise.all(Array.from({ length: inFlight }, worker));
          // N7: a resume the proxy resets before its head, on a connection kept from an earlier
          // request, is what a stale keep-alive connection looks like: it goes again once, with a
          // warning (counted against the proxy's resets below). Nothing else may be reported.
          n7Warnings = errors.filter((error) => error.message.endsWith('(N7)')).length;
          expect(errors.filter((error) => !error.message.endsWith('(N7)'))).toEqual([]);
        } finally {
          await client.close();
        }
        requests = [...proxy.requests];
      } finally {
        await proxy.close();
      }
      const duration = performance.now() - started;

      // Every call got exactly its own result, and every notification once, in order.
      outcomes = outcomes.sort((a, b) => a.index - b.index);
      expect(outcomes).toHaveLength(calls);
      const expectedProgress = Array.from({ length: steps }, (_, i) => i + 1);
      const wrong = outcomes.filter(
        (o) =>
          o.error !== undefined ||
          o.text !== `done ${String(steps)} #${String(o.index)}` ||
          JSON.stringify(o.progress) !== JSON.stringify(expectedProgress),
      );
      expect(wrong.slice(0, 5)).toEqual([]);
      const responses = new Map<unknown, number>();
      for (const message of delivered) {
        if (!('method' in message) && 'id' in message) responses.set(message.id, (responses.get(message.id) ?? 0) + 1);
      }
      expect([...responses.values()].filter((count) => count !== 1)).toEqual([]);
      expect(responses.size).toBe(calls);
      // Never re-POSTed: one POST per call.
      expect(requests.filter((r) => r.tool === 'progress')).toHaveLength(calls);

      // Reconnect delays: each resume GET against the cut that preceded it in its stream's chain.
      const rootOf = new Map<ProxiedRequest, ProxiedRequest>();
      const chains = new Map<ProxiedRequest, ProxiedRequest[]>();
      const carrier = new Map<string, ProxiedRequest>();
      for (const request of requests) {
        for (const event of request.events) if (event.id !== undefined && !carrier.has(event.id)) carrier.set(event.id, request);
      }
      for (const request of requests) {
        if (request.tool === 'progress') {
          rootOf.set(request, request);
          chains.set(request, [request]);
        } else if (request.method === 'GET' && request.lastEventId !== undefined) {
          const from = carrier.get(request.lastEventId);
          const root = from === undefined ? undefined : rootOf.get(from);
          if (root === undefined) continue;
          rootOf.set(request, root);
          chains.get(root)?.push(request);
        }
      }
      const delays: number[] = [];
      const tooLate: string[] = [];
      for (const chain of chains.values()) {
        chain.forEach((request, position) => {
          const previous = chain[position - 1];
          // From the end of the stream (or refused GET) before it: cut, answered, or given up by the client.
          const endedAt = previous?.cutAt ?? previous?.endedAt;
          if (endedAt === undefined) return;
          const delay = request.at - endedAt;
          delays.push(delay);
          if (delay > allowedDelay(position)) {
            tooLate.push(
              `reconnect ${String(position)} of call ${String(chain[0]?.rpcId)} (after ${previous!.method} ${previous!.outcome} with ${String(previous!.events.length)} events) waited ${delay.toFixed(0)} ms; allowed ${String(allowedDelay(position))}`,
            );
          }
        });
      }
      expect(n7Warnings).toBeLessThanOrEqual(requests.filter((r) => r.rule?.reset === true).length);
      const cuts = requests.filter((r) => r.outcome === 'cut');
      const resumes = requests.filter((r) => r.method === 'GET' && r.lastEventId !== undefined);
      const stalled = requests.filter((r) => r.rule?.stallBody !== undefined);
      const figures = {
        seed,
        calls,
        progressNotifications: outcomes.reduce((sum, o) => sum + o.progress.length, 0),
        cuts: cuts.length,
        postCuts: cuts.filter((r) => r.method === 'POST').length,
        resumeCuts: cuts.filter((r) => r.method === 'GET').length,
        stalledStreams: stalled.length,
        refusedResumes: resumes.filter((r) => r.status === 503).length,
        resentAfterReset: n7Warnings,
        duplicatedStreams: requests.filter((r) => r.rule?.duplicate === true).length,
        resumes: resumes.length,
        maxReconnectDelayMs: Math.round(Math.max(...delays)),
        medianReconnectDelayMs: Math.round(median(delays)),
        durationMs: Math.round(duration),
      };
      console.log(`soak figures: ${JSON.stringify(figures)}`);
      expect(tooLate).toEqual([]);
      expect(figures.postCuts).toBeGreaterThan(calls / 4);
      expect(figures.resumes).toBeGreaterThanOrEqual(figures.postCuts + figures.stalledStreams);
      expect(delays.length).toBe(figures.resumes);

      // Nothing left: the proxy and server are closed, so what remains beyond the baseline is the client's.
      const { surplus, pending } = await leftoversOver(baseline, timers);
      expect(surplus).toEqual({});
      expect(pending).toEqual([]);
    } finally {
      timers.stop();
    }
  },
);
