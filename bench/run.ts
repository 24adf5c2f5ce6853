/**
 * Side-by-side benchmark: this transport, the SDK's transport (both under the SDK `Client`), a raw
 * fetch loop, and the floor (the SDK `Client` over an instant in-memory transport), in one run,
 * against one server process (bench/server.ts); in the modern era (2026-07-28) this transport and
 * the 2.x SDK transport, both under the 2.x `Client`.
 *
 *   node --expose-gc --import tsx bench/run.ts [options]   (npm run bench, npm run bench:quick)
 *   --quick (3 rounds, SSE and modern, shorter windows, no held sessions), --rounds=N (full: 5),
 *   --clients=this,sdk,raw,floor, --scenarios=a,b (ids of `scenarios`), --modes=json,sse,modern,
 *   --growth-calls=N (calls for the heap-growth figure), --no-write (no bench/results/latest.*)
 *
 * Scenario after scenario, each client gets a new process (`bench/scenarios.ts client`),
 * unrecorded warm-up runs (eight in all, the modes in turn), then the rounds, which alternate
 * the clients (the order rotated by one place each round). A value is the median over rounds; a
 * ratio is computed per round (paired), its median shown with the min–max. Every target is a row
 * with its ratio and met / not met.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clientKinds, clientLabels, isModern, type ClientKind } from './clients.js';
import type { MemoryReply, MemoryRequest } from './memory.js';
import { benchDir, projectDir, startServer, stopAll, stopChild, track } from './processes.js';
import { forceGc, modes as allModes, resetServer, type ClientScenarioId, type Counts, type Mode } from './scenarios.js';
import type { ClientReply, ClientRequest, ScenarioContext, ScenarioResult } from './scenarios.js';
import { fmt, fmtRatio, markdownTable, max, median, min } from './stats.js';

const MiB = 1024 * 1024;
const fullCounts: Counts = {
  sequential: { count: 3000, seconds: 1.5 },
  inflight: { count: 6000, seconds: 1.2, concurrency: 32 },
  notifications: { perRun: 1000, runs: 5, seconds: 5 },
  cycles: { count: 600, seconds: 1.2 },
  held: { count: 5000, seconds: 150, concurrency: 8 },
  growth: { count: 100_000, seconds: 120, concurrency: 8 },
  payloads: [{ bytes: MiB, count: 12, seconds: 1.5 }],
  event16m: { count: 5, seconds: 4 },
};
/**
 * Unrecorded runs each client's process makes before its first recorded one. A process's first
 * runs cost more per call for every client while V8 compiles and the heap grows: sequential modern
 * calls in one process, run by run, read 758, 607, 358, then 257-217 µs (this transport), 1,312,
 * 937, 622, then 504-432 (raw fetch), 1,914, 1,388, 869, then 716-604 (the SDK's); from the fourth
 * run on they hold. With the clients taking turns (the bench's rounds), this transport's paced
 * progress took longer: after three warm-up runs its second recorded round read 1.20 and 1.24×
 * the SDK's in two full runs (the others 0.58-0.88); after eight, 0.56-0.68 in every round
 * (bench/README.md, "Warm-up").
 */
const warmRuns = 8;
const quickCounts: Counts = {
  sequential: { count: 1000, seconds: 0.6 },
  inflight: { count: 2000, seconds: 0.5, concurrency: 32 },
  notifications: { perRun: 1000, runs: 1, seconds: 2 },
  cycles: { count: 200, seconds: 0.5 },
  held: { count: 100, seconds: 5, concurrency: 8 },
  growth: { count: 5_000, seconds: 20, concurrency: 8 },
  payloads: [{ bytes: MiB, count: 6, seconds: 0.8 }],
  event16m: { count: 3, seconds: 2 },
};

/**
 * kind: client, in the client's process; this: the same, this transport only; memory, a fresh child per run (bench/memory.ts);
 * once: memory, once, this transport only. clients: who runs it (default: this, SDK, and raw and floor where they speak the mode).
 */
type ScenarioDef = { title: (mode: Mode) => string; modes: readonly Mode[]; kind: 'client' | 'this' | 'memory' | 'once' };
const v1 = (title: string, modern: string) => (mode: Mode) => (isModern(mode) ? modern : title);
const both: Mode[] = ['modern', 'modern-sse'];
const scenarios = {
  sequential: { title: () => 'Sequential echo', modes: allModes, kind: 'client' },
  inflight: { title: () => '32 calls in flight', modes: allModes, kind: 'client' },
  'inflight-256': { title: () => '256 calls in flight', modes: both, kind: 'client' },
  // With enableJsonResponse the 1.x server drops request-related notifications: no progress in JSON mode.
  progress: { title: () => '1,000 progress notifications (POST stream)', modes: ['sse', 'modern'], kind: 'client' },
  log: {
    title: v1('1,000 log notifications (standalone GET stream)', '1,000 list_changed notifications (subscriptions/listen stream)'),
    modes: allModes,
    kind: 'client',
  },
  cycles: {
    title: v1('connect + initialize + close (DELETE)', 'connect (server/discover) + call + close'),
    modes: allModes,
    kind: 'client',
  },
  // issue 32: the transport alone (no Client), the 1.x Client's burst on the GET stream in JSON mode (the anomaly), S8.
  'log-alone': {
    title: v1('1,000 log notifications (GET stream), transport alone', '1,000 list_changed (listen stream), transport alone'),
    modes: ['json', 'sse', 'modern'],
    kind: 'client',
  },
  'log-burst': { title: () => '1,000 log notifications (GET stream), server.notification() burst', modes: ['json', 'sse'], kind: 'client' },
  'event-16m': { title: () => 'One SSE event of 16 MiB (S8), transport alone', modes: ['sse'], kind: 'client' },
  // issue 44: notifications one per packet (the server waits 1 ms after each), under each Client.
  'paced-progress': { title: () => '500 progress notifications, one per packet (POST stream), 1.x Client', modes: ['sse'], kind: 'client' },
  'paced-progress-v2': {
    title: () => '500 progress notifications, one per packet (POST stream), 2.x Client',
    modes: ['sse'],
    kind: 'client',
  },
  'paced-log': {
    title: () => '500 log notifications, one per packet (standalone GET stream), 1.x Client',
    modes: ['json', 'sse'],
    kind: 'client',
  },
  'paced-log-v2': {
    title: () => '500 log notifications, one per packet (standalone GET stream), 2.x Client',
    modes: ['json', 'sse'],
    kind: 'client',
  },
  held: {
    title: v1('5,000 held sessions with GET stream, 1.x Client', '5,000 held listen subscriptions, 2.x Client'),
    modes: ['sse', 'modern'],
    kind: 'memory',
  },
  'held-v2': { title: () => '5,000 held sessions with GET stream, 2.x Client', modes: ['sse'], kind: 'memory' },
  'payload-1m': { title: () => 'Echo 1 MiB', modes: ['json', 'sse'], kind: 'client' },
  growth: { title: () => 'Echo calls on one session, then close', modes: ['sse'], kind: 'once' },
  telemetry: { title: () => 'Sequential echo, telemetry (O2)', modes: ['sse'], kind: 'this' },
} as const satisfies Record<string, ScenarioDef>;
type ScenarioId = keyof typeof scenarios;
const scenarioIds = Object.keys(scenarios) as ScenarioId[];

type Profile = { name: 'full' | 'quick'; rounds: number; counts: Counts; scenarios: ScenarioId[]; modes: Mode[] };

function parseOptions(argv: string[]) {
  const get = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const list = <T extends string>(name: string, allowed: readonly T[], fallback: T[]): T[] => {
    const items = get(name)
      ?.split(',')
      .filter((s) => s !== '');
    for (const item of items ?? [])
      if (!allowed.some((a) => a === item)) throw new Error(`--${name}: unknown "${item}" (known: ${allowed.join(', ')})`);
    return items === undefined ? fallback : allowed.filter((a) => items.includes(a));
  };
  const quick = argv.includes('--quick');
  const counts = quick ? quickCounts : fullCounts;
  const rounds = Number(get('rounds') ?? (quick ? 3 : 5));
  const growth = Number(get('growth-calls') ?? counts.growth.count);
  if (!Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(growth) || growth < 1)
    throw new Error('--rounds and --growth-calls must be positive integers');
  const profile: Profile = {
    name: quick ? 'quick' : 'full',
    rounds,
    counts: { ...counts, growth: { ...counts.growth, count: growth } },
    scenarios: list('scenarios', scenarioIds, quick ? scenarioIds.filter((id) => !id.startsWith('held')) : scenarioIds),
    modes: list('modes', allModes, quick ? ['sse', 'modern', 'modern-sse'] : [...allModes]),
  };
  return { profile, clients: list('clients', clientKinds, [...clientKinds]), write: !argv.includes('--no-write') };
}

/** Waits (bounded) for the child's reply that `accept`s, after `send()`. */
function ask<T>(child: ChildProcess, timeoutMs: number, accept: (message: T) => boolean, send?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      finish(new Error(`child process: no answer in ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const onMessage = (message: T) => {
      if (accept(message)) finish(undefined, message);
    };
    const onExit = (code: number | null) => {
      finish(new Error(`child process exited (code ${String(code)}) without an answer`));
    };
    const finish = (error: Error | undefined, message?: T) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error === undefined) resolve(message as T);
      else reject(error);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    send?.();
  });
}

const forkBench = (file: string, args: string[]) =>
  track(
    fork(join(benchDir, file), args, {
      cwd: projectDir,
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced', // NaN (a figure not measured) survives the structured clone, not JSON.
    }),
  );

/** One process per client, forked on first use and kept for one scenario. */
const processes = new Map<ClientKind, ChildProcess>();
let seq = 0;
let warnings: string[] = [];

async function runScenario(id: ScenarioId, ctx: ScenarioContext): Promise<ScenarioResult> {
  const def: ScenarioDef = scenarios[id];
  if (def.kind === 'memory' || def.kind === 'once') {
    const measure = id === 'held' || id === 'held-v2' ? 'held' : 'growth';
    const budget = ctx.counts[measure];
    const variant = id === 'held-v2' ? 'v2' : undefined;
    const request: MemoryRequest = { measure, kind: ctx.kind, mode: ctx.mode, base: ctx.base, ...budget, variant };
    const child = forkBench('memory.ts', [JSON.stringify(request)]);
    try {
      const reply = await ask<MemoryReply>(child, (budget.seconds + 90) * 1000, () => true);
      if (!reply.ok) throw new Error(reply.error);
      return { serverCpuUs: Number.NaN, connections: Number.NaN, errors: reply.errors, metrics: reply.metrics };
    } finally {
      await stopChild(child);
    }
  }
  const child = processes.get(ctx.kind) ?? forkBench('scenarios.ts', ['client']);
  processes.set(ctx.kind, child);
  const request: ClientRequest = { seq: ++seq, id: id as ClientScenarioId, ctx };
  const send = () => child.send(request);
  const reply = await ask<ClientReply>(child, 600_000, (m) => m.seq === request.seq, send);
  warnings.push(...reply.warnings);
  if (!reply.ok) throw new Error(reply.error);
  return reply.result;
}

async function stopProcesses(): Promise<void> {
  await Promise.all([...processes.values()].map(stopChild));
  processes.clear();
}

// ───────────────────────────── targets ─────────────────────────────

type Target = { against: 'raw' | 'sdk' | 'absolute'; bound: number };
/** scenario, metric, figure, better, targets, and the modes (default: every mode of the scenario). */
type RowDef = [ScenarioId | 'size', string, string, 'higher' | 'lower', Target[], Mode[]?];
const raw = (bound: number): Target => ({ against: 'raw', bound });
const sdk = (bound: number): Target => ({ against: 'sdk', bound });
const abs = (bound: number): Target => ({ against: 'absolute', bound });

const [v1Modes, modern] = [['json', 'sse'] as Mode[], both];
const rowDefs: RowDef[] = [
  ['sequential', 'cpuUsPerCall', 'client CPU µs/call', 'lower', [raw(0.5), sdk(0.4)], v1Modes],
  ['sequential', 'cpuUsPerCall', 'client CPU µs/call', 'lower', [raw(0.6), sdk(0.4)], modern],
  ['sequential', 'callsPerSec', 'calls/s', 'higher', [raw(1.15)]],
  ['sequential', 'p50Ms', 'p50 latency, ms', 'lower', []],
  ['inflight', 'callsPerSec', 'calls/s', 'higher', [raw(1.2)]],
  ['inflight', 'cpuUsPerCall', 'client CPU µs/call', 'lower', [], v1Modes],
  ['inflight', 'cpuUsPerCall', 'client CPU µs/call', 'lower', [sdk(0.45)], modern],
  ['inflight-256', 'callsPerSec', 'calls/s', 'higher', []],
  ['inflight-256', 'cpuUsPerCall', 'client CPU µs/call', 'lower', [sdk(0.45)]],
  ['progress', 'notificationsPerSec', 'notifications/s', 'higher', [sdk(1.5)]],
  ['progress', 'cpuUsPerNotification', 'client CPU µs/notification', 'lower', [sdk(0.8)]],
  ['log', 'notificationsPerSec', 'notifications/s', 'higher', [sdk(1.5)]],
  ['log', 'cpuUsPerNotification', 'client CPU µs/notification', 'lower', [sdk(0.8)]],
  ['log-burst', 'cpuUsPerNotification', 'client CPU µs/notification', 'lower', [sdk(0.8)]],
  ['log-alone', 'cpuUsPerNotification', 'client CPU µs/notification', 'lower', [sdk(0.35)]],
  ...(['paced-progress', 'paced-progress-v2', 'paced-log', 'paced-log-v2'] as const).map((id): RowDef => [
    id,
    'cpuUsPerNotification',
    'client CPU µs/notification',
    'lower',
    [sdk(0.8)],
  ]),
  ['event-16m', 'msPerEvent', 'ms/event (p50)', 'lower', [raw(2.0)]],
  ['event-16m', 'cpuMsPerEvent', 'client CPU ms/event', 'lower', []],
  ['cycles', 'sessionsPerSec', 'cycles/s', 'higher', [sdk(1.0)]],
  ['cycles', 'connectionsPerSession', 'new TCP connections/cycle', 'lower', []],
  ...(['held', 'held-v2'] as const).flatMap((id): RowDef[] => [
    [id, 'heapKiBPerSession', 'heap KiB/session', 'lower', [sdk(0.5)]],
    [id, 'heapDataKiBPerSession', 'heap KiB/session without compiled code', 'lower', []],
    [id, 'rssKiBPerSession', 'RSS KiB/session', 'lower', []],
  ]),
  ['growth', 'heapGrowthMiB', 'heap growth after GC, MiB', 'lower', [abs(1)]],
  // "Back to baseline": within 0.25 MiB of the heap before the session was opened.
  ['growth', 'heapAfterCloseMiB', 'heap after close − before open, MiB', 'lower', [abs(0.25)]],
  // Without V8's code and bytecode, which V8 compiles, deoptimises and flushes (±0.3 MiB run to run).
  ['growth', 'heapGrowthDataMiB', 'heap growth after GC without compiled code, MiB', 'lower', [abs(1)]],
  ['growth', 'heapAfterCloseDataMiB', 'heap after close − before open without compiled code, MiB', 'lower', [abs(0.25)]],
  ['payload-1m', 'p50Ms', 'p50 latency, ms', 'lower', [raw(1.0)]],
  ['telemetry', 'cpuUsPerCallOff', 'client CPU µs/call, telemetry off', 'lower', []],
  ['telemetry', 'noopOverOff', 'telemetry: true, nothing registered ÷ off', 'lower', [abs(1.05)]],
  ['telemetry', 'recordingOverOff', 'recording (SDK tracer and meter) ÷ off, stated', 'lower', []],
  ['size', 'coldStartMs', 'cold start, ms', 'lower', [sdk(1.0)], ['sse']],
  ['size', 'bundleGzipKiB', 'browser bundle, Client + transport, gzip KiB', 'lower', [sdk(1.25)], ['sse', 'modern']],
];

/** What `npm run size` measures (scripts/size.ts, built package): cold start (wall-clock medians), Client + transport bundles (gzip KiB). */
function sizeFigures(): Promise<{ cold: Figures; v1: Figures; v2: Figures } | undefined> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/size.ts'], { timeout: 300_000 }, (error, stdout) => {
      const figure = (pattern: string) => Number(new RegExp(pattern).exec(stdout)?.[1] ?? Number.NaN);
      const gzip = (v: string, name: string) => figure(`Client ${v} \\+ ${name}\\s+[\\d.]+ KiB\\s+([\\d.]+) KiB gzip`);
      const bundle = (v: string) => ({ this: gzip(v, 'this transport'), sdk: gzip(v, 'SDK transport') });
      const cold = { this: figure('this transport\\s+(\\d+) ms wall'), sdk: figure('SDK transport\\s+(\\d+) ms wall') };
      resolve(error === null ? { cold, v1: bundle('1.x'), v2: bundle('2.x') } : undefined);
    });
  });
}
type Figures = { this: number; sdk: number };

// ───────────────────────────── running and summary ─────────────────────────────

/** `warnings`: the process's (e.g. MaxListenersExceededWarning); `leakedSessions`: left on the server after close (closed by /reset). */
type Sample = ScenarioResult & { round: number; scenario: ScenarioId | 'size'; mode: Mode; client: ClientKind; warnings: string[] } & {
  leakedSessions: number;
  failure?: string;
};

async function runOne(id: ScenarioId, ctx: ScenarioContext, round: number): Promise<Sample> {
  warnings = [];
  const base = { round, scenario: id, mode: ctx.mode, client: ctx.kind, leakedSessions: 0, warnings };
  let sample: Sample;
  try {
    sample = { ...base, ...(await runScenario(id, ctx)) };
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    sample = { ...base, metrics: {}, serverCpuUs: Number.NaN, connections: Number.NaN, errors: [], failure };
  }
  sample.leakedSessions = await resetServer(ctx.base);
  return sample;
}

function progressLine(s: Sample, label: string): string {
  const figures = Object.entries(s.metrics).map(([key, value]) => `${key}=${fmt(value)}`);
  const extra = [
    Number.isFinite(s.connections) ? `newConnections=${s.connections}` : '',
    s.failure === undefined ? '' : `FAILED: ${s.failure}`,
    s.errors.length > 0 ? `errors (${s.errors.length}): ${s.errors[0] ?? ''}` : '',
    s.warnings.length > 0 ? `process warnings: ${s.warnings.length}` : '',
    s.leakedSessions > 0 ? `leaked sessions: ${s.leakedSessions}` : '',
  ];
  return `  ${label} ${s.scenario}/${s.mode} ${s.client.padEnd(5)} ${[...figures, ...extra].filter((x) => x !== '').join(' ')}`;
}

type Ratio = { median: number; min: number; max: number };

function pairedRatio(samples: Sample[], metric: string, b: ClientKind): Ratio {
  const ratios: number[] = [];
  for (const round of new Set(samples.map((s) => s.round))) {
    const value = (kind: ClientKind) => samples.find((s) => s.round === round && s.client === kind)?.metrics[metric] ?? Number.NaN;
    const ratio = value('this') / value(b);
    if (Number.isFinite(ratio)) ratios.push(ratio);
  }
  return { median: median(ratios), min: min(ratios), max: max(ratios) };
}

const ratioCell = (r: Ratio) => (Number.isFinite(r.median) ? `${fmtRatio(r.median)} (${fmtRatio(r.min)}–${fmtRatio(r.max)})` : '—');

function summarize(samples: Sample[], profile: Profile) {
  return rowDefs.flatMap(([id, metric, figure, better, targets, only]) => {
    const scenario = id === 'size' ? undefined : scenarios[id];
    if (scenario !== undefined && !profile.scenarios.includes(id as ScenarioId)) return [];
    return (only ?? scenario?.modes ?? [])
      .filter((m) => scenario === undefined || (profile.modes.includes(m) && (scenario.modes as readonly Mode[]).includes(m)))
      .map((mode) => {
        const mine = samples.filter((s) => s.scenario === id && s.mode === mode && s.failure === undefined);
        const medians: Partial<Record<ClientKind, number>> = {};
        for (const kind of clientKinds) {
          const values = mine.filter((s) => s.client === kind).map((s) => s.metrics[metric] ?? Number.NaN);
          if (values.length > 0) medians[kind] = median(values);
        }
        const ratios = { raw: pairedRatio(mine, metric, 'raw'), sdk: pairedRatio(mine, metric, 'sdk') };
        const met = targets.map(({ against, bound }) => {
          const value = against === 'absolute' ? (medians.this ?? Number.NaN) : ratios[against].median;
          return Number.isFinite(value) ? (better === 'higher' ? value >= bound : value <= bound) : undefined;
        });
        const title = scenario?.title(mode) ?? (metric === 'coldStartMs' ? 'Cold start (npm run size)' : 'Bundle (npm run size)');
        return { title, mode, figure, better, median: medians, ratios, targets, met };
      });
  });
}

function renderTable(rows: ReturnType<typeof summarize>): string {
  const header = ['Scenario', 'Mode', 'Figure', ...clientKinds.map((k) => clientLabels[k]), 'this/raw (min–max)', 'this/SDK (min–max)'];
  const cells = rows.map((r) => {
    const sign = r.better === 'higher' ? '≥' : '≤';
    const target = r.targets.map(
      (t) => `${sign} ${t.against === 'absolute' ? t.bound : `${t.bound.toFixed(2)}× ${t.against === 'raw' ? 'raw' : 'SDK'}`}`,
    );
    const measured = Object.keys(r.median).length > 0;
    const met = r.met.map((m) => (m === undefined ? (measured ? 'n/a' : 'not measured') : m ? 'met' : '**not met**'));
    const figures = clientKinds.map((k) => (r.median[k] === undefined ? '—' : fmt(r.median[k])));
    const mode = { modern: 'modern JSON (2.x)', 'modern-sse': 'modern SSE (2.x)' }[r.mode as string] ?? r.mode.toUpperCase();
    const figure = `${r.figure} (${r.better === 'higher' ? '↑' : '↓'})`;
    return [
      r.title,
      mode,
      figure,
      ...figures,
      ratioCell(r.ratios.raw),
      ratioCell(r.ratios.sdk),
      target.join('; ') || '—',
      met.join('; ') || '—',
    ];
  });
  return markdownTable([...header, 'Target', 'Met'], cells);
}

const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' '); // prettier-ignore

async function main(): Promise<void> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const { profile, clients, write } = parseOptions(process.argv.slice(2));
  forceGc(); // fails early without --expose-gc
  const [cpu0, cores] = [os.cpus()[0]?.model ?? 'unknown', os.cpus().length];
  const machine = { node: process.version, cpuModel: cpu0, cores, platform: `${os.platform()} ${os.arch()}` };
  const loadAtStart = loadAverage();
  console.log(`benchmark (${profile.name}): ${JSON.stringify({ ...profile, counts: undefined, clients })}`);
  console.log(`node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores; load average ${loadAtStart}`);

  const { base, child: server } = await startServer();
  const samples: Sample[] = [];
  // Round r starts with the r-th client (a rotation): each takes every place in the order across rounds.
  const runsOf = (id: ScenarioId, round: number) => {
    const def: ScenarioDef = scenarios[id];
    return def.modes
      .filter((mode) => profile.modes.includes(mode))
      .flatMap((mode) => {
        const kinds = clients.filter(
          (k) =>
            ((def.kind !== 'once' && def.kind !== 'this') || k === 'this') &&
            (k !== 'floor' ||
              (!isModern(mode) && !['log-alone', 'event-16m', 'held-v2', 'paced-progress-v2', 'paced-log-v2'].includes(id))) &&
            (k !== 'raw' || id !== 'held-v2'),
        );
        const k = kinds.length === 0 ? 0 : (round - 1) % kinds.length;
        return [...kinds.slice(k), ...kinds.slice(0, k)].map((kind) => ({ mode, kind }));
      });
  };
  for (const id of profile.scenarios) {
    const once = scenarios[id].kind === 'once';
    console.log(`${scenarios[id].title('sse')}: ${once ? 'once' : `warm-up (not recorded), then ${profile.rounds} rounds`}`);
    // The warm-up: runs as long as a full profile's measured one (no scenario runs on what another
    // left), the modes in turn, until each client's process has made `warmRuns` of them.
    if (scenarios[id].kind === 'client') {
      const runs = runsOf(id, 1);
      const passes = Math.ceil(warmRuns / Math.max(1, new Set(runs.map((r) => r.mode)).size));
      for (let pass = 0; pass < passes; pass++) {
        for (const { mode, kind } of runs) {
          const sample = await runOne(id, { kind, mode, base, counts: fullCounts }, 0);
          if (sample.failure !== undefined) console.log(progressLine(sample, 'warm-up'));
        }
      }
    }
    // Memory figures vary little from round to round (0.68–0.68× in 5 rounds) and 5,000 sessions take a minute: 2 rounds.
    for (let round = 1; round <= (once ? 1 : scenarios[id].kind === 'memory' ? Math.min(2, profile.rounds) : profile.rounds); round++) {
      for (const { mode, kind } of runsOf(id, round)) {
        const sample = await runOne(id, { kind, mode, base, counts: profile.counts }, round);
        samples.push(sample);
        console.log(progressLine(sample, once ? 'once' : `r${round}`));
      }
    }
    await stopProcesses();
  }
  await stopChild(server);
  const size = await sizeFigures();
  const none = { round: 1, scenario: 'size' as const, serverCpuUs: Number.NaN, connections: Number.NaN, errors: [], warnings: [] };
  for (const client of ['this', 'sdk'] as const) {
    const v1 = { coldStartMs: size?.cold[client] ?? Number.NaN, bundleGzipKiB: size?.v1[client] ?? Number.NaN };
    samples.push({ ...none, mode: 'sse', client, metrics: v1, leakedSessions: 0 });
    samples.push({ ...none, mode: 'modern', client, metrics: { bundleGzipKiB: size?.v2[client] ?? Number.NaN }, leakedSessions: 0 });
  }

  const runtimeSeconds = (performance.now() - started) / 1000;
  const rows = summarize(samples, profile);
  const met = rows.flatMap((r) => r.met);
  const failures = samples.filter((s) => s.failure !== undefined);
  const leaks = samples.filter((s) => s.leakedSessions > 0);
  const count = (pick: (s: Sample) => number) => samples.reduce((n, s) => n + pick(s), 0);
  const notes = [
    `Profile: ${profile.name}; scenario by scenario, ${profile.rounds} rounds after warm-up runs (${warmRuns} per client process, the modes in turn); clients alternate, the order rotated by one place each round; each client in its own process (bench/scenarios.ts client), a new one for each scenario; heap growth runs once: ${fmt(samples.find((s) => s.scenario === 'growth')?.metrics.calls ?? Number.NaN)} calls of ${profile.counts.growth.count.toLocaleString('en-US')} asked.`,
    `Machine: node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores, ${machine.platform}. Server: JSON and SSE, the 1.x SDK's McpServer + StreamableHTTPServerTransport (stateful); modern, the 2.x SDK's createMcpHandler (2026-07-28), under the 2.x Client with versionNegotiation 'auto'; a separate process on 127.0.0.1. The floor: the 1.x SDK Client over an instant in-memory transport.`,
    "Values are medians over rounds; ratios are per-round (paired) ratios, median (min–max). ↑ higher is better, ↓ lower is better. Client CPU is the client's process's own process.cpuUsage() around the measured part; memory figures come from a fresh child process after forced GC (heap per held session: the second half's growth per session).",
    `Targets met: ${met.filter((m) => m === true).length} of ${met.length} (${met.filter((m) => m === undefined).length} not measured).`,
    failures.length > 0
      ? `Failed runs: ${failures.map((f) => `${f.scenario}/${f.mode}/${f.client} r${f.round}: ${f.failure ?? ''}`).join('; ')}`
      : 'No failed runs.',
    leaks.length > 0
      ? `Sessions left on the server: ${leaks.map((l) => `${l.scenario}/${l.mode}/${l.client} r${l.round}: ${l.leakedSessions}`).join('; ')}`
      : 'Every client closed every session.',
    `onerror reports: ${count((s) => s.errors.length)}; process warnings: ${count((s) => s.warnings.length)} (per run in latest.json).`,
    `Load average (1, 5, 15 min) at start ${loadAtStart}, at end ${loadAverage()}. Runtime ${runtimeSeconds.toFixed(0)} s (${startedAt}).`,
  ];
  const markdown = `# Benchmark: this transport vs the SDK transport vs raw fetch, with the floor\n\n${renderTable(rows)}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`;
  console.log(`\n${markdown}`);
  if (!write) return;
  writeFileSync(join(benchDir, 'results', 'latest.md'), markdown);
  const json = { startedAt, runtimeSeconds, machine, profile, summary: rows, samples };
  const text = JSON.stringify(json, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 1);
  writeFileSync(join(benchDir, 'results', 'latest.json'), `${text}\n`);
  console.log('written: bench/results/latest.md, bench/results/latest.json');
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
    process.exit(); // keep-alive sockets and the like must not hold the process open
  });
