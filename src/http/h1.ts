/// <reference types="node" />
/**
 * H11, issue 44: a small HTTP/1.1 client for plain-http requests without a proxy (every POST,
 * GET and DELETE whose head it can write as given), in place of `node:http`: the request's head
 * and body go out in one write on a kept-alive connection of the origin or a new one, and the
 * answer is read by the response reader below.
 *
 * - A held stream (the standalone GET, a resume) lives for a session's life: `node:http` keeps
 *   for it a `ClientRequest` (and its header text), an `IncomingMessage`, an `HTTPParser` and the
 *   streams' states. Here it keeps the socket, this object and the answer's raw header string
 *   (docs/benchmark.md, "What a held session is made of").
 * - A call: `node:http`, its agent and its streams were ~40 µs of a modern JSON call's ~300 µs
 *   of client CPU here, and its head and body went out as two buffers in one `writev`
 *   (docs/benchmark.md, "Per call").
 *
 * It answers as `NodeResponse` does (status, headers from the raw list, the body chunk by chunk,
 * decoded as fetch decodes it), so status handling, cookies and errors stay in the exchanges
 * above. It keeps the behaviours of Node's agent that the transport relies on: N7 (a request
 * that meets a kept connection the server had closed goes again once on a new one, and says
 * so), P4 (a body in its grace is counted in `drains`; its connection is kept for the next
 * request), the server's `Keep-Alive: timeout=`. Only `node.ts` uses it.
 */
import { createConnection, type Socket } from 'node:net';
import type { ChunkReader, ChunkSource } from '../../machines/types.js';
import type { HttpResponse } from './client.js';
import { abortReason, contentDecoders, drainEnded, drains, type AbortSource } from './node-response.js';
import { idleMs, IdleSockets } from './pool.js';

/** As Node's default `--max-http-header-size`: a longer head fails the request. */
const maxHeadBytes = 16 * 1024;
/** The longest chunk-size line read (hex digits and extensions). */
const maxSizeLine = 1024;

/** `:` */
const colonCode = 0x3a;
/** An RFC 9110 token's characters: a method, a field name. */
const tokenChars = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
/** A field name in an answer's head, matched where it starts (`lastIndex`). */
const fieldName = new RegExp(tokenChars, 'y');
/** An answer's status line. */
const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;

/** A header name Node would write (a token). */
const token = new RegExp(`^${tokenChars}$`);
/**
 * A header value written here: visible ASCII, space and tab. Node also writes the bytes 0x80–0xFF
 * (as latin1 without a body, as UTF-8 joined to a string body): such a value goes to `node:http`.
 */
const plainValue = /^[\t\x20-\x7e]*$/;

/** A request's head, written with a string body as one UTF-8 string: ASCII only (see `plainValue`). */
export type RequestHead = string & { readonly ascii: unique symbol };

/**
 * The request's head as written, or undefined when a header is one `node:http` would refuse or
 * write otherwise (the request then goes there, to be sent or to fail as it always did).
 */
export function requestHead(method: string, path: string, list: readonly string[]): RequestHead | undefined {
  if (!token.test(method) || !/^[\x21-\x7e]+$/.test(path)) return undefined;
  let head = `${method} ${path} HTTP/1.1\r\n`;
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = list[i] as string;
    const value = list[i + 1] as string;
    if (!token.test(name) || !plainValue.test(value)) return undefined;
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n` as RequestHead;
}

/**
 * An answer's header fields as fetch's `Headers` reads them, kept as the one string of the head
 * they came in (its lines after the status line) and read when asked: a held stream keeps that
 * string, not a list of names and values (~0.6 KiB per held session, docs/benchmark.md).
 */
class HeadHeaders {
  constructor(private readonly fields: string) {}

  /** Every field named `name` (any case), as `Headers.get` joins them. */
  get(name: string): string | null {
    const values = this.all(name);
    return values.length === 0 ? null : values.join(', ');
  }

  getSetCookie(): string[] {
    return this.all('set-cookie');
  }

  /** Line by line with `indexOf` (no array of lines per read): a name is a token (`parseHead`), so its line's first colon ends it. */
  private all(name: string): string[] {
    const wanted = name.toLowerCase();
    const n = wanted.length;
    const fields = this.fields;
    const values: string[] = [];
    for (let at = 0; at < fields.length;) {
      let end = fields.indexOf('\r\n', at);
      if (end === -1) end = fields.length;
      if (at + n < end && fields.charCodeAt(at + n) === colonCode && fields.slice(at, at + n).toLowerCase() === wanted) {
        values.push(fields.slice(at + n + 1, end).trim());
      }
      at = end + 2;
    }
    return values;
  }
}

const noFields = new HeadHeaders('');

/** The fields of an answer that let them go (`fieldsRead`): read again, they throw rather than answer as if absent. */
const releasedFields = {
  get(name: string): string | null {
    throw new Error(`the held GET's header fields were let go once read; '${name}' was asked for afterwards`);
  },
  getSetCookie(): string[] {
    throw new Error("the held GET's header fields were let go once read; 'set-cookie' was asked for afterwards");
  },
};

/** Where the reader is in the answer. */
const enum Phase {
  Head,
  /** Content-Length: `left` bytes to go. */
  Sized,
  /** Until the connection closes. */
  ToClose,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailer,
  Done,
}

/** A body cut before its end fails as fetch's does: TypeError('terminated') with the cause. */
function terminated(cause: unknown): TypeError {
  return new TypeError('terminated', { cause });
}

const ignore = (): void => undefined;

/** The connection closed before an answer's head: named as `node:http` names it (N7's warning and retry cause read it). */
function hangUp(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

/** The reader of a body read only to free its connection. */
const unread: ChunkReader = { chunk: ignore, end: ignore, fail: ignore };

/**
 * P4, issue 44: the connections whose answers ended as framed, kept for the next request to the
 * same `host:port`. At most 256 per origin (Node's agent's `maxFreeSockets`), for 4 s or 1 s less
 * than the server's `Keep-Alive: timeout=` (pool.ts, `IdleSockets`): before Node's server default
 * of 5 s closes one under a request. One that errors, closes or is written to while idle is dropped.
 */
const idleSockets = new IdleSockets(256);

/**
 * Whose a connection is: the answer reading it. None while it is idle (or let go). Each connection
 * has the same three listeners for its whole life (`connect`), which hand its events to its
 * owner: no listener is added or removed per request (six of each were, issue 44).
 */
const owners = new WeakMap<Socket, H1Response>();

/** An idle socket's end (error, close, bytes no request asked for): out of the list, closed. */
function idleGone(socket: Socket): void {
  idleSockets.remove(socket);
  socket.destroy();
}

/**
 * Issue 44: every connection reads into this one buffer (`onread`), so a read makes no buffer
 * and goes through none of the socket's stream machinery (a paced event, one per packet, cost
 * 28–31 µs of client CPU per read through 'data', 18–19 through `onread`: docs/http-client.md).
 * A read is handed on at once and the next one overwrites it: whatever keeps bytes past the read
 * (a head or line not yet whole, body bytes before `read()`, a chunk for a reader that keeps it,
 * a decoder) keeps a copy (`kept`).
 */
const readBuffer = Buffer.allocUnsafe(64 * 1024);

/** The bytes, in a buffer of their own when they are a view of `readBuffer` (valid only until the next read). */
function kept(bytes: Buffer): Buffer {
  return bytes.buffer === readBuffer.buffer ? Buffer.from(bytes) : bytes;
}

/** A read of `n` bytes into `readBuffer` (`this`: the socket, as `net` calls it). */
function socketRead(this: Socket, n: number): boolean {
  const owner = owners.get(this);
  if (owner === undefined) idleGone(this);
  else owner.data(readBuffer.subarray(0, n));
  return true;
}

function socketError(this: Socket, error: Error): void {
  const owner = owners.get(this);
  if (owner === undefined) idleGone(this);
  else owner.error(error);
}

function socketClose(this: Socket): void {
  const owner = owners.get(this);
  if (owner === undefined) idleGone(this);
  else owner.closed();
}

/** Keeps `socket` (its answer ended as framed; it has no owner any more) for `ms` for the next request to `origin`, or closes it. */
function keepIdle(origin: string, socket: Socket, ms: number): void {
  if (!idleSockets.keep(origin, socket, ms)) {
    socket.destroy();
    return;
  }
  // Read while idle: the server's close (its end) and any byte it sends drop the connection at once.
  socket.resume();
}

/** How many connections are kept idle for `host:port` (tests read it). */
export function idleSocketCount(host: string, port: number): number {
  return idleSockets.count(`${host}:${port}`);
}

/** P4: whether a connection within its time is kept idle for `host:port`. */
export function hasIdleSocket(host: string, port: number): boolean {
  return idleSockets.has(`${host}:${port}`);
}

/** A new connection, as Node's agent makes them: no Nagle delay, TCP keep-alive probes after 1 s idle. */
function connect(host: string, port: number): Socket {
  const socket = createConnection({
    host,
    port,
    noDelay: true,
    keepAlive: true,
    keepAliveInitialDelay: 1_000,
    onread: { buffer: readBuffer, callback: socketRead },
  });
  socket.on('error', socketError);
  socket.on('close', socketClose);
  return socket;
}

/** N7: told when a request went again on a new connection, with its body (`RequestControl.resent`). */
export type Resent = (cause: Error, body: string | undefined) => void;

/** What sending a request again takes (N7). */
interface Outgoing {
  host: string;
  port: number;
  head: RequestHead;
  body: string | Buffer | undefined;
  resent: Resent | undefined;
}

/**
 * Sends `head` and `body` to `host:port`, on a connection an earlier request left idle or on a
 * new one, and answers as fetch would: the promise settles with the answer once its head is
 * read, or fails with fetch's TypeError('fetch failed') (or the abort's reason).
 *
 * N7: a kept connection that fails or closes before any byte of the answer (the server closed it
 * as it went idle) is replaced once by a new one, the other idle connections of the origin are
 * closed, the request is sent again there, and `resent` hears of it. Not on a new connection,
 * nor after a byte of the answer: the server may have received it.
 */
export function h1Request(
  host: string,
  port: number,
  head: RequestHead,
  body: string | Buffer | undefined,
  signal: AbortSource,
  resent: Resent | undefined,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const origin = `${host}:${port}`;
    const kept = idleSockets.take(origin);
    const response = new H1Response(kept ?? connect(host, port), origin, signal, resolve, reject);
    if (kept !== undefined) response.retryOnce({ host, port, head, body, resent });
    response.send(head, body);
  });
}

/** One request's answer: the socket's listener, the response reader and the answer (`HttpResponse`, `ChunkSource`). */
export class H1Response implements HttpResponse, ChunkSource {
  readonly type = 'basic';
  status = 0;
  statusText = '';
  ok = false;
  headers: { get(name: string): string | null; getSetCookie(): string[] } = noFields;
  bodyUsed = false;
  private phase = Phase.Head;
  /** Bytes of the head (or a chunk-size or trailer line) not yet complete; body bytes read before `read()`. */
  private pending: Buffer | undefined;
  private left = 0;
  private reader: ChunkReader | undefined;
  /** The content decoders' entry, when the answer is compressed. */
  private decode: ((chunk: Buffer | undefined) => void) | undefined;
  private settle: ((response: HttpResponse) => void) | undefined;
  private refuse: ((reason: unknown) => void) | undefined;
  private ended = false;
  private failure: unknown;
  private stream: ReadableStream<Uint8Array> | undefined;
  /** The answer may leave its connection for the next request: HTTP/1.1, no `Connection: close`. */
  private reusable = false;
  /** How long its connection may stay idle after it (the server's `Keep-Alive: timeout=`). */
  private idleFor = idleMs;
  /** P4: 1 while counted in `drains`, 2 once it ended. */
  private drain: 0 | 1 | 2 = 0;
  /** The connection is no longer this answer's (kept idle for another, or closed): nothing here touches it again. */
  private released = false;
  /** While a kept connection has given no byte: the request to send again, once, if it fails (N7). */
  private retry: Outgoing | undefined;

  constructor(
    private socket: Socket,
    private readonly origin: string,
    private readonly signal: AbortSource,
    resolve: (response: HttpResponse) => void,
    reject: (reason: unknown) => void,
  ) {
    this.settle = resolve;
    this.refuse = reject;
    signal.onAbort(this.onAbort);
    this.listen(socket);
  }

  private listen(socket: Socket): void {
    owners.set(socket, this);
  }

  private unlisten(socket: Socket): void {
    if (owners.get(socket) === this) owners.delete(socket);
  }

  /** The connection was kept from an earlier request: if it fails before any byte, the request goes again on a new one (N7). */
  retryOnce(outgoing: Outgoing): void {
    this.retry = outgoing;
  }

  /** Writes the request: its head and a string body as one string (one write), a Buffer body after it. */
  send(head: RequestHead, body: string | Buffer | undefined): void {
    if (body === undefined) this.socket.write(head, 'latin1');
    else if (typeof body === 'string') this.socket.write(head + body);
    else {
      this.socket.cork();
      this.socket.write(head, 'latin1');
      this.socket.write(body);
      this.socket.uncork();
    }
  }

  /** P4: the reader reads on only to the end (see `drains`); counted until the body ends or is cut. */
  draining(): void {
    if (this.drain !== 0 || this.phase === Phase.Done || this.failure !== undefined) return;
    this.drain = 1;
    drains.count++;
  }

  /** The body ended, failed or was cut: a drain it was counted in has ended. */
  private settled(): void {
    if (this.drain === 1) drainEnded();
    this.drain = 2;
  }

  /** Bytes of its connection (`socketRead`): lent, valid during the call only. */
  data(data: Buffer): void {
    this.retry = undefined;
    this.take(data);
  }

  /** Its connection failed (`socketError`). Once the body is framed to its end, that is not the body's business. */
  error(error: Error): void {
    if (this.phase !== Phase.Done) this.cut(error);
  }

  /** Its connection closed (`socketClose`). No 'end' listener: the server's end closes the socket. */
  closed(): void {
    if (this.phase === Phase.ToClose && this.failure === undefined) this.finish();
    else if (this.phase !== Phase.Done) this.cut(this.phase === Phase.Head ? hangUp() : new Error('other side closed'));
    this.signal.offAbort(this.onAbort);
  }

  private readonly onAbort = (): void => {
    this.cut(abortReason(this.signal));
  };

  /** Closes the connection, unless it is no longer this answer's. */
  private close(): void {
    if (this.released) return;
    this.released = true;
    this.socket.destroy();
  }

  /** The body chunk by chunk (what the transport reads). */
  get chunks(): ChunkSource {
    return this;
  }

  /** The body chunk by chunk (what the transport reads). */
  read(reader: ChunkReader): { cancel(): void } {
    return this.readInto(reader);
  }

  private readInto(reader: ChunkReader): { cancel(): void } {
    if (this.bodyUsed) {
      queueMicrotask(() => {
        reader.fail(new TypeError('Body is unusable: Body has already been read'));
      });
      return { cancel: ignore };
    }
    this.bodyUsed = true;
    this.reader = reader;
    // Never from inside `read()`: as node:http's answer does, the body is delivered from a later
    // turn, so a reader may use the handle `read()` returns (to cancel, to arm a timer) before its
    // first chunk or its end (a body that came whole with the head would otherwise end at once).
    queueMicrotask(() => {
      this.begin();
    });
    return this;
  }

  /** The reading begins: bytes read with the head go through the framing, then the socket resumes (a method: no closure kept per held stream). */
  private begin(): void {
    const reader = this.reader;
    if (reader === undefined) return;
    const early = this.pending;
    this.pending = undefined;
    if (early !== undefined && this.phase !== Phase.Done && this.failure === undefined) this.bodyBytes(early);
    if (this.ended) this.deliverEnd();
    else if (this.failure !== undefined) {
      this.reader = undefined;
      reader.fail(this.failure);
    } else if (this.reader !== undefined && !this.released) this.socket.resume();
  }

  /** Stops reading: the rest of the body is not read, so the connection is closed (unless it already ended as framed). */
  cancel(): void {
    this.reader = undefined;
    this.settled();
    this.close();
  }

  /**
   * A body nobody reads: the bytes of it that came with the head go through the framing; one
   * that ended there (an empty chunked body, a short Content-Length one) leaves its connection
   * for the next request, as `NodeResponse` drains a complete body. Any other is cut.
   */
  discard(): void {
    if (this.bodyUsed) return;
    this.bodyUsed = true;
    const early = this.pending;
    if (early !== undefined && this.phase !== Phase.Done && this.failure === undefined && this.decode === undefined) {
      this.pending = undefined;
      this.reader = unread;
      this.bodyBytes(early);
      if ((this.phase as Phase) === Phase.Done) return;
      this.reader = undefined;
    }
    if (this.phase !== Phase.Done) this.close();
  }

  get body(): ReadableStream<Uint8Array> {
    this.stream ??= new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.readInto({
          chunk: (chunk) => {
            controller.enqueue(chunk);
          },
          end: () => {
            controller.close();
          },
          fail: (error) => {
            controller.error(error);
          },
        });
      },
      cancel: () => {
        this.cancel();
      },
    });
    return this.stream;
  }

  /** Issue 44: the exchange read every field it reads (a held event stream): the head's string is let go. */
  fieldsRead(): void {
    this.headers = releasedFields;
  }

  text(): Promise<string> {
    if (this.bodyUsed) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    return new Promise((resolve, reject) => {
      const parts: Buffer[] = [];
      this.readInto({
        chunk: (chunk) => {
          parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        },
        end: () => {
          const text = Buffer.concat(parts).toString('utf8');
          resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
        },
        fail: reject,
      });
    });
  }

  /** Bytes from the socket. */
  private take(data: Buffer): void {
    if (this.phase === Phase.Head) {
      const buffered = this.pending === undefined ? data : Buffer.concat([this.pending, data]);
      const at = buffered.indexOf('\r\n\r\n');
      if (at === -1) {
        if (buffered.length > maxHeadBytes) this.cut(new Error('Header overflow'));
        else this.pending = kept(buffered);
        return;
      }
      this.pending = undefined;
      if (!this.parseHead(buffered.toString('latin1', 0, at))) return;
      const rest = buffered.subarray(at + 4);
      const phase = this.phase as Phase;
      if (phase === Phase.Head) {
        // An interim (1xx) answer: the final one follows.
        if (rest.length > 0) this.take(rest);
        return;
      }
      const settle = this.settle;
      this.settle = undefined;
      this.refuse = undefined;
      // Nothing more is read until the body is (the reader comes a few ticks after the answer),
      // unless the body came whole with the head (a JSON answer, usually): nothing more is due.
      if (phase !== Phase.Done && !(phase === Phase.Sized && rest.length >= this.left)) this.socket.pause();
      if (rest.length > 0) {
        // Bytes after a body-less answer: no answer of ours, so the connection is not kept.
        if (phase === Phase.Done) this.reusable = false;
        else this.pending = kept(rest);
      }
      if (phase === Phase.Done) this.finish();
      settle?.(this);
      return;
    }
    if (this.reader === undefined) {
      this.pending = this.pending === undefined ? kept(data) : Buffer.concat([this.pending, data]);
      return;
    }
    this.bodyBytes(data);
  }

  /** Reads the status line and the fields; false when it failed the request. */
  private parseHead(text: string): boolean {
    const firstEnd = text.indexOf('\r\n');
    const status = statusLine.exec(firstEnd === -1 ? text : text.slice(0, firstEnd));
    if (status === null) {
      this.cut(new Error('Invalid HTTP response status line'));
      return false;
    }
    const code = Number(status[2]);
    if (code < 200) {
      // 100, 102, 103: skipped, as Node and fetch do (101 is never asked for).
      if (code === 101) {
        this.cut(new Error('Unexpected 101 response'));
        return false;
      }
      return true;
    }
    let chunked = false;
    let size = -1;
    let coding: string | undefined;
    let close = status[1] === '0';
    // Field by field with `indexOf` (no array of lines); only names as long as one read here are lower-cased.
    for (let at = firstEnd === -1 ? text.length : firstEnd + 2; at < text.length;) {
      let end = text.indexOf('\r\n', at);
      if (end === -1) end = text.length;
      const colon = text.indexOf(':', at);
      fieldName.lastIndex = at;
      if (colon <= at || colon > end || !fieldName.test(text) || fieldName.lastIndex !== colon) {
        this.cut(new Error('Invalid header field'));
        return false;
      }
      const length = colon - at;
      const line = at;
      at = end + 2;
      if (length !== 17 && length !== 14 && length !== 16 && length !== 10) continue;
      const lower = text.slice(line, colon).toLowerCase();
      const value = text.slice(colon + 1, end).trim();
      if (lower === 'transfer-encoding') chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      else if (lower === 'content-length') {
        const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
        if (Number.isNaN(n) || (size !== -1 && size !== n)) {
          this.cut(new Error('Invalid Content-Length'));
          return false;
        }
        size = n;
      } else if (lower === 'content-encoding') coding = coding === undefined ? value : `${coding}, ${value}`;
      else if (lower === 'connection') close ||= /(?:^|,)\s*close\s*(?:,|$)/i.test(value);
      else if (lower === 'keep-alive') {
        // As Node's agent reads it: kept 1 s less than the server says, not at all for 1 s or less.
        const seconds = /(?:^|[,\s])timeout=(\d+)/i.exec(value)?.[1];
        if (seconds !== undefined) this.idleFor = Math.min(idleMs, Math.max(0, Number(seconds) * 1_000 - 1_000));
      }
    }
    this.status = code;
    this.statusText = status[3] ?? '';
    this.ok = code <= 299;
    this.headers = firstEnd === -1 ? noFields : new HeadHeaders(text.slice(firstEnd + 2));
    if (code === 204 || code === 304) this.phase = Phase.Done;
    else if (chunked) this.phase = Phase.ChunkSize;
    else if (size >= 0) {
      this.left = size;
      this.phase = size === 0 ? Phase.Done : Phase.Sized;
    } else this.phase = Phase.ToClose;
    this.reusable = !close && this.phase !== Phase.ToClose;
    if (coding !== undefined && this.phase !== Phase.Done) {
      this.decode = contentDecoders(coding, {
        chunk: (chunk) => {
          this.reader?.chunk(chunk);
        },
        end: () => {
          this.deliverEnd();
        },
        fail: (error) => {
          this.cut(error);
        },
      });
    }
    return true;
  }

  /** Body bytes, through the framing. */
  private bodyBytes(data: Buffer): void {
    let at = 0;
    while (at < data.length && this.phase !== Phase.Done && this.failure === undefined) {
      switch (this.phase) {
        case Phase.ToClose:
          this.emit(at === 0 ? data : data.subarray(at));
          at = data.length;
          break;
        case Phase.Sized:
        case Phase.ChunkData: {
          const n = Math.min(this.left, data.length - at);
          this.emit(at === 0 && n === data.length ? data : data.subarray(at, at + n));
          at += n;
          this.left -= n;
          if (this.left === 0) {
            if (this.phase === Phase.Sized) this.finish();
            else this.phase = Phase.ChunkDataEnd;
          }
          break;
        }
        case Phase.ChunkSize:
        case Phase.ChunkDataEnd:
        case Phase.Trailer: {
          const quick = this.quickLine(data, at);
          if (quick !== -1) {
            at = quick;
            break;
          }
          const nl = data.indexOf(0x0a, at);
          const part = data.subarray(at, nl === -1 ? data.length : nl + 1);
          const line = this.pending === undefined ? part : Buffer.concat([this.pending, part]);
          at += part.length;
          if (nl === -1) {
            if (line.length > maxSizeLine) this.cut(new Error('Invalid chunk size'));
            else this.pending = Buffer.from(line);
            break;
          }
          this.pending = undefined;
          this.line(line.toString('latin1', 0, line.length - (line[line.length - 2] === 0x0d ? 2 : 1)));
          break;
        }
        default:
          at = data.length;
      }
    }
    // Bytes after the body's end: no answer of ours, so the connection is not kept.
    if (this.phase === Phase.Done && at < data.length) this.close();
  }

  /**
   * The usual line of the chunked framing, read from the bytes when it is whole in `data` with
   * CRLF: a chunk's size ("1a2"), a chunk's end or the trailer's end (empty). The offset after
   * it, or -1: `line` reads anything else (extensions, a bare LF, a line split across reads).
   */
  private quickLine(data: Buffer, at: number): number {
    if (this.pending !== undefined) return -1;
    if (this.phase !== Phase.ChunkSize) {
      if (data[at] !== 0x0d || data[at + 1] !== 0x0a) return -1;
      if (this.phase === Phase.Trailer) this.finish();
      else this.phase = Phase.ChunkSize;
      return at + 2;
    }
    let size = 0;
    let i = at;
    for (; i < data.length && i - at < 12; i++) {
      const c = data[i] ?? 0;
      const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
      if (digit === -1) break;
      size = size * 16 + digit;
    }
    if (i === at || data[i] !== 0x0d || data[i + 1] !== 0x0a) return -1;
    this.left = size;
    this.phase = size === 0 ? Phase.Trailer : Phase.ChunkData;
    return i + 2;
  }

  /** A line of the chunked framing. */
  private line(text: string): void {
    if (this.phase === Phase.ChunkDataEnd) {
      if (text === '') this.phase = Phase.ChunkSize;
      else this.cut(new Error('Invalid chunk end'));
      return;
    }
    if (this.phase === Phase.Trailer) {
      if (text === '') this.finish();
      return;
    }
    const size = text.split(';', 1)[0]?.trim() ?? '';
    if (!/^[0-9a-fA-F]{1,12}$/.test(size)) {
      this.cut(new Error('Invalid chunk size'));
      return;
    }
    this.left = parseInt(size, 16);
    this.phase = this.left === 0 ? Phase.Trailer : Phase.ChunkData;
  }

  /** Body bytes to the decoder or the reader: a copy of lent bytes, unless the reader reads them in place (`transient`). */
  private emit(chunk: Buffer): void {
    if (this.decode !== undefined) this.decode(kept(chunk));
    else if (this.reader?.transient === true) this.reader.chunk(chunk);
    else this.reader?.chunk(kept(chunk));
  }

  /**
   * The body ended as framed: the connection is kept for the next request to this origin when
   * the answer allows (P4), closed otherwise.
   */
  private finish(): void {
    if (this.phase === Phase.Done && this.ended) return;
    this.phase = Phase.Done;
    this.settled();
    if (this.decode !== undefined) {
      const decode = this.decode;
      this.decode = undefined;
      decode(undefined);
    } else this.deliverEnd();
    // Deferred: bytes after the body's end, in the read that ended it, are seen first (bodyBytes).
    queueMicrotask(() => {
      this.release();
    });
  }

  /** The answer ended as framed: its connection is left idle for the next request, or closed. */
  private release(): void {
    if (this.released) return;
    if (!this.reusable || this.failure !== undefined || this.socket.destroyed) {
      this.close();
      return;
    }
    this.released = true;
    this.unlisten(this.socket);
    this.signal.offAbort(this.onAbort);
    keepIdle(this.origin, this.socket, this.idleFor);
  }

  private deliverEnd(): void {
    this.ended = true;
    if (this.settle !== undefined) return;
    const reader = this.reader;
    if (reader === undefined) return;
    this.reader = undefined;
    reader.end();
  }

  /** The connection failed, closed early or was aborted: the request fails, or the body does. */
  private cut(cause: unknown): void {
    if (this.ended || this.failure !== undefined) return;
    const retry = this.retry;
    this.retry = undefined;
    if (retry !== undefined && this.refuse !== undefined && !this.signal.aborted) {
      // N7: a kept connection the server had closed: the request goes once more, on a new one.
      // The origin's other idle connections have been idle longer: the server may have closed them too.
      this.unlisten(this.socket);
      this.socket.destroy();
      idleSockets.drop(this.origin);
      const { body } = retry;
      retry.resent?.(
        cause instanceof Error ? cause : new Error(String(cause)),
        typeof body === 'string' || body === undefined ? body : body.toString('utf8'),
      );
      this.socket = connect(retry.host, retry.port);
      this.listen(this.socket);
      this.send(retry.head, retry.body);
      return;
    }
    const refuse = this.refuse;
    if (refuse !== undefined) {
      this.settle = undefined;
      this.refuse = undefined;
      this.failure = cause;
      this.close();
      refuse(this.signal.aborted ? abortReason(this.signal) : new TypeError('fetch failed', { cause }));
      return;
    }
    this.failure = this.signal.aborted ? abortReason(this.signal) : terminated(cause);
    this.settled();
    this.close();
    const reader = this.reader;
    this.reader = undefined;
    reader?.fail(this.failure);
  }
}
