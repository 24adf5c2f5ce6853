/**
 * Where the standalone stream would resume (W1): what `saveState()` reads, apart from the
 * stream's chart so that the facade reads it without the engine.
 */
/**
 * W1: where this stream would resume now: the last event id read (the reader records each new id
 * in `seenIds`, in order, as it delivers), else the id it started from.
 */
export function resumePoint(context: { seenIds: Iterable<string>; lastEventId: string | undefined }): string | undefined {
  let last: string | undefined;
  for (const id of context.seenIds) last = id;
  return last ?? context.lastEventId;
}
