/**
 * `npm test`: every check the project keeps, each naming itself as it starts (`» tsc`) and
 * saying how it went and how long it took (`✓ tsc  41.2 s`), so the first seconds already say
 * what is happening. The checks run in two lanes, one per core, each about as long as the other
 * (a quiet fresh clone: eslint 52 s; tsc 36 s, then prettier 16 s and the wall-clock guard 4 s).
 * The type check is incremental: its build info is kept in node_modules/.cache (gitignored), so a
 * second run checks only what changed. Then vitest.
 *
 * Extra arguments go to vitest: `npm test -- test/unit/backoff.test.ts`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface Step {
  name: string;
  command: string[];
}

/** A dev dependency's command, run by this Node (node_modules/.bin links to the script). */
const bin = (name: string) => `node_modules/.bin/${name}`;
const node = process.execPath;
const cache = 'node_modules/.cache/mcp-xstate-transport';

/** The checks, two lanes run side by side. */
const lanes: Step[][] = [
  [
    {
      name: 'tsc',
      command: [node, bin('tsc'), '-p', 'tsconfig.json', '--noEmit', '--incremental', '--tsBuildInfoFile', `${cache}/tsc.tsbuildinfo`],
    },
    {
      name: 'prettier',
      command: [node, bin('prettier'), '--check', '.', '--log-level', 'warn', '--cache', '--cache-location', `${cache}/prettier`],
    },
    { name: 'wall-clock guard', command: [node, '--import', 'tsx', 'scripts/check-wallclock.ts'] },
  ],
  [{ name: 'eslint', command: [node, bin('eslint'), '.'] }],
];
const vitest: Step = {
  name: 'vitest',
  command: [
    node,
    bin('vitest'),
    'run',
    '--reporter=dot',
    '--reporter=json',
    `--outputFile.json=${cache}/vitest.json`,
    '--silent=passed-only',
    ...process.argv.slice(2),
  ],
};

/** The slowest test files of the run just ended (from vitest's JSON report), where time goes. */
function slowest(count: number): string[] {
  try {
    const report = JSON.parse(readFileSync(`${cache}/vitest.json`, 'utf8')) as {
      testResults?: { name?: string; startTime?: number; endTime?: number }[];
    };
    return (report.testResults ?? [])
      .map((file) => ({ name: relative(process.cwd(), file.name ?? '?'), ms: (file.endTime ?? 0) - (file.startTime ?? 0) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, count)
      .map((file) => `  ${(file.ms / 1_000).toFixed(1).padStart(6)} s  ${file.name}`);
  } catch {
    return [];
  }
}

const started = performance.now();
const seconds = (from: number) => `${((performance.now() - from) / 1_000).toFixed(1)} s`;
const running = new Map<string, number>();

/** Runs a step with its output held back (printed when it fails, or when it had something to say). */
function quiet(step: Step): Promise<boolean> {
  console.log(`» ${step.name}`);
  const at = performance.now();
  running.set(step.name, at);
  return new Promise((resolve) => {
    const [command, ...args] = step.command as [string, ...string[]];
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => {
      running.delete(step.name);
      const ok = code === 0;
      console.log(`${ok ? '✓' : '✗'} ${step.name.padEnd(16)} ${seconds(at)}${ok ? '' : ` (exit code ${String(code)})`}`);
      if (!ok && output.trim() !== '') console.log(output.trimEnd());
      resolve(ok);
    });
  });
}

/** Runs a lane's steps one after the other, each even when one before failed (every failure is shown at once). */
async function inSequence(steps: readonly Step[]): Promise<boolean> {
  let ok = true;
  for (const step of steps) ok = (await quiet(step)) && ok;
  return ok;
}

/** Says which steps are still running, every 20 s, so a slow machine is never silent. */
const heartbeat = setInterval(() => {
  if (running.size === 0) return;
  const names = [...running].map(([name, at]) => `${name} (${seconds(at)})`);
  console.log(`… still running: ${names.join(', ')}`);
}, 20_000);

const checked = await Promise.all(lanes.map(inSequence));
clearInterval(heartbeat);
if (checked.includes(false)) {
  console.log(`✗ npm test stopped before vitest, after ${seconds(started)}`);
  process.exit(1);
}

console.log(`» ${vitest.name}`);
const [command, ...args] = vitest.command as [string, ...string[]];
const code = await new Promise<number | null>((resolve) => {
  spawn(command, args, { stdio: 'inherit' }).on('close', resolve);
});
const files = slowest(8);
if (files.length > 0) console.log(`the slowest test files (each file's own time; two run at once):\n${files.join('\n')}`);
console.log(`${code === 0 ? '✓' : '✗'} npm test ${code === 0 ? 'passed' : 'failed'} in ${seconds(started)}`);
process.exit(code ?? 1);
