/**
 * U9: validation at the untrusted edges that are not on the per-message path (constructor
 * options, a saved state, recordings read by the chart view), with `zod/mini`. Each schema
 * carries, as its error, the shape it expects (`'a non-negative integer'`), so an issue reads as
 * "field: expected shape". Messages never hold a given value (X1): only field names, expected
 * shapes and the kind of value that came (`a string`, `null`). The per-message path keeps its hand
 * checks (src/schema.ts).
 */
import * as z from 'zod/mini';
import type { InputIssue } from '../machines/errors.js';
import { isRecord } from './record.js';

/**
 * The zod/mini functions the checks use, by name: the build inlines this module with zod/mini
 * tree-shaken to these (scripts/build.ts), so `zod/mini`'s namespace must never escape it.
 * Callers import this module as `z`.
 */
export {
  array,
  check,
  custom,
  discriminatedUnion,
  literal,
  looseObject,
  number,
  object,
  optional,
  refine,
  string,
  union,
  type ZodMiniType,
} from 'zod/mini';

/** What kind of value this is, in words, without the value itself. */
export function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const type = typeof value;
  return type === 'object' ? 'an object' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function at(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/**
 * Every problem zod finds in `value`, as field and expected shape (with the kind of value given),
 * or an empty list. `prefix` is put before each field (`restoreState`).
 */
export function issuesOf(schema: z.ZodMiniType, value: unknown, prefix = ''): InputIssue[] {
  // No eval-compiled fast path: each value is checked once (a constructor, a saved state, a line), so compiling costs more than it saves.
  const result = z.safeParse(schema, value, { jitless: true });
  if (result.success) return [];
  return result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = prefix === '' ? path : path === '' ? prefix : `${prefix}.${path}`;
    return { field, expected: issue.message, received: kindOf(at(value, issue.path)) };
  });
}

/** A schema that is `test`, named by what it expects. */
export const shape = <T>(expected: string, test: (value: unknown) => boolean) => z.custom<T>(test, expected);

export const aFunction = (expected = 'a function') => shape<(...args: never[]) => unknown>(expected, (v) => typeof v === 'function');
export const anObject = (expected = 'an object') => shape<Record<string, unknown>>(expected, isRecord);
export const aBoolean = () => z.boolean('true or false');
export const aString = (expected = 'a string') => z.string(expected);
/** A finite number ≥ 0 (a delay, a timeout, in ms). */
export const aDuration = (expected = 'a number of milliseconds, 0 or more') =>
  z.number(expected).check(z.refine((n: number) => n >= 0, expected));
/** A whole number ≥ `min`. */
export const aCount = (min: number, expected: string) =>
  z.number(expected).check(z.refine((n: number) => Number.isInteger(n) && n >= min, expected));
