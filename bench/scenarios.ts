/**
 * The measured scenarios. Each runs one client kind against one endpoint of the benchmark server
 * (JSON or SSE response mode, or the modern era; the floor has no server) and returns its figures.
 * Every loop is bounded by a count AND a time budget. Client CPU is this process's own
 * `process.cpuUsage()` delta around the measured part (the server runs in another process).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, echo, isModern, type BenchClient, type ClientKind, type Mode, type Variant } from './clients.js';
import { median, percentile } from './stats.js';
import type { ServerStats } from './server.js';

export type { Mode };
export const modes: readonly Mode[] = ['json', 'sse', 'modern', 'modern-sse'];

/** At most `count` iterations and at most `seconds`. */
export type Budget = { count: number; seconds: number };

type Pool = Budget & { concurrency: number };
/** notifications: per run, and runs (bounded by `seconds` in all); growth: echo calls on one session (this transport). */
export type Counts = { sequential: Budget; inflight: Pool; cycles: Budget; held: Pool; growth: Pool; event16m: Budget } & {
  notifications: { perRun: number; runs: number; seconds: number };
  payloads: (Budget & { bytes: number })[];
};

/** Figures of one scenario run (NaN where not measured); onerror messages (first few); server CPU µs and new TCP connections while measured. */
export type Metrics = Record<string, number>;
export type ScenarioResult = { metrics: Metrics; errors: string[]; serverCpuUs: number; connections: number };

export interface ScenarioContext {
  kind: ClientKind;
  mode: Mode;
  /** http://127.0.0.1:PORT */
  base: string;
  counts: Counts;
  /** alone: the transport without a Client; v2: the 2.x Client in the 2025 era. */
  variant?: Variant;
}

export const endpointUrl = (base: string, mode: Mode): string => `${base}/${mode}`;

export async function serverStats(base: string, sessionId?: string): Promise<ServerStats> {
  const response = await fetch(`${base}/stats${sessionId === undefined ? '' : `?session=${encodeURIComponent(sessionId)}`}`);
  return (await response.json()) as ServerStats;
}

export const resetServer = async (base: string): Promise<number> =>
  ((await (await fetch(`${base}/reset`, { method: 'POST' })).json()) as { closed: number }).closed;

/** Waits (bounded) until `done()`, checking every `ms`. */
export async function until(done: () => boolean | Promise<boolean>, timeoutMs: number, ms = 0): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await done()) return true;
    await (ms === 0 ? new Promise((resolve) => setImmediate(resolve)) : sleep(ms));
  }
  return done();
}

/**
 * Makes the client's server-to-client stream ready: the modern era's listen stream, else (bounded)
 * waits until the server has written the 200 headers of the session's standalone GET stream.
 */
export async function streamReady(client: BenchClient, ctx: Pick<ScenarioContext, 'kind' | 'mode' | 'base'>): Promise<void> {
  if (isModern(ctx.mode)) return client.listen?.();
  if (ctx.kind === 'floor') return;
  if (!(await until(async () => (await serverStats(ctx.base, client.sessionId)).get === true, 5_000, 2))) {
    throw new Error('standalone GET stream did not open in time');
  }
}

export function forceGc(): void {
  if (globalThis.gc === undefined) throw new Error('run with node --expose-gc');
  globalThis.gc();
}

type Window = { ms: number; cpuUs: number; serverCpuUs: number; connections: number };

/** Runs `body`, timing it and this process's CPU; no forced GC first (bench/README.md, "Studies": it costs the window V8's re-optimizations). */
async function measured(base: string, body: () => Promise<void>): Promise<Window> {
  const before = await serverStats(base);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await body();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const after = await serverStats(base);
  const serverCpuUs = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
  return { ms, cpuUs: cpu.user + cpu.system, serverCpuUs, connections: after.connections - before.connections };
}

type ThisOptions = Parameters<typeof createClient>[3];

async function withSession(
  ctx: ScenarioContext,
  body: (client: BenchClient) => Promise<{ metrics: Metrics; window: Window }>,
  options?: ThisOptions,
) {
  const client = createClient(ctx.kind, endpointUrl(ctx.base, ctx.mode), ctx.mode, options, ctx.variant);
  await client.connect();
  try {
    const { metrics, window } = await body(client);
    const errors = client.errors.slice(0, 5).map((e) => e.message);
    return { metrics, serverCpuUs: window.serverCpuUs, connections: window.connections, errors };
  } finally {
    await client.close();
  }
}

/** Sequential echo calls of `text`: calls/s, p50/p99 latency, client CPU per call. */
function sequentialOf(ctx: ScenarioContext, text: string, budget: Budget, options?: ThisOptions): Promise<ScenarioResult> {
  return withSession(
    ctx,
    async (client) => {
      for (let i = 0; i < Math.min(50, budget.count); i++) await echo(client, text);
      const latencies: number[] = [];
      const window = await measured(ctx.base, async () => {
        const deadline = performance.now() + budget.seconds * 1000;
        for (let i = 0; i < budget.count && performance.now() < deadline; i++) {
          const t = performance.now();
          await echo(client, text);
          latencies.push(performance.now() - t);
        }
      });
      const n = latencies.length;
      const metrics = {
        callsPerSec: (n / window.ms) * 1000,
        p50Ms: median(latencies),
        p99Ms: percentile(latencies, 99),
        cpuUsPerCall: window.cpuUs / n,
      };
      return { window, metrics: { ...metrics, calls: n } };
    },
    options,
  );
}

/** `concurrency` calls in flight on one session: calls/s and client CPU per call. */
function inflight(ctx: ScenarioContext, concurrency = ctx.counts.inflight.concurrency): Promise<ScenarioResult> {
  const { count, seconds } = ctx.counts.inflight;
  return withSession(ctx, async (client) => {
    await Promise.all(Array.from({ length: concurrency }, () => echo(client, 'warm')));
    let done = 0;
    const window = await measured(ctx.base, async () => {
      const deadline = performance.now() + seconds * 1000;
      let started = 0;
      const worker = async () => {
        for (; started < count && performance.now() < deadline; done++) {
          started++;
          await echo(client, 'hello');
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    });
    return { window, metrics: { callsPerSec: (done / window.ms) * 1000, cpuUsPerCall: window.cpuUs / done, calls: done } };
  });
}

/**
 * `perRun` notifications per run: progress on the POST's event stream (`progress`), or logging
 * notifications on the standalone GET stream (list_changed on a listen stream, modern) (`log`).
 */
function notifications(ctx: ScenarioContext, stream: 'progress' | 'log', burst = false, paceMs?: number): Promise<ScenarioResult> {
  const { runs, seconds } = ctx.counts.notifications;
  // Paced: 500 per run (each ~1 ms after the one before), as issue 44 measured them.
  const perRun = paceMs === undefined ? ctx.counts.notifications.perRun : pacedPerRun;
  const extra = paceMs === undefined ? {} : { paceMs };
  return withSession(ctx, async (client) => {
    if (stream === 'log') await streamReady(client, ctx);
    let [received, expected] = [0, 0];
    let arrived: (() => void) | undefined;
    const note = () => {
      if (++received === expected) arrived?.();
    };
    client.onNote = note;
    // Waits for the last notification without polling: a wait that spun the event loop cost CPU per turn.
    const run = async (n: number) => {
      expected = received + n;
      const all = new Promise<void>((resolve) => (arrived = resolve));
      await (stream === 'progress'
        ? client.call('progress', { steps: n, ...extra }, note)
        : client.call('notify', burst ? { count: n, burst } : { count: n, ...extra }));
      let timer: NodeJS.Timeout | undefined;
      if (received < expected) await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
      clearTimeout(timer);
      if (received !== expected) throw new Error(`${stream}: received ${received} notifications, expected ${expected}`);
    };
    await run(10);
    [received, expected] = [0, 0];
    const window = await measured(ctx.base, async () => {
      const deadline = performance.now() + seconds * 1000;
      for (let i = 0; i < runs && performance.now() < deadline; i++) await run(perRun);
    });
    const metrics = { notificationsPerSec: (received / window.ms) * 1000, cpuUsPerNotification: window.cpuUs / received };
    return { window, metrics: { ...metrics, notifications: received } };
  });
}

/** Issue 44: notifications one per packet: the server waits this long after each before the next, and sends this many per run. */
const pacedMs = 1;
const pacedPerRun = 500;

/** connect + initialize + close (with DELETE) cycles; in the modern era connect (server/discover) + echo + close. */
async function cycles(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { count, seconds } = ctx.counts.cycles;
  const errors: string[] = [];
  const cycle = async () => {
    const client = createClient(ctx.kind, endpointUrl(ctx.base, ctx.mode), ctx.mode);
    await client.connect();
    if (isModern(ctx.mode)) await echo(client, 'hi');
    await client.close();
    for (const error of client.errors) if (errors.length < 5) errors.push(error.message);
  };
  await cycle();
  let n = 0;
  const window = await measured(ctx.base, async () => {
    const deadline = performance.now() + seconds * 1000;
    for (; n < count && performance.now() < deadline; n++) await cycle();
  });
  // Every cycle's DELETE must have reached the server: no session may be left behind.
  const left = async () => (await serverStats(ctx.base))[ctx.mode].sessions;
  await until(async () => (await left()) === 0, 500, 10);
  return {
    serverCpuUs: window.serverCpuUs,
    connections: window.connections,
    errors,
    metrics: {
      sessionsPerSec: (n / window.ms) * 1000,
      cpuUsPerSession: window.cpuUs / n,
      connectionsPerSession: window.connections / n,
      sessions: n,
      sessionsLeftOnServer: await left(),
    },
  };
}

/**
 * O2: this transport's client CPU per sequential echo call with telemetry off (no option), on with
 * nothing registered (`telemetry: true`), and recording (`{ tracer, meter }` of the OpenTelemetry
 * SDK, spans kept in memory), a session each, in the order A B C C B A; the row shows the last two over off.
 */
async function telemetry(ctx: ScenarioContext): Promise<ScenarioResult> {
  const { BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
  const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
  class Reader extends MetricReader {
    protected onShutdown = () => Promise.resolve();
    protected onForceFlush = () => Promise.resolve();
  }
  const spans = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer('bench');
  const meter = new MeterProvider({ readers: [new Reader()] }).getMeter('bench');
  const variants: [string, ThisOptions][] = [
    ['Off', {}],
    ['Noop', { telemetry: true }],
    ['Recording', { telemetry: { tracer, meter } }],
  ];
  const cpu: Metrics = {};
  const errors: string[] = [];
  // A B C C B A: a drift over the run (warming, the heap) weighs on each variant alike.
  for (const [name, options] of [...variants, ...variants.reverse()]) {
    const result = await sequentialOf(ctx, 'hello', ctx.counts.sequential, options);
    cpu[name] = (cpu[name] ?? 0) + (result.metrics.cpuUsPerCall ?? Number.NaN) / 2;
    errors.push(...result.errors);
    spans.reset();
  }
  const off = cpu.Off ?? Number.NaN;
  const metrics = {
    cpuUsPerCallOff: off,
    noopOverOff: (cpu.Noop ?? Number.NaN) / off,
    recordingOverOff: (cpu.Recording ?? Number.NaN) / off,
  };
  return { metrics, errors, serverCpuUs: Number.NaN, connections: Number.NaN };
}

/** S8: one SSE event of 16 MiB (a `big` answer on /sse), read whole, sequentially: ms and client CPU per event. */
function event16m(ctx: ScenarioContext): Promise<ScenarioResult> {
  const bytes = 16 * 1024 * 1024;
  const { count, seconds } = ctx.counts.event16m;
  const options = { maxMessageBytes: bytes + 1024 * 1024 }; // the event is the 16 MiB text and its JSON-RPC frame
  return withSession(
    ctx,
    async (client) => {
      const times: number[] = [];
      const big = async () => {
        const t = performance.now();
        const result = (await client.call('big', { bytes })) as { content?: { text?: string }[] } | undefined;
        if (result?.content?.[0]?.text?.length !== bytes) throw new Error('big: the text came back short');
        times.push(performance.now() - t);
      };
      await big();
      times.length = 0;
      const deadline = performance.now() + seconds * 1000;
      const window = await measured(ctx.base, async () => {
        while (times.length < count && performance.now() < deadline) await big();
      });
      return { window, metrics: { msPerEvent: median(times), cpuMsPerEvent: window.cpuUs / 1000 / times.length, events: times.length } };
    },
    options,
  );
}

/** The scenarios a client runs in its own process (`bench/scenarios.ts client`), by id. */
export const clientScenarios = {
  sequential: (ctx: ScenarioContext) => sequentialOf(ctx, 'hello', ctx.counts.sequential),
  inflight: (ctx: ScenarioContext) => inflight(ctx),
  'inflight-256': (ctx: ScenarioContext) => inflight(ctx, 256),
  progress: (ctx: ScenarioContext) => notifications(ctx, 'progress'),
  log: (ctx: ScenarioContext) => notifications(ctx, 'log'),
  'log-alone': (ctx: ScenarioContext) => notifications({ ...ctx, variant: 'alone' }, 'log'),
  'log-burst': (ctx: ScenarioContext) => notifications(ctx, 'log', true),
  // Issue 44: one notification per packet (the server paces them), under the 1.x Client and under the 2.x Client (2025 era).
  'paced-progress': (ctx: ScenarioContext) => notifications(ctx, 'progress', false, pacedMs),
  'paced-log': (ctx: ScenarioContext) => notifications(ctx, 'log', false, pacedMs),
  'paced-progress-v2': (ctx: ScenarioContext) => notifications({ ...ctx, variant: 'v2' }, 'progress', false, pacedMs),
  'paced-log-v2': (ctx: ScenarioContext) => notifications({ ...ctx, variant: 'v2' }, 'log', false, pacedMs),
  'event-16m': (ctx: ScenarioContext) => event16m({ ...ctx, variant: 'alone' }),
  cycles,
  telemetry,
  'payload-1m': (ctx: ScenarioContext) => {
    const budget = ctx.counts.payloads.find((p) => p.bytes === 1024 * 1024);
    if (budget === undefined) throw new Error('no budget for 1 MiB payloads');
    return sequentialOf(ctx, 'x'.repeat(budget.bytes), budget);
  },
} as const satisfies Record<string, (ctx: ScenarioContext) => Promise<ScenarioResult>>;
export type ClientScenarioId = keyof typeof clientScenarios;

export type ClientRequest = { seq: number; id: ClientScenarioId; ctx: ScenarioContext };
export type ClientReply = { seq: number; warnings: string[] } & ({ ok: true; result: ScenarioResult } | { ok: false; error: string });

/**
 * A client's process (`scenarios.ts client`): bench/run.ts forks one per client for each scenario
 * and sends it the warm-up run and each round's run over IPC, so each client runs alone in its
 * process, as in an application (in one process every client cost more per call: the SDK
 * `Client`'s code, Node's streams and the promise machinery were fed by every client in turn).
 */
if (process.send !== undefined && process.argv[2] === 'client') {
  let warnings: string[] = [];
  process.on('warning', (warning) => {
    if (warnings.length < 20) warnings.push(`${warning.name}: ${warning.message}`);
  });
  process.on('message', ({ seq, id, ctx }: ClientRequest) => {
    warnings = [];
    const reply = clientScenarios[id](ctx).then(
      (result): ClientReply => ({ seq, warnings, ok: true, result }),
      (error: unknown): ClientReply => ({ seq, warnings, ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
    void reply.then((r) => process.send?.(r));
  });
  process.on('disconnect', () => process.exit(0));
}
