/**
 * The package's doors: the root entry (the transport) loads no devtools module; the recorder,
 * the chart view and live inspection come only through `./devtools`. Checked over the static
 * import graph of the sources (type-only imports are erased and do not count).
 */
import { describe, expect, it } from 'vitest';
import { graphOf, readSource, runtimeImports } from '../support/import-graph.js';

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
      const source = readSource(path);
      return path === 'src/index.ts' ? `${source}\nexport { createJsonlRecorder } from './inspect.js';\n` : source;
    };
    expect([...graphOf('src/index.ts', planted)].filter(isDevtools)).toContain('src/inspect.ts');
    // A type-only import is erased, so it is no edge.
    expect(runtimeImports("import type { JsonlRecord } from './inspect.js';\nexport type { X } from './view/bridge.js';")).toEqual([]);
  });
});
