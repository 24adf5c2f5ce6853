import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { graphOf, readSource, runtimeImports } from '../support/import-graph.js';
import { describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '../../machines');
/** Every chart file, in machines/ and its concern folders (machines/connection/). */
const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'));

describe('machines/ are pure', () => {
  it('U5: the charts import only xstate and each other', () => {
    expect(files.length).toBeGreaterThan(4);
    for (const name of files) {
      const source = readFileSync(join(dir, name), 'utf8');
      const specifiers = [...source.matchAll(/from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]);
      for (const specifier of specifiers) {
        expect({ file: name, specifier }).toSatisfy(
          ({ specifier: s }: { specifier: string | undefined }) =>
            s === 'xstate' ||
            (s !== undefined && s.startsWith('.') && !relative(dir, resolve(dirname(join(dir, name)), s)).startsWith('..')),
        );
      }
    }
  });

  it('U5: the charts call no fetch and set no timers of their own (delays are `after`)', () => {
    for (const name of files) {
      const source = readFileSync(join(dir, name), 'utf8');
      expect(source, name).not.toMatch(/\bfetch\(|setTimeout\(|setInterval\(|process\.|globalThis|require\(/);
    }
  });

  /** A module only Node has (a `node:` built-in, or one of the old names, or a Node-only package). */
  const nodeOnlyModule = /^(node:.+|http|https|http2|net|tls|fs|zlib|os|path|child_process|stream|undici|ws)(\/.*)?$/;
  const nodeImportsOf = (file: string, read = readSource) => runtimeImports(read(file)).filter((s) => nodeOnlyModule.test(s));

  it('U5: nothing the browser entry (src/index.ts) reaches at run time imports a Node-only module', () => {
    const graph = graphOf('src/index.ts');
    expect(graph.size).toBeGreaterThan(20);
    expect(graph.has('src/http/client.ts')).toBe(true);
    const offenders = [...graph].flatMap((file) => nodeImportsOf(file).map((specifier) => `${file}: ${specifier}`));
    expect(offenders).toEqual([]);
    // The Node entry and its client stay out of the browser graph (H11).
    expect(graph.has('src/node.ts') || graph.has('src/http/node.ts')).toBe(false);
  });

  it('U5: the check can fail: a planted `node:` import in a module the browser entry reaches is found', () => {
    const planted = (path: string) =>
      path === 'src/http/client.ts' ? `import { readFileSync } from 'node:fs';\n${readSource(path)}` : readSource(path);
    const graph = graphOf('src/index.ts', planted);
    expect([...graph].flatMap((file) => nodeImportsOf(file, planted))).toEqual(['node:fs']);
    // And the Node entry does import Node modules (the pattern matches real code, not only planted lines).
    expect(nodeImportsOf('src/http/node.ts').length).toBeGreaterThan(0);
  });
});
