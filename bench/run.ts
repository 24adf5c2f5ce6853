/**
 * Side-by-side benchmark: this transport, the SDK's transport (both under the SDK `Client`), a raw
 * fetch loop, and the floor (the SDK `Client` over an instant in-memory transport), in one run,
 * against one server process (bench/server.ts).
 *
 *   npm run bench         5 rounds, every scenario, JSON and SSE modes, 100,000 calls for heap growth
 *   npm run bench:quick   3 rounds, SSE mode, fewer iterations, 5,000 calls for heap growth, no held sessions
 *
 * Both are `node --expose-gc --import tsx bench/run.ts [options]`. Options:
 *   --quick                       the quick profile
 *   --rounds=N                    measured rounds
 *   --clients=this,sdk,raw,floor  which clients (default all; ratios need raw and sdk)
 *   --scenarios=a,b               scenario ids (see `scenarioDefs`)
 *   --modes=json,sse              response modes
 *   --growth-calls=N              calls for the heap-growth figure
 *   --no-write                    do not write bench/results/latest.{md,json}
 *   --in-process                  run every client in this process, as the benchmark did before
 *
 * Scenario after scenario: each client gets a new process for the scenario
 * (bench/client-process.ts), one unrecorded warm-up run as long as a full profile's measured one,
 * then the rounds, which alternate the clients (the order rotated by one place each round, so
 * that no client always runs first). A table
 * value is the median over rounds; a ratio is computed per round (paired), its median shown with
 * the min–max over rounds. Every target of the project is a row with its ratio and met / not met.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ClientReply, ClientRequest } from './client-process.js';
import { clientKinds, clientLabels, type ClientKind } from './clients.js';
import { coldStart } from './cold-start.js';
import type { MemoryReply, MemoryRequest } from './memory.js';
import { benchDir, projectDir, startServer, stopAll, stopChild, track } from './processes.js';
import {
  clientScenarios,
  forceGc,
  modes as allModes,
  resetServer,
  type ClientScenarioId,
  type Counts,
  type Metrics,
  type Mode,
  type ScenarioContext,
  type ScenarioResult,
} from './scenarios.js';
import { fmt, fmtRatio, markdownTable, max, median, min } from './stats.js';

// ───────────────────────────── configuration ─────────────────────────────

const scenarioIds = ['sequential', 'inflight', 'progress', 'log', 'cycles', 'held', 'payload-1m', 'growth'] as const;
type ScenarioId = (typeof scenarioIds)[number];

const MiB = 1024 * 1024;

const fullCounts: Counts = {
  sequential: { count: 3000, seconds: 1.5 },
  inflight: { count: 6000, seconds: 1.2, concurrency: 32 },
  notifications: { perRun: 1000, runs: 5, seconds: 5 },
  cycles: { count: 600, seconds: 1.2 },
  held: { sessions: 500, seconds: 20, concurrency: 8 },
  growth: { count: 100_000, seconds: 120, concurrency: 8 },
  payloads: [{ bytes: MiB, count: 12, seconds: 1.5 }],
};

const quickCounts: Counts = {
  sequential: { count: 1000, seconds: 0.6 },
  inflight: { count: 2000, seconds: 0.5, concurrency: 32 },
  notifications: { perRun: 1000, runs: 1, seconds: 2 },
  cycles: { count: 200, seconds: 0.5 },
  held: { sessions: 100, seconds: 5, concurrency: 8 },
  growth: { count: 5_000, seconds: 20, concurrency: 8 },
  payloads: [{ bytes: MiB, count: 6, seconds: 0.8 }],
};

interface Profile {
  name: 'full' | 'quick';
  rounds: number;
  counts: Counts;
  scenarios: ScenarioId[];
  modes: Mode[];
}

const profiles: Record<Profile['name'], Profile> = {
  full: { name: 'full', rounds: 5, counts: fullCounts, scenarios: [...scenarioIds], modes: [...allModes] },
  // SSE mode exercises the whole data path (POST streams, reader, parser); add --modes=json,sse for both.
  quick: { name: 'quick', rounds: 3, counts: quickCounts, scenarios: scenarioIds.filter((id) => id !== 'held'), modes: ['sse'] },
};

interface Options {
  profile: Profile;
  clients: ClientKind[];
  write: boolean;
  /** Every client in the bench process, not each in its own (bench/client-process.ts). */
  inProcess: boolean;
}

function parseOptions(argv: string[]): Options {
  const get = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const list = <T extends string>(name: string, allowed: readonly T[], fallback: T[]): T[] => {
    const value = get(name);
    if (value === undefined) return fallback;
    const items = value.split(',').filter((s) => s !== '');
    for (const item of items)
      if (!allowed.some((a) => a === item)) throw new Error(`--${name}: unknown "${item}" (known: ${allowed.join(', ')})`);
    return allowed.filter((a) => items.includes(a));
  };
  const base = profiles[argv.includes('--quick') ? 'quick' : 'full'];
  const rounds = Number(get('rounds') ?? String(base.rounds));
  const growthCalls = Number(get('growth-calls') ?? String(base.counts.growth.count));
  if (!Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(growthCalls) || growthCalls < 1) {
    throw new Error('--rounds and --growth-calls must be positive integers');
  }
  const profile: Profile = {
    ...base,
    rounds,
    counts: { ...base.counts, growth: { ...base.counts.growth, count: growthCalls } },
    scenarios: list('scenarios', scenarioIds, base.scenarios),
    modes: list('modes', allModes, base.modes),
  };
  return {
    profile,
    clients: list('clients', clientKinds, [...clientKinds]),
    write: !argv.includes('--no-write'),
    inProcess: argv.includes('--in-process'),
  };
}

// ───────────────────────────── scenarios ─────────────────────────────

/** Runs a memory figure in a fresh child process (bench/memory.ts). */
async function inChild(request: MemoryRequest): Promise<ScenarioResult> {
  const child = track(
    fork(join(benchDir, 'memory.ts'), [JSON.stringify(request)], {
      cwd: projectDir,
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  try {
    const reply = await new Promise<MemoryReply>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          reject(new Error('memory child timed out'));
        },
        (request.seconds + 90) * 1000,
      );
      child.once('message', (message) => {
        clearTimeout(timer);
        resolve(message as MemoryReply);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`memory child exited (code ${String(code)}) without a result`));
      });
    });
    if (!reply.ok) throw new Error(reply.error);
    return { serverCpuUs: Number.NaN, connections: Number.NaN, errors: reply.errors, metrics: reply.metrics };
  } finally {
    await stopChild(child);
  }
}

/** One process per client (bench/client-process.ts), forked on first use and kept for one scenario. */
class ClientProcesses {
  private readonly processes = new Map<ClientKind, ChildProcess>();
  private seq = 0;

  constructor(private readonly inProcess: boolean) {}

  /** Runs a client scenario in the client's process; the process's warnings are this process's. */
  async run(id: ClientScenarioId, ctx: ScenarioContext): Promise<ScenarioResult> {
    if (this.inProcess) return clientScenarios[id](ctx);
    const child = this.processOf(ctx.kind);
    const seq = ++this.seq;
    const reply = await new Promise<ClientReply>((resolve, reject) => {
      const onMessage = (message: ClientReply) => {
        if (message.seq !== seq) return;
        done();
        resolve(message);
      };
      const onExit = (code: number | null) => {
        done();
        this.processes.delete(ctx.kind);
        reject(new Error(`client process exited (code ${String(code)}) during ${id}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`client process: ${id} took more than 10 minutes`));
      }, 600_000);
      const done = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      const request: ClientRequest = { seq, id, ctx };
      child.send(request);
    });
    warnings.push(...reply.warnings);
    if (!reply.ok) throw new Error(reply.error);
    return reply.result;
  }

  private processOf(kind: ClientKind): ChildProcess {
    const existing = this.processes.get(kind);
    if (existing !== undefined) return existing;
    const child = track(
      fork(join(benchDir, 'client-process.ts'), [kind], {
        cwd: projectDir,
        execArgv: ['--expose-gc', '--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        // NaN (a figure not measured) survives the structured clone, not JSON.
        serialization: 'advanced',
      }),
    );
    this.processes.set(kind, child);
    return child;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.values()].map(stopChild));
    this.processes.clear();
  }
}

let clientProcesses = new ClientProcesses(false);

interface ScenarioDef {
  title: string;
  modes: readonly Mode[];
  /** Which clients run it (default: all). */
  clients?: readonly ClientKind[];
  /** Run once, after the rounds (not in the warm-up). */
  once?: boolean;
  run: (ctx: ScenarioContext) => Promise<ScenarioResult>;
}

/** A scenario run in the client's own process. */
const inClientProcess =
  (id: ClientScenarioId) =>
  (ctx: ScenarioContext): Promise<ScenarioResult> =>
    clientProcesses.run(id, ctx);

const scenarioDefs: Record<ScenarioId, ScenarioDef> = {
  sequential: { title: 'Sequential echo', modes: allModes, run: inClientProcess('sequential') },
  inflight: { title: '32 calls in flight', modes: allModes, run: inClientProcess('inflight') },
  // With enableJsonResponse the SDK server drops request-related notifications: no progress in JSON mode.
  progress: { title: '1,000 progress notifications (POST stream)', modes: ['sse'], run: inClientProcess('progress') },
  log: { title: '1,000 log notifications (GET stream)', modes: allModes, run: inClientProcess('log') },
  cycles: { title: 'connect + initialize + close (DELETE)', modes: allModes, run: inClientProcess('cycles') },
  held: {
    title: 'Held sessions with GET stream',
    modes: allModes,
    run: (ctx) =>
      inChild({
        measure: 'held',
        kind: ctx.kind,
        mode: ctx.mode,
        base: ctx.base,
        count: ctx.counts.held.sessions,
        seconds: ctx.counts.held.seconds,
        concurrency: ctx.counts.held.concurrency,
      }),
  },
  'payload-1m': { title: 'Echo 1 MiB', modes: allModes, run: inClientProcess('payload-1m') },
  growth: {
    title: 'Echo calls on one session, then close',
    modes: ['sse'],
    clients: ['this'],
    once: true,
    run: (ctx) => inChild({ measure: 'growth', kind: ctx.kind, mode: ctx.mode, base: ctx.base, ...ctx.counts.growth }),
  },
};

// ───────────────────────────── targets ─────────────────────────────

/** this / raw, this / SDK, or this transport's own figure. */
interface Target {
  against: 'raw' | 'sdk' | 'absolute';
  bound: number;
}

interface RowDef {
  scenario: ScenarioId | 'cold';
  metric: string;
  figure: string;
  better: 'higher' | 'lower';
  targets: Target[];
}

const rowDefs: RowDef[] = [
  {
    scenario: 'sequential',
    metric: 'cpuUsPerCall',
    figure: 'client CPU µs/call',
    better: 'lower',
    targets: [
      { against: 'raw', bound: 0.5 },
      { against: 'sdk', bound: 0.4 },
    ],
  },
  { scenario: 'sequential', metric: 'callsPerSec', figure: 'calls/s', better: 'higher', targets: [{ against: 'raw', bound: 1.15 }] },
  { scenario: 'sequential', metric: 'p50Ms', figure: 'p50 latency, ms', better: 'lower', targets: [] },
  { scenario: 'inflight', metric: 'callsPerSec', figure: 'calls/s', better: 'higher', targets: [{ against: 'raw', bound: 1.2 }] },
  { scenario: 'inflight', metric: 'cpuUsPerCall', figure: 'client CPU µs/call', better: 'lower', targets: [] },
  {
    scenario: 'progress',
    metric: 'notificationsPerSec',
    figure: 'notifications/s',
    better: 'higher',
    targets: [{ against: 'sdk', bound: 1.5 }],
  },
  {
    scenario: 'progress',
    metric: 'cpuUsPerNotification',
    figure: 'client CPU µs/notification',
    better: 'lower',
    targets: [{ against: 'sdk', bound: 0.5 }],
  },
  {
    scenario: 'log',
    metric: 'notificationsPerSec',
    figure: 'notifications/s',
    better: 'higher',
    targets: [{ against: 'sdk', bound: 1.5 }],
  },
  {
    scenario: 'log',
    metric: 'cpuUsPerNotification',
    figure: 'client CPU µs/notification',
    better: 'lower',
    targets: [{ against: 'sdk', bound: 0.5 }],
  },
  { scenario: 'cycles', metric: 'sessionsPerSec', figure: 'cycles/s', better: 'higher', targets: [{ against: 'sdk', bound: 1.0 }] },
  { scenario: 'cycles', metric: 'connectionsPerSession', figure: 'new TCP connections/cycle', better: 'lower', targets: [] },
  { scenario: 'held', metric: 'heapKiBPerSession', figure: 'heap KiB/session', better: 'lower', targets: [{ against: 'sdk', bound: 0.7 }] },
  { scenario: 'held', metric: 'heapDataKiBPerSession', figure: 'heap KiB/session without compiled code', better: 'lower', targets: [] },
  { scenario: 'held', metric: 'rssKiBPerSession', figure: 'RSS KiB/session', better: 'lower', targets: [] },
  {
    scenario: 'growth',
    metric: 'heapGrowthMiB',
    figure: 'heap growth after GC, MiB',
    better: 'lower',
    targets: [{ against: 'absolute', bound: 1 }],
  },
  // "Back to baseline": within 0.25 MiB of the heap before the session was opened.
  {
    scenario: 'growth',
    metric: 'heapAfterCloseMiB',
    figure: 'heap after close − before open, MiB',
    better: 'lower',
    targets: [{ against: 'absolute', bound: 0.25 }],
  },
  // The same two without compiled code (V8's code and bytecode): what V8 compiles, deoptimises and
  // flushes moves heapUsed by ±0.3 MiB from run to run; heap snapshots show nothing else differs.
  {
    scenario: 'growth',
    metric: 'heapGrowthDataMiB',
    figure: 'heap growth after GC without compiled code, MiB',
    better: 'lower',
    targets: [{ against: 'absolute', bound: 1 }],
  },
  {
    scenario: 'growth',
    metric: 'heapAfterCloseDataMiB',
    figure: 'heap after close − before open without compiled code, MiB',
    better: 'lower',
    targets: [{ against: 'absolute', bound: 0.25 }],
  },
  { scenario: 'payload-1m', metric: 'p50Ms', figure: 'p50 latency, ms', better: 'lower', targets: [{ against: 'raw', bound: 1.0 }] },
  { scenario: 'cold', metric: 'coldStartMs', figure: 'cold start, ms', better: 'lower', targets: [{ against: 'sdk', bound: 1.0 }] },
];

// ───────────────────────────── running ─────────────────────────────

interface Sample {
  round: number;
  scenario: ScenarioId | 'cold';
  mode: Mode;
  client: ClientKind;
  metrics: Metrics;
  serverCpuUs: number;
  connections: number;
  errors: string[];
  /** Process warnings (e.g. MaxListenersExceededWarning) emitted while this sample ran. */
  warnings: string[];
  /** Sessions the server still held after the client closed (closed by /reset). */
  leakedSessions: number;
  failure?: string;
}

let warnings: string[] = [];
process.on('warning', (warning) => {
  if (warnings.length < 20) warnings.push(`${warning.name}: ${warning.message}`);
});

async function runOne(id: ScenarioId, ctx: ScenarioContext, round: number): Promise<Sample> {
  warnings = [];
  const base = { round, scenario: id, mode: ctx.mode, client: ctx.kind, leakedSessions: 0, warnings };
  let sample: Sample;
  try {
    sample = { ...base, ...(await scenarioDefs[id].run(ctx)) };
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    sample = { ...base, metrics: {}, serverCpuUs: Number.NaN, connections: Number.NaN, errors: [], failure };
  }
  sample.leakedSessions = await resetServer(ctx.base);
  return sample;
}

function progressLine(sample: Sample, label: string): string {
  const figures = Object.entries(sample.metrics)
    .map(([key, value]) => `${key}=${fmt(value)}`)
    .join(' ');
  const extra = [
    Number.isFinite(sample.connections) ? `newConnections=${sample.connections}` : '',
    sample.failure === undefined ? '' : `FAILED: ${sample.failure}`,
    sample.errors.length > 0 ? `errors (${sample.errors.length}): ${sample.errors[0] ?? ''}` : '',
    sample.warnings.length > 0 ? `process warnings: ${sample.warnings.length}` : '',
    sample.leakedSessions > 0 ? `leaked sessions: ${sample.leakedSessions}` : '',
  ].filter((s) => s !== '');
  return `  ${label} ${sample.scenario}/${sample.mode} ${sample.client.padEnd(5)} ${figures} ${extra.join('  ')}`;
}

// ───────────────────────────── summary ─────────────────────────────

interface Ratio {
  median: number;
  min: number;
  max: number;
}

interface SummaryRow {
  title: string;
  mode: Mode | undefined;
  figure: string;
  better: RowDef['better'];
  median: Partial<Record<ClientKind, number>>;
  thisOverRaw: Ratio;
  thisOverSdk: Ratio;
  targets: (Target & { met: boolean | undefined })[];
}

/** `items` rotated left by `by` places. */
function rotated<T>(items: readonly T[], by: number): T[] {
  const k = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function pairedRatio(samples: Sample[], metric: string, a: ClientKind, b: ClientKind): Ratio {
  const ratios: number[] = [];
  for (const round of new Set(samples.map((s) => s.round))) {
    const va = samples.find((s) => s.round === round && s.client === a)?.metrics[metric];
    const vb = samples.find((s) => s.round === round && s.client === b)?.metrics[metric];
    if (va !== undefined && vb !== undefined && Number.isFinite(va) && Number.isFinite(vb) && vb !== 0) ratios.push(va / vb);
  }
  return { median: median(ratios), min: min(ratios), max: max(ratios) };
}

function summarize(samples: Sample[], profile: Profile): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const def of rowDefs) {
    const scenario = def.scenario === 'cold' ? undefined : scenarioDefs[def.scenario];
    if (scenario !== undefined && !profile.scenarios.includes(def.scenario as ScenarioId)) continue;
    const modes: (Mode | undefined)[] = scenario === undefined ? [undefined] : scenario.modes.filter((m) => profile.modes.includes(m));
    for (const mode of modes) {
      const mine = samples.filter((s) => s.scenario === def.scenario && (mode === undefined || s.mode === mode) && s.failure === undefined);
      const medians: Partial<Record<ClientKind, number>> = {};
      for (const kind of clientKinds) {
        const values = mine.filter((s) => s.client === kind).map((s) => s.metrics[def.metric] ?? Number.NaN);
        if (values.length > 0) medians[kind] = median(values);
      }
      const thisOverRaw = pairedRatio(mine, def.metric, 'this', 'raw');
      const thisOverSdk = pairedRatio(mine, def.metric, 'this', 'sdk');
      const targets = def.targets.map((target) => {
        const value =
          target.against === 'raw' ? thisOverRaw.median : target.against === 'sdk' ? thisOverSdk.median : (medians.this ?? Number.NaN);
        const met = Number.isFinite(value) ? (def.better === 'higher' ? value >= target.bound : value <= target.bound) : undefined;
        return { ...target, met };
      });
      rows.push({
        title: scenario?.title ?? 'Cold start (npm run size)',
        mode,
        figure: def.figure,
        better: def.better,
        median: medians,
        thisOverRaw,
        thisOverSdk,
        targets,
      });
    }
  }
  return rows;
}

function ratioCell(r: Ratio): string {
  return Number.isFinite(r.median) ? `${fmtRatio(r.median)} (${fmtRatio(r.min)}–${fmtRatio(r.max)})` : '—';
}

function renderTable(rows: SummaryRow[]): string {
  const header = [
    'Scenario',
    'Mode',
    'Figure',
    ...clientKinds.map((k) => clientLabels[k]),
    'this/raw (min–max)',
    'this/SDK (min–max)',
    'Target',
    'Met',
  ];
  const cells = rows.map((row) => {
    const measured = Object.keys(row.median).length > 0;
    const target = row.targets.map(
      (t) =>
        `${row.better === 'higher' ? '≥' : '≤'} ${t.against === 'absolute' ? t.bound : `${t.bound.toFixed(2)}× ${t.against === 'raw' ? 'raw' : 'SDK'}`}`,
    );
    const met = row.targets.map((t) => (t.met === undefined ? (measured ? 'n/a' : 'not measured') : t.met ? 'met' : '**not met**'));
    return [
      row.title,
      row.mode?.toUpperCase() ?? '—',
      `${row.figure} (${row.better === 'higher' ? '↑' : '↓'})`,
      ...clientKinds.map((k) => (row.median[k] === undefined ? '—' : fmt(row.median[k]))),
      ratioCell(row.thisOverRaw),
      ratioCell(row.thisOverSdk),
      target.join('; ') || '—',
      met.join('; ') || '—',
    ];
  });
  return markdownTable(header, cells);
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

// ───────────────────────────── main ─────────────────────────────

async function main(): Promise<void> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const { profile, clients, write, inProcess } = parseOptions(process.argv.slice(2));
  clientProcesses = new ClientProcesses(inProcess);
  forceGc(); // fails early without --expose-gc
  const cpu = os.cpus();
  const machine = {
    node: process.version,
    cpuModel: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    platform: `${os.platform()} ${os.arch()}`,
  };
  const loadAtStart = loadAverage();
  console.log(
    `mcp-xstate-transport benchmark (${profile.name}): ${profile.rounds} rounds, clients ${clients.join(', ')}, scenarios ${profile.scenarios.join(', ')}, modes ${profile.modes.join(', ')}, ${inProcess ? 'all in this process' : 'a process per client'}`,
  );
  console.log(`node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores; load average ${loadAtStart}`);

  const { base, child: server } = await startServer();
  const samples: Sample[] = [];
  const plan = profile.scenarios.map((id) => ({ id, def: scenarioDefs[id] }));
  // Round r starts with the r-th client (a rotation), so no client always runs first, right
  // after another client's run: each takes every place in the order across rounds.
  const runsOf = (def: ScenarioDef, round = 1) =>
    def.modes
      .filter((m) => profile.modes.includes(m))
      .flatMap((mode) =>
        rotated(
          clients.filter((k) => def.clients?.includes(k) ?? true),
          round - 1,
        ).map((kind) => ({ mode, kind })),
      );

  // Scenario by scenario, like a benchmark harness that forks per benchmark: each client's
  // process is new for each scenario, warmed up by one run as long as a full profile's measured
  // one (not recorded), then measured round after round; so no scenario runs on what another one
  // left (a heap grown by 1 MiB echoes, code optimised for another workload).
  for (const { id, def } of plan.filter((p) => p.def.once !== true)) {
    console.log(`${def.title}: warm-up (not recorded), then ${profile.rounds} rounds`);
    if (id !== 'held') {
      for (const { mode, kind } of runsOf(def)) {
        const sample = await runOne(id, { kind, mode, base, counts: fullCounts }, 0);
        if (sample.failure !== undefined) console.log(progressLine(sample, 'warm-up'));
      }
    }
    for (let round = 1; round <= profile.rounds; round++) {
      for (const { mode, kind } of runsOf(def, round)) {
        const sample = await runOne(id, { kind, mode, base, counts: profile.counts }, round);
        samples.push(sample);
        console.log(progressLine(sample, `r${round}`));
      }
    }
    await clientProcesses.stop();
    console.log(`  load average ${loadAverage()}`);
  }
  for (const { id, def } of plan.filter((p) => p.def.once === true)) {
    for (const { mode, kind } of runsOf(def)) {
      const sample = await runOne(id, { kind, mode, base, counts: profile.counts }, 1);
      samples.push(sample);
      console.log(progressLine(sample, 'once'));
    }
  }
  await clientProcesses.stop();
  await stopChild(server);
  const cold = await coldStart();
  if (cold !== undefined) {
    for (const kind of ['this', 'sdk'] as const) {
      samples.push({
        round: 1,
        scenario: 'cold',
        mode: 'sse',
        client: kind,
        metrics: { coldStartMs: cold[kind] },
        serverCpuUs: Number.NaN,
        connections: Number.NaN,
        errors: [],
        warnings: [],
        leakedSessions: 0,
      });
    }
  }

  const runtimeSeconds = (performance.now() - started) / 1000;
  const rows = summarize(samples, profile);
  const targets = rows.flatMap((r) => r.targets);
  const failures = samples.filter((s) => s.failure !== undefined);
  const leaks = samples.filter((s) => s.leakedSessions > 0);
  const count = (pick: (s: Sample) => number) => samples.reduce((n, s) => n + pick(s), 0);
  const notes = [
    `Profile: ${profile.name}; scenario by scenario, ${profile.rounds} rounds after one warm-up run; clients alternate ${clients.join(' → ')} for every scenario and mode, the order rotated by one place each round; ${inProcess ? 'every client runs in the bench process (--in-process)' : 'each client runs in its own process (bench/client-process.ts), a new one for each scenario'}; heap growth runs once, after the rounds: ${fmt(samples.find((s) => s.scenario === 'growth')?.metrics.calls ?? Number.NaN)} calls made of ${profile.counts.growth.count.toLocaleString('en-US')} asked (${profile.counts.growth.concurrency} in flight, at most ${profile.counts.growth.seconds} s).`,
    `Machine: node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores, ${machine.platform}. Server: the SDK's McpServer + StreamableHTTPServerTransport in a separate process on 127.0.0.1. The floor has no server: the SDK Client over an instant in-memory transport.`,
    "Values are medians over rounds; ratios are per-round (paired) ratios, median (min–max). ↑ higher is better, ↓ lower is better. Client CPU is the client's process's own process.cpuUsage() around the measured part; memory figures come from a fresh child process after forced GC.",
    'Heap per held session is the growth over the second half of the sessions divided by their number (the first half also pays for code compiled once: heapKiBPerSessionFirstHalf in latest.json). Heap after close is measured against the heap after one whole warm-up session (open, calls, close); "without compiled code" subtracts V8\'s code and bytecode (v8.getHeapCodeStatistics()).',
    `Targets met: ${targets.filter((t) => t.met === true).length} of ${targets.length} (${targets.filter((t) => t.met === undefined).length} not measured).`,
    failures.length > 0
      ? `Failed runs: ${failures.map((f) => `${f.scenario}/${f.mode}/${f.client} r${f.round}: ${f.failure ?? ''}`).join('; ')}`
      : 'No failed runs.',
    leaks.length > 0
      ? `Sessions left on the server after a client closed: ${leaks.map((l) => `${l.scenario}/${l.mode}/${l.client} r${l.round}: ${l.leakedSessions}`).join('; ')}`
      : 'Every client closed every session.',
    `onerror reports: ${count((s) => s.errors.length)}; process warnings: ${count((s) => s.warnings.length)} (per run in latest.json).`,
    `Load average (1, 5, 15 min) at start ${loadAtStart}, at end ${loadAverage()}; wall-clock figures are sensitive to other processes. Runtime ${runtimeSeconds.toFixed(0)} s (${startedAt}).`,
  ];
  const markdown = `# Benchmark: this transport vs the SDK transport vs raw fetch, with the floor\n\n${renderTable(rows)}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`;
  console.log(`\n${markdown}`);
  if (write) {
    writeFileSync(join(benchDir, 'results', 'latest.md'), markdown);
    const json = { startedAt, runtimeSeconds, machine, profile, inProcess, summary: rows, samples };
    writeFileSync(
      join(benchDir, 'results', 'latest.json'),
      `${JSON.stringify(json, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 1)}\n`,
    );
    console.log('written: bench/results/latest.md, bench/results/latest.json');
  }
}

let interrupted = false;
const onSignal = (signal: NodeJS.Signals) => {
  if (interrupted) return;
  interrupted = true;
  console.error(`\n${signal}: stopping child processes`);
  void stopAll().finally(() => process.exit(130));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

main()
  .catch((error: unknown) => {
    if (interrupted) return;
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    // Keep-alive sockets and the like must not hold the process open.
    process.exit();
  });
