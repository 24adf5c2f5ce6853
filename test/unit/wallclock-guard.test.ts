/**
 * The house rule "no test asserts an upper bound on wall-clock time", kept by
 * scripts/check-wallclock.ts (run by `npm test`): the tests hold none, and the check finds one
 * when it is planted, in each form it takes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { checkWallClock, DRIVEN, findWallClockUpperBounds } from '../../scripts/check-wallclock.js';

const run = promisify(execFile);
const lines = (source: string) => findWallClockUpperBounds(source).map((found) => found.line);

describe('the wall-clock guard', () => {
  it('finds no upper bound on a measured duration in test/ and examples/', () => {
    expect(checkWallClock(['test', 'examples'])).toEqual([]);
  });

  it('the check can fail: each planted form of an upper bound on a measured duration is found', () => {
    const planted = [
      `const started = performance.now();`,
      `expect(performance.now() - started).toBeLessThan(1_000);`, // 2: a clock read in the subject
      `const elapsed = Date.now() - t0;`,
      `expect(elapsed).toBeLessThanOrEqual(5_000);`, // 4: a variable measured from a clock
      `expect(resume.at - post.cutAt!).toBeLessThan(200);`, // 5: two moments subtracted
      `expect(observed[i]).toBeLessThan(delay + late);`, // 6: a name that says a span
      `expect(6_000).toBeGreaterThan(elapsed);`, // 7: the mirror
      `expect(tookMs, 'why').to.be.lt(50);`, // 8: chai style, a name ending in Ms
      `const gap = later - earlier; const twice = gap * 2;`,
      `expect(twice).toBeLessThan(10);`, // 10: computed from a measured variable
      `expect(at(/era/)).toBeLessThan(1_000);`, // 11: a helper that reads a moment
    ].join('\n');
    expect(lines(planted)).toEqual([2, 4, 5, 6, 7, 8, 10, 11]);
  });

  it('leaves alone lower bounds, orders of two moments, planned delays and sizes', () => {
    const allowed = [
      `expect(performance.now() - started).toBeGreaterThanOrEqual(4_500);`,
      `expect(observed[i]).toBeGreaterThanOrEqual(delay - early);`,
      `expect(nanos(a.endTime)).toBeLessThanOrEqual(nanos(b.startTime));`,
      `expect(exit.at).toBeGreaterThanOrEqual(closedAt!);`,
      `expect(planned[i]).toBeLessThan(2 * step);`,
      `expect(proxy.connections).toBeLessThanOrEqual(5);`,
      `expect(times.length).toBeLessThanOrEqual(9);`,
      `expect(body.length).toBeLessThan(1_200);`,
      `expect(gets.at(-1)!.seq).toBeLessThan(10);`,
    ].join('\n');
    expect(lines(allowed)).toEqual([]);
  });

  it('a bound on a clock the test drives passes only with the marker on its line or the line before', () => {
    const bound = `expect(Date.now() - firstEnd).toBeLessThanOrEqual(15_000);`;
    expect(lines([`vi.useFakeTimers({ toFake: ['Date'] });`, bound].join('\n'))).toEqual([2]);
    expect(lines([`// ${DRIVEN}: Date is faked`, bound].join('\n'))).toEqual([]);
    expect(lines([`// ${DRIVEN}`, '', bound].join('\n'))).toEqual([3]);
  });

  it('the script refuses a planted upper bound with exit code 1 and names the line; the same file with a lower bound passes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wallclock-'));
    try {
      const file = join(dir, 'planted.test.ts');
      writeFileSync(file, `const started = performance.now();\nexpect(performance.now() - started).toBeLessThan(1_000);\n`);
      const failed = await run(process.execPath, ['--import', 'tsx', 'scripts/check-wallclock.ts', dir]).then(
        () => undefined,
        (error: unknown) => error as { code: number; stderr: string },
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toMatch(/planted\.test\.ts:2: an upper bound on a measured duration/);
      // The same file as a lower bound passes (the function the script runs, without a second process).
      writeFileSync(file, `const started = performance.now();\nexpect(performance.now() - started).toBeGreaterThan(0);\n`);
      expect(checkWallClock([dir])).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
