/**
 * Every response body the transport reads whole (JSON answers, error bodies) is read here, and
 * only here (P12): bounded in bytes, counted after decompression as it streams, and cancelled
 * past the bound. Another HTTP client plugs in by handing over a body of the same shape.
 */
import type { ChunkReader, ChunkSource, ResponseBody } from '../../machines/types.js';

/** What this module needs of a response: fetch's `Response` (its web stream) or the Node client's (its chunks). */
export interface BodySource {
  readonly body: ReadableStream<Uint8Array> | null;
  /** The Node client's body, read without a web stream (`body` would make one). */
  readonly chunks?: ChunkSource | undefined;
}

/** The body to hand on: the chunk source when the client has one, else the web stream. */
export function bodyOf(source: BodySource): ResponseBody | null {
  return source.chunks ?? source.body;
}

/**
 * Reads a body chunk by chunk. A reader that throws ends the reading with that error (the body
 * is cancelled): nothing a handler does escapes into the HTTP client's events.
 */
export function readChunks(body: ResponseBody, reader: ChunkReader): { cancel(): void } {
  const guarded = new GuardedReader(reader);
  guarded.handle = 'getReader' in body ? pumpWebStream(body, guarded) : body.read(guarded);
  return guarded;
}

/**
 * `readChunks`' guard, one object (the reader handed to the body and the handle handed back)
 * instead of five closures and two objects that a held stream kept (bench/README.md, "Code shapes").
 */
class GuardedReader implements ChunkReader {
  done = false;
  handle: { cancel(): void } | undefined = undefined;

  constructor(private readonly reader: ChunkReader) {}

  /** As its reader reads chunks (a getter: nothing more kept per held stream). */
  get transient(): boolean {
    return this.reader.transient === true;
  }

  private stop(): boolean {
    if (this.done) return false;
    this.done = true;
    return true;
  }

  chunk(bytes: Uint8Array): void {
    if (this.done) return;
    try {
      this.reader.chunk(bytes);
    } catch (error) {
      if (!this.stop()) return;
      this.handle?.cancel();
      this.reader.fail(error);
    }
  }

  end(): void {
    if (this.stop()) this.reader.end();
  }

  fail(error: unknown): void {
    if (this.stop()) this.reader.fail(error);
  }

  cancel(): void {
    if (this.stop()) this.handle?.cancel();
  }
}

function pumpWebStream(stream: ReadableStream<Uint8Array>, reader: ChunkReader): { cancel(): void } {
  const webReader = stream.getReader();
  let cancelled = false;
  const pump = async () => {
    try {
      for (;;) {
        const { value, done } = await webReader.read();
        if (cancelled) return;
        if (done) {
          reader.end();
          return;
        }
        reader.chunk(value);
      }
    } catch (error) {
      if (!cancelled) reader.fail(error);
    }
  };
  void pump();
  return {
    cancel() {
      cancelled = true;
      webReader.cancel().catch(() => undefined);
    },
  };
}

/** An unread body is cancelled: cheap, and it frees the connection (a body already in full is drained). */
export function discardBody(source: BodySource): void {
  const body = bodyOf(source);
  if (body !== null) cancelBody(body);
}

/** Cancels a body nobody will read; nothing is set up to read it first. */
export function cancelBody(body: ResponseBody): void {
  if ('getReader' in body) body.cancel().catch(() => undefined);
  else body.discard();
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

/** One decoder for whole bodies: a decode without `stream` keeps no state, so one serves every answer. */
const utf8 = new TextDecoder();

/** A whole body as text (UTF-8, a leading BOM dropped, as fetch's `text()`). */
export function decodeUtf8(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

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
export function readBounded(source: BodySource, limit: number, options: ReadBoundedOptions): Promise<BoundedBody> {
  const body = bodyOf(source);
  if (body === null) return Promise.resolve({ bytes: empty, exceeded: false });
  return new Promise((resolve, reject) => {
    let chunks: Uint8Array[] = [];
    let length = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (result: BoundedBody | undefined, error?: unknown) => {
      if (timer !== undefined) clearTimeout(timer);
      // The HTTP client's own error, rejected as the body read rejected it.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      if (result === undefined) reject(error);
      else resolve(result);
    };
    const reading = readChunks(body, {
      chunk(value) {
        if (length + value.length <= limit) {
          chunks.push(value);
          length += value.length;
          return;
        }
        reading.cancel();
        if (options.overflow === 'refuse') {
          // Nothing refused stays reachable from here (P12).
          chunks = [];
          settle({ bytes: empty, exceeded: true });
          return;
        }
        chunks.push(value.subarray(0, limit - length));
        settle({ bytes: concat(chunks, limit), exceeded: true });
      },
      end() {
        settle({ bytes: concat(chunks, length), exceeded: false });
      },
      fail(error) {
        settle(undefined, error);
      },
    });
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        reading.cancel();
        settle({ bytes: concat(chunks, length), exceeded: false });
      }, options.timeoutMs);
    }
  });
}

/** Largest error body read (P12): enough for any JSON-RPC error, never a whole endless body. */
export const errorBodyLimit = 64 * 1024;
/** Longest wait for an error body that stalls (F7): the status already says what happened. */
export const errorBodyTimeout = 5_000;

/** An error body as text: at most 64 KiB, cut rather than refused; a broken or stalled body gives what arrived. */
export async function errorBodyText(source: BodySource): Promise<string> {
  try {
    const { bytes } = await readBounded(source, errorBodyLimit, { overflow: 'cut', timeoutMs: errorBodyTimeout });
    return decodeUtf8(bytes);
  } catch {
    return '';
  }
}

/**
 * U11: an error body as one line for a message: an HTML page reduced to its text (tags,
 * scripts and styles dropped), whitespace collapsed, the first `limit` characters. An error
 * message never carries a whole page.
 */
export function bodySummary(body: string, type: string, limit = 200): string {
  let text = body;
  if (type.includes('html') || /^\s*<(!doctype|html)/i.test(text)) {
    text = text
      .replace(/<(script|style)\b[\s\S]*?(<\/\1\s*>|$)/gi, ' ')
      .replace(/<!--[\s\S]*?(-->|$)/g, ' ')
      .replace(/<[^>]*>?/g, ' ')
      .replace(
        /&(lt|gt|amp|quot|#39|nbsp);/g,
        (_all, name: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'" })[name] ?? ' ',
      );
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}
