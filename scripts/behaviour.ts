/**
 * Writes docs/behaviour.md: every behaviour id of docs/behaviour-ids.md, one line each, with the
 * files under machines/ and src/ whose comments name it, and the test files whose test names prove it (`it('R7: …')`, `it('P5, P9: …')`, `it('name (F1, U1): …')`).
 * An id no test names yet is shown as not yet proven; a test naming an id that is not listed is an
 * error (test/unit/behaviour.test.ts runs the same check in `npm test`).
 *
 *   tsx scripts/behaviour.ts           print the document
 *   tsx scripts/behaviour.ts --write   rewrite docs/behaviour.md (`npm run behaviour`)
 *   tsx scripts/behaviour.ts --check   exit 1 when docs/behaviour.md is stale or a test names an unknown id
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const idsPath = join(root, 'docs', 'behaviour-ids.md');
export const docPath = join(root, 'docs', 'behaviour.md');

export interface Behaviour {
  id: string;
  text: string;
}

export interface Family {
  heading: string;
  behaviours: Behaviour[];
}

/** A test found in test/: its file (relative to the root, with `/`), its name and the ids the name claims. */
export interface NamedTest {
  file: string;
  name: string;
  ids: string[];
}

const idList = String.raw`[A-Z]\d+(?:\s*,\s*[A-Z]\d+)*`;
// Ids open a name, closed by a colon, a comma or a bracket: `R7: …`, `F3, session-404: …`, `S3, R4 (sse-retry): …`.
const leadingIds = new RegExp(String.raw`^\s*(${idList})(?=\s*[:,(])`);
const bracketedIds = new RegExp(String.raw`\((${idList})\)`, 'g');

/** The families and ids of a behaviour-ids document (`## ` headings, `- ID text` lines). */
export function parseIds(source: string): Family[] {
  const families: Family[] = [];
  for (const line of source.split('\n')) {
    const heading = /^## (?<title>.+)$/.exec(line)?.groups?.title;
    if (heading !== undefined) {
      families.push({ heading: heading.trim(), behaviours: [] });
      continue;
    }
    const item = /^- (?<id>[A-Z]\d+) (?<text>.+)$/.exec(line)?.groups;
    if (item?.id === undefined || item.text === undefined) continue;
    const family = families.at(-1);
    if (family === undefined) throw new Error(`behaviour ${item.id} comes before any "## " heading`);
    family.behaviours.push({ id: item.id, text: item.text.trim() });
  }
  return families;
}

/** The ids a test name claims: the ids that open it and any `(ID, ID)`. */
export function idsOfName(name: string): string[] {
  const found: string[] = [];
  const add = (list: string) => {
    for (const id of list.split(',')) if (!found.includes(id.trim())) found.push(id.trim());
  };
  const leading = leadingIds.exec(name)?.[1];
  if (leading !== undefined) add(leading);
  for (const [, list] of name.matchAll(bracketedIds)) if (list !== undefined) add(list);
  return found;
}

/** `it`, `test`, or one of their modifiers (`it.skip`, `it.only`, `it.concurrent`, `it.fails`). */
function isTestFunction(node: ts.Expression): boolean {
  if (ts.isIdentifier(node)) return node.text === 'it' || node.text === 'test';
  return (
    ts.isPropertyAccessExpression(node) &&
    ['skip', 'only', 'concurrent', 'fails'].includes(node.name.text) &&
    isTestFunction(node.expression)
  );
}

/** A test declaration's callee: `it`, `test`, a modifier of them, or `it.each(table)`. */
function isTestCallee(node: ts.Expression): boolean {
  if (isTestFunction(node)) return true;
  return (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === 'each' &&
    isTestFunction(node.expression.expression)
  );
}

/**
 * The names of the tests in a file: the string first argument of `it(…)`, `test(…)`, `it.each(…)(…)`
 * and their modifiers, read from the syntax tree (strings and comments that merely contain `it(`
 * do not count). A template literal's `${…}` parts stay as written.
 */
export function testNamesIn(source: string): string[] {
  const file = ts.createSourceFile('test.ts', source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && isTestCallee(node.expression)) {
      const first = node.arguments[0];
      if (first !== undefined && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))) names.push(first.text);
      else if (first !== undefined && ts.isTemplateExpression(first)) names.push(first.getText(file).slice(1, -1));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return names;
}

function testFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...testFiles(path));
    else if (/\.test\.tsx?$/.test(entry.name)) files.push(path);
  }
  return files.sort();
}

/** Every named test under test/. */
export function collectTests(testDir = join(root, 'test')): NamedTest[] {
  const tests: NamedTest[] = [];
  for (const path of testFiles(testDir)) {
    const file = relative(root, path).split('\\').join('/');
    for (const name of testNamesIn(readFileSync(path, 'utf8'))) tests.push({ file, name, ids: idsOfName(name) });
  }
  return tests;
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name)) files.push(path);
  }
  return files.sort();
}

/**
 * Where each id lives: the files under machines/ and src/ whose comments name it (`// R8: …`,
 * `(E5)`, `* W2, …`), so that finding a behaviour's code takes one look.
 */
export function collectWhere(known: ReadonlySet<string>): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const dir of ['machines', 'src']) {
    for (const path of sourceFiles(join(root, dir))) {
      const file = relative(root, path).split('\\').join('/');
      const named = new Set<string>();
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        const at = line.search(/\/\/|\/\*|^\s*\*/);
        if (at === -1) continue;
        for (const [id] of line.slice(at).matchAll(/\b[A-Z]\d{1,2}\b/g)) if (known.has(id)) named.add(id);
      }
      for (const id of named) where.set(id, [...(where.get(id) ?? []), file]);
    }
  }
  return where;
}

/** Ids claimed by a test name but not listed, each with the first test that claims it. */
export function unknownIds(families: readonly Family[], tests: readonly NamedTest[]): { id: string; file: string; name: string }[] {
  const known = new Set(families.flatMap((family) => family.behaviours.map((b) => b.id)));
  const unknown = new Map<string, { id: string; file: string; name: string }>();
  for (const test of tests) {
    for (const id of test.ids) if (!known.has(id) && !unknown.has(id)) unknown.set(id, { id, file: test.file, name: test.name });
  }
  return [...unknown.values()];
}

/** Ids listed twice. */
export function duplicateIds(families: readonly Family[]): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const { id } of families.flatMap((family) => family.behaviours)) {
    if (seen.has(id)) twice.push(id);
    seen.add(id);
  }
  return twice;
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The document: a table per family; each id with the test files (and how many tests in each) that name it. */
export function render(families: readonly Family[], tests: readonly NamedTest[], where: ReadonlyMap<string, string[]> = new Map()): string {
  const all = families.flatMap((family) => family.behaviours);
  const proven = all.filter(({ id }) => tests.some((test) => test.ids.includes(id)));
  const out: string[] = [
    '# Behaviours and the tests that prove them',
    '',
    '<!-- Generated by `npm run behaviour` from docs/behaviour-ids.md and the test names in test/. Do not edit. -->',
    '',
    `Generated by \`npm run behaviour\` from [behaviour-ids.md](behaviour-ids.md) and the names of the tests in \`test/\`;`,
    'do not edit it by hand. `npm test` fails when this file is stale or a test names an id that is not listed.',
    'The "where" column lists the files under `machines/` and `src/` whose comments name the id.',
    `${String(proven.length)} of ${String(all.length)} ids are proven by a named test; the number after a file is how many of its tests name the id.`,
    '',
  ];
  for (const family of families) {
    out.push(`## ${family.heading}`, '', '| id | behaviour | where (comments naming it) | proved by |', '| --- | --- | --- | --- |');
    for (const { id, text } of family.behaviours) {
      const counts = new Map<string, number>();
      for (const test of tests) if (test.ids.includes(id)) counts.set(test.file, (counts.get(test.file) ?? 0) + 1);
      const proof =
        counts.size === 0 ? '*not yet proven*' : [...counts].map(([file, n]) => `\`${file}\`${n > 1 ? ` (${String(n)})` : ''}`).join(', ');
      const files = where.get(id) ?? [];
      const place = files.length === 0 ? '—' : files.map((file) => `\`${file}\``).join(', ');
      out.push(`| ${id} | ${cell(text)} | ${place} | ${proof} |`);
    }
    out.push('');
  }
  return out.join('\n');
}

/** The document as the ids and tests give it now. */
export function generate(): { text: string; families: Family[]; tests: NamedTest[] } {
  const families = parseIds(readFileSync(idsPath, 'utf8'));
  const tests = collectTests();
  const where = collectWhere(new Set(families.flatMap((family) => family.behaviours.map((b) => b.id))));
  return { text: render(families, tests, where), families, tests };
}

function main(args: readonly string[]): number {
  const { text, families, tests } = generate();
  const problems = [
    ...duplicateIds(families).map((id) => `${id} is listed twice in docs/behaviour-ids.md`),
    ...unknownIds(families, tests).map(
      ({ id, file, name }) => `${id} is named by a test but not listed in docs/behaviour-ids.md: ${file}: ${name}`,
    ),
  ];
  for (const problem of problems) console.error(problem);
  if (args.includes('--write')) {
    writeFileSync(docPath, text);
    console.log(`wrote ${relative(root, docPath)}`);
    return problems.length === 0 ? 0 : 1;
  }
  if (args.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(docPath, 'utf8');
    } catch {
      // missing: stale
    }
    if (current !== text) console.error('docs/behaviour.md is stale: run `npm run behaviour`');
    return problems.length === 0 && current === text ? 0 : 1;
  }
  process.stdout.write(text);
  return problems.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
