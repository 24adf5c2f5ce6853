import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.js';

/**
 * H11: the HTTP-facing integration files, run a second time with WHATWG fetch carrying every
 * request (the default project runs everything with the Node client, as Node users get it).
 */
const httpFiles = [
  'test/integration/client.test.ts',
  'test/integration/responses.test.ts',
  'test/integration/session.test.ts',
  'test/integration/hostile-streams.test.ts',
  'test/integration/resumption.test.ts',
  'test/integration/http-client.test.ts',
];

/**
 * Files that change what the process shares (a module mock, the environment, `vi.resetModules`):
 * each runs in a module graph of its own. Every other file shares its worker's modules with the
 * files before it (`isolate: false`: the SDKs, xstate and the transport are imported once per
 * worker, not once per file, a minute of a quiet run's four), and cleans up what it opened itself.
 * A shuffled run (`--sequence.shuffle`) shows a file missing here: after web.test.ts reset the
 * modules, the node project's next file in that worker ran on fetch.
 */
const isolatedFiles = [
  'test/integration/telemetry-off.test.ts',
  'test/integration/network.test.ts',
  'test/integration/web.test.ts',
  'test/integration/lazy-engine.test.ts',
];

const shared = {
  testTimeout: 20_000,
  hookTimeout: 20_000,
  pool: 'forks' as const,
  isolate: false,
};

/** The default project: the transport as Node users get it, requests through node:http (H11). */
const nodeClient = { setupFiles: ['test/support/node-client.ts'], env: { HTTP_CLIENT: 'node' } };

export default defineConfig({
  test: {
    // Integration tests open real sockets on 127.0.0.1; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // The longest files first (a fresh clone has no durations of its own): test/support/sequencer.ts.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          ...shared,
          name: 'node',
          // W8: the example page's own test (its badge along the chart's paths) runs here too.
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          // The browser test needs Chromium: `npm run test:browser` (test/browser/vitest.config.ts).
          exclude: [...configDefaults.exclude, 'test/browser/**', ...isolatedFiles],
          ...nodeClient,
          // test/types/*.test-d.ts are checked by tsc (tsconfig.json includes test/): an expectTypeOf
          // that fails is a type error there, so vitest does not run tsc a second time.
        },
      },
      {
        test: { ...shared, name: 'node-isolated', include: isolatedFiles, isolate: true, ...nodeClient },
      },
      {
        test: { ...shared, name: 'fetch', include: httpFiles, env: { HTTP_CLIENT: 'fetch' } },
      },
    ],
  },
});
