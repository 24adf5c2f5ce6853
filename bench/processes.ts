/**
 * The benchmark's child processes (server, clients, memory figures): each tracked, stopped by PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const benchDir = dirname(fileURLToPath(import.meta.url));
export const projectDir = dirname(benchDir);

/** Every child process this run started, stopped by PID at the end, on error and on SIGINT. */
export const children = new Set<ChildProcess>();
export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGTERM by PID, SIGKILL after 3 s; resolves when the child has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  };
  kill('SIGTERM');
  const timer = setTimeout(() => {
    kill('SIGKILL');
  }, 3_000);
  await exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}

export async function startServer(): Promise<{ base: string; child: ChildProcess }> {
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', join(benchDir, 'server.ts')], {
      cwd: projectDir,
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const stdout = child.stdout;
  if (stdout === null) throw new Error('server: no stdout');
  const lines = createInterface({ input: stdout });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error('server did not print its port within 30 s'));
    }, 30_000);
    child.once('exit', (code) => {
      reject(new Error(`server exited early (code ${String(code)})`));
    });
    lines.once('line', (line) => {
      clearTimeout(timer);
      const parsed = JSON.parse(line) as { port?: unknown };
      if (typeof parsed.port === 'number') resolve(parsed.port);
      else reject(new Error(`server printed "${line}", expected {"port": N}`));
    });
  });
  return { base: `http://127.0.0.1:${port}`, child };
}
