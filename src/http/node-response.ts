/// <reference types="node" />
/**
 * H11: a `node:http` answer as the part of a WHATWG `Response` the exchanges read
 * (`HttpResponse`): its headers read from `rawHeaders`, its body decoded as fetch decodes it
 * (gzip, deflate, br), read chunk by chunk or as a web stream, and cut as fetch cuts it. Only
 * the Node client (src/http/node.ts) imports this module.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type * as Zlib from 'node:zlib';
import type { Transform, Writable } from 'node:stream';
import type { ChunkReader, ChunkSource } from '../../machines/types.js';
import type { HttpResponse } from './client.js';

/** `node:zlib` loads on first use: a compressed answer. It is not in the cold start of a client that needs none. */
let zlib: typeof Zlib | undefined;

async function loadZlib(): Promise<typeof Zlib> {
  zlib ??= (await import('node:zlib')).default;
  return zlib;
}

/** Content codings fetch decodes, outermost last in the header. */
function decoder(zlib: typeof Zlib, coding: string): Zlib.Gunzip | Zlib.Inflate | Zlib.BrotliDecompress | undefined {
  // Flush as data arrives, as fetch does, so a compressed event stream is not held back.
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip(flush);
  if (coding === 'deflate') return zlib.createInflate(flush);
  if (coding === 'br') {
    return zlib.createBrotliDecompress({
      flush: zlib.constants.BROTLI_OPERATION_FLUSH,
      finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
    });
  }
  return undefined;
}

/**
 * A header as fetch's `Headers.get` gives it: every field of that name, joined with ", ". Read
 * from `rawHeaders`, which Node has already: `res.headers` builds an object of every header on
 * first use (bench/README.md, "Code shapes"), and keeps only the first of some repeated fields.
 */
function rawHeader(raw: readonly string[], name: string): string | null {
  const wanted = name.toLowerCase();
  let value: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i];
    const field = raw[i + 1];
    if (key === undefined || field === undefined || key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
    value = value === null ? field : `${value}, ${field}`;
  }
  return value;
}

/** The body as fetch gives it: decoded when every coding is known, else as sent. */
function decodedBody(res: IncomingMessage, method: string, zlib: typeof Zlib | undefined): Readable {
  const header = rawHeader(res.rawHeaders, 'content-encoding') ?? undefined;
  const status = res.statusCode ?? 0;
  if (header === undefined || zlib === undefined || method === 'HEAD' || [101, 204, 205, 304].includes(status)) return res;
  // Every decoder made before any is piped: a coding with none leaves the body as sent, untouched.
  const decoders = codingsOf(header)?.map((coding) => decoder(zlib, coding));
  if (decoders === undefined || decoders.includes(undefined)) return res;
  let out: Readable = res;
  for (const d of decoders as (Zlib.Gunzip | Zlib.Inflate | Zlib.BrotliDecompress)[]) {
    const from = out;
    from.on('error', (error) => {
      d.destroy(error);
    });
    out = from.pipe(d);
  }
  return out;
}

/** The codings of a `Content-Encoding` field fetch decodes, in the order they are undone; undefined when one is unknown (the body is then given as sent). */
function codingsOf(header: string): string[] | undefined {
  const codings = header
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity')
    .reverse();
  const known = ['gzip', 'x-gzip', 'deflate', 'br'];
  return codings.length === 0 || codings.some((c) => !known.includes(c)) ? undefined : codings;
}

/**
 * A body's bytes decoded as fetch decodes them, for a reader of raw bytes (the HTTP/1.1 client,
 * `h1.ts`): the returned function takes each chunk, then undefined at the body's end; the
 * decoded bytes, their end or a decoding failure go to `to`. Undefined when there is nothing to
 * undo (or a coding is unknown: the body is given as sent). The first compressed answer waits for
 * `node:zlib` to load; its bytes are queued meanwhile.
 */
export function contentDecoders(header: string, to: ChunkReader): ((chunk: Buffer | undefined) => void) | undefined {
  const codings = codingsOf(header);
  if (codings === undefined) return undefined;
  let queue: (Buffer | undefined)[] | undefined = [];
  let first: Writable | undefined;
  const start = (loaded: typeof Zlib) => {
    const decoders: Transform[] = [];
    for (const coding of codings) {
      const d = decoder(loaded, coding);
      if (d !== undefined) decoders.push(d);
    }
    for (const d of decoders) {
      d.on('error', (error) => {
        to.fail(error);
      });
    }
    let last = decoders[0] as Transform;
    for (const d of decoders.slice(1)) last = last.pipe(d);
    last.on('data', (chunk: Buffer) => {
      to.chunk(chunk);
    });
    last.on('end', () => {
      to.end();
    });
    first = decoders[0];
    for (const chunk of queue ?? []) {
      if (chunk === undefined) first?.end();
      else first?.write(chunk);
    }
    queue = undefined;
  };
  if (zlib !== undefined) start(zlib);
  else
    void loadZlib().then(start, (error: unknown) => {
      to.fail(error);
    });
  return (chunk) => {
    if (first === undefined) queue?.push(chunk);
    else if (chunk === undefined) first.end();
    else first.write(chunk);
  };
}

/**
 * P4: bodies whose reader is done with them and reads on only to their end (its grace: the
 * connection is about to be free), and the requests waiting for one of those connections instead
 * of opening a new one (`node.ts`, `awaitDrain`). Each ended drain lets one waiter go.
 */
export const drains = {
  count: 0,
  waiters: [] as (() => void)[],
  /** Waits in a row that ran out (reset by one that did not). */
  misses: 0,
  /** When the last of those ran out: a server whose streams go on after their answer (keep-alive comments, say) is not waited for again for a while. */
  timedOutAt: Number.NEGATIVE_INFINITY,
  patient(): boolean {
    return this.misses < impatientAfter || performance.now() - this.timedOutAt > impatientMs;
  },
  /** A wait ran out. One alone (a late packet, a busy event loop) changes nothing. */
  lostPatience(): void {
    this.misses++;
    this.timedOutAt = performance.now();
  },
  /** A wait ended with a connection freed. */
  served(): void {
    this.misses = 0;
  },
};

/** Waits in a row that must run out before requests stop waiting. */
const impatientAfter = 2;

/** How long requests do not wait for a draining body after that. */
const impatientMs = 10_000;

/** P4: a body counted in `drains` ended (or was cut): one waiting request goes. */
export function drainEnded(): void {
  drains.count--;
  const next = drains.waiters.shift();
  // After Node's own 'end' handlers: the connection is back in the agent's pool a tick later.
  if (next !== undefined) setImmediate(next);
}

/** What ends a request: the transport's RequestControl, or (called as fetch) `init.signal`. */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Sets the one listener. */
  onAbort(listener: () => void): void;
  /** Removes `listener` if it is still the one set. */
  offAbort(listener: () => void): void;
}

/** An AbortSignal as an AbortSource (a request made without a RequestControl). */
export function signalSource(signal: AbortSignal | null | undefined): AbortSource {
  const source = signal ?? new AbortController().signal;
  return {
    get aborted() {
      return source.aborted;
    },
    get reason(): unknown {
      const reason: unknown = source.reason;
      return reason;
    },
    onAbort(listener) {
      source.addEventListener('abort', listener, { once: true });
    },
    offAbort(listener) {
      source.removeEventListener('abort', listener);
    },
  };
}

/** What fetch rejects with once its signal is aborted: the signal's reason. */
export function abortReason(signal: AbortSource): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}

/** A body cut before its end fails as fetch's does: TypeError('terminated') with the cause. */
function terminated(cause: unknown): TypeError {
  return new TypeError('terminated', { cause });
}

const ignore = (): void => undefined;

/**
 * An answer's headers as fetch's `Headers` reads them, from `rawHeaders`: one object, its methods
 * on the prototype (two closures and an object per answer otherwise, kept by a held stream).
 */
class RawHeaders {
  constructor(private readonly raw: readonly string[]) {}

  get(name: string): string | null {
    return rawHeader(this.raw, name);
  }

  getSetCookie(): string[] {
    const raw = this.raw;
    const fields: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (raw[i]?.length === 10 && raw[i]?.toLowerCase() === 'set-cookie') fields.push(raw[i + 1] ?? '');
    }
    return fields;
  }
}

export class NodeResponse implements HttpResponse, ChunkSource {
  readonly type = 'basic';
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null; getSetCookie(): string[] };
  bodyUsed = false;
  private stream: ReadableStream<Uint8Array> | undefined;
  /** P4: 1 while counted in `drains`, 2 once it ended. */
  private drain: 0 | 1 | 2 = 0;

  constructor(
    private readonly res: IncomingMessage,
    private readonly source: Readable,
    private readonly signal: AbortSource,
  ) {
    this.status = res.statusCode ?? 0;
    this.statusText = res.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status <= 299;
    // A socket that dies under a body nobody reads yet must not become an uncaught 'error'.
    res.on('error', ignore);
    if (source !== res) source.on('error', ignore);
    this.headers = new RawHeaders(res.rawHeaders);
  }

  /** The body chunk by chunk, as it arrives: what the transport reads (no web stream per answer: bench/README.md, "Code shapes"). */
  get chunks(): ChunkSource {
    return this;
  }

  read(reader: ChunkReader): { cancel(): void } {
    if (this.bodyUsed || this.stream !== undefined) {
      queueMicrotask(() => {
        reader.fail(new TypeError('Body is unusable: Body has already been read'));
      });
      return { cancel: ignore };
    }
    this.bodyUsed = true;
    return new BodyListener(this, reader, this.res, this.source, this.signal);
  }

  /** P4: the reader reads on only to the end (see `drains`); counted until the body ends or is cut. */
  draining(): void {
    if (this.drain !== 0) return;
    this.drain = 1;
    drains.count++;
  }

  /** The body ended, failed or was cut: a drain it was counted in has ended. */
  settled(): void {
    if (this.drain === 1) drainEnded();
    this.drain = 2;
  }

  discard(): void {
    if (this.bodyUsed || this.stream !== undefined) return;
    this.bodyUsed = true;
    this.drainOrCut();
  }

  /** Made on first use only (the transport reads `chunks`). */
  get body(): ReadableStream<Uint8Array> {
    this.stream ??= this.webStream();
    return this.stream;
  }

  text(): Promise<string> {
    if (this.bodyUsed || this.stream !== undefined) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    this.bodyUsed = true;
    const source = this.source;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const fail = (error: unknown) => {
        reject(this.signal.aborted ? abortReason(this.signal) : terminated(error));
      };
      source.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
      });
      source.once('error', fail);
      this.res.once('aborted', () => {
        fail(new Error('aborted'));
      });
      source.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      });
    });
  }

  private webStream(): ReadableStream<Uint8Array> {
    const { source } = this;
    let listening: BodyListener | undefined;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        listening = new BodyListener(
          this,
          {
            chunk: (chunk) => {
              this.bodyUsed = true;
              controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
              if ((controller.desiredSize ?? 1) <= 0) source.pause();
            },
            end: () => {
              controller.close();
            },
            fail: (error) => {
              controller.error(error);
            },
          },
          this.res,
          source,
          this.signal,
        );
        source.pause();
      },
      pull: () => {
        source.resume();
      },
      cancel: () => {
        listening?.stop();
        this.bodyUsed = true;
        this.drainOrCut();
      },
    });
  }

  /** A body received in full is drained, so its socket returns to the pool; one still arriving (a stream) is cut, as fetch does. */
  drainOrCut(): void {
    if (this.res.complete) this.source.resume();
    else this.res.destroy();
  }
}

/**
 * Hands a body to `to` as it arrives: each chunk, then its end or what cut it (the signal's reason
 * once aborted, else fetch's TypeError('terminated')), once. One object per read, which is also
 * the handle `read()` returns: a held stream keeps it and its four listeners, not a closure per
 * step and two handle objects (bench/README.md, "Code shapes").
 */
class BodyListener {
  private done = false;

  constructor(
    private readonly response: NodeResponse,
    private readonly to: ChunkReader,
    res: IncomingMessage,
    source: Readable,
    private readonly signal: AbortSource,
  ) {
    source.on('data', (chunk: Buffer) => {
      if (!this.done) this.to.chunk(chunk);
    });
    // `on`, not `once`: `done` already makes each fire once, and a held stream keeps no once-wrapper
    // (its state object and bound function, ~0.2 KiB each: docs/benchmark.md, "Code shapes").
    source.on('end', () => {
      this.response.settled();
      if (this.done) return;
      this.done = true;
      this.to.end();
    });
    source.on('error', (error: unknown) => {
      this.fail(error);
    });
    res.on('aborted', () => {
      this.fail(new Error('aborted'));
    });
  }

  private fail(error: unknown): void {
    this.response.settled();
    if (this.done) return;
    this.done = true;
    this.to.fail(this.signal.aborted ? abortReason(this.signal) : terminated(error));
  }

  /** Silences it; says whether it was still running. */
  stop(): boolean {
    const running = !this.done;
    this.done = true;
    return running;
  }

  /** As the web stream's cancel: a body still running is drained or cut. */
  cancel(): void {
    if (this.stop()) this.response.drainOrCut();
    this.response.settled();
  }
}

/**
 * The answer `res` to a `method` request as fetch would give it, its body decoded; the first
 * compressed answer waits for `node:zlib` to load (its body stays buffered meanwhile).
 */
export function nodeResponse(res: IncomingMessage, method: string, signal: AbortSource): NodeResponse | Promise<NodeResponse> {
  if (zlib !== undefined || rawHeader(res.rawHeaders, 'content-encoding') === null) {
    return new NodeResponse(res, decodedBody(res, method, zlib), signal);
  }
  res.on('error', ignore);
  return loadZlib().then((loaded) => new NodeResponse(res, decodedBody(res, method, loaded), signal));
}
