/**
 * The run-time import graph of the sources, read as text: what a module loads when it runs
 * (`import … from`, `export … from`, `import '…'`, `import('…')`); type-only imports are erased and
 * are no edges. The doors test and the purity test walk it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const repositoryRoot = resolve(import.meta.dirname, '../..');

/** Every module specifier a source loads at run time, relative or not. */
export function runtimeImports(source: string): string[] {
  const specifiers = staticImports(source);
  for (const match of source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) if (match[1] !== undefined) specifiers.push(match[1]);
  return specifiers;
}

/** Only what a module loads as it is itself loaded: `import()` calls, which run later or never, left out. */
export function staticImports(source: string): string[] {
  const specifiers: string[] = [];
  const statement = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'([^']+)'/gm;
  for (const match of source.matchAll(statement)) if (match[1] === undefined && match[2] !== undefined) specifiers.push(match[2]);
  return specifiers;
}

/** Every module specifier a source names in an import or re-export, type-only ones included. */
export function everyImport(source: string): string[] {
  const statement = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?'([^']+)'/gm;
  return [...source.matchAll(statement)].flatMap((match) => (match[1] === undefined ? [] : [match[1]]));
}

/** The repository path `specifier` names, imported from `file`. */
export function resolvedFrom(file: string, specifier: string): string {
  return relative(repositoryRoot, resolve(repositoryRoot, dirname(file), specifier.replace(/\.js$/, '.ts')));
}

export type Reader = (path: string) => string;
export const readSource: Reader = (path) => readFileSync(join(repositoryRoot, path), 'utf8');

/** Every source file reachable at run time from `entry` (paths relative to the repository). */
export function graphOf(entry: string, read: Reader = readSource, importsOf: (source: string) => string[] = runtimeImports): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of importsOf(read(file))) {
      if (!specifier.startsWith('.')) continue;
      queue.push(relative(repositoryRoot, resolve(repositoryRoot, dirname(file), specifier.replace(/\.js$/, '.ts'))));
    }
  }
  return seen;
}
