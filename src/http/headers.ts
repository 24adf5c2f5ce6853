/**
 * Header assembly. The caller's headers are normalised once, at construction; each request
 * then spreads one small object instead of rebuilding a `Headers` (a hot-path cost in the SDK).
 */

/** Headers the transport owns: a caller's `requestInit.headers` cannot override them (H8). */
const transportOwned = new Set(['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

export interface BaseHeaders {
  /** The caller's headers, lower-cased, without the transport-owned ones. */
  custom: Record<string, string>;
  /** Accept for POST, with the caller's own Accept types appended (H2). */
  postAccept: string;
  /** Accept for GET. */
  getAccept: string;
}

export function normalizeHeaders(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (init === undefined) return out;
  new Headers(init).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

export function baseHeaders(init: HeadersInit | undefined, authOwned: boolean): BaseHeaders {
  const all = normalizeHeaders(init);
  const custom: Record<string, string> = {};
  for (const [key, value] of Object.entries(all)) {
    if (transportOwned.has(key) || (authOwned && key === 'authorization')) continue;
    custom[key] = value;
  }
  const extra = (all.accept ?? '')
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '' && !/^(application\/json|text\/event-stream)\b/i.test(type));
  const append = extra.length > 0 ? `, ${extra.join(', ')}` : '';
  return {
    custom,
    postAccept: `application/json, text/event-stream${append}`,
    getAccept: `text/event-stream${append}`,
  };
}

/** Lower-cased media type without parameters: `Text/Event-Stream; charset=utf-8` → `text/event-stream` (P2). */
export function mediaType(contentType: string | null): string {
  if (contentType === null) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}
