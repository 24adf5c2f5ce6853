/**
 * U9, W5: what the chart view's server accepts as a recorder line (a recording given to
 * `serveView`, lines POSTed to `/ingest`), checked with `zod/mini` on Node before anything reaches
 * a page. The page's own `parseRecording` (replay.ts, sent to the browser as source text) stays a
 * lenient hand check for files a user opens in the page.
 */
import { InvalidRecordingError, type InputIssue } from '../../../machines/errors.js';
import { anObject, issuesOf } from '../../validation.js';
import { isRecord } from '../../record.js';
import * as z from '../../validation.js';

const kinds = ['header', 'actor', 'event', 'snapshot', 'emit', 'timer', 'cancel'] as const;

let lineSchema: z.ZodMiniType | undefined;

/** One recorder line (see `toRecord` in ../recorder.ts): the common fields, then each kind's own. Extra keys pass. */
function schema(): z.ZodMiniType {
  if (lineSchema !== undefined) return lineSchema;
  const optionalString = z.optional(z.string('a string'));
  const strings = z.optional(z.array(z.string('a string'), 'an array of strings'));
  const base = {
    t: z.number('a time in ms, a number'),
    actor: z.string('an actor name, a string'),
  };
  const variant = <K extends (typeof kinds)[number], S extends Record<string, z.ZodMiniType>>(kind: K, fields: S) =>
    z.looseObject({ ...base, kind: z.literal(kind), ...fields });
  lineSchema = z.discriminatedUnion(
    'kind',
    [
      variant('header', { format: optionalString, package: optionalString, chart: optionalString }),
      variant('actor', { machine: optionalString, parent: optionalString }),
      variant('event', { event: z.string('an event type, a string'), source: optionalString, details: z.optional(anObject()) }),
      variant('snapshot', {
        value: z.union([z.string(), anObject()], 'a state value (a string or an object)'),
        status: optionalString,
        tags: strings,
        children: strings,
        attempt: z.optional(z.number('a number')),
        session: optionalString,
        error: z.optional(anObject()),
      }),
      variant('emit', { event: z.string('an event type, a string'), details: z.optional(anObject()) }),
      variant('timer', { id: z.string('a timer id, a string'), delay: z.number('a delay in ms, a number') }),
      variant('cancel', { id: z.string('a timer id, a string') }),
    ],
    {
      error: (issue) => (isRecord(issue.input) ? `one of ${kinds.join(', ')}` : 'a recorder line (a JSON object with t, kind and actor)'),
    },
  );
  return lineSchema;
}

/** A checked line, or why it is not one (field and expected shape, never the value). */
export function checkLine(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; issues: InputIssue[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, issues: [{ field: '', expected: 'one JSON object per line', received: 'text that is not JSON' }] };
  }
  const issues = issuesOf(schema(), value);
  return issues.length === 0 ? { ok: true, value: value as Record<string, unknown> } : { ok: false, issues };
}

/**
 * U9: throws `InvalidRecordingError` at the first line that is not a recorder line, naming the
 * line, the field and the shape it must have. A last line cut off mid-write (no newline after it,
 * not JSON: the recording process died) is let through: the page skips and names it.
 */
export function checkRecording(text: string): void {
  const lines = text.split(/\r?\n/);
  const cut = !/\n$/.test(text);
  let last = lines.length - 1;
  while (last >= 0 && (lines[last] ?? '').trim() === '') last--;
  for (let i = 0; i <= last; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    const checked = checkLine(line);
    if (checked.ok) continue;
    const unfinished = cut && i === last && checked.issues[0]?.received === 'text that is not JSON';
    if (!unfinished) throw new InvalidRecordingError(i + 1, checked.issues);
  }
}
