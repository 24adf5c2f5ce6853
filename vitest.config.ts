import { configDefaults, defineConfig } from 'vitest/config';

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

const shared = {
  testTimeout: 20_000,
  hookTimeout: 20_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    // Integration tests open real sockets on 127.0.0.1; two cores, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'node',
          // W8: the example page's own test (its badge along the chart's paths) runs here too.
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          // The browser test needs Chromium: `npm run test:browser` (test/browser/vitest.config.ts).
          exclude: [...configDefaults.exclude, 'test/browser/**'],
          setupFiles: ['test/support/node-client.ts'],
          env: { HTTP_CLIENT: 'node' },
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
        },
      },
      {
        test: { ...shared, name: 'fetch', include: httpFiles, env: { HTTP_CLIENT: 'fetch' } },
      },
    ],
  },
});
