/**
 * H11: the transport's small HTTP/1.1 client (src/http/h1.ts), against a raw TCP server on
 * 127.0.0.1 that reads the requests' bytes and writes the answer's bytes as given, in pieces: the framings (chunked
 * with every line split, Content-Length, close-delimited), an interim 1xx answer, a compressed
 * body, a cut body, a bad head, an abort. What the transport does with the answer (statuses,
 * cookies, session headers) is the exchanges', proven by the integration tests of the GET stream.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChunkSource } from '../../machines/types.js';
import { RequestControl, type HttpResponse } from '../../src/http/client.js';
import { h1Request, requestHead, idleSocketCount, type RequestHead } from '../../src/http/h1.js';
import { drains } from '../../src/http/node-response.js';
import { until } from '../support/harness.js';

let server: Server | undefined;
/** The server's side of every connection: closed with it (a connection the client keeps idle would hold close() up). */
let sockets: Socket[] = [];

afterEach(async () => {
  const s = server;
  server = undefined;
  for (const socket of sockets) socket.destroy();
  sockets = [];
  if (s !== undefined) await new Promise((resolve) => s.close(resolve));
});

/**
 * A server that answers each request with `write` once its head arrived (`nth`: the request's
 * number on its connection, from 1); the heads it read, and how many connections it accepted.
 */
async function answering(
  write: (socket: Socket, nth: number) => void,
): Promise<{ port: number; heads: string[]; connections: () => number }> {
  const heads: string[] = [];
  server = createServer((socket) => {
    sockets.push(socket);
    let head = '';
    let nth = 0;
    socket.on('data', (data) => {
      head += data.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end !== -1) {
        heads.push(head.slice(0, end + 4));
        head = head.slice(end + 4);
        write(socket, ++nth);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, heads, connections: () => sockets.length };
}

/** Writes `parts` one by one, a few ms apart, so each is a read of its own. */
function inPieces(socket: Socket, parts: (string | Buffer)[], then?: 'end' | 'destroy'): void {
  let i = 0;
  const next = () => {
    if (socket.destroyed) return;
    if (i < parts.length) {
      socket.write(parts[i++] as string);
      setTimeout(next, 2);
    } else if (then === 'end') socket.end();
    else if (then === 'destroy') socket.destroy();
  };
  next();
}

/** The body read through the chunk source: its text, or what failed it. */
function bodyOf(response: HttpResponse): Promise<{ text: string; error?: unknown }> {
  const chunks = response.chunks as ChunkSource;
  const parts: Buffer[] = [];
  return new Promise((resolve) => {
    chunks.read({
      chunk: (bytes) => parts.push(Buffer.from(bytes)),
      end: () => {
        resolve({ text: Buffer.concat(parts).toString('utf8') });
      },
      fail: (error) => {
        resolve({ text: Buffer.concat(parts).toString('utf8'), error });
      },
    });
  });
}

const head = requestHead('GET', '/mcp', ['Host', 'x', 'accept', 'text/event-stream']) as RequestHead;

/** A GET of `head` to the server on `port`. */
function get(port: number, control: RequestControl): Promise<HttpResponse> {
  return h1Request('127.0.0.1', port, head, undefined, control, control.resent);
}

describe('H11: the HTTP/1.1 client reads an answer as fetch would', () => {
  it('H11: a chunked body with every line and CRLF split across reads arrives whole; status, text and repeated fields as fetch gives them', async () => {
    const { port, heads } = await answering((socket) => {
      inPieces(socket, [
        'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Two: 1\r\nx-two:  2 \r\nTransfer-Encoding: chunked\r\n\r\n',
        'd',
        ';ext=1\r',
        '\ndata: hello',
        '\n\n\r',
        '\n',
        '5\r\n',
        'ab',
        'cde\r\n0\r\n',
        'Trailer: x\r\n',
        '\r\n',
      ]);
    });
    const response = await get(port, new RequestControl());
    expect(heads[0]).toBe('GET /mcp HTTP/1.1\r\nHost: x\r\naccept: text/event-stream\r\n\r\n');
    expect([response.status, response.statusText, response.ok]).toEqual([200, 'OK', true]);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-two')).toBe('1, 2');
    expect(response.headers.getSetCookie?.()).toEqual(['a=1', 'b=2']);
    expect(await bodyOf(response)).toEqual({ text: 'data: hello\n\nabcde' });
  });

  it('H11: chunk sizes in either case of hex, with an extension or a bare LF, whole in one read, frame the body; a size of 13 digits or a chunk without its CRLF fails it', async () => {
    const body = 'A\r\n0123456789\r\nb;x=1\r\nhello world\r\n1F\n' + 'x'.repeat(31) + '\r\n1f\r\n' + 'y'.repeat(31) + '\r\n0\r\n\r\n';
    const answers = [body, '1000000000000\r\nab\r\n0\r\n\r\n', '2\r\nabX\r\n0\r\n\r\n'];
    let answered = 0;
    const { port } = await answering((socket) => {
      socket.end(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${answers[answered++] ?? ''}`);
    });
    expect(await bodyOf(await get(port, new RequestControl()))).toEqual({
      text: `0123456789hello world${'x'.repeat(31)}${'y'.repeat(31)}`,
    });
    const tooLong = await bodyOf(await get(port, new RequestControl()));
    expect([tooLong.text, (tooLong.error as Error).message]).toEqual(['', 'terminated']);
    expect(((tooLong.error as Error).cause as Error).message).toBe('Invalid chunk size');
    const noEnd = await bodyOf(await get(port, new RequestControl()));
    expect([noEnd.text, ((noEnd.error as Error).cause as Error).message]).toEqual(['ab', 'Invalid chunk end']);
  });

  it('H11: a Content-Length body ends at its length though the connection stays open', async () => {
    const { port } = await answering((socket) => {
      inPieces(socket, ['HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot', ' found', 'EXTRA']);
    });
    const response = await get(port, new RequestControl());
    expect([response.status, response.ok]).toEqual([404, false]);
    expect(await response.text()).toBe('not found');
  });

  it('H11: a body that came whole with its head is delivered after read() returns, never from inside it; its fields stay readable after the body', async () => {
    // As node:http's answer: a reader (readBounded's error body) arms its timer and keeps the
    // handle read() returns before the first chunk or the end can reach it.
    const { port } = await answering((socket) => {
      socket.write('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer error="invalid_token"\r\nContent-Length: 4\r\n\r\nnope');
    });
    const response = await get(port, new RequestControl());
    await new Promise((resolve) => setTimeout(resolve, 20));
    const seen: string[] = [];
    let returned = false;
    const ended = new Promise<void>((resolve, reject) => {
      (response.chunks as ChunkSource).read({
        chunk: () => seen.push(returned ? 'chunk after' : 'chunk inside'),
        end: () => {
          seen.push(returned ? 'end after' : 'end inside');
          resolve();
        },
        fail: reject,
      });
      returned = true;
    });
    await ended;
    expect(seen).toEqual(['chunk after', 'end after']);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('H11: once the exchange read its fields (fieldsRead, a held event stream), they are let go: a later read throws, never answers as absent; the body reads on', async () => {
    const { port } = await answering((socket) => {
      inPieces(socket, [
        'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: s1\r\nTransfer-Encoding: chunked\r\n\r\n',
        '7\r\ndata: 1\r\n',
        '0\r\n\r\n',
      ]);
    });
    const response = await get(port, new RequestControl());
    expect(response.headers.get('mcp-session-id')).toBe('s1');
    response.fieldsRead?.();
    expect(() => response.headers.get('mcp-session-id')).toThrow(/let go once read; 'mcp-session-id'/);
    expect(() => response.headers.getSetCookie?.()).toThrow(/let go once read/);
    expect(await bodyOf(response)).toEqual({ text: 'data: 1' });
  });

  it('H11: a body with neither length nor chunks ends when the server closes; an interim 103 before it is skipped', async () => {
    const { port } = await answering((socket) => {
      inPieces(socket, ['HTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\n', '\r\nevent: a\n', 'data: 1\n\n'], 'end');
    });
    const response = await get(port, new RequestControl());
    expect(response.status).toBe(200);
    expect(response.headers.get('link')).toBeNull();
    expect(await bodyOf(response)).toEqual({ text: 'event: a\ndata: 1\n\n' });
  });

  it('H11: a gzip body is decoded, as fetch decodes it', async () => {
    const zipped = gzipSync(Buffer.from('data: {"x":1}\n\n'));
    const { port } = await answering((socket) => {
      inPieces(socket, [
        `HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${zipped.length}\r\n\r\n`,
        zipped.subarray(0, 5),
        zipped.subarray(5),
      ]);
    });
    const response = await get(port, new RequestControl());
    expect(await bodyOf(response)).toEqual({ text: 'data: {"x":1}\n\n' });
  });

  it("H11: a chunked body cut before its last chunk fails with fetch's TypeError('terminated'), after what arrived", async () => {
    const { port } = await answering((socket) => {
      inPieces(socket, ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', '3\r\nabc\r\n', '5\r\nab'], 'destroy');
    });
    const response = await get(port, new RequestControl());
    const { text, error } = await bodyOf(response);
    expect(text).toBe('abcab');
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('terminated');
  });

  it("H11: a head that is not HTTP fails the request with fetch's TypeError('fetch failed')", async () => {
    const { port } = await answering((socket) => {
      socket.end('SSH-2.0-OpenSSH\r\n\r\n');
    });
    const failed = await get(port, new RequestControl()).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TypeError);
    expect((failed as Error).message).toBe('fetch failed');
  });

  it.each([
    ['a field with no colon', 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\nno-colon\r\n\r\n'],
    ['a name that is no token', 'HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 0\r\n\r\n'],
    ['an empty name', 'HTTP/1.1 200 OK\r\n: x\r\nContent-Length: 0\r\n\r\n'],
    ['two Content-Lengths that differ', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\ncontent-length: 2\r\n\r\nab'],
  ])("H11: a head with %s fails the request with fetch's TypeError('fetch failed')", async (_label, answer) => {
    const { port } = await answering((socket) => {
      socket.end(answer);
    });
    const failed = await get(port, new RequestControl()).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TypeError);
    expect((failed as Error).message).toBe('fetch failed');
  });

  it('H11: fields are read by name in any case, a name that only starts like the one asked for is not it, and a colon in a value stays in it', async () => {
    const { port } = await answering((socket) => {
      socket.write(
        'HTTP/1.1 200 OK\r\nContent-Typed: no\r\nCONTENT-TYPE: text/plain\r\nLocation: http://h:1/a\r\nContent-Length: 2\r\n\r\nok',
      );
    });
    const response = await get(port, new RequestControl());
    expect(response.headers.get('content-type')).toBe('text/plain');
    expect(response.headers.get('Location')).toBe('http://h:1/a');
    expect(response.headers.get('content')).toBeNull();
    expect(await response.text()).toBe('ok');
  });

  it("H11: aborted before the answer, the request fails with the abort's reason; aborted while reading, the body does", async () => {
    const { port } = await answering((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n');
    });
    const early = new RequestControl();
    const pending = get(port, early);
    const reason = new Error('stop');
    early.abort(reason);
    expect(await pending.catch((error: unknown) => error)).toBe(reason);

    const late = new RequestControl();
    const response = await get(port, late);
    const reading = bodyOf(response);
    await new Promise((resolve) => setTimeout(resolve, 20));
    late.abort(reason);
    expect(await reading).toEqual({ text: 'abc', error: reason });
  });

  it('H11: a header Node would refuse (CR or LF in a value, a name that is no token) is not written: the request goes to node:http', () => {
    expect(requestHead('GET', '/', ['Host', 'x', 'x-a', 'v\r\nInjected: 1'])).toBeUndefined();
    expect(requestHead('GET', '/', ['Host', 'x', 'bad name', 'v'])).toBeUndefined();
  });
});

describe('H11: every connection reads into one buffer; bytes kept past their read are copies', () => {
  /** Lets the client's event loop read what was just written (the server is in this process). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 15));

  it("H11: a head split across reads, body bytes that came with the head, chunks text() keeps and a gzip body's bytes are as sent, though another connection reads into the same buffer between their reads", async () => {
    const served: Socket[] = [];
    const { port } = await answering((socket) => {
      if (!served.includes(socket)) served.push(socket);
    });
    // Connection 1: a held chunked stream. Each of its reads lands in the buffer the other reads used.
    const noisy = get(port, new RequestControl());
    await until(() => served.length === 1, 'the held stream asked for');
    served[0]?.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    let heard: (() => void) | undefined;
    let noiseBytes = 0;
    ((await noisy).chunks as ChunkSource).read({
      transient: true,
      chunk: (bytes) => {
        noiseBytes += bytes.length;
        heard?.();
      },
      end: () => undefined,
      fail: () => undefined,
    });
    const noise = () =>
      new Promise<void>((resolve) => {
        heard = resolve;
        served[0]?.write(`800\r\n${'Z'.repeat(0x800)}\r\n`);
      });
    // Connection 2, one request after another (connection 1 stays busy), each once the one before left it idle.
    const next = async (pieces: (string | Buffer)[]) => {
      const answer = get(port, new RequestControl());
      await until(() => served.length === 2, 'a request on connection 2');
      const socket = served[1] as Socket;
      for (const piece of pieces) {
        socket.write(piece);
        await settle();
        await noise();
      }
      return answer;
    };
    // A head in two reads: its first part waits for the rest.
    const split = await next(['HTTP/1.1 200 OK\r\nContent-Ty', 'pe: text/plain\r\nContent-Length: 5\r\n\r\nhello']);
    expect([split.status, split.headers.get('content-type'), await split.text()]).toEqual([200, 'text/plain', 'hello']);
    // Body bytes read with the head wait for read().
    await settle();
    const early = get(port, new RequestControl());
    await settle();
    served[1]?.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello');
    const earlyAnswer = await early;
    await noise();
    const earlyText = earlyAnswer.text();
    await settle();
    served[1]?.write('world');
    expect(await earlyText).toBe('helloworld');
    // Chunks text() keeps until the end.
    await settle();
    const kept = get(port, new RequestControl());
    await settle();
    served[1]?.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    const keptText = (await kept).text();
    for (const piece of ['5\r\nhello\r\n', '6\r\n world\r\n']) {
      await settle();
      served[1]?.write(piece);
      await settle();
      await noise();
    }
    served[1]?.write('0\r\n\r\n');
    expect(await keptText).toBe('hello world');
    // A gzip body: its bytes go to the decoder, which inflates them off the main thread, after
    // the read. A large first part keeps it busy while the next read (the other connection's)
    // lands in the same buffer.
    const plain = randomBytes(150_000).toString('base64');
    const packed = gzipSync(Buffer.from(plain), { level: 1 });
    await settle();
    const gzipped = get(port, new RequestControl());
    await settle();
    served[1]?.write(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${packed.length}\r\n\r\n`);
    const gzText = (await gzipped).text();
    const first = 60_000;
    await settle();
    served[1]?.write(packed.subarray(0, first));
    served[0]?.write(`800\r\n${'Z'.repeat(0x800)}\r\n`);
    await settle();
    served[1]?.write(packed.subarray(first));
    expect(await gzText).toBe(plain);
    expect(served.length).toBe(2);
    expect(noiseBytes).toBe(6 * 0x800);
  });
});

describe('P4: a held GET whose answer ended as framed leaves its connection for the next', () => {
  const notFound = 'HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found';
  /** The GET's answer read to its end, then the turn in which its connection is kept. */
  async function getText(port: number): Promise<string> {
    const response = await get(port, new RequestControl());
    const text = await response.text();
    await new Promise((resolve) => setImmediate(resolve));
    return text;
  }

  it('P4: three GETs one after another, each answered with a Content-Length or chunked body, go over one connection', async () => {
    const { port, heads, connections } = await answering((socket, nth) => {
      socket.write(nth === 2 ? 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n' : notFound);
    });
    expect(await getText(port)).toBe('not found');
    expect(idleSocketCount('127.0.0.1', port)).toBe(1);
    expect(await getText(port)).toBe('ok');
    expect(await getText(port)).toBe('not found');
    expect(heads).toHaveLength(3);
    expect(connections()).toBe(1);
    expect(idleSocketCount('127.0.0.1', port)).toBe(1);
  });

  it('P4: a kept connection the server closes under the next GET (no byte of an answer) is replaced once: the GET goes again on a new connection and is answered', async () => {
    const { port, heads, connections } = await answering((socket, nth) => {
      if (nth === 1) socket.write(notFound);
      else socket.destroy();
    });
    expect(await getText(port)).toBe('not found');
    const response = await get(port, new RequestControl());
    expect([response.status, await response.text()]).toEqual([404, 'not found']);
    expect(heads).toHaveLength(3);
    expect(connections()).toBe(2);
  });

  it('P4: a new connection that fails before an answer is not tried again: the GET fails as fetch does', async () => {
    const { port, heads } = await answering((socket) => {
      socket.destroy();
    });
    const failed = await get(port, new RequestControl()).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(TypeError);
    expect((failed as Error).message).toBe('fetch failed');
    expect(heads).toHaveLength(1);
  });

  it.each([
    ['Connection: close', 'HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno'],
    ['HTTP/1.0', 'HTTP/1.0 404 Not Found\r\nContent-Length: 2\r\n\r\nno'],
    ['bytes after the body', 'HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nnoEXTRA'],
    ['bytes after a 204', 'HTTP/1.1 204 No Content\r\n\r\nEXTRA'],
  ])('P4: an answer with %s does not leave its connection: the next GET opens a new one', async (_label, answer) => {
    const { port, connections } = await answering((socket) => {
      socket.write(answer);
    });
    const body = answer.startsWith('HTTP/1.1 204') ? '' : 'no';
    expect(await getText(port)).toBe(body);
    expect(idleSocketCount('127.0.0.1', port)).toBe(0);
    expect(await getText(port)).toBe(body);
    expect(connections()).toBe(2);
  });

  it('P4: a kept connection the server closes while idle is dropped from the kept ones', async () => {
    const { port } = await answering((socket) => {
      socket.write(notFound);
      setTimeout(() => socket.end(), 5);
    });
    expect(await getText(port)).toBe('not found');
    expect(idleSocketCount('127.0.0.1', port)).toBe(1);
    await until(() => idleSocketCount('127.0.0.1', port) === 0, 'the closed connection dropped');
  });

  it('P4: a body not read to its end (cancelled) closes the connection: nothing is kept', async () => {
    const { port, connections } = await answering((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n');
    });
    const response = await get(port, new RequestControl());
    const handle = (response.chunks as ChunkSource).read({ chunk: () => undefined, end: () => undefined, fail: () => undefined });
    handle.cancel();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(idleSocketCount('127.0.0.1', port)).toBe(0);
    expect(connections()).toBe(1);
  });
});

/**
 * A server that reads whole requests (a head, then `Content-Length` bytes of body) and answers
 * each with `write` (`nth`: the request's number on its connection, from 1); the requests' bytes
 * as received, and how many connections it accepted.
 */
async function receiving(
  write: (socket: Socket, nth: number, body: Buffer) => void,
): Promise<{ port: number; requests: Buffer[]; connections: () => number }> {
  const requests: Buffer[] = [];
  server = createServer((socket) => {
    sockets.push(socket);
    let buffered = Buffer.alloc(0);
    let nth = 0;
    socket.on('data', (data) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.toString('latin1', 0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        requests.push(buffered.subarray(0, end + 4 + length));
        const body = buffered.subarray(end + 4, end + 4 + length);
        buffered = buffered.subarray(end + 4 + length);
        write(socket, ++nth, body);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, requests, connections: () => sockets.length };
}

/** A POST of `body` (a string, or a Buffer as node.ts sends a large one) with its Content-Length. */
function post(port: number, body: string | Buffer, control = new RequestControl()): Promise<HttpResponse> {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const head = requestHead('POST', '/mcp', [
    'Host',
    'x',
    'content-type',
    'application/json',
    'content-length',
    String(length),
  ]) as RequestHead;
  return h1Request('127.0.0.1', port, head, body, control, control.resent);
}

const json = (text: string) =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;

describe('H11: a request with a body', () => {
  it('H11: a POST goes out as its head, then its body in UTF-8 to its Content-Length; its answer is read; the next POST takes the same connection', async () => {
    const { port, requests, connections } = await receiving((socket, _nth, body) => {
      socket.write(json(`{"got":${body.length}}`));
    });
    const body = '{"text":"café ✓"}';
    const first = await post(port, body);
    expect(await first.text()).toBe(`{"got":${Buffer.byteLength(body)}}`);
    expect(requests[0]?.toString('utf8')).toBe(
      `POST /mcp HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await new Promise((resolve) => setImmediate(resolve));
    const large = Buffer.alloc(200_000, 'a');
    expect(await (await post(port, large)).text()).toBe('{"got":200000}');
    expect(requests[1]?.subarray(-large.length).equals(large)).toBe(true);
    expect(connections()).toBe(1);
  });

  it('H11: a header value beyond ASCII, a method or path that is no token, is not written here: the request goes to node:http', () => {
    expect(requestHead('POST', '/', ['Host', 'x', 'x-name', 'café'])).toBeUndefined();
    expect(requestHead('PO ST', '/', ['Host', 'x'])).toBeUndefined();
    expect(requestHead('GET', '/a b', ['Host', 'x'])).toBeUndefined();
    expect(requestHead('GET', '/a?b=1', ['Host', 'x', 'x-tab', 'a\tb'])).toBe('GET /a?b=1 HTTP/1.1\r\nHost: x\r\nx-tab: a\tb\r\n\r\n');
  });

  it('P4: an answer nobody reads that came in full is read to its end (discard): its connection is kept; one still coming is cut', async () => {
    const { port, connections } = await receiving((socket, nth) => {
      socket.write(nth === 1 ? json('{"unread":true}') : 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    });
    ((await post(port, '{}')).chunks as ChunkSource).discard();
    await until(() => idleSocketCount('127.0.0.1', port) === 1, 'the connection kept');
    ((await post(port, '{}')).chunks as ChunkSource).discard();
    await until(() => idleSocketCount('127.0.0.1', port) === 0, 'the connection taken, and cut');
    expect(connections()).toBe(1);
  });

  it('N7: a POST that meets a kept connection the server had closed goes again once on a new one, with its body; resent hears the cause and the body', async () => {
    const { port, requests, connections } = await receiving((socket, nth) => {
      if (sockets.length === 1 && nth === 2) socket.destroy();
      else socket.write(json('{"ok":true}'));
    });
    await (await post(port, '{"n":1}')).text();
    await new Promise((resolve) => setImmediate(resolve));
    const control = new RequestControl();
    const told: [string, string | undefined][] = [];
    control.resent = (cause, body) => told.push([cause.message, body]);
    expect(await (await post(port, '{"n":2}', control)).text()).toBe('{"ok":true}');
    expect(told).toEqual([['socket hang up', '{"n":2}']]);
    expect(requests.map((request) => request.toString('utf8').split('\r\n\r\n')[1])).toEqual(['{"n":1}', '{"n":2}', '{"n":2}']);
    expect(connections()).toBe(2);
  });

  it('P4: a body in its grace (draining) is counted in drains until it ends; its connection is then kept', async () => {
    const { port } = await receiving((socket) => {
      inPieces(socket, [
        'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n',
        '6\r\ndata:\n\r\n',
        '0\r\n\r\n',
      ]);
    });
    const response = await post(port, '{}');
    const before = drains.count;
    const reading = bodyOf(response);
    (response.chunks as ChunkSource).draining?.();
    expect(drains.count).toBe(before + 1);
    expect(await reading).toEqual({ text: 'data:\n' });
    expect(drains.count).toBe(before);
    await until(() => idleSocketCount('127.0.0.1', port) === 1, 'the connection kept');
  });
});
