/**
 * The `mcp-xstate-transport` command spawned as a user runs it: node on src/devtools/cli/main.ts
 * through tsx, stdout and stderr collected, killed after 50 s at the latest.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export const cliCommand = [process.execPath, '--import', 'tsx', 'src/devtools/cli/main.ts'] as const;

/** Spawns the CLI; `output()` is stdout so far (for --watch, to wait on a line). */
export function cli(args: string[]): { child: ChildProcess; done: Promise<Run>; output: () => string } {
  const [command, ...prefix] = cliCommand;
  const child = spawn(command, [...prefix, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
  const done = new Promise<Run>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, done, output: () => stdout };
}

/** Runs the CLI to its end. */
export const run = (args: string[]): Promise<Run> => cli(args).done;

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`), as in a user's terminal: stdout is a
 * TTY. The transcript is stdout and stderr together, with the terminal's CRLF line ends.
 */
export function runInTerminal(args: string[]): Promise<{ code: number | null; transcript: string }> {
  const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;
  const child = spawn('script', ['-qec', [...cliCommand, ...args].map(quote).join(' '), '/dev/null'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let transcript = '';
  child.stdout.on('data', (chunk: Buffer) => (transcript += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (transcript += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, transcript });
    });
  });
}
