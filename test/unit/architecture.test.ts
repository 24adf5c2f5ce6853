/**
 * ARCHITECTURE.md's code map cannot drift: every source file under machines/ and src/ is named
 * there (a file in a subfolder may be covered by its folder's entry, `http/`, `view/`, …).
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

/** The files the map does not name: neither the file (`name.ts`) nor, in a subfolder, its folder (`folder/`). */
function unnamed(files: readonly string[], text: string): string[] {
  return files.filter((file) => {
    const parts = file.split('/');
    const name = parts.at(-1) ?? file;
    if (text.includes(`\`${name}\``) || text.includes(`\`${file}\``)) return false;
    const folder = parts.length > 2 ? parts.at(-2) : undefined;
    return folder === undefined || !text.includes(`\`${folder}/\``);
  });
}

describe('ARCHITECTURE.md', () => {
  it('names every file under machines/ and src/ in its code map', () => {
    const files = [...sourcesUnder('machines'), ...sourcesUnder('src')];
    expect(files.length).toBeGreaterThan(40);
    expect(unnamed(files, map)).toEqual([]);
  });

  it('the check can fail: a file the map does not name is reported', () => {
    expect(unnamed(['src/unmapped-module.ts', 'src/transport.ts', 'src/http/client.ts'], map)).toEqual(['src/unmapped-module.ts']);
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
