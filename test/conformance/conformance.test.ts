import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A4, E11 in the default suite: a sample of the official MCP conformance suite's client scenarios,
 * through the same runner as `npm run conformance` (which CI runs for all of them, both eras).
 */
const root = join(import.meta.dirname, '../..');

function runScenarios(names: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts/conformance.ts'), ...names], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('MCP conformance suite', () => {
  it(
    'A4: auth scenarios (metadata discovery, scope step-up, client credentials) and tools_call pass with the SDK Client over this transport',
    { timeout: 120_000 },
    async () => {
      const scenarios = ['tools_call', 'auth/metadata-default', 'auth/scope-step-up', 'auth/client-credentials-basic'];
      const { code, output } = await runScenarios(scenarios);
      expect(output, output).toMatch(new RegExp(`conformance: ${scenarios.length} passed, 0 failed`));
      expect(code).toBe(0);
    },
  );

  it(
    'E11: 2026-07-28 scenarios (SEP-2243 standard headers, request metadata) pass with the v2 Client over this transport, as over the SDK v2 transport',
    { timeout: 120_000 },
    async () => {
      const { code, output } = await runScenarios(['--v2', 'http-standard-headers', 'request-metadata']);
      expect(output, output).toMatch(/conformance v2: baseline (\d+)\/\1 passed, ours (\d+)\/\2 passed; 0 regressions/);
      expect(code).toBe(0);
    },
  );
});
