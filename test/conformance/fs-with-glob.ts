/**
 * `node:fs` plus `globSync`, for `@modelcontextprotocol/conformance` 0.1.16 on Node 20.
 *
 * The package does `import { globSync } from 'fs'` (a Node 22 addition); `fs-hooks.ts` points
 * that one package's `fs` imports here. The package's only use is
 * `globSync('**\/checks.json', { cwd: outputDir })`: relative patterns with `**`, `*`, `?`,
 * `[…]` and `{a,b}`, matched against every entry under `cwd`, returned relative to it.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export { default } from 'node:fs';

export interface GlobSyncOptions {
  /** Directory the patterns are relative to; default `process.cwd()`. */
  cwd?: string | URL | undefined;
  /** Leave out entries whose relative path matches one of these patterns, or that the predicate accepts. */
  exclude?: readonly string[] | ((name: string) => boolean) | undefined;
}

const special = /[\\^$.*+?()[\]{}|/]/;

/** One glob pattern as an anchored regular expression over `/`-separated relative paths. */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  let braces = 0;
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern.charAt(i);
    if (char === '*') {
      if (pattern.charAt(i + 1) === '*') {
        const atStart = i === 0 || pattern.charAt(i - 1) === '/';
        const next = pattern.charAt(i + 2);
        if (atStart && next === '/') {
          source += '(?:[^/]*/)*'; // "**/": zero or more directories
          i += 2;
          continue;
        }
        if (atStart && next === '') {
          source += '.*'; // trailing "**": everything below
          i += 1;
          continue;
        }
      }
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else if (char === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) {
        source += '\\[';
      } else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        source += `[${body}]`;
        i = end;
      }
    } else if (char === '{') {
      braces += 1;
      source += '(?:';
    } else if (char === ',' && braces > 0) {
      source += '|';
    } else if (char === '}' && braces > 0) {
      braces -= 1;
      source += ')';
    } else if (char === '\\' && i + 1 < pattern.length) {
      i += 1;
      const escaped = pattern.charAt(i);
      source += special.test(escaped) ? `\\${escaped}` : escaped;
    } else {
      source += special.test(char) ? `\\${char}` : char;
    }
  }
  return new RegExp(`^${source}$`);
}

/** Node 22's `fs.globSync(pattern, { cwd, exclude })` for relative patterns; paths come back relative to `cwd`. */
export function globSync(pattern: string | readonly string[], options: GlobSyncOptions = {}): string[] {
  const patterns = typeof pattern === 'string' ? [pattern] : [...pattern];
  for (const each of patterns) {
    if (path.isAbsolute(each)) throw new TypeError(`globSync shim: only relative patterns are supported (${each})`);
  }
  const matchers = patterns.map((each) => globToRegExp(each.split(path.sep).join('/')));
  const { exclude } = options;
  const excluded =
    exclude === undefined
      ? () => false
      : typeof exclude === 'function'
        ? exclude
        : (
            (excluders: RegExp[]) => (name: string) =>
              excluders.some((re) => re.test(name))
          )(exclude.map(globToRegExp));
  const cwd = options.cwd ?? process.cwd();
  let entries: string[];
  try {
    entries = readdirSync(cwd, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => {
      const relative = entry.split(path.sep).join('/');
      return matchers.some((re) => re.test(relative)) && !excluded(relative);
    })
    .sort();
}
