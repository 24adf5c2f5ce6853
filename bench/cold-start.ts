/**
 * Cold start (a fresh process: import, connect, first tool result) of this transport and of the
 * SDK's: the wall-clock medians that `npm run size` measures (scripts/size.ts, run here with
 * `--cold-only`, 10 processes each, alternating). Needs the built package (the bench builds first).
 */
import { execFile } from 'node:child_process';

const figure = (output: string, name: string): number | undefined => {
  const match = new RegExp(`${name}\\s+(\\d+) ms wall`).exec(output);
  return match?.[1] === undefined ? undefined : Number(match[1]);
};

export function coldStart(): Promise<{ this: number; sdk: number } | undefined> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/size.ts', '--cold-only'], { timeout: 300_000 }, (error, stdout) => {
      const ours = figure(stdout, 'this transport');
      const sdk = figure(stdout, 'SDK transport');
      resolve(error !== null || ours === undefined || sdk === undefined ? undefined : { this: ours, sdk });
    });
  });
}
