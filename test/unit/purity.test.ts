import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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

  /**
   * The Node-only files: the CLI and its demo server, the chart view's HTTP server (W5), the Node
   * entry and its HTTP client (H11).
   */
  const nodeOnly = new Set(['cli.ts', 'demo-server.ts', join('view', 'server.ts'), 'node.ts', join('http', 'node.ts')]);
  const srcDir = join(import.meta.dirname, '../../src');

  it('U5: src/ outside the CLI and the Node entry imports no Node-only module, so the transport runs in browsers', () => {
    const walk = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? walk(join(d, e.name))
          : e.name.endsWith('.ts') && !nodeOnly.has(relative(srcDir, join(d, e.name)))
            ? [join(d, e.name)]
            : [],
      );
    const sources = walk(srcDir);
    expect(sources.length).toBeGreaterThan(5);
    for (const file of sources) {
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/from\s+['"](node:|http|https|net|fs|zlib|undici)['"/]/);
    }
  });

  it('U5, H11: the browser entry (src/index.ts) never reaches the Node entry or the Node HTTP client', () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      for (const [, specifier] of source.matchAll(/(?:from|import)\s+['"](\.[^'"]+)['"]/g)) {
        if (specifier !== undefined) visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
      }
    };
    visit(join(srcDir, 'index.ts'));
    const reached = [...seen].map((file) => relative(srcDir, file));
    expect(reached).toContain(join('http', 'client.ts'));
    for (const file of nodeOnly) expect(reached).not.toContain(file);
  });
});
