/**
 * The house's "nevers" read from the imports (ARCHITECTURE.md, code map): the edges
 * (src/validation.ts) take nothing from the per-message path (src/schema.ts), and the rooms a
 * newcomer walks have no import circles (src/http/, src/devtools/cli/, src/testing/, machines/ with
 * machines/connection/).
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { everyImport, readSource, repositoryRoot, resolvedFrom, type Reader } from '../support/import-graph.js';

const sourcesUnder = (folder: string): string[] =>
  readdirSync(join(repositoryRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => relative(repositoryRoot, join(repositoryRoot, folder, name)));

/** What `file` imports (type-only imports included), resolved to repository paths. */
const importsOf = (file: string, read: Reader) => everyImport(read(file)).map((specifier) => resolvedFrom(file, specifier));

/** The import circles among `files`, each as the files on it (sorted), found by a walk from each file. */
function circles(files: readonly string[], read: Reader = readSource): string[][] {
  const inside = new Set(files);
  const edges = new Map(files.map((file) => [file, importsOf(file, read).filter((target) => inside.has(target))]));
  const found = new Map<string, string[]>();
  const walk = (start: string, at: string, path: string[]): void => {
    for (const next of edges.get(at) ?? []) {
      if (next === start) {
        const circle = [...path].sort();
        found.set(circle.join(' '), circle);
      } else if (!path.includes(next) && next > start) {
        walk(start, next, [...path, next]);
      }
    }
  };
  for (const file of files) walk(file, file, [file]);
  return [...found.values()];
}

/** The modules `file` reaches through its imports, itself excluded. */
function reached(file: string, read: Reader = readSource): Set<string> {
  const seen = new Set<string>();
  const visit = (at: string) => {
    for (const next of importsOf(at, read)) {
      if (seen.has(next) || !next.endsWith('.ts') || !next.startsWith('src/')) continue;
      seen.add(next);
      visit(next);
    }
  };
  visit(file);
  return seen;
}

describe('the house, read from the imports', () => {
  it('the edges take nothing from the per-message path: src/validation.ts does not reach src/schema.ts', () => {
    expect(reached('src/validation.ts').has('src/record.ts')).toBe(true);
    expect(reached('src/validation.ts').has('src/schema.ts')).toBe(false);
  });

  it('the check can fail: a planted import of isRecord from src/schema.ts in src/validation.ts is found', () => {
    const planted: Reader = (path) =>
      path === 'src/validation.ts' ? `import { isRecord } from './schema.js';\n${readSource(path)}` : readSource(path);
    expect(reached('src/validation.ts', planted).has('src/schema.ts')).toBe(true);
  });

  it('src/http/, src/devtools/cli/ and src/testing/ have no import circle', () => {
    const http = sourcesUnder('src/http');
    expect(http.length).toBeGreaterThan(8);
    expect(circles(http)).toEqual([]);
    expect(circles(sourcesUnder('src/devtools/cli'))).toEqual([]);
    // The testing door's room with the door itself: server <- states <- paths, and the door re-exports them.
    const testing = ['src/testing.ts', ...sourcesUnder('src/testing')];
    expect(testing.length).toBe(4);
    expect(circles(testing)).toEqual([]);
  });

  it('the check can fail: the old circle (client.ts takes the dpop types from dpop.ts) is found', () => {
    const planted: Reader = (path) =>
      path === 'src/http/client.ts' ? `import type { DpopOption } from './dpop.js';\n${readSource(path)}` : readSource(path);
    expect(circles(sourcesUnder('src/http'), planted)).toEqual([['src/http/client.ts', 'src/http/dpop.ts']]);
  });

  it('the check can fail: a planted circle in src/testing/ (the server taking the era type from states.ts) is found', () => {
    const planted: Reader = (path) =>
      path === 'src/testing/server.ts' ? `import type { TestEra } from './states.js';\n${readSource(path)}` : readSource(path);
    expect(circles(['src/testing.ts', ...sourcesUnder('src/testing')], planted)).toEqual([
      ['src/testing/server.ts', 'src/testing/states.ts'],
    ]);
  });

  it('machines/ has no import circle, machines/connection/ included', () => {
    const connection = sourcesUnder('machines/connection');
    expect(connection.length).toBeGreaterThan(12);
    expect(circles(connection)).toEqual([]);
    const machines = sourcesUnder('machines');
    expect(machines.length).toBeGreaterThan(connection.length + 8);
    expect(circles(machines)).toEqual([]);
  });

  it('the check can fail: the old circles of machines/connection/ (base.ts or types.ts taking from direct.ts) are found', () => {
    const planting =
      (file: string, line: string): Reader =>
      (path) =>
        path === file ? `${line}\n${readSource(path)}` : readSource(path);
    const slot = planting('machines/connection/base.ts', "import { directCallsSlot } from './direct.js';");
    expect(circles(sourcesUnder('machines/connection'), slot)).toEqual([['machines/connection/base.ts', 'machines/connection/direct.ts']]);
    // A type-only import is an arrow too: the chart's events once took the direct path's report from direct.ts.
    const report = planting('machines/connection/types.ts', "import type { DirectCallReport } from './direct.js';");
    expect(
      circles(sourcesUnder('machines'), report)
        .map((circle) => circle.map((file) => file.replace('machines/connection/', '')).join(' '))
        .sort(),
    ).toEqual(['base.ts direct.ts posts.ts types.ts', 'base.ts direct.ts types.ts', 'direct.ts types.ts']);
  });
});
