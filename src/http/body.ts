/**
 * Every response body the transport reads whole (JSON answers, error bodies) is read here, and
 * only here (P12): bounded in bytes, counted after decompression as it streams, and cancelled
 * past the bound. Another HTTP client plugs in by handing over a body of the same shape.
 */

/** What this module needs of a response: its body stream (WHATWG fetch's `Response` fits). */
export interface BodySource {
  readonly body: ReadableStream<Uint8Array> | null;
}

export interface BoundedBody {
  /** The bytes read, at most the limit (none when the body was refused). */
  bytes: Uint8Array;
  /** The body was longer than the limit (and was cancelled). */
  exceeded: boolean;
}

export interface ReadBoundedOptions {
  /** 'cut': keep the first `limit` bytes of a longer body; 'refuse': keep nothing of it. */
  overflow: 'cut' | 'refuse';
  /** Stop waiting after this many ms and keep what was read (a body that stalls). */
  timeoutMs?: number | undefined;
}

const empty = new Uint8Array(0);

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] ?? empty;
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/**
 * Reads a body to at most `limit` bytes; past it (or past `timeoutMs`) the body is cancelled.
 * A read error rejects (the caller decides what it means), except after a timeout.
 */
export async function readBounded(source: BodySource, limit: number, options: ReadBoundedOptions): Promise<BoundedBody> {
  const body = source.body;
  if (body === null) return { bytes: empty, exceeded: false };
  const reader = body.getReader();
  let chunks: Uint8Array[] = [];
  let length = 0;
  const state = { timedOut: false };
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          state.timedOut = true;
          reader.cancel().catch(() => undefined);
        }, options.timeoutMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { bytes: concat(chunks, length), exceeded: false };
      if (length + value.length > limit) {
        reader.cancel().catch(() => undefined);
        if (options.overflow === 'refuse') {
          // Nothing refused stays reachable from here (P12).
          chunks = [];
          return { bytes: empty, exceeded: true };
        }
        chunks.push(value.subarray(0, limit - length));
        return { bytes: concat(chunks, limit), exceeded: true };
      }
      chunks.push(value);
      length += value.length;
    }
  } catch (error) {
    if (state.timedOut) return { bytes: concat(chunks, length), exceeded: false };
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    reader.releaseLock();
  }
}

/** Largest error body read (P12): enough for any JSON-RPC error, never a whole endless body. */
export const errorBodyLimit = 64 * 1024;
/** Longest wait for an error body that stalls (F7): the status already says what happened. */
export const errorBodyTimeout = 5_000;

/** An error body as text: at most 64 KiB, cut rather than refused; a broken or stalled body gives what arrived. */
export async function errorBodyText(source: BodySource): Promise<string> {
  try {
    const { bytes } = await readBounded(source, errorBodyLimit, { overflow: 'cut', timeoutMs: errorBodyTimeout });
    return new TextDecoder().decode(bytes);
  } catch {
    return '';
  }
}
