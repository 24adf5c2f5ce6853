/**
 * The order test files start in: the longest first, so that on two workers the last file to start
 * is a short one and neither worker sits idle at the end. Vitest orders by the durations it kept
 * from the last run; a fresh clone has none (it would run the 50 s conformance file last). So the
 * known slow files carry their measured duration here (a quiet clean-clone run of 2026-12-06),
 * and a file's last duration, once vitest has one, wins. `--sequence.shuffle` (with
 * `--sequence.seed`) still shuffles the files: the way to find a file that leaks into the next.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each slow file took (`project:path`), as `npm test` lists them at its end. */
const knownSeconds: Readonly<Record<string, number>> = {
  'node:test/conformance/conformance.test.ts': 53,
  'node:test/integration/heal.test.ts': 41,
  'node:test/integration/cli.test.ts': 27,
  'node:test/model/connection.model.test.ts': 24,
  'node:test/integration/doctor.test.ts': 21,
  'node:test/integration/resumption.test.ts': 18,
  'fetch:test/integration/resumption.test.ts': 18,
  'node:test/integration/cli-help.test.ts': 9,
  'node:test/integration/soak.test.ts': 7,
  'node:test/integration/keep-connection.test.ts': 6,
  'node:test/integration/cli-mistakes.test.ts': 6,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { shuffle, seed } = this.ctx.config.sequence;
    if (shuffle === true) return shuffled(files, seed);
    const root = this.ctx.config.root;
    const milliseconds = (file: TestSpecification): number => {
      const key = `${file.project.name}:${relative(root, file.moduleId)}`;
      return this.ctx.cache.getFileTestResults(key)?.duration ?? (knownSeconds[key] ?? 0) * 1_000;
    };
    // Vitest's own order first: it groups files by project, and a worker is kept for the next file
    // (isolate: false) only when that file is of the same project. The sort below is stable, so
    // files of no known duration stay grouped.
    const ordered = await super.sort(files);
    const weights = new Map(ordered.map((file) => [file, milliseconds(file)]));
    return ordered.sort((a, b) => (weights.get(b) ?? 0) - (weights.get(a) ?? 0));
  }
}

/** The files in an order drawn from `seed` (Fisher–Yates over mulberry32), the same for the same seed. */
function shuffled<T>(files: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const order = [...files];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as T, order[i] as T];
  }
  return order;
}
