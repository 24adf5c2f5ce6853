/**
 * Side-by-side benchmark: this transport, the SDK's transport (both under the SDK `Client`) and a
 * raw fetch loop, in one run, against one server process (bench/server.ts).
 *
 *   npm run bench         full run: 5 rounds, every scenario, JSON and SSE modes (about 6–8 min on 2 cores)
 *   npm run bench:quick   under a minute: 3 rounds, fewer iterations, SSE mode, no held sessions nor
 *                         small payloads (sequential, in flight, progress, log, cycles, 1 MiB echo)
 *
 * Both are `node --expose-gc --import tsx bench/run.ts [options]`. Options:
 *   --quick                 the quick profile
 *   --rounds=N              number of measured rounds
 *   --clients=this,sdk,raw  which clients (default all; ratios need raw and sdk)
 *   --scenarios=a,b         scenario ids (sequential, inflight, progress, log, cycles, held,
 *                           payload-1k, payload-64k, payload-1m)
 *   --modes=json,sse        response modes
 *   --scale=F               multiply every count and time budget by F
 *   --no-write              do not write bench/results/latest.{md,json}
 *
 * A CPU profile of one scenario for this transport (the server is a separate process and is
 * not profiled):
 *   node --expose-gc --cpu-prof --cpu-prof-dir=bench/results/profiles --import tsx bench/run.ts \
 *     --clients=this --scenarios=sequential --modes=sse --rounds=1 --scale=3 --no-write
 *   node --import tsx bench/cpuprofile-top.ts bench/results/profiles/<file>.cpuprofile --window=<from-to> --ops=<calls>
 * (under --cpu-prof each progress line shows the measured window on the profile's clock)
 *
 * Rounds alternate the clients (this, sdk, raw, this, sdk, raw, …) scenario by scenario, after one
 * unrecorded warm-up round. Each figure's table value is the median over rounds; ratios are
 * computed per round (paired) and their median is shown with the min–max over rounds.
 */
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clientKinds, clientLabels, type ClientKind } from './clients.js';
import type { HeldFailure, HeldRequest, HeldResult } from './held-sessions.js';
import { benchDir, projectDir, startServer, stopAll, stopChild, track } from './processes.js';
import {
  cycles,
  forceGc,
  inflight,
  logStream,
  modes as allModes,
  payload,
  progress,
  resetServer,
  sequential,
  serverStats,
  type Counts,
  type Metrics,
  type Mode,
  type ScenarioContext,
  type ScenarioResult,
} from './scenarios.js';
import { fmt, fmtRatio, markdownTable, max, median, min } from './stats.js';

const resultsDir = join(benchDir, 'results');

// ───────────────────────────── configuration ─────────────────────────────

interface Profile {
  name: 'full' | 'quick';
  rounds: number;
  counts: Counts;
  warmup: Counts;
  scenarios: ScenarioId[];
  modes: Mode[];
}

const scenarioIds = [
  'sequential',
  'inflight',
  'progress',
  'log',
  'cycles',
  'held',
  'payload-1k',
  'payload-64k',
  'payload-1m',
] as const;
type ScenarioId = (typeof scenarioIds)[number];

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Full profile, tuned for about 6–8 minutes on 2 cores: per round, per client and mode, roughly
 * 1.5 s sequential, 1.2 s in flight, 2 × 1,000 notifications per stream, 1.2 s of cycles,
 * payload echoes, and one held-sessions child (500 sessions).
 */
const fullCounts: Counts = {
  sequential: { count: 3000, seconds: 1.5 },
  inflight: { count: 6000, seconds: 1.2, concurrency: 32 },
  notifications: { perRun: 1000, runs: 2, seconds: 3 },
  cycles: { count: 600, seconds: 1.2 },
  held: { sessions: 500, seconds: 20, concurrency: 8 },
  payloads: [
    { bytes: KiB, count: 150, seconds: 0.4 },
    { bytes: 64 * KiB, count: 60, seconds: 0.5 },
    { bytes: MiB, count: 12, seconds: 1.5 },
  ],
};

const quickCounts: Counts = {
  sequential: { count: 1000, seconds: 0.6 },
  inflight: { count: 2000, seconds: 0.5, concurrency: 32 },
  notifications: { perRun: 1000, runs: 1, seconds: 2 },
  cycles: { count: 200, seconds: 0.5 },
  held: { sessions: 100, seconds: 5, concurrency: 8 },
  payloads: [
    { bytes: KiB, count: 50, seconds: 0.2 },
    { bytes: 64 * KiB, count: 20, seconds: 0.2 },
    { bytes: MiB, count: 6, seconds: 0.8 },
  ],
};

const warmupCounts: Counts = {
  sequential: { count: 300, seconds: 0.4 },
  inflight: { count: 600, seconds: 0.3, concurrency: 32 },
  notifications: { perRun: 1000, runs: 1, seconds: 2 },
  cycles: { count: 40, seconds: 0.3 },
  held: { sessions: 0, seconds: 0, concurrency: 1 },
  payloads: [
    { bytes: KiB, count: 20, seconds: 0.2 },
    { bytes: 64 * KiB, count: 10, seconds: 0.2 },
    { bytes: MiB, count: 3, seconds: 0.5 },
  ],
};

const profiles: Record<Profile['name'], Profile> = {
  full: {
    name: 'full',
    rounds: 5,
    counts: fullCounts,
    warmup: warmupCounts,
    scenarios: [...scenarioIds],
    modes: [...allModes],
  },
  quick: {
    name: 'quick',
    rounds: 3,
    counts: quickCounts,
    warmup: { ...warmupCounts, sequential: { count: 150, seconds: 0.2 }, inflight: { count: 300, seconds: 0.2, concurrency: 32 } },
    scenarios: ['sequential', 'inflight', 'progress', 'log', 'cycles', 'payload-1m'],
    // SSE mode exercises the whole data path (POST streams, reader, parser); add --modes=json,sse for both.
    modes: ['sse'],
  },
};

function scaleCounts(counts: Counts, f: number): Counts {
  const b = (x: { count: number; seconds: number }) => ({ count: Math.max(1, Math.round(x.count * f)), seconds: x.seconds * f });
  return {
    sequential: b(counts.sequential),
    inflight: { ...b(counts.inflight), concurrency: counts.inflight.concurrency },
    notifications: { ...counts.notifications, runs: Math.max(1, Math.round(counts.notifications.runs * f)), seconds: counts.notifications.seconds * f },
    cycles: b(counts.cycles),
    held: counts.held,
    payloads: counts.payloads.map((p) => ({ bytes: p.bytes, ...b(p) })),
  };
}

interface Options {
  profile: Profile;
  clients: ClientKind[];
  write: boolean;
}

function parseOptions(argv: string[]): Options {
  const get = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const list = <T extends string>(name: string, allowed: readonly T[], fallback: T[]): T[] => {
    const value = get(name);
    if (value === undefined) return fallback;
    const items = value.split(',').filter((s) => s !== '');
    for (const item of items) if (!allowed.some((a) => a === item)) throw new Error(`--${name}: unknown "${item}" (known: ${allowed.join(', ')})`);
    return allowed.filter((a) => items.includes(a));
  };
  const base = profiles[argv.includes('--quick') ? 'quick' : 'full'];
  const scale = Number(get('scale') ?? '1');
  const rounds = Number(get('rounds') ?? String(base.rounds));
  if (!(scale > 0) || !Number.isInteger(rounds) || rounds < 1) throw new Error('--scale must be > 0 and --rounds a positive integer');
  const profile: Profile = {
    ...base,
    rounds,
    counts: scale === 1 ? base.counts : scaleCounts(base.counts, scale),
    scenarios: list('scenarios', scenarioIds, base.scenarios),
    modes: list('modes', allModes, base.modes),
  };
  return { profile, clients: list('clients', clientKinds, [...clientKinds]), write: !argv.includes('--no-write') };
}

// ───────────────────────────── held sessions ─────────────────────────────

async function runHeld(request: HeldRequest): Promise<ScenarioResult> {
  const child = track(
    fork(join(benchDir, 'held-sessions.ts'), [JSON.stringify(request)], {
      cwd: projectDir,
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  try {
    const reply = await new Promise<HeldResult | HeldFailure>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('held-sessions child timed out'));
      }, (request.seconds + 60) * 1000);
      child.once('message', (message) => {
        clearTimeout(timer);
        resolve(message as HeldResult | HeldFailure);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`held-sessions child exited (code ${String(code)}) without a result`));
      });
    });
    if (!reply.ok) throw new Error(reply.error);
    return {
      serverCpuUs: Number.NaN,
      connections: Number.NaN,
      errors: reply.errors,
      metrics: {
        heapKiBPerSession: reply.heapKiBPerSession,
        rssKiBPerSession: reply.rssKiBPerSession,
        externalKiBPerSession: reply.externalKiBPerSession,
        sessions: reply.opened,
        openGets: reply.openGets,
        openMs: reply.openMs,
        closeMs: reply.closeMs,
      },
    };
  } finally {
    await stopChild(child);
  }
}

// ───────────────────────────── scenarios and rows ─────────────────────────────

interface ScenarioDef {
  id: ScenarioId;
  title: string;
  modes: readonly Mode[];
  run: (ctx: ScenarioContext) => Promise<ScenarioResult>;
}

const scenarioDefs: Record<ScenarioId, ScenarioDef> = {
  sequential: { id: 'sequential', title: 'Sequential echo', modes: allModes, run: sequential },
  inflight: { id: 'inflight', title: '32 calls in flight', modes: allModes, run: inflight },
  // With enableJsonResponse the SDK server drops request-related notifications: no progress in JSON mode.
  progress: { id: 'progress', title: '1,000 progress notifications (POST stream)', modes: ['sse'], run: progress },
  log: { id: 'log', title: '1,000 log notifications (GET stream)', modes: allModes, run: logStream },
  cycles: { id: 'cycles', title: 'connect + initialize + close (DELETE)', modes: allModes, run: cycles },
  held: {
    id: 'held',
    title: 'Held sessions with GET stream',
    modes: allModes,
    run: (ctx) => runHeld({ kind: ctx.kind, mode: ctx.mode, base: ctx.base, ...ctx.counts.held }),
  },
  'payload-1k': { id: 'payload-1k', title: 'Echo 1 KiB', modes: allModes, run: (ctx) => payload(ctx, KiB) },
  'payload-64k': { id: 'payload-64k', title: 'Echo 64 KiB', modes: allModes, run: (ctx) => payload(ctx, 64 * KiB) },
  'payload-1m': { id: 'payload-1m', title: 'Echo 1 MiB', modes: allModes, run: (ctx) => payload(ctx, MiB) },
};

interface RowDef {
  scenario: ScenarioId;
  metric: string;
  figure: string;
  better: 'higher' | 'lower';
  /** The issue's target for this transport / raw, if any. */
  rawTarget?: number;
}

const rowDefs: RowDef[] = [
  { scenario: 'sequential', metric: 'callsPerSec', figure: 'calls/s', better: 'higher', rawTarget: 0.95 },
  { scenario: 'sequential', metric: 'p50Ms', figure: 'p50 latency, ms', better: 'lower' },
  { scenario: 'sequential', metric: 'p99Ms', figure: 'p99 latency, ms', better: 'lower' },
  { scenario: 'sequential', metric: 'cpuUsPerCall', figure: 'client CPU µs/call', better: 'lower', rawTarget: 1.1 },
  { scenario: 'inflight', metric: 'callsPerSec', figure: 'calls/s', better: 'higher', rawTarget: 0.9 },
  { scenario: 'inflight', metric: 'cpuUsPerCall', figure: 'client CPU µs/call', better: 'lower' },
  { scenario: 'progress', metric: 'notificationsPerSec', figure: 'notifications/s', better: 'higher', rawTarget: 0.85 },
  { scenario: 'progress', metric: 'cpuUsPerNotification', figure: 'client CPU µs/notification', better: 'lower', rawTarget: 1.5 },
  { scenario: 'log', metric: 'notificationsPerSec', figure: 'notifications/s', better: 'higher', rawTarget: 0.85 },
  { scenario: 'log', metric: 'cpuUsPerNotification', figure: 'client CPU µs/notification', better: 'lower', rawTarget: 1.5 },
  { scenario: 'cycles', metric: 'sessionsPerSec', figure: 'sessions/s', better: 'higher', rawTarget: 0.9 },
  { scenario: 'cycles', metric: 'cpuUsPerSession', figure: 'client CPU µs/session', better: 'lower' },
  { scenario: 'held', metric: 'heapKiBPerSession', figure: 'heap KiB/session', better: 'lower', rawTarget: 1.3 },
  { scenario: 'held', metric: 'rssKiBPerSession', figure: 'RSS KiB/session', better: 'lower', rawTarget: 1.15 },
  { scenario: 'payload-1k', metric: 'p50Ms', figure: 'p50 latency, ms', better: 'lower' },
  { scenario: 'payload-64k', metric: 'p50Ms', figure: 'p50 latency, ms', better: 'lower' },
  { scenario: 'payload-1m', metric: 'p50Ms', figure: 'p50 latency, ms', better: 'lower', rawTarget: 1.05 },
];

// ───────────────────────────── running ─────────────────────────────

interface Sample {
  round: number;
  scenario: ScenarioId;
  mode: Mode;
  client: ClientKind;
  metrics: Metrics;
  serverCpuUs: number;
  connections: number;
  /** The measured part on the monotonic clock (µs), as in `--cpu-prof` timestamps. */
  windowUs?: [number, number];
  errors: string[];
  /** Process warnings (e.g. MaxListenersExceededWarning) emitted while this sample ran. */
  warnings: string[];
  /** Sessions the server still held after the client closed (closed by /reset). */
  leakedSessions: number;
  failure?: string;
}

const profiling = process.execArgv.some((a) => a.startsWith('--cpu-prof'));

/** Warnings the process emitted since the current sample began. */
let warnings: string[] = [];
process.on('warning', (warning) => {
  if (warnings.length < 20) warnings.push(`${warning.name}: ${warning.message}`);
});

async function runOne(def: ScenarioDef, ctx: ScenarioContext, round: number): Promise<Sample> {
  warnings = [];
  const base = { round, scenario: def.id, mode: ctx.mode, client: ctx.kind, leakedSessions: 0, warnings };
  let sample: Sample;
  try {
    sample = { ...base, ...(await def.run(ctx)) };
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
    // Under --cpu-prof: the measured window, for `cpuprofile-top.ts --window=`.
    profiling && sample.windowUs !== undefined ? `window=${sample.windowUs.join('-')}` : '',
    sample.failure === undefined ? '' : `FAILED: ${sample.failure}`,
    sample.errors.length > 0 ? `errors (${sample.errors.length}): ${sample.errors[0] ?? ''}` : '',
    sample.warnings.length > 0 ? `process warnings: ${sample.warnings.length}` : '',
    sample.leakedSessions > 0 ? `leaked sessions: ${sample.leakedSessions}` : '',
  ]
    .filter((s) => s !== '')
    .join('  ');
  return `  ${label} ${sample.scenario}/${sample.mode} ${sample.client.padEnd(4)} ${figures} ${extra}`;
}

// ───────────────────────────── summary ─────────────────────────────

interface Ratio {
  median: number;
  min: number;
  max: number;
  rounds: number;
}

interface SummaryRow extends RowDef {
  title: string;
  mode: Mode;
  median: Partial<Record<ClientKind, number>>;
  thisOverRaw: Ratio;
  thisOverSdk: Ratio;
  sdkOverRaw: Ratio;
  targetMet: boolean | undefined;
  sdkMet: boolean | undefined;
}

function pairedRatio(samples: Sample[], metric: string, a: ClientKind, b: ClientKind): Ratio {
  const ratios: number[] = [];
  for (const round of new Set(samples.map((s) => s.round))) {
    const va = samples.find((s) => s.round === round && s.client === a)?.metrics[metric];
    const vb = samples.find((s) => s.round === round && s.client === b)?.metrics[metric];
    if (va !== undefined && vb !== undefined && Number.isFinite(va) && Number.isFinite(vb) && vb !== 0) ratios.push(va / vb);
  }
  return { median: median(ratios), min: min(ratios), max: max(ratios), rounds: ratios.length };
}

function summarize(samples: Sample[], profile: Profile): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const def of rowDefs) {
    if (!profile.scenarios.includes(def.scenario)) continue;
    const scenario = scenarioDefs[def.scenario];
    for (const mode of scenario.modes) {
      if (!profile.modes.includes(mode)) continue;
      const mine = samples.filter((s) => s.scenario === def.scenario && s.mode === mode && s.failure === undefined);
      const medians: Partial<Record<ClientKind, number>> = {};
      for (const kind of clientKinds) {
        const values = mine.filter((s) => s.client === kind).map((s) => s.metrics[def.metric] ?? Number.NaN);
        if (values.length > 0) medians[kind] = median(values);
      }
      const thisOverRaw = pairedRatio(mine, def.metric, 'this', 'raw');
      const thisOverSdk = pairedRatio(mine, def.metric, 'this', 'sdk');
      const sdkOverRaw = pairedRatio(mine, def.metric, 'sdk', 'raw');
      const ok = (ratio: number, bound: number) =>
        Number.isFinite(ratio) ? (def.better === 'higher' ? ratio >= bound : ratio <= bound) : undefined;
      rows.push({
        ...def,
        title: scenario.title,
        mode,
        median: medians,
        thisOverRaw,
        thisOverSdk,
        sdkOverRaw,
        targetMet: def.rawTarget === undefined ? undefined : ok(thisOverRaw.median, def.rawTarget),
        sdkMet: ok(thisOverSdk.median, 1),
      });
    }
  }
  return rows;
}

function ratioCell(r: Ratio): string {
  if (!Number.isFinite(r.median)) return 'n/a';
  return `${fmtRatio(r.median)} (${fmtRatio(r.min)}–${fmtRatio(r.max)})`;
}

function metCell(met: boolean | undefined): string {
  return met === undefined ? '—' : met ? 'met' : '**not met**';
}

function renderTable(rows: SummaryRow[]): string {
  const header = [
    'Scenario',
    'Mode',
    'Figure',
    clientLabels.this,
    clientLabels.sdk,
    clientLabels.raw,
    'this/raw (min–max)',
    'this/SDK (min–max)',
    'SDK/raw',
    'Target (this/raw)',
    'Target met',
    'this ≥ SDK',
  ];
  const cells = rows.map((row) => [
    row.title,
    row.mode.toUpperCase(),
    `${row.figure} (${row.better === 'higher' ? '↑' : '↓'})`,
    fmt(row.median.this ?? Number.NaN),
    fmt(row.median.sdk ?? Number.NaN),
    fmt(row.median.raw ?? Number.NaN),
    ratioCell(row.thisOverRaw),
    ratioCell(row.thisOverSdk),
    fmtRatio(row.sdkOverRaw.median),
    row.rawTarget === undefined ? '—' : `${row.better === 'higher' ? '≥' : '≤'} ${row.rawTarget.toFixed(2)}`,
    metCell(row.targetMet),
    metCell(row.sdkMet),
  ]);
  return markdownTable(header, cells);
}

/** Per client: what explains the figures (connection reuse, server share, warnings, errors). */
function renderDiagnostics(samples: Sample[], profile: Profile, clients: ClientKind[]): string {
  const rows: string[][] = [];
  for (const id of profile.scenarios) {
    const def = scenarioDefs[id];
    for (const mode of def.modes.filter((m) => profile.modes.includes(m))) {
      for (const kind of clients) {
        const mine = samples.filter((s) => s.scenario === id && s.mode === mode && s.client === kind);
        if (mine.length === 0) continue;
        const ops = (s: Sample) => s.metrics.calls ?? s.metrics.notifications ?? s.metrics.sessions ?? Number.NaN;
        const connections = median(mine.map((s) => s.connections / ops(s)));
        const serverCpu = median(mine.map((s) => s.serverCpuUs / ops(s)));
        rows.push([
          def.title,
          mode.toUpperCase(),
          clientLabels[kind],
          Number.isFinite(connections) ? connections.toFixed(3) : 'n/a',
          fmt(serverCpu),
          String(mine.reduce((n, s) => n + s.warnings.length, 0)),
          String(mine.reduce((n, s) => n + s.errors.length, 0)),
          String(mine.filter((s) => s.failure !== undefined).length),
        ]);
      }
    }
  }
  return markdownTable(
    ['Scenario', 'Mode', 'Client', 'new TCP connections per op', 'server CPU µs per op', 'process warnings', 'onerror reports', 'failed runs'],
    rows,
  );
}

function machineInfo() {
  const cpus = os.cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    totalMemoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
  };
}

/**
 * A hash of the code under test (src/ and machines/), so a result can be matched to the code it
 * measured; computed at start and end (held-session children load the code afresh).
 */
function codeFingerprint(): string {
  const hash = createHash('sha256');
  for (const dir of ['src', 'machines']) {
    const files = readdirSync(join(projectDir, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .sort();
    for (const file of files) {
      hash.update(`${dir}/${file}\0`);
      hash.update(readFileSync(join(projectDir, dir, file)));
    }
  }
  return hash.digest('hex').slice(0, 16);
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
  const { profile, clients, write } = parseOptions(process.argv.slice(2));
  forceGc(); // fails early without --expose-gc
  const machine = machineInfo();
  const codeAtStart = codeFingerprint();
  const loadAtStart = loadAverage();
  console.log(
    `mcp-xstate-transport benchmark (${profile.name}): ${profile.rounds} rounds, clients ${clients.join(', ')}, ` +
      `scenarios ${profile.scenarios.join(', ')}, modes ${profile.modes.join(', ')}`,
  );
  console.log(`node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores; load average ${loadAtStart}; code ${codeAtStart}`);

  const { base, child: server } = await startServer();
  console.log(`server pid ${String(server.pid)} at ${base}`);
  const samples: Sample[] = [];
  const plan = profile.scenarios.map((id) => scenarioDefs[id]);

  console.log('warm-up round (not recorded)');
  for (const def of plan) {
    if (def.id === 'held') continue;
    for (const mode of def.modes.filter((m) => profile.modes.includes(m))) {
      for (const kind of clients) {
        const sample = await runOne(def, { kind, mode, base, counts: profile.warmup }, 0);
        if (sample.failure !== undefined) console.log(progressLine(sample, 'warm-up'));
      }
    }
  }

  for (let round = 1; round <= profile.rounds; round++) {
    const roundStart = performance.now();
    console.log(`round ${round}/${profile.rounds}`);
    for (const def of plan) {
      for (const mode of def.modes.filter((m) => profile.modes.includes(m))) {
        for (const kind of clients) {
          const sample = await runOne(def, { kind, mode, base, counts: profile.counts }, round);
          samples.push(sample);
          console.log(progressLine(sample, `r${round}`));
        }
      }
    }
    console.log(`  round ${round} took ${((performance.now() - roundStart) / 1000).toFixed(1)} s; load average ${loadAverage()}`);
  }

  const finalStats = await serverStats(base);
  await stopChild(server);
  const runtimeSeconds = (performance.now() - started) / 1000;
  const codeAtEnd = codeFingerprint();
  const loadAtEnd = loadAverage();

  const rows = summarize(samples, profile);
  const table = renderTable(rows);
  const failures = samples.filter((s) => s.failure !== undefined);
  const leaks = samples.filter((s) => s.leakedSessions > 0);
  const withTarget = rows.filter((r) => r.targetMet !== undefined);
  const withSdk = rows.filter((r) => r.sdkMet !== undefined);
  const notes = [
    `Profile: ${profile.name}; ${profile.rounds} rounds after one warm-up round; clients alternate ${clients.join(' → ')} for every scenario and mode.`,
    `Machine: node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores, ${machine.platform}. Server: the SDK's McpServer + StreamableHTTPServerTransport in a separate process on 127.0.0.1.`,
    'Values are medians over rounds; ratios are per-round (paired) ratios, median (min–max). ↑ higher is better, ↓ lower is better.',
    'Client CPU is the client process\'s own process.cpuUsage() delta around each scenario; held-session memory is measured in a fresh child process per client and round, after forced GC.',
    'Progress notifications run in SSE mode only: with enableJsonResponse the SDK server does not send request-related notifications.',
    `Targets met: ${withTarget.filter((r) => r.targetMet === true).length}/${withTarget.length}; this ≥ SDK: ${withSdk.filter((r) => r.sdkMet === true).length}/${withSdk.length}.`,
    failures.length > 0 ? `Failed scenario runs: ${failures.map((f) => `${f.scenario}/${f.mode}/${f.client} r${f.round}: ${f.failure ?? ''}`).join('; ')}` : 'No failed scenario runs.',
    leaks.length > 0
      ? `Sessions left on the server after a client closed: ${leaks.map((l) => `${l.scenario}/${l.mode}/${l.client} r${l.round}: ${l.leakedSessions}`).join('; ')}`
      : 'Every client closed every session (the server held none after each scenario).',
    `Code measured: src/ + machines/ sha256 ${codeAtStart}${codeAtEnd === codeAtStart ? '' : ` at start, ${codeAtEnd} at end (the code changed during the run; held-session children load it afresh)`}.`,
    `Load average (1, 5, 15 min) at start ${loadAtStart}, at end ${loadAtEnd} (other processes on this machine add noise to wall-clock figures; CPU figures are the client process's own).`,
    `Runtime: ${runtimeSeconds.toFixed(0)} s (${startedAt}).`,
  ];
  const diagnostics = renderDiagnostics(samples, profile, clients);
  const markdown =
    `# Benchmark: this transport vs the SDK transport vs raw fetch\n\n${table}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n\n` +
    `## Diagnostics (medians over rounds; an op is a call, a notification or a session)\n\n${diagnostics}\n`;
  console.log(`\n${markdown}`);

  if (write) {
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, 'latest.md'), markdown);
    const json = {
      startedAt,
      runtimeSeconds,
      machine,
      code: { start: codeAtStart, end: codeAtEnd },
      loadAverage: { start: loadAtStart, end: loadAtEnd },
      profile: { name: profile.name, rounds: profile.rounds, scenarios: profile.scenarios, modes: profile.modes, clients, counts: profile.counts },
      summary: rows,
      raw: samples,
      server: { finalStats },
    };
    writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(json, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`);
    console.log(`written: ${join('bench', 'results', 'latest.md')}, ${join('bench', 'results', 'latest.json')}`);
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
