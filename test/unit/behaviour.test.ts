import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { docPath, duplicateIds, generate, idsOfName, parseIds, render, testNamesIn, unknownIds } from '../../scripts/behaviour.js';

describe('docs/behaviour.md', () => {
  const { text, families, tests } = generate();

  it('is what `npm run behaviour` writes from docs/behaviour-ids.md and the test names (run it after adding or renaming a test)', () => {
    expect(readFileSync(docPath, 'utf8')).toBe(text);
  });

  it('every id a test names is listed in docs/behaviour-ids.md', () => {
    expect(unknownIds(families, tests)).toEqual([]);
  });

  it('lists each id once', () => {
    expect(families.flatMap((family) => family.behaviours).length).toBeGreaterThan(0);
    expect(duplicateIds(families)).toEqual([]);
  });
});

describe('the behaviour generator', () => {
  it('reads the ids that open a name and the ids in brackets, and nothing else', () => {
    expect(idsOfName('R7: waits exactly the server retry')).toEqual(['R7']);
    expect(idsOfName('X2, S5: a long run of comments')).toEqual(['X2', 'S5']);
    expect(idsOfName('F3, session-404-reinitialize: the next call succeeds')).toEqual(['F3']);
    expect(idsOfName('S3, R4 (sse-retry): resumed after the retry')).toEqual(['S3', 'R4']);
    expect(idsOfName('terminate-405-ok (F1, U1): a 405 to DELETE is fine')).toEqual(['F1', 'U1']);
    expect(idsOfName('holds headers until release(), then answers 200 (a P1 case)')).toEqual([]);
    expect(idsOfName('PKCE with S256 works')).toEqual([]);
  });

  it('finds test names in it(), test(), it.each(…)() and template literals, not in describe()', () => {
    const source = [
      "describe('R4, S3: group', () => {",
      "  it('P1: plain', async () => {});",
      '  it(',
      '    "P2: on its own line",',
      '    async () => {},',
      '  );',
      "  it.each([[1, 'x'], [2, 'y']])('P5: %i (%s)', async () => {});",
      '  test(`L1: ${status} falls back`, async () => {});',
      "  const split = 'it(' + 'x';",
      '});',
    ].join('\n');
    expect(testNamesIn(source)).toEqual(['P1: plain', 'P2: on its own line', 'P5: %i (%s)', 'L1: ${status} falls back']);
  });

  it('shows an id no test names yet as not yet proven, and reports an id a test names but the list lacks', () => {
    const families = parseIds('## Z. Example\n- Z1 proven one\n- Z2 pending one\n');
    const tests = [
      { file: 'test/a.test.ts', name: 'Z1: a', ids: ['Z1'] },
      { file: 'test/a.test.ts', name: 'Z1: b', ids: ['Z1'] },
      { file: 'test/b.test.ts', name: 'Z9: c', ids: ['Z9'] },
    ];
    const doc = render(families, tests, new Map([['Z1', ['src/z.ts', 'machines/z.ts']]]));
    expect(doc).toContain('| Z1 | proven one | `src/z.ts`, `machines/z.ts` | `test/a.test.ts` (2) |');
    expect(doc).toContain('| Z2 | pending one | — | *not yet proven* |');
    expect(unknownIds(families, tests)).toEqual([{ id: 'Z9', file: 'test/b.test.ts', name: 'Z9: c' }]);
    expect(duplicateIds(parseIds('## Z\n- Z1 a\n- Z1 b\n'))).toEqual(['Z1']);
  });
});
