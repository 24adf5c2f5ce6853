import { describe, expect, it } from 'vitest';
import { readEventStream } from '../../src/sse/reader.js';
import type { StreamReaderEvent } from '../../machines/post-stream.js';
import type { JSONRPCId } from '../../machines/events.js';
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

function read(chunks: (string | Uint8Array)[], requestIds: JSONRPCId[] = [], lastEventId?: string) {
  const sink = recordingSink();
  let released = false;
  return new Promise<{ event: StreamReaderEvent; sink: typeof sink; released: () => boolean }>((resolve) => {
    const stop = readEventStream(
      {
        stream: {
          body: body(chunks),
          release: () => {
            released = true;
          },
        },
        requestIds,
        lastEventId,
        sink,
      },
      (event) => {
        stop();
        resolve({ event, sink, released: () => released });
      },
    );
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
    expect(sink.delivered).toEqual([
      JSON.parse(note(1)),
      JSON.parse(note(2)),
      JSON.parse(note(3)),
      { jsonrpc: '2.0', method: 'a' },
    ]);
    expect(event.type).toBe('stream.ended');
  });

  it('S2: a priming event is not delivered but its id counts; other event names are not delivered', async () => {
    const { sink, event } = await read([`id: p0\ndata:\n\n`, `event: ping\nid: x1\nretry: 300\ndata: ${note(9)}\n\n`, `data: ${note(1)}\n\n`]);
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

  it('S6: a multi-byte character split between chunks survives', async () => {
    const bytes = new TextEncoder().encode(`data: {"jsonrpc":"2.0","method":"m","params":{"s":"€😀"}}\n\n`);
    const cut = bytes.indexOf(0xe2) + 1; // inside the euro sign
    const cut2 = bytes.indexOf(0xf0) + 2; // inside the emoji
    const { sink } = await read([bytes.slice(0, cut), bytes.slice(cut, cut2), bytes.slice(cut2)]);
    expect(sink.delivered).toEqual([{ jsonrpc: '2.0', method: 'm', params: { s: '€😀' } }]);
  });

  it('P3, P4: messages before the response are delivered in order; the response ends the stream and is reported', async () => {
    const response = { jsonrpc: '2.0', id: 5, result: {} };
    const { sink, event, released } = await read([
      `id: 1\ndata: ${note(1)}\n\n`,
      `id: 2\ndata: {"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}\n\nid: 3\ndata: ${JSON.stringify(response)}\n\n`,
      `data: ${note(99)}\n\n`,
    ], [5]);
    expect(sink.delivered).toEqual([JSON.parse(note(1)), { jsonrpc: '2.0', id: 'srv-1', method: 'roots/list' }]);
    expect(event).toEqual({ type: 'stream.response', response, end: { lastEventId: '3', progressed: true, retryMs: undefined, error: undefined } });
    expect(released()).toBe(true);
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
      readEventStream({ stream: { body: failing, release: () => undefined }, requestIds: [1], lastEventId: undefined, sink }, resolve);
    });
    expect(event).toMatchObject({ type: 'stream.ended', end: { lastEventId: '4', progressed: true } });
    expect(event.type === 'stream.ended' && event.end.error?.message).toBe('terminated');
  });
});
