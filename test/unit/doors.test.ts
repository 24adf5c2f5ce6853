/**
 * The package's doors: the root entry (the transport) loads no devtools module; the recorder,
 * the chart view and live inspection come only through `./devtools`. Checked over the static
 * import graph of the sources (type-only imports are erased and do not count).
 */
import { describe, expect, it } from 'vitest';
import { graphOf, readSource, runtimeImports, staticImports, type Reader } from '../support/import-graph.js';

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

  /** The modules of `entry`'s graph (static only, or with `import()`) that import `@opentelemetry/api`. */
  const apiImporters = (entry: string, importsOf: (source: string) => string[], read: Reader = readSource) =>
    [...graphOf(entry, read, importsOf)].filter((file) => importsOf(read(file)).includes('@opentelemetry/api'));

  it('O2: the root and Node entries never import @opentelemetry/api; the telemetry module is reached only by the import() start() makes for the option, and it loads the api by name', () => {
    for (const entry of ['src/index.ts', 'src/node.ts']) {
      expect(apiImporters(entry, staticImports)).toEqual([]);
      expect(apiImporters(entry, runtimeImports)).toEqual([]);
      expect(graphOf(entry, readSource, staticImports).has('src/telemetry/otel.ts')).toBe(false);
      expect(graphOf(entry).has('src/telemetry/otel.ts')).toBe(true);
    }
    expect(readSource('src/telemetry/otel.ts')).toContain("load('@opentelemetry/api')");
  });

  it('O2: the check can fail: a planted import of the api or of the telemetry module from the facade is found', () => {
    const plant = (line: string) => (path: string) => (path === 'src/transport.ts' ? `${line}\n${readSource(path)}` : readSource(path));
    expect(apiImporters('src/index.ts', staticImports, plant("import { trace } from '@opentelemetry/api';"))).toEqual(['src/transport.ts']);
    expect(
      graphOf('src/index.ts', plant("import { createTelemetry } from './telemetry/otel.js';"), staticImports).has('src/telemetry/otel.ts'),
    ).toBe(true);
  });
});
