/**
 * The package's doors: the root entry (the transport) loads no devtools module; the recorder,
 * the chart view and live inspection come only through `./devtools`. Checked over the static
 * import graph of the sources (type-only imports are erased and do not count).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** The relative modules a source file loads at run time: `import … from`, `export … from`, `import '…'`, `import('…')`. */
export function runtimeImports(source: string): string[] {
  const specifiers: string[] = [];
  const statement = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'(\.[^']+)'/gm;
  for (const match of source.matchAll(statement)) if (match[1] === undefined && match[2] !== undefined) specifiers.push(match[2]);
  for (const match of source.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)) if (match[1] !== undefined) specifiers.push(match[1]);
  return specifiers;
}

/** Every source file reachable at run time from `entry` (paths relative to the repository). */
export function graphOf(entry: string, read: (path: string) => string = (path) => readFileSync(join(root, path), 'utf8')): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of runtimeImports(read(file))) {
      queue.push(relative(root, resolve(root, dirname(file), specifier.replace(/\.js$/, '.ts'))));
    }
  }
  return seen;
}

const isDevtools = (file: string) =>
  /^src\/(inspect|live|devtools|demo-server)\.ts$/.test(file) || file.startsWith('src/view/') || file.startsWith('src/cli/');

describe('the doors', () => {
  it('U6: the root entry (and the Node entry) load no devtools module', () => {
    for (const entry of ['src/index.ts', 'src/node.ts']) {
      const graph = graphOf(entry);
      expect(graph.size).toBeGreaterThan(20);
      expect([...graph].filter(isDevtools)).toEqual([]);
    }
  });

  it('U6: the devtools door reaches the recorder, the chart view and live inspection', () => {
    const graph = graphOf('src/devtools.ts');
    expect(graph.has('src/inspect.ts')).toBe(true);
    expect(graph.has('src/live.ts')).toBe(true);
    expect(graph.has('src/view/bridge.ts')).toBe(true);
  });

  it('U6: the check can fail: a planted re-export of the recorder from the root is found', () => {
    const planted = (path: string) => {
      const source = readFileSync(join(root, path), 'utf8');
      return path === 'src/index.ts' ? `${source}\nexport { createJsonlRecorder } from './inspect.js';\n` : source;
    };
    expect([...graphOf('src/index.ts', planted)].filter(isDevtools)).toContain('src/inspect.ts');
    // A type-only import is erased, so it is no edge.
    expect(runtimeImports("import type { JsonlRecord } from './inspect.js';\nexport type { X } from './view/bridge.js';")).toEqual([]);
  });
});
