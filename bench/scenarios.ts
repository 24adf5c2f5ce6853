/**
 * The measured scenarios. Each runs one client kind against one endpoint (JSON or SSE response
 * mode) of the benchmark server (or, for the floor, no server) and returns its figures. Every loop is bounded by a count AND a
 * time budget. Client CPU is this process's own `process.cpuUsage()` delta around the measured
 * part (the server runs in another process); setup and teardown are outside it.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type BenchClient, type ClientKind } from './clients.js';
import { median, percentile } from './stats.js';
import type { ServerStats } from './server.js';

export type Mode = 'json' | 'sse';
export const modes: readonly Mode[] = ['json', 'sse'];

export interface Budget {
  /** At most this many iterations ... */
  count: number;
  /** ... and at most this long, in seconds. */
  seconds: number;
}

export interface Counts {
  sequential: Budget;
  inflight: Budget & { concurrency: number };
  /** Notifications per run, and how many runs (each bounded by `seconds` in total). */
  notifications: { perRun: number; runs: number; seconds: number };
  cycles: Budget;
  held: { sessions: number; seconds: number; concurrency: number };
  /** Echo calls on one session for the heap-growth figure (this transport only). */
  growth: Budget & { concurrency: number };
  payloads: { bytes: number; count: number; seconds: number }[];
}

/** Figures of one scenario run; NaN where not measured. */
export type Metrics = Record<string, number>;

export interface ScenarioResult {
  metrics: Metrics;
  /** Client-reported errors (onerror) during the run, first few messages. */
  errors: string[];
  /** Server CPU (µs) spent during the measured part, for context. */
  serverCpuUs: number;
  /** TCP connections the server accepted during the measured part (keep-alive reuse shows as few). */
  connections: number;
}

export interface ScenarioContext {
  kind: ClientKind;
  mode: Mode;
  /** http://127.0.0.1:PORT */
  base: string;
  counts: Counts;
}

export function endpointUrl(base: string, mode: Mode): string {
  return `${base}/${mode}`;
}

export async function serverStats(base: string, sessionId?: string): Promise<ServerStats> {
  const query = sessionId === undefined ? '' : `?session=${encodeURIComponent(sessionId)}`;
  const response = await fetch(`${base}/stats${query}`);
  return (await response.json()) as ServerStats;
}

export async function resetServer(base: string): Promise<number> {
  const response = await fetch(`${base}/reset`, { method: 'POST' });
  const body = (await response.json()) as { closed: number };
  return body.closed;
}

/** Waits (bounded) until the server has written the 200 headers of this session's standalone GET stream. */
export async function waitForGet(base: string, sessionId: string | undefined, timeoutMs = 5_000): Promise<void> {
  if (sessionId === undefined) throw new Error('no session id');
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if ((await serverStats(base, sessionId)).get === true) return;
    await sleep(2);
  }
  throw new Error('standalone GET stream did not open in time');
}

export function forceGc(): void {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
}

interface Window {
  ms: number;
  cpuUs: number;
  serverCpuUs: number;
  connections: number;
}

/** Runs `body` with GC done beforehand, timing it and this process's CPU. */
async function measured(base: string, body: () => Promise<void>): Promise<Window> {
  const before = await serverStats(base);
  forceGc();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await body();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const after = await serverStats(base);
  const serverCpuUs = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
  return { ms, cpuUs: cpu.user + cpu.system, serverCpuUs, connections: after.connections - before.connections };
}

async function withSession(
  ctx: ScenarioContext,
  body: (client: BenchClient) => Promise<{ metrics: Metrics; window: Window }>,
): Promise<ScenarioResult> {
  const client = createClient(ctx.kind, endpointUrl(ctx.base, ctx.mode));
  await client.connect();
  try {
    const { metrics, window } = await body(client);
    return {
      metrics,
      serverCpuUs: window.serverCpuUs,
      connections: window.connections,
      errors: client.errors.slice(0, 5).map((e) => e.message),
    };
  } finally {
    await client.close();
  }
}

function checkEcho(length: number, expected: number): void {
  if (length !== expected) throw new Error(`echo returned ${length} characters, expected ${expected}`);
}

/** Sequential echo calls: calls/s, p50/p99 latency, client CPU per call. */
export function sequential(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { count, seconds } = ctx.counts.sequential;
  return withSession(ctx, async (client) => {
    for (let i = 0; i < Math.min(50, count); i++) checkEcho(await client.echo('warm'), 4);
    const latencies: number[] = [];
    const window = await measured(ctx.base, async () => {
      const deadline = performance.now() + seconds * 1000;
      for (let i = 0; i < count && performance.now() < deadline; i++) {
        const t = performance.now();
        const length = await client.echo('hello');
        latencies.push(performance.now() - t);
        checkEcho(length, 5);
      }
    });
    const n = latencies.length;
    return {
      window,
      metrics: {
        callsPerSec: (n / window.ms) * 1000,
        p50Ms: median(latencies),
        p99Ms: percentile(latencies, 99),
        cpuUsPerCall: window.cpuUs / n,
        calls: n,
      },
    };
  });
}

/** `concurrency` calls in flight on one session: calls/s and client CPU per call. */
export function inflight(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { count, seconds, concurrency } = ctx.counts.inflight;
  return withSession(ctx, async (client) => {
    await Promise.all(Array.from({ length: concurrency }, () => client.echo('warm')));
    let done = 0;
    const window = await measured(ctx.base, async () => {
      const deadline = performance.now() + seconds * 1000;
      let started = 0;
      const worker = async () => {
        while (started < count && performance.now() < deadline) {
          started++;
          checkEcho(await client.echo('hello'), 5);
          done++;
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    });
    return {
      window,
      metrics: { callsPerSec: (done / window.ms) * 1000, cpuUsPerCall: window.cpuUs / done, calls: done },
    };
  });
}

/** Waits (bounded) until `received()` reaches `expected`. */
async function until(received: () => number, expected: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (received() < expected && performance.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
}

/** `perRun` progress notifications on one POST's event stream (SSE mode only). */
export function progress(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { perRun, runs, seconds } = ctx.counts.notifications;
  return withSession(ctx, async (client) => {
    let received = 0;
    const onProgress = () => {
      received++;
    };
    await client.progress(10, onProgress);
    received = 0;
    let expected = 0;
    const window = await measured(ctx.base, async () => {
      const deadline = performance.now() + seconds * 1000;
      for (let run = 0; run < runs && performance.now() < deadline; run++) {
        expected += perRun;
        await client.progress(perRun, onProgress);
        await until(() => received, expected, 5_000);
      }
    });
    if (received !== expected) throw new Error(`progress: received ${received} of ${expected} notifications`);
    return {
      window,
      metrics: {
        notificationsPerSec: (received / window.ms) * 1000,
        cpuUsPerNotification: window.cpuUs / received,
        notifications: received,
      },
    };
  });
}

/** `perRun` logging notifications on the session's standalone GET stream. */
export function logStream(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { perRun, runs, seconds } = ctx.counts.notifications;
  return withSession(ctx, async (client) => {
    if (ctx.kind !== 'floor') await waitForGet(ctx.base, client.sessionId);
    let tag = 'warm';
    let received = 0;
    client.onLog = (got) => {
      if (got === tag) received++;
    };
    await client.notify(10, tag);
    await until(() => received, 10, 5_000);
    if (received !== 10) throw new Error(`log: warm-up received ${received} of 10 notifications`);
    let total = 0;
    let expected = 0;
    const window = await measured(ctx.base, async () => {
      const deadline = performance.now() + seconds * 1000;
      for (let run = 0; run < runs && performance.now() < deadline; run++) {
        tag = `run-${run}`;
        received = 0;
        expected += perRun;
        await client.notify(perRun, tag);
        await until(() => received, perRun, 5_000);
        total += received;
      }
    });
    if (total !== expected) throw new Error(`log: received ${total} of ${expected} notifications`);
    return {
      window,
      metrics: { notificationsPerSec: (total / window.ms) * 1000, cpuUsPerNotification: window.cpuUs / total, notifications: total },
    };
  });
}

/** connect + initialize + close (with DELETE) cycles, one after another. */
export async function cycles(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { count, seconds } = ctx.counts.cycles;
  const url = endpointUrl(ctx.base, ctx.mode);
  const errors: string[] = [];
  const warm = createClient(ctx.kind, url);
  await warm.connect();
  await warm.close();
  let n = 0;
  const window = await measured(ctx.base, async () => {
    const deadline = performance.now() + seconds * 1000;
    for (; n < count && performance.now() < deadline; n++) {
      const client = createClient(ctx.kind, url);
      await client.connect();
      await client.close();
      for (const error of client.errors) if (errors.length < 5) errors.push(error.message);
    }
  });
  // Every cycle's DELETE must have reached the server: no session may be left behind.
  let left = (await serverStats(ctx.base))[ctx.mode].sessions;
  for (let i = 0; i < 50 && left > 0; i++) {
    await sleep(10);
    left = (await serverStats(ctx.base))[ctx.mode].sessions;
  }
  return {
    serverCpuUs: window.serverCpuUs,
    connections: window.connections,
    errors,
    metrics: {
      sessionsPerSec: (n / window.ms) * 1000,
      cpuUsPerSession: window.cpuUs / n,
      // TCP connections the server accepted per connect + initialize + close (keep-alive reuse).
      connectionsPerSession: window.connections / n,
      sessions: n,
      sessionsLeftOnServer: left,
    },
  };
}

/** Echo of a payload of `bytes` characters: p50 latency (and CPU per call, for context). */
export function payload(ctx: ScenarioContext, bytes: number): Promise<ScenarioResult> {
  const budget = ctx.counts.payloads.find((p) => p.bytes === bytes);
  if (budget === undefined) throw new Error(`no budget for ${bytes}-byte payloads`);
  const text = 'x'.repeat(bytes);
  return withSession(ctx, async (client) => {
    for (let i = 0; i < 2; i++) checkEcho(await client.echo(text), bytes);
    const latencies: number[] = [];
    const window = await measured(ctx.base, async () => {
      const deadline = performance.now() + budget.seconds * 1000;
      for (let i = 0; i < budget.count && performance.now() < deadline; i++) {
        const t = performance.now();
        const length = await client.echo(text);
        latencies.push(performance.now() - t);
        checkEcho(length, bytes);
      }
    });
    return {
      window,
      metrics: { p50Ms: median(latencies), cpuUsPerCall: window.cpuUs / latencies.length, calls: latencies.length },
    };
  });
}

/** The scenarios a client runs in its own process (bench/client-process.ts), by id. */
export const clientScenarios = {
  sequential,
  inflight,
  progress,
  log: logStream,
  cycles,
  'payload-1m': (ctx: ScenarioContext) => payload(ctx, 1024 * 1024),
} as const satisfies Record<string, (ctx: ScenarioContext) => Promise<ScenarioResult>>;
export type ClientScenarioId = keyof typeof clientScenarios;
