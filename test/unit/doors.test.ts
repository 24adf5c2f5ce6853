/**
 * The package's doors: the root entry (the transport) loads no devtools module; the recorder,
 * the chart view and live inspection come only through `./devtools`. Checked over the static
 * import graph of the sources (type-only imports are erased and do not count).
 */
import { describe, expect, it } from 'vitest';
import { graphOf, readSource, runtimeImports, staticImports, type Reader } from '../support/import-graph.js';

/** Everything of the devtools door lives under one folder: the recorder, the view, live inspection, the CLI, the demo server. */
const isDevtools = (file: string) => file.startsWith('src/devtools/');

describe('the doors', () => {
  it('U6: the root entry (and the Node entry) load no devtools module', () => {
    for (const entry of ['src/index.ts', 'src/node.ts']) {
      const graph = graphOf(entry);
      expect(graph.size).toBeGreaterThan(20);
      expect([...graph].filter(isDevtools)).toEqual([]);
    }
  });

  it('U6: the devtools door reaches the recorder, the chart view and live inspection', () => {
    const graph = graphOf('src/devtools/index.ts');
    expect(graph.has('src/devtools/recorder.ts')).toBe(true);
    expect(graph.has('src/devtools/live.ts')).toBe(true);
    expect(graph.has('src/devtools/view/bridge.ts')).toBe(true);
  });

  it('U6: the recorder does not reach into the chart view (the view uses the recorder, never the other way)', () => {
    const graph = graphOf('src/devtools/recorder.ts');
    expect(graph.has('src/devtools/chart-model.ts')).toBe(true);
    expect([...graph].filter((file) => file.startsWith('src/devtools/view/'))).toEqual([]);
    const planted = (path: string) => {
      const source = readSource(path);
      return path === 'src/devtools/recorder.ts' ? `${source}\nexport { pageHtml } from './view/page.js';\n` : source;
    };
    expect([...graphOf('src/devtools/recorder.ts', planted)]).toContain('src/devtools/view/page.ts');
  });

  it('U6: the check can fail: a planted re-export of the recorder from the root is found', () => {
    const planted = (path: string) => {
      const source = readSource(path);
      return path === 'src/index.ts' ? `${source}\nexport { createJsonlRecorder } from './devtools/recorder.js';\n` : source;
    };
    expect([...graphOf('src/index.ts', planted)].filter(isDevtools)).toContain('src/devtools/recorder.ts');
    // A type-only import is erased, so it is no edge.
    expect(
      runtimeImports("import type { JsonlRecord } from './devtools/recorder.js';\nexport type { X } from './view/bridge.js';"),
    ).toEqual([]);
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

  /**
   * The root entry's own modules that it loads with `import()` (not the peers'), other than the
   * chart engine, each with the modules of the eager graph it imports at run time. A bundler puts
   * what a lazy chunk shares with the page's chunk into a chunk of its own, loaded with the page
   * (measured: +1 KiB gzip from the telemetry module's imports of the chart). The engine shares
   * the errors and the message helpers with the page (ARCHITECTURE.md, "Invariants"): that one
   * shared chunk is the page's second file, and nothing else may add to it.
   */
  const sharedWithLazy = (read: Reader = readSource) => {
    const eager = graphOf('src/index.ts', read, staticImports);
    const engine = graphOf('src/engine.ts', read, staticImports);
    const lazy = [...graphOf('src/index.ts', read)].filter((file) => !eager.has(file) && !engine.has(file) && file.startsWith('src/'));
    return lazy.flatMap((file) =>
      [...graphOf(file, read, staticImports)].filter((reached) => eager.has(reached)).map((reached) => `${file} -> ${reached}`),
    );
  };

  /** The modules of the root's static graph that are the chart engine or import xstate at run time. */
  const engineInPage = (read: Reader = readSource) =>
    [...graphOf('src/index.ts', read, staticImports)].filter(
      (file) => file === 'src/engine.ts' || staticImports(read(file)).includes('xstate'),
    );

  it('U5: the root entry loads no xstate and no chart as it is loaded: the chart engine (src/engine.ts) is reached only by import(); the Node entry imports it', () => {
    expect(engineInPage()).toEqual([]);
    expect(graphOf('src/index.ts').has('src/engine.ts')).toBe(true);
    expect(graphOf('src/node.ts', readSource, staticImports).has('src/engine.ts')).toBe(true);
    for (const door of ['src/testing.ts', 'src/devtools/index.ts'])
      expect(graphOf(door, readSource, staticImports).has('src/engine.ts')).toBe(true);
  });

  it('U5: the check can fail: a planted root export of the connection chart, or a facade import of the actors, is found', () => {
    const rootExport = (path: string) =>
      path === 'src/index.ts'
        ? `${readSource(path)}\nexport { connectionMachine } from '../machines/connection/index.js';\n`
        : readSource(path);
    expect(engineInPage(rootExport)).toContain('machines/connection/base.ts');
    const facadeImport = (path: string) =>
      path === 'src/transport.ts' ? `import { attachIo } from './actors.js';\n${readSource(path)}` : readSource(path);
    expect(engineInPage(facadeImport)).toContain('src/actors.ts');
  });

  it('U5: the modules the root entry loads lazily (OAuth glue, the legacy stream, telemetry, DPoP) import nothing of the eager graph at run time, so they add no file to what a page loads at once', () => {
    const lazy = [...graphOf('src/index.ts')].filter((file) => !graphOf('src/index.ts', readSource, staticImports).has(file));
    expect(lazy).toEqual(expect.arrayContaining(['src/http/auth.ts', 'src/legacy/stream.ts', 'src/telemetry/otel.ts', 'src/http/dpop.ts']));
    expect(sharedWithLazy()).toEqual([]);
  });

  it('U5: the check can fail: a planted run-time import of the errors from the OAuth glue is found', () => {
    const planted = (path: string) =>
      path === 'src/http/auth.ts' ? `import { McpTransportError } from '../../machines/errors.js';\n${readSource(path)}` : readSource(path);
    expect(sharedWithLazy(planted)).toContain('src/http/auth.ts -> machines/errors.ts');
  });

  /** The optional peers (package.json) the root's graph names where a bundler resolves: a static import or a literal import(). */
  const optionalPeers = Object.keys((JSON.parse(readSource('package.json')) as { peerDependenciesMeta: object }).peerDependenciesMeta);
  const peersNamed = (read: Reader = readSource) =>
    [...graphOf('src/index.ts', read)].flatMap((file) =>
      runtimeImports(read(file))
        .filter((specifier) => optionalPeers.some((peer) => specifier === peer || specifier.startsWith(`${peer}/`)))
        .map((specifier) => `${file} -> ${specifier}`),
    );

  it('A1, U5: the root entry never names an optional peer where a bundler would resolve it, so an app with one SDK generation (or neither) bundles it', () => {
    expect(optionalPeers).toEqual(
      expect.arrayContaining(['@modelcontextprotocol/sdk', '@modelcontextprotocol/client', '@opentelemetry/api']),
    );
    expect(peersNamed()).toEqual([]);
  });

  it('A1, U5: the check can fail: a planted literal import() of the v2 SDK in the OAuth glue is found', () => {
    const planted = (path: string) =>
      path === 'src/http/auth.ts'
        ? `${readSource(path)}\nexport const v2 = () => import('@modelcontextprotocol/client');\n`
        : readSource(path);
    expect(peersNamed(planted)).toEqual(['src/http/auth.ts -> @modelcontextprotocol/client']);
  });

  /** The `import()` calls of a computed name in `files` that a bundler would try to follow (no webpackIgnore / @vite-ignore). */
  const followed = (files: string[], read: Reader = readSource) =>
    files.flatMap((file) =>
      [...read(file).matchAll(/\bimport\(([^'")][^)]*)\)/g)]
        .map((match) => match[1] ?? '')
        .filter((argument) => !(argument.includes('webpackIgnore: true') && argument.includes('@vite-ignore')))
        .map((argument) => `${file}: import(${argument})`),
    );
  const loaders = ['src/http/auth.ts', 'src/telemetry/otel.ts', 'src/http/proxy.ts', 'src/devtools/live.ts'];

  it('A1, O2, U5: every import() of a name held in a variable tells webpack and Vite to leave it alone (webpack would warn "Critical dependency" and make a context module of it)', () => {
    for (const file of loaders) expect(readSource(file), file).toMatch(/\bimport\(\/\*/);
    expect(followed(loaders)).toEqual([]);
  });

  it('A1, O2, U5: the check can fail: an import(name) without the comments is found', () => {
    const planted = (path: string) => readSource(path).replace('/* webpackIgnore: true */ /* @vite-ignore */ ', '');
    expect(followed(['src/http/auth.ts'], planted)).toEqual(['src/http/auth.ts: import(name)']);
  });
});
