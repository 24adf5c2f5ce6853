/**
 * The order test files start in: the longest first, so that on two workers the last file to start
 * is a short one and neither worker sits idle at the end. Vitest orders by the durations it kept
 * from the last run; a fresh clone has none (it would run the 50 s conformance file last). So the
 * known slow files carry their measured duration here (a quiet clean-clone run of 2026-12-06),
 * and a file's last duration, once vitest has one, wins.
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
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const milliseconds = (file: TestSpecification): number => {
      const key = `${file.project.name}:${relative(root, file.moduleId)}`;
      return this.ctx.cache.getFileTestResults(key)?.duration ?? (knownSeconds[key] ?? 0) * 1_000;
    };
    const weights = new Map(files.map((file) => [file, milliseconds(file)]));
    return Promise.resolve([...files].sort((a, b) => (weights.get(b) ?? 0) - (weights.get(a) ?? 0)));
  }
}
