import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser test needs Chromium: `npm run test:browser` (test/browser/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Integration tests open real sockets on 127.0.0.1; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
