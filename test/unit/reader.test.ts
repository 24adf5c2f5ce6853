import { describe, expect, it, vi } from 'vitest';
import { readEventStream, streamGrace, type ReaderOptions } from '../../src/sse/reader.js';
import type { StreamReaderEvent } from '../../machines/post-stream.js';
import type { JSONRPCId, MessageSink, OpenStream } from '../../machines/types.js';
import { ProtocolError } from '../../machines/errors.js';
import { recordingSink } from './fakes.js';

/** A body that yields the given chunks (strings as UTF-8, or raw bytes), then ends. */
function body(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

interface ReadOptions {
  requestIds?: JSONRPCId[];
  seenIds?: Set<string>;
  replay?: boolean;
  maxMessageBytes?: number;
  onEventId?: (id: string) => void;
}

/** The reader's options for `stream`: no request ids, nothing seen, no replay and a 16 MiB limit, unless `options` say otherwise. */
function readerOptions(stream: OpenStream, sink: MessageSink, options: ReadOptions = {}): ReaderOptions {
  return {
    stream,
    requestIds: options.requestIds ?? [],
    lastEventId: undefined,
    seenIds: options.seenIds ?? new Set(),
    replay: options.replay ?? false,
    onEventId: options.onEventId,
    maxMessageBytes: options.maxMessageBytes ?? 16 * 1024 * 1024,
    sink,
  };
}

function read(chunks: (string | Uint8Array)[], options: ReadOptions = {}) {
  const sink = recordingSink();
  let released = false;
  const stream = {
    body: body(chunks),
    release: () => {
      released = true;
    },
  };
  return new Promise<{ event: StreamReaderEvent; sink: typeof sink; released: () => boolean }>((resolve) => {
    const reader = readEventStream(readerOptions(stream, sink, options), (event) => {
      reader.stop();
      resolve({ event, sink, released: () => released });
    });
  });
}

const note = (n: number) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });

describe('SSE reader', () => {
  it('S1: CR, LF and CRLF all end lines; data lines join with \\n; comments are ignored', async () => {
    const multi = '{"jsonrpc":"2.0",\ndata: "method":"a"}';
    const { sink, event } = await read([
      `: keepalive\r\ndata: ${note(1)}\r\n\r\n`,
      `data: ${note(2)}\r\rdata: ${note(3)}\n\n`,
      `data: ${multi}\n\n`,
    ]);
    expect(sink.delivered).toEqual([JSON.parse(note(1)), JSON.parse(note(2)), JSON.parse(note(3)), { jsonrpc: '2.0', method: 'a' }]);
    expect(event.type).toBe('stream.ended');
  });

  it('S2: a priming event is not delivered but its id counts; other event names are not delivered', async () => {
    const { sink, event } = await read([
      `id: p0\ndata:\n\n`,
      `event: ping\nid: x1\nretry: 300\ndata: ${note(9)}\n\n`,
      `data: ${note(1)}\n\n`,
    ]);
    expect(sink.delivered).toEqual([JSON.parse(note(1))]);
    expect(event).toMatchObject({ type: 'stream.ended', end: { lastEventId: 'x1', retryMs: 300, progressed: true } });
  });

  it('S3: retry sets the delay reported for the stream', async () => {
    const { event } = await read(['retry: 1234\n\n']);
    expect(event).toMatchObject({ end: { retryMs: 1234, progressed: false } });
  });

  it('S4: invalid JSON or a non-JSON-RPC value is reported, cut to 1 KB, and the stream continues', async () => {
    const long = 'x'.repeat(5_000);
    const { sink } = await read([`data: {not json ${long}\n\n`, `data: {"hello":1}\n\n`, `data: ${note(1)}\n\n`]);
    expect(sink.warnings).toHaveLength(2);
    expect(sink.warnings[0]).toBeInstanceOf(ProtocolError);
    expect(sink.warnings[0]!.message.length).toBeLessThan(1_200);
    expect(sink.delivered).toEqual([JSON.parse(note(1))]);
  });

  it("S1, S6: chunks that end a character are decoded whole, those that do not through the stream: split characters after whole chunks survive; the first chunk's byte order mark is dropped, one later in the stream kept", async () => {
    const encoder = new TextEncoder();
    const split = encoder.encode(`data: {"jsonrpc":"2.0","method":"m","params":{"s":"€x"}}\n\n`);
    const cut = split.indexOf(0xe2) + 2; // inside the euro sign
    const { sink } = await read([
      new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode(`data: ${note(1)}\n\n`)]),
      `data: ${note(2)}\n\n`,
      split.slice(0, cut),
      split.slice(cut),
      // A chunk that begins with U+FEFF, mid-stream: a character of the data, kept.
      `data: {"jsonrpc":"2.0","method":"m","params":{"s":"`,
      `\uFEFF"}}\n\n`,
      `data: ${note(3)}\n\n`,
    ]);
    expect(sink.delivered).toEqual([
      JSON.parse(note(1)),
      JSON.parse(note(2)),
      { jsonrpc: '2.0', method: 'm', params: { s: '€x' } },
      { jsonrpc: '2.0', method: 'm', params: { s: '\uFEFF' } },
      JSON.parse(note(3)),
    ]);
  });

  it('S6: a multi-byte character split between chunks survives', async () => {
    const bytes = new TextEncoder().encode(`data: {"jsonrpc":"2.0","method":"m","params":{"s":"€😀"}}\n\n`);
    const cut = bytes.indexOf(0xe2) + 1; // inside the euro sign
    const cut2 = bytes.indexOf(0xf0) + 2; // inside the emoji
    const { sink } = await read([bytes.slice(0, cut), bytes.slice(cut, cut2), bytes.slice(cut2)]);
    expect(sink.delivered).toEqual([{ jsonrpc: '2.0', method: 'm', params: { s: '€😀' } }]);
  });

  it('P3, P4: messages before the response are delivered in order; the response ends the stream and is reported', async () => {
    const response = { jsonrpc: '2.0', id: 5, result: {} };
    const { sink, event, released } = await read(
      [
        `id: 1\ndata: ${note(1)}\n\n`,
        `id: 2\ndata: {"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}\n\nid: 3\ndata: ${JSON.stringify(response)}\n\n`,
        `data: ${note(99)}\n\n`,
      ],
      { requestIds: [5] },
    );
    expect(sink.delivered).toEqual([JSON.parse(note(1)), { jsonrpc: '2.0', id: 'srv-1', method: 'roots/list' }]);
    expect(event).toEqual({
      type: 'stream.response',
      response,
      end: { lastEventId: '3', progressed: true, retryMs: undefined, error: undefined },
    });
    // P4: the rest of the body (one more event, then its end) is read within the grace: released at its end.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(released()).toBe(true);
  });

  describe('P4: the grace after the response', () => {
    const response = { jsonrpc: '2.0', id: 1, result: {} };
    /** A body whose end the test decides; it notes being cancelled. */
    function openBody() {
      const encoder = new TextEncoder();
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const state = { cancelled: false, released: false };
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          controller = c;
        },
        cancel() {
          state.cancelled = true;
        },
      });
      const stream = {
        body,
        release: () => {
          state.released = true;
        },
      };
      const reader = new Promise<{ stop(): void }>((resolve) => {
        const r = readEventStream(readerOptions(stream, recordingSink(), { requestIds: [1] }), () => {
          r.stop();
          resolve(r);
        });
      });
      controller.enqueue(encoder.encode(`data: ${JSON.stringify(response)}\n\n`));
      const push = (text: string) => {
        controller.enqueue(encoder.encode(text));
      };
      const end = () => {
        controller.close();
      };
      return { state, reader, push, end };
    }
    const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

    it('P4: a body that ends within the grace is read to its end, never cancelled (its connection is kept)', async () => {
      const body = openBody();
      await body.reader;
      expect(body.state.released).toBe(false);
      body.push(': trailing comment\n\n');
      body.end();
      await tick();
      expect(body.state).toEqual({ cancelled: false, released: true });
    });

    it('P4: a body that does not end within the grace (1 s) is cut then', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        const body = openBody();
        await body.reader;
        vi.advanceTimersByTime(streamGrace.ms - 1);
        await Promise.resolve();
        expect(body.state).toEqual({ cancelled: false, released: false });
        vi.advanceTimersByTime(1);
        await Promise.resolve();
        expect(body.state).toEqual({ cancelled: true, released: true });
      } finally {
        vi.useRealTimers();
      }
    });

    it('P4: a body that sends more than 64 KiB within the grace is cut at once', async () => {
      const body = openBody();
      await body.reader;
      body.push(`: ${'x'.repeat(streamGrace.bytes)}\n`);
      await tick();
      expect(body.state).toEqual({ cancelled: true, released: true });
    });

    it('P4: a stream stopped before its response is cut at once (no grace)', async () => {
      const state = { cancelled: false, released: false };
      const reader = readEventStream(
        readerOptions(
          {
            body: new ReadableStream<Uint8Array>({
              cancel() {
                state.cancelled = true;
              },
            }),
            release: () => {
              state.released = true;
            },
          },
          recordingSink(),
          { requestIds: [1] },
        ),
        () => undefined,
      );
      reader.stop();
      await tick();
      expect(state).toEqual({ cancelled: true, released: true });
    });
  });

  it('R1: a body that errors is reported as an end with its error, keeping the last event id', async () => {
    const sink = recordingSink();
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`id: 4\ndata: ${note(1)}\n\n`));
        setTimeout(() => {
          controller.error(new TypeError('terminated'));
        }, 5);
      },
    });
    const event = await new Promise<StreamReaderEvent>((resolve) => {
      readEventStream(
        readerOptions({ body: failing, release: () => undefined }, sink, { requestIds: [1], maxMessageBytes: 1024 }),
        resolve,
      );
    });
    expect(event).toMatchObject({ type: 'stream.ended', end: { lastEventId: '4', progressed: true } });
    expect(event.type === 'stream.ended' && event.end.error?.message).toBe('terminated');
  });

  it('R7: an event id already delivered on the stream is not delivered again when replayed', async () => {
    const seenIds = new Set<string>();
    const first = await read([`id: a\ndata: ${note(1)}\n\n`, `id: b\ndata: ${note(2)}\n\n`], { seenIds });
    // The resumed stream replays b (already delivered) and then c.
    const second = await read([`id: b\ndata: ${note(2)}\n\n`, `id: c\ndata: ${note(3)}\n\n`], { seenIds });
    expect([...first.sink.delivered, ...second.sink.delivered]).toEqual([JSON.parse(note(1)), JSON.parse(note(2)), JSON.parse(note(3))]);
  });

  it('R10: each new event id is reported as a resumption token; a replayed response takes the resumed request id', async () => {
    const tokens: string[] = [];
    const { event } = await read([`id: t1\ndata: ${note(1)}\n\n`, `id: t2\ndata: {"jsonrpc":"2.0","id":99,"result":{}}\n\n`], {
      requestIds: [5],
      replay: true,
      onEventId: (id) => tokens.push(id),
    });
    expect(tokens).toEqual(['t1', 't2']);
    expect(event).toMatchObject({ type: 'stream.response', response: { id: 5, result: {} } });
  });

  it('S5: an event larger than maxMessageBytes ends the stream with a clear error instead of growing memory', async () => {
    const big = `data: ${'x'.repeat(4_000)}`;
    const { event, sink } = await read([`data: ${note(1)}\n\n`, big, big, big, '\n\n'], { maxMessageBytes: 8_000 });
    expect(sink.delivered).toEqual([JSON.parse(note(1))]);
    expect(event.type === 'stream.ended' && event.end.error?.name).toBe('MessageTooLargeError');
    expect(sink.warnings.map((w) => w.name)).toEqual(['MessageTooLargeError']);
  });

  it('S8: one event of exactly maxMessageBytes, in 1 KiB chunks, is delivered whole; one byte more fails naming maxMessageBytes', async () => {
    const limit = 1024 * 1024;
    /** An event (`data: <message>\n\n`) of `size` bytes whose message is a JSON-RPC notification padded to fit. */
    const eventOf = (size: number) => {
      const frame = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { pad: '' } })}\n\n`;
      const message = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { pad: 'x'.repeat(size - frame.length) } });
      return `data: ${message}\n\n`;
    };
    const chunksOf = (text: string) =>
      Array.from({ length: Math.ceil(text.length / 1024) }, (_, i) => text.slice(i * 1024, (i + 1) * 1024));

    const fits = eventOf(limit);
    expect(fits.length).toBe(limit);
    const whole = await read(chunksOf(fits), { maxMessageBytes: limit });
    expect(whole.sink.delivered).toHaveLength(1);
    expect(whole.sink.delivered[0]).toEqual(JSON.parse(fits.slice('data: '.length)));
    expect(whole.event).toMatchObject({ type: 'stream.ended', end: { error: undefined } });

    // One byte more before the blank line that ends it (which comes in a chunk of its own).
    const over = eventOf(limit + 3);
    expect(over.slice(0, -2).length).toBe(limit + 1);
    const refused = await read([...chunksOf(over.slice(0, -2)), '\n\n'], { maxMessageBytes: limit });
    expect(refused.sink.delivered).toEqual([]);
    expect(refused.event.type === 'stream.ended' && refused.event.end.error?.message).toContain('maxMessageBytes');
  });

  it('X2: an endless run of comments and empty events costs no growth and delivers nothing', async () => {
    const chunks = Array.from({ length: 2_000 }, () => ': keepalive\n\ndata:\n\n');
    const { event, sink } = await read(chunks, { maxMessageBytes: 1_024 });
    expect(sink.delivered).toEqual([]);
    expect(event).toMatchObject({ type: 'stream.ended', end: { error: undefined } });
  });

  it('R9: asked twice with nothing read in between, the reader treats the stream as dropped', async () => {
    const sink = recordingSink();
    let released = false;
    const silent = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`id: 1\ndata: ${note(1)}\n\n`));
      },
    });
    const ended = new Promise<StreamReaderEvent>((resolve) => {
      const reader = readEventStream(
        readerOptions({ body: silent, release: () => (released = true) }, sink, { requestIds: [3], maxMessageBytes: 1024 }),
        resolve,
      );
      setTimeout(() => {
        reader.command({ type: 'idle.check' });
        reader.command({ type: 'idle.check' });
      }, 10);
    });
    const event = await ended;
    expect(event).toMatchObject({ type: 'stream.ended', end: { lastEventId: '1', progressed: true } });
    expect(event.type === 'stream.ended' && event.end.error?.name).toBe('StreamIdleError');
    expect(released).toBe(false);
  });

  it('S5, X2: comments between events do not count toward maxMessageBytes; a huge event among them still does', async () => {
    const keepalives = Array.from({ length: 500 }, () => ': keepalive\n');
    const quiet = await read([...keepalives, `data: ${note(1)}\n\n`, ...keepalives], { maxMessageBytes: 1_024 });
    expect(quiet.sink.delivered).toEqual([JSON.parse(note(1))]);
    expect(quiet.event).toMatchObject({ type: 'stream.ended', end: { error: undefined } });
    const loud = await read([': hi\n', `data: ${'y'.repeat(3_000)}`, ': hi\n'], { maxMessageBytes: 1_024 });
    expect(loud.event.type === 'stream.ended' && loud.event.end.error?.name).toBe('MessageTooLargeError');
  });
});
