/**
 * Runs every client scenario of `@modelcontextprotocol/conformance` against
 * test/conformance/client.ts (the SDK `Client` over this project's transport), one at a time:
 * `sse-retry` measures a reconnect delay, so nothing runs in parallel.
 *
 *   tsx scripts/conformance.ts                 all client scenarios
 *   tsx scripts/conformance.ts sse-retry ...   only these
 *
 * The suite's CLI runs under test/conformance/preload.ts (a `globSync` for Node 20, its servers
 * on 127.0.0.1). Each scenario writes checks.json under test-results/conformance/<n>-<name>/;
 * a scenario passes when the CLI says so (exit 0: no FAILURE, no WARNING, client exited 0 unless
 * the scenario allows a client error) and its checks agree. Prints one line per scenario, the
 * failing checks, and `conformance: N passed, M failed` with the check totals; exits 1 when any
 * scenario failed or warned.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const preload = './test/conformance/preload.ts';
const clientCommand = 'node --import tsx test/conformance/client.ts';
const outputRoot = path.join(root, 'test-results', 'conformance');
/** The suite gives the client 30 s; the whole scenario (servers, client, checks) gets this much before it is stopped. */
const scenarioDeadlineMs = 90_000;

interface Check {
  id: string;
  name: string;
  description: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
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

/** Runs the suite's CLI under the preload; resolves with its exit code and combined output. */
function runCli(args: readonly string[], logFile?: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', preload, cli, ...args], {
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

/** The client scenarios, from the CLI's own `list --client`. */
async function listScenarios(): Promise<string[]> {
  const { code, output } = await runCli(['list', '--client']);
  if (code !== 0) throw new Error(`conformance list failed (${code}):\n${output}`);
  const names = [...output.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]).filter((name) => name !== undefined);
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
  const { code } = await runCli(['client', '--command', clientCommand, '--scenario', scenario, '-o', dir], path.join(dir, 'cli.log'));
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

async function main(): Promise<number> {
  const started = performance.now();
  const available = await listScenarios();
  const wanted = process.argv.slice(2);
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

process.exitCode = await main();
