/**
 * ARCHITECTURE.md's code map cannot drift: every source file under machines/ and src/ is named
 * there by its path, or by the end of its path that names no other file (`http/node.ts`,
 * `post-stream.ts`; `node.ts` alone would name two); a folder's entry covers none of its files.
 * Every door of package.json's "exports" is in its table of doors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { everyImport, readSource, repositoryRoot, resolvedFrom, type Reader } from '../support/import-graph.js';

const map = readFileSync(join(repositoryRoot, 'ARCHITECTURE.md'), 'utf8');

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(repositoryRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => relative(repositoryRoot, join(repositoryRoot, folder, name)));
}

/** The backticked names in `text`: `src/http/node.ts`, `http/node.ts`, `node.ts`, `http/`, … */
const spansOf = (text: string): Set<string> => new Set([...text.matchAll(/`([^`\s]+)`/g)].map((match) => match[1] ?? ''));

/** Whether `name` is `file`'s path or an end of it after a `/`. */
const ends = (file: string, name: string): boolean => file === name || file.endsWith(`/${name}`);

/**
 * The files the map does not name: no backticked name there is the file's path or an end of it
 * that is no other file's (`library`: every file a name could mean).
 */
function unnamed(files: readonly string[], text: string, library: readonly string[] = files): string[] {
  const spans = [...spansOf(text)].filter((name) => name.endsWith('.ts'));
  const all = [...new Set([...library, ...files])];
  return files.filter((file) => !spans.some((name) => ends(file, name) && all.every((other) => other === file || !ends(other, name))));
}

describe('ARCHITECTURE.md', () => {
  const library = () => [...sourcesUnder('machines'), ...sourcesUnder('src')];

  it('names every file under machines/ and src/ in its code map, by its path', () => {
    const files = library();
    expect(files.length).toBeGreaterThan(40);
    expect(unnamed(files, map)).toEqual([]);
  });

  it('the check can fail: an unnamed file, one named by its folder only, one named by a name two files share', () => {
    const files = [
      'src/unmapped-module.ts',
      'src/transport.ts',
      'src/http/client.ts',
      'src/http/node.ts',
      'src/node.ts',
      'src/sse/reader.ts',
    ];
    const text = 'The `transport.ts`, `http/client.ts`, `sse/` and `node.ts`.';
    expect(unnamed(files, text)).toEqual(['src/unmapped-module.ts', 'src/http/node.ts', 'src/node.ts', 'src/sse/reader.ts']);
    expect(unnamed(files, `${text} And \`src/node.ts\`, \`http/node.ts\`.`)).toEqual(['src/unmapped-module.ts', 'src/sse/reader.ts']);
  });

  it('names every door of package.json\'s "exports" in its table of doors', () => {
    const { name, exports } = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as {
      name: string;
      exports: Record<string, unknown>;
    };
    const doors = Object.keys(exports)
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? name : `${name}/${key.slice(2)}`));
    expect(doors).toEqual(expect.arrayContaining([name, `${name}/machines`, `${name}/testing`, `${name}/devtools`]));
    const table = map.slice(map.indexOf('### The doors'), map.indexOf('###', map.indexOf('### The doors') + 1));
    const rows = table.split('\n').filter((line) => line.startsWith('| `'));
    expect(doors.filter((door) => !rows.some((row) => row.startsWith(`| \`${door}\``)))).toEqual([]);
  });

  /** The I/O layer: the requests, the stream readers, the actors that run them, the direct path. */
  const ioLayer = () => [
    ...sourcesUnder('src/http'),
    ...sourcesUnder('src/sse'),
    ...sourcesUnder('src/legacy'),
    'src/actors.ts',
    'src/data-plane.ts',
  ];
  /** The I/O modules that name the facade's options module, by any import, type-only ones included. */
  const optionsImporters = (files: readonly string[], read: Reader = readSource) =>
    files.filter((file) => everyImport(read(file)).some((specifier) => resolvedFrom(file, specifier) === 'src/options.ts'));

  it("the I/O layer takes nothing from the facade's options module (src/options.ts), not even a type", () => {
    expect(ioLayer().length).toBeGreaterThan(10);
    expect(optionsImporters(ioLayer())).toEqual([]);
  });

  it('the check can fail: a planted type import of src/options.ts in src/http/node.ts is found', () => {
    const planted: Reader = (path) =>
      path === 'src/http/node.ts' ? `import type { TlsOptions } from '../options.js';\n${readSource(path)}` : readSource(path);
    expect(optionsImporters(ioLayer(), planted)).toEqual(['src/http/node.ts']);
  });
});
