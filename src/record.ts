/**
 * The package's one "is a record" check, in a room of its own: the per-message checks
 * (src/schema.ts) and the edges (src/validation.ts, options, the devtools) both take it from
 * here, so the edges never import the per-message path.
 */

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
