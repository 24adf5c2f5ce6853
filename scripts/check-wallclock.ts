/**
 * The house rule "no test asserts an upper bound on wall-clock time" as a check `npm test` runs:
 * it reads every test file and refuses an upper bound (`toBeLessThan`, `toBeLessThanOrEqual`,
 * chai's `lt`/`lte`/`below`/`most`, or the mirror `expect(bound).toBeGreaterThan(measured)`) on
 * a measured duration. On a loaded machine a timer fires late, never early; assert what the
 * chart chose (its planned wait, test/support/waits.ts) or drive the clock, and keep the wall
 * clock for lower bounds.
 *
 * A measured duration is an expression that reads a clock (`performance.now()`, `Date.now()`,
 * `process.hrtime`), subtracts times (`x.at - y.cutAt`), is named like one (`elapsed`, `took`,
 * `duration`, `delay`, `waited`, `gap`, `latency`, `observed`, `…Ms`, `…At`), or is a variable
 * whose initializer is one of these.
 *
 * Usage: tsx scripts/check-wallclock.ts [dir or file …]   (default: test examples)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface UpperBound {
  file: string;
  line: number;
  text: string;
}

const upperMatchers = new Set(['toBeLessThan', 'toBeLessThanOrEqual', 'lt', 'lte', 'below', 'lessThan', 'most', 'within']);
const mirrorMatchers = new Set(['toBeGreaterThan', 'toBeGreaterThanOrEqual', 'gt', 'gte', 'above', 'greaterThan', 'least']);

/** Names of a span of time: `elapsed`, `delay`, `tookMs`, … */
const spanName =
  /^(elapsed|duration|took|taken|latency|delay|delays|waited|wait|gap|gaps|observed|ms|spent|lag)$|^(elapsed|duration|took|latency|delay|waited|gap|spent)|(Ms|Millis|Seconds|Secs|Elapsed|Duration|Delay|Latency|Gap|Took|Waited)$/;
/** Names of a moment read off a clock: `at`, `cutAt`, `startTime`, `timestamp`. */
const pointName = /^(at|time|timestamp|now)$|(At|Time|Timestamp)$/;

const clockCall = (node: ts.Node): boolean => {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression.getText();
  return /^(performance\.now|Date\.now|process\.hrtime(\.bigint)?)$/.test(callee);
};

/** The name an expression reads a value by: `a.b[i]!` → `b`, `x` → `x`; `bare` when it is a variable. */
function nameOf(node: ts.Expression): { name: string; bare: boolean } | undefined {
  if (ts.isIdentifier(node)) return { name: node.text, bare: true };
  if (ts.isPropertyAccessExpression(node)) return { name: node.name.text, bare: false };
  if (
    ts.isElementAccessExpression(node) ||
    ts.isNonNullExpression(node) ||
    ts.isParenthesizedExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isTypeAssertionExpression(node)
  ) {
    return nameOf(node.expression);
  }
  return undefined;
}

/**
 * How an expression relates to the clock: 'point' when it is (or is computed only from) moments
 * read off a clock, 'span' when it is or contains a measured span or a name that says one,
 * undefined when it has nothing to do with time.
 */
type Timing = 'point' | 'span' | undefined;

function timingOf(node: ts.Expression, measuredVars: ReadonlyMap<string, Timing>): Timing {
  // What the expression reads (an object: the closure below sets it).
  const seen = { points: false, spans: false, other: false };
  const visit = (n: ts.Node): void => {
    if (clockCall(n)) {
      seen.points = true;
      return;
    }
    // A function inside the expression is not what it measures.
    if (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) return;
    if (ts.isCallExpression(n)) {
      // `gets.at(-1)`, `Math.max(a, b)`: the method's name is no value; its object and arguments are.
      const callee = n.expression;
      if (ts.isPropertyAccessExpression(callee)) visit(callee.expression);
      else if (!ts.isIdentifier(callee)) visit(callee);
      else if (pointName.test(callee.text)) seen.points = true;
      else if (spanName.test(callee.text)) seen.spans = true;
      n.arguments.forEach(visit);
      return;
    }
    if (ts.isNumericLiteral(n)) {
      seen.other = true;
      return;
    }
    if (ts.isExpression(n)) {
      const named = nameOf(n);
      if (named !== undefined) {
        const known = named.bare ? measuredVars.get(named.name) : undefined;
        if (known === 'point' || (known === undefined && pointName.test(named.name))) {
          seen.points = true;
          return;
        }
        if (known === 'span' || spanName.test(named.name)) {
          seen.spans = true;
          return;
        }
        if (ts.isIdentifier(n) || ts.isPropertyAccessExpression(n)) {
          seen.other = true;
          return;
        }
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  if (seen.spans) return 'span';
  if (seen.points) return seen.other ? 'span' : 'point';
  return undefined;
}

/** The `expect(subject, …)` at the root of a matcher chain, if any. */
function expectSubject(node: ts.Expression): ts.Expression | undefined {
  let current: ts.Expression = node;
  for (;;) {
    if (ts.isCallExpression(current)) {
      const callee = current.expression;
      if (ts.isIdentifier(callee) && callee.text === 'expect') return current.arguments[0];
      if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'expect') {
        return current.arguments[0];
      }
      current = callee;
    } else if (ts.isPropertyAccessExpression(current) || ts.isNonNullExpression(current)) {
      current = current.expression;
    } else {
      return undefined;
    }
  }
}

/** Every upper bound on a measured duration in one source text. */
/** The marker of a bound on a clock the test drives, on the assertion's line or the line before. */
export const DRIVEN = 'wall-clock guard: driven clock';

export function findWallClockUpperBounds(text: string, file = 'test.ts'): UpperBound[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  // Variables whose initializer reads a clock (`const took = performance.now() - started`).
  const measuredVars = new Map<string, Timing>();
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
      const timing = timingOf(node.initializer, measuredVars);
      if (timing !== undefined) measuredVars.set(node.name.text, timing);
    }
    ts.forEachChild(node, collect);
  };
  collect(source);
  // Twice: a variable computed from a measured one is measured too.
  collect(source);

  const lines = text.split('\n');
  const found: UpperBound[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const matcher = node.expression.name.text;
      const subject = expectSubject(node.expression.expression);
      const bound = node.arguments[0];
      // An upper bound on a measured span: `expect(measured).toBeLessThan(limit)`, or its mirror
      // `expect(limit).toBeGreaterThan(measured)`. Two moments compared (`a.endTime <= b.startTime`)
      // are an order, not a bound.
      const subjectTiming = subject === undefined ? undefined : timingOf(subject, measuredVars);
      const boundTiming = bound === undefined ? undefined : timingOf(bound, measuredVars);
      const upper = upperMatchers.has(matcher) && subjectTiming !== undefined && boundTiming !== 'point';
      const mirror =
        mirrorMatchers.has(matcher) &&
        subject !== undefined &&
        boundTiming !== undefined &&
        subjectTiming !== 'point' &&
        subjectTiming !== 'span';
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      // A bound on a clock the test drives (fake timers, a simulated clock) says so on the line before.
      const driven = (lines[line - 1] ?? '').includes(DRIVEN) || (lines[line] ?? '').includes(DRIVEN);
      if ((upper || mirror) && !driven) {
        found.push({ file, line: line + 1, text: (node.getText(source).split('\n')[0] ?? '').trim() });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function* testFiles(path: string): Generator<string> {
  const stat = statSync(path);
  if (stat.isFile()) {
    if (/\.tsx?$/.test(path)) yield path;
    return;
  }
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    yield* testFiles(join(path, entry.name));
  }
}

/** Checks the files under `roots`; gives the upper bounds found. */
export function checkWallClock(roots: readonly string[]): UpperBound[] {
  const found: UpperBound[] = [];
  for (const root of roots) {
    for (const file of testFiles(root)) found.push(...findWallClockUpperBounds(readFileSync(file, 'utf8'), relative(process.cwd(), file)));
  }
  return found;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const roots = process.argv.slice(2);
  const found = checkWallClock(roots.length > 0 ? roots : ['test', 'examples']);
  for (const bound of found) {
    console.error(`${bound.file}:${String(bound.line)}: an upper bound on a measured duration: ${bound.text}`);
  }
  if (found.length > 0) {
    console.error(
      `\n${String(found.length)} upper bound(s) on wall-clock time. Assert the wait the chart chose (test/support/waits.ts) or drive the clock; the wall clock may give a lower bound only (CONTRIBUTING.md).`,
    );
    process.exit(1);
  }
  console.log('no upper bound on wall-clock time in the tests');
}
