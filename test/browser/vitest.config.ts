import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:browser`: the example page in headless Chromium. Kept out of `npm test`, which
 * must pass on a machine without a browser; CI installs Debian's chromium and runs both.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/browser/**/*.test.ts'],
    // A Vite build and a browser launch happen before the first test.
    hookTimeout: 60_000,
    testTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
