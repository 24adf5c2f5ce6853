import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as errors from '../../machines/errors.js';
import * as root from '../../src/index.js';

interface Conditions {
  import?: Record<string, string>;
  require?: Record<string, string>;
}
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  exports: Record<string, Conditions | string>;
  bin: Record<string, string>;
  files: string[];
  dependencies: Record<string, string>;
};

describe('the package', () => {
  it('U6: every error class is exported from the root', () => {
    const classes = Object.entries(errors).filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error);
    expect(classes.length).toBeGreaterThanOrEqual(10);
    const exported = root as Record<string, unknown>;
    for (const [name, value] of classes) expect(exported[name], name).toBe(value);
  });

  it('U6: each entry serves ESM and CommonJS, each with its own types listed first', () => {
    for (const entry of ['.', './machines']) {
      const conditions = manifest.exports[entry];
      expect(typeof conditions, entry).toBe('object');
      for (const kind of ['import', 'require'] as const) {
        const target = (conditions as Conditions)[kind];
        expect(target, `${entry} ${kind}`).toBeDefined();
        expect(Object.keys(target ?? {}), `${entry} ${kind}`).toEqual(['types', 'default']);
        const cjs = kind === 'require';
        expect((target?.default ?? '').startsWith(cjs ? './dist/cjs/' : './dist/'), `${entry} ${kind}`).toBe(true);
        expect((target?.types ?? '').startsWith(cjs ? './dist/cjs/' : './dist/'), `${entry} ${kind}`).toBe(true);
      }
    }
  });

  it('U7, U9: the bin is the built CLI; the runtime dependencies are the parser, xstate, zod (zod/mini at the edges), the lazily loaded network helpers (N1, N3) and jose, loaded with the first DPoP proof (A5)', () => {
    expect(manifest.bin['mcp-xstate-transport']).toBe('./dist/src/devtools/cli/main.js');
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      'eventsource-parser',
      'http-proxy-agent',
      'https-proxy-agent',
      'jose',
      'tough-cookie',
      'xstate',
      'zod',
    ]);
  });
});
