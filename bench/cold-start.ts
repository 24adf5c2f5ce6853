/**
 * What `npm run size` measures (scripts/size.ts, needs the built package): cold start (a fresh
 * process: import, connect, first tool result; wall-clock medians of 10 processes each,
 * alternating) and the gzip size of a browser bundle of the SDK `Client` with each transport.
 */
import { execFile } from 'node:child_process';

export interface SizeFigures {
  cold: { this: number; sdk: number };
  /** gzip KiB of Client + transport: 1.x Client, and 2.x Client (with the 2.x SDK transport). */
  bundle: { v1: { this: number; sdk: number }; v2: { this: number; sdk: number } };
}

export function sizeFigures(): Promise<SizeFigures | undefined> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/size.ts'], { timeout: 300_000 }, (error, stdout) => {
      const figure = (pattern: string) => Number(new RegExp(pattern).exec(stdout)?.[1] ?? Number.NaN);
      const cold = (name: string) => figure(`${name}\\s+(\\d+) ms wall`);
      const gzip = (v: string, name: string) => figure(`Client ${v} \\+ ${name}\\s+[\\d.]+ KiB\\s+([\\d.]+) KiB gzip`);
      const bundle = (v: string) => ({ this: gzip(v, 'this transport'), sdk: gzip(v, 'SDK transport') });
      resolve(
        error !== null
          ? undefined
          : { cold: { this: cold('this transport'), sdk: cold('SDK transport') }, bundle: { v1: bundle('1.x'), v2: bundle('2.x') } },
      );
    });
  });
}
