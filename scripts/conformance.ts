/**
 * Runs the official MCP conformance suite's client scenarios, one at a time: `sse-retry`
 * measures a reconnect delay, so nothing runs in parallel.
 *
 *   tsx scripts/conformance.ts                     both parts below
 *   tsx scripts/conformance.ts sse-retry ...       part 1, only these scenarios
 *   tsx scripts/conformance.ts --v2 [scenario ...] part 2 only (all, or only these scenarios)
 *
 * Part 1: every client scenario of `@modelcontextprotocol/conformance` 0.1.16 against
 * test/conformance/client.ts (the SDK 1.x `Client` over this project's transport). Prints one
 * line per scenario, the failing checks, and `conformance: N passed, M failed` with the check
 * totals; fails when any scenario failed or warned.
 *
 * Part 2: every client scenario of protocol revisions 2025-11-25 and 2026-07-28 in
 * `@modelcontextprotocol/conformance` 0.2 (the npm alias `@modelcontextprotocol/conformance-next`),
 * each run at its revision (`--spec-version`; a scenario of both revisions runs twice), and its
 * extension scenarios (A5, A6: DPoP and the extension grants; `list --client` shows them only
 * without `--spec-version`, so they run without it, revision `extension` in the table), against
 * test/conformance/client-v2.ts (the v2 `Client` of `@modelcontextprotocol/client`): once over
 * the SDK's own v2 transport (the baseline) and once over this project's. Prints a table
 * (scenario, revision, baseline, ours), the suite's reasons for every failure, and
 * `conformance v2: …`; fails only when a scenario passes with the baseline and fails with ours.
 *
 * The suite's CLI runs under test/conformance/preload.ts (a `globSync` for Node 20, its servers
 * on 127.0.0.1). Each scenario writes checks.json under test-results/conformance/ (part 1) or
 * test-results/conformance-v2/<revision>/<n>-<name>/<transport>/ (part 2); a scenario passes
 * when the CLI says so (exit 0: no FAILURE, no WARNING, client exited 0 unless the scenario
 * allows a client error) and its checks agree. Exits 1 when a part fails, 2 on bad arguments.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const resolvePackage = createRequire(import.meta.url).resolve;
const cli = resolvePackage('@modelcontextprotocol/conformance/dist/index.js');
/** 0.2 of the suite, installed under an npm alias next to 0.1.16. */
const cliNext = resolvePackage('@modelcontextprotocol/conformance-next/dist/index.js');
const preload = './test/conformance/preload.ts';
const clientCommand = 'node --import tsx test/conformance/client.ts';
const outputRoot = path.join(root, 'test-results', 'conformance');
const outputRootV2 = path.join(root, 'test-results', 'conformance-v2');
/** The protocol revisions whose client scenarios part 2 runs, each at its own wire. */
const revisions = ['2025-11-25', '2026-07-28'] as const;
/** The extension scenarios (`[extension]` in `list --client`), which no `--spec-version` lists: run without one. */
const extension = 'extension';
type Revision = (typeof revisions)[number] | typeof extension;
/** What part 2 runs, in order: each revision's scenarios, then the extension scenarios. */
const parts: readonly Revision[] = [...revisions, extension];
/** The transports under the v2 Client: the SDK's own (the baseline) and this project's. */
type TransportName = 'sdk' | 'ours';
const clientCommandV2 = (transport: TransportName): string => `node --import tsx test/conformance/client-v2.ts --transport ${transport}`;
/** The suite gives the client 30 s; the whole scenario (servers, client, checks) gets this much before it is stopped. */
const scenarioDeadlineMs = 90_000;

interface Check {
  id: string;
  name: string;
  description: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  /** What the check saw (the request's fields, the values compared); shown, shortened, for part 2's failures. */
  details?: unknown;
}

interface Outcome {
  scenario: string;
  passed: boolean;
  exitCode: number | null;
  checks: Check[];
  milliseconds: number;
  notes: string[];
}

function isCheck(value: unknown): value is Check {
  return (
    typeof value === 'object' &&
    value !== null &&
    'id' in value &&
    typeof value.id === 'string' &&
    'status' in value &&
    typeof value.status === 'string'
  );
}

/** Runs the suite's CLI (`entry`: 0.1.16 or 0.2) under the preload; resolves with its exit code and combined output. */
function runCli(entry: string, args: readonly string[], logFile?: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', preload, entry, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const deadline = setTimeout(() => {
      output += `\n[conformance runner] stopped after ${scenarioDeadlineMs} ms\n`;
      if (child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
    }, scenarioDeadlineMs);
    child.on('error', (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(deadline);
      if (logFile !== undefined) writeFileSync(logFile, output);
      resolve({ code, output });
    });
  });
}

/**
 * The client scenarios, from the CLI's own `list --client` (plus `extra`, e.g. a `--spec-version`);
 * with `tag`, only those listed with it (`- auth/dpop [extension]`).
 */
async function listScenarios(entry = cli, extra: readonly string[] = [], tag?: string): Promise<string[]> {
  const { code, output } = await runCli(entry, ['list', '--client', ...extra]);
  if (code !== 0) throw new Error(`conformance list failed (${code}):\n${output}`);
  const names = [...output.matchAll(/^\s+- (\S+)(.*)$/gm)]
    .filter((match) => tag === undefined || (match[2] ?? '').includes(`[${tag}]`))
    .map((match) => match[1])
    .filter((name) => name !== undefined);
  if (names.length === 0) throw new Error(`conformance list printed no scenarios:\n${output}`);
  return names;
}

function findFiles(dir: string, name: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((entry) => path.basename(entry) === name)
    .map((entry) => path.join(dir, entry));
}

function readChecks(dir: string): Check[] | undefined {
  const [file] = findFiles(dir, 'checks.json');
  if (file === undefined) return undefined;
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  return Array.isArray(parsed) ? parsed.filter(isCheck) : undefined;
}

function count(checks: readonly Check[], status: Check['status']): number {
  return checks.filter((check) => check.status === status).length;
}

async function runScenario(scenario: string, index: number): Promise<Outcome> {
  const dir = path.join(outputRoot, `${String(index).padStart(2, '0')}-${scenario.replace(/[^\w.-]+/g, '_')}`);
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const { code } = await runCli(cli, ['client', '--command', clientCommand, '--scenario', scenario, '-o', dir], path.join(dir, 'cli.log'));
  const milliseconds = performance.now() - started;
  const checks = readChecks(dir);
  const notes: string[] = [];
  if (checks === undefined) notes.push('no checks.json written');
  const [stderrFile] = findFiles(dir, 'stderr.txt');
  if (stderrFile !== undefined && readFileSync(stderrFile, 'utf8').includes('LINGERING')) {
    notes.push('client process lingered after close (F2)');
  }
  const clean = checks !== undefined && count(checks, 'FAILURE') === 0 && count(checks, 'WARNING') === 0;
  if (code !== 0 && clean) notes.push(`suite exited ${code} (client error or timeout; see cli.log)`);
  return { scenario, passed: code === 0 && clean, exitCode: code, checks: checks ?? [], milliseconds, notes };
}

function describe(outcome: Outcome): string[] {
  const { checks } = outcome;
  const scored = count(checks, 'SUCCESS') + count(checks, 'FAILURE');
  const warnings = count(checks, 'WARNING');
  const head = [
    outcome.passed ? 'PASS' : 'FAIL',
    outcome.scenario.padEnd(44),
    `${count(checks, 'SUCCESS')}/${scored} checks`,
    warnings > 0 ? `${warnings} warning${warnings === 1 ? '' : 's'}` : '',
    `${(outcome.milliseconds / 1000).toFixed(1)} s`,
  ]
    .filter((part) => part !== '')
    .join('  ');
  const lines = [head];
  for (const check of checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
    lines.push(`       ${check.status} ${check.id}: ${check.errorMessage ?? check.description}`);
  }
  for (const note of outcome.notes) lines.push(`       note: ${note}`);
  return lines;
}

/** Part 1: the 0.1.16 scenarios (all, or `wanted`) with the 1.x Client over this transport. */
async function runV1(wanted: readonly string[]): Promise<number> {
  const started = performance.now();
  const available = await listScenarios();
  const unknown = wanted.filter((name) => !available.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown scenario(s): ${unknown.join(', ')}\navailable: ${available.join(', ')}`);
    return 2;
  }
  const scenarios = wanted.length > 0 ? wanted : available;
  rmSync(outputRoot, { recursive: true, force: true });
  mkdirSync(outputRoot, { recursive: true });
  console.log(`conformance: ${scenarios.length} client scenarios, one at a time; results in ${path.relative(root, outputRoot)}/`);

  const outcomes: Outcome[] = [];
  for (const [index, scenario] of scenarios.entries()) {
    const outcome = await runScenario(scenario, index + 1);
    outcomes.push(outcome);
    for (const line of describe(outcome)) console.log(line);
  }

  const all = outcomes.flatMap((outcome) => outcome.checks);
  const passed = outcomes.filter((outcome) => outcome.passed).length;
  const failed = outcomes.length - passed;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `conformance: ${passed} passed, ${failed} failed ` +
      `(checks: ${count(all, 'SUCCESS')} passed, ${count(all, 'FAILURE')} failed, ${count(all, 'WARNING')} warnings; ${seconds} s)`,
  );
  return failed === 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// Part 2: conformance 0.2, the v2 Client, the SDK's v2 transport against this project's

interface Run {
  revision: Revision;
  scenario: string;
}

interface V2Outcome {
  passed: boolean;
  /** The CLI said the scenario does not apply at this revision (exit 0, nothing run). */
  skipped: boolean;
  checks: Check[];
  milliseconds: number;
  /** Why it failed beyond the checks: the client's exit, a timeout, a missing checks.json, lingering. */
  notes: string[];
}

/** The last line the client logged about failing, e.g. `failed after 120 ms: UnauthorizedError: …`. */
function clientFailure(dir: string): string | undefined {
  const [stderrFile] = findFiles(dir, 'stderr.txt');
  if (stderrFile === undefined) return undefined;
  const lines = readFileSync(stderrFile, 'utf8').split('\n');
  const failure = lines.reverse().find((line) => line.includes('] failed after '));
  return failure?.replace(/^\[[^\]]+\] /, '');
}

async function runV2Scenario(run: Run, transport: TransportName, dir: string): Promise<V2Outcome> {
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const revision = run.revision === extension ? [] : ['--spec-version', run.revision];
  const { code, output } = await runCli(
    cliNext,
    ['client', '--command', clientCommandV2(transport), '--scenario', run.scenario, ...revision, '-o', dir],
    path.join(dir, 'cli.log'),
  );
  const milliseconds = performance.now() - started;
  if (code === 0 && /^SKIPPED: /m.test(output)) return { passed: false, skipped: true, checks: [], milliseconds, notes: [] };
  const checks = readChecks(dir);
  const notes: string[] = [];
  if (checks === undefined) notes.push('no checks.json written');
  if (/CLIENT TIMED OUT|Client timed out/.test(output)) notes.push('the client timed out (the suite allows 30 s)');
  const exit = /Client exited with code (\d+)/.exec(output);
  if (exit !== null)
    notes.push(`client exited ${exit[1]}${/CLIENT EXITED WITH ERROR/.test(output) ? '' : ' (the scenario allows a client error)'}`);
  const failure = clientFailure(dir);
  if (failure !== undefined) notes.push(`client: ${failure}`);
  const [stderrFile] = findFiles(dir, 'stderr.txt');
  if (stderrFile !== undefined && readFileSync(stderrFile, 'utf8').includes('LINGERING')) notes.push('client process lingered after close');
  if (output.includes('[conformance runner] stopped after')) notes.push(`stopped after ${scenarioDeadlineMs} ms`);
  const clean = checks !== undefined && count(checks, 'FAILURE') === 0 && count(checks, 'WARNING') === 0;
  if (code !== 0 && clean) notes.push(`suite exited ${code} (client error or timeout; see cli.log)`);
  return { passed: code === 0 && clean, skipped: false, checks: checks ?? [], milliseconds, notes };
}

const verdict = (outcome: V2Outcome): string => (outcome.skipped ? 'skip' : outcome.passed ? 'pass' : 'FAIL');

/** The longest `details` shown for a failing check; checks.json has all of it. */
const detailsShown = 300;

/** The suite's reasons for a failed run: each FAILURE / WARNING check with its message and what it saw, then the notes. */
function reasons(outcome: V2Outcome): string[] {
  const lines = outcome.checks
    .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
    .flatMap((check) => {
      const line = `${check.status} ${check.id}: ${(check.errorMessage ?? check.description).replace(/\s+/g, ' ')}`;
      const details = check.details === undefined ? undefined : JSON.stringify(check.details);
      if (details === undefined) return [line];
      return [line, `  saw: ${details.length > detailsShown ? `${details.slice(0, detailsShown)}…` : details}`];
    });
  return [...lines, ...outcome.notes];
}

/** Part 2: every 2025-11-25 and 2026-07-28 client scenario of conformance 0.2 (or only `wanted`), baseline then ours. */
async function runV2(wanted: readonly string[]): Promise<number> {
  const started = performance.now();
  const listed = new Map<Revision, string[]>();
  for (const revision of revisions) listed.set(revision, await listScenarios(cliNext, ['--spec-version', revision]));
  listed.set(extension, await listScenarios(cliNext, [], extension));
  const available = [...new Set([...listed.values()].flat())];
  const unknown = wanted.filter((name) => !available.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown v2 scenario(s): ${unknown.join(', ')}\navailable: ${available.join(', ')}`);
    return 2;
  }
  const runs: Run[] = parts.flatMap((revision) =>
    (listed.get(revision) ?? [])
      .filter((scenario) => wanted.length === 0 || wanted.includes(scenario))
      .map((scenario) => ({ revision, scenario })),
  );
  rmSync(outputRootV2, { recursive: true, force: true });
  mkdirSync(outputRootV2, { recursive: true });
  const perRevision = [...revisions, extension]
    .map((revision) => `${runs.filter((run) => run.revision === revision).length} at ${revision}`)
    .join(', ');
  console.log(
    `conformance v2: ${runs.length} scenario runs (${perRevision}) with the v2 Client, each over the SDK transport (baseline) ` +
      `and over ours, one at a time; results in ${path.relative(root, outputRootV2)}/`,
  );

  const width = Math.max(...runs.map((run) => run.scenario.length), 'scenario'.length) + 2;
  const row = (scenario: string, revision: string, baseline: string, ours: string, note = ''): string =>
    `${scenario.padEnd(width)}${revision.padEnd(12)}${baseline.padEnd(10)}${ours.padEnd(6)}${note}`.trimEnd();
  const results: { run: Run; baseline: V2Outcome; ours: V2Outcome }[] = [];
  for (const [index, run] of runs.entries()) {
    const dir = path.join(outputRootV2, run.revision, `${String(index + 1).padStart(2, '0')}-${run.scenario.replace(/[^\w.-]+/g, '_')}`);
    const baseline = await runV2Scenario(run, 'sdk', path.join(dir, 'sdk'));
    const ours = await runV2Scenario(run, 'ours', path.join(dir, 'ours'));
    results.push({ run, baseline, ours });
    const regression = baseline.passed && !ours.passed ? '  regression' : '';
    const seconds = `${((baseline.milliseconds + ours.milliseconds) / 1000).toFixed(1)} s`;
    console.log(row(run.scenario, run.revision, verdict(baseline), verdict(ours), `  ${seconds}${regression}`));
  }

  console.log("\nconformance v2, scenario by scenario (baseline: the SDK v2 transport; ours: this project's):\n");
  console.log(row('scenario', 'revision', 'baseline', 'ours'));
  for (const { run, baseline, ours } of results) {
    const note =
      baseline.passed && !ours.passed ? 'regression' : !baseline.passed && !baseline.skipped && !ours.passed ? 'fails with both' : '';
    console.log(row(run.scenario, run.revision, verdict(baseline), verdict(ours), note));
  }
  const failures = results.filter(({ baseline, ours }) => (!baseline.passed && !baseline.skipped) || (!ours.passed && !ours.skipped));
  if (failures.length > 0) console.log("\nwhy they failed (the suite's failing checks and the client's exit):");
  for (const { run, baseline, ours } of failures) {
    console.log(`\n${run.scenario} at ${run.revision}`);
    for (const [name, outcome] of [
      ['baseline', baseline],
      ['ours', ours],
    ] as const) {
      if (outcome.passed || outcome.skipped) continue;
      console.log(`  ${name}:`);
      for (const line of reasons(outcome)) console.log(`    ${line}`);
    }
  }

  const baselinePassed = results.filter((result) => result.baseline.passed).length;
  const oursPassed = results.filter((result) => result.ours.passed).length;
  const regressions = results.filter((result) => result.baseline.passed && !result.ours.passed);
  const both = results.filter((result) => !result.baseline.passed && !result.baseline.skipped && !result.ours.passed).length;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `\nconformance v2: baseline ${baselinePassed}/${results.length} passed, ours ${oursPassed}/${results.length} passed; ` +
      `${regressions.length} regression${regressions.length === 1 ? '' : 's'} (pass with the SDK transport, fail with ours), ` +
      `${both} failing with both (${seconds} s)`,
  );
  if (regressions.length > 0) {
    console.log(`regressions: ${regressions.map(({ run }) => `${run.scenario} at ${run.revision}`).join(', ')}`);
  }
  return regressions.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const v2Only = args.includes('--v2');
  const names = args.filter((arg) => arg !== '--v2');
  if (v2Only) return runV2(names);
  // Named scenarios: part 1 only, as before part 2 existed.
  if (names.length > 0) return runV1(names);
  const v1 = await runV1([]);
  const v2 = await runV2([]);
  return Math.max(v1, v2);
}

process.exitCode = await main();
