/**
 * H11, P12: bodies are read in one place (src/http/body.ts), from fetch's web stream or from the
 * Node client's chunk source, with the same guarantees: chunks in order, then one end or one
 * failure, nothing after a cancel, and a reader that throws ends the read (the body is cancelled)
 * instead of throwing inside the HTTP client's own events.
 */
import { describe, expect, it } from 'vitest';
import type { ChunkReader, ChunkSource } from '../../machines/types.js';
import { readBounded, readChunks } from '../../src/http/body.js';

const bytes = (text: string) => new TextEncoder().encode(text);

/** A chunk source driven by hand, as the Node client's is by socket events. */
function manualSource() {
  const state: { reader: ChunkReader | undefined; cancelled: number } = { reader: undefined, cancelled: 0 };
  const source: ChunkSource = {
    read(reader) {
      state.reader = reader;
      return {
        cancel: () => {
          state.cancelled++;
        },
      };
    },
    discard: () => {
      state.cancelled++;
    },
  };
  return { source, state };
}

function webStream(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(bytes(chunk));
      controller.close();
    },
  });
}

function recorder() {
  const seen: string[] = [];
  const reader: ChunkReader = {
    chunk: (value) => seen.push(`chunk ${new TextDecoder().decode(value)}`),
    end: () => seen.push('end'),
    fail: (error) => seen.push(`fail ${error instanceof Error ? error.message : String(error)}`),
  };
  return { seen, reader };
}

describe('H11, P12: reading a body', () => {
  it('H11: a web stream and a chunk source give the same calls: chunks in order, then one end', async () => {
    const web = recorder();
    readChunks(webStream(['a', 'b']), web.reader);
    await new Promise((resolve) => setTimeout(resolve, 10));

    const { source, state } = manualSource();
    const manual = recorder();
    readChunks(source, manual.reader);
    state.reader?.chunk(bytes('a'));
    state.reader?.chunk(bytes('b'));
    state.reader?.end();
    state.reader?.end();
    state.reader?.fail(new Error('late'));

    expect(web.seen).toEqual(['chunk a', 'chunk b', 'end']);
    expect(manual.seen).toEqual(web.seen);
  });

  it('H11: after cancel() nothing more is reported, and the source is cancelled once', () => {
    const { source, state } = manualSource();
    const { seen, reader } = recorder();
    const reading = readChunks(source, reader);
    state.reader?.chunk(bytes('a'));
    reading.cancel();
    reading.cancel();
    state.reader?.chunk(bytes('b'));
    state.reader?.end();
    expect(seen).toEqual(['chunk a']);
    expect(state.cancelled).toBe(1);
  });

  it('H11: a reader that throws on a chunk ends the read with that error and cancels the body; the throw does not escape', () => {
    const { source, state } = manualSource();
    const seen: string[] = [];
    readChunks(source, {
      chunk: () => {
        throw new Error('handler broke');
      },
      end: () => seen.push('end'),
      fail: (error) => seen.push(`fail ${(error as Error).message}`),
    });
    expect(() => state.reader?.chunk(bytes('a'))).not.toThrow();
    state.reader?.chunk(bytes('b'));
    state.reader?.end();
    expect(seen).toEqual(['fail handler broke']);
    expect(state.cancelled).toBe(1);
  });

  it('P12: readBounded keeps a body within the limit, refuses a longer one (keeping nothing) or cuts it, and cancels it past the limit', async () => {
    await expect(readBounded({ body: webStream(['ab', 'cd']) }, 4, { overflow: 'refuse' })).resolves.toEqual({
      bytes: bytes('abcd'),
      exceeded: false,
    });
    const refused = manualSource();
    const refusing = readBounded({ body: null, chunks: refused.source }, 3, { overflow: 'refuse' });
    refused.state.reader?.chunk(bytes('ab'));
    refused.state.reader?.chunk(bytes('cd'));
    await expect(refusing).resolves.toEqual({ bytes: new Uint8Array(0), exceeded: true });
    expect(refused.state.cancelled).toBe(1);
    await expect(readBounded({ body: webStream(['ab', 'cd']) }, 3, { overflow: 'cut' })).resolves.toEqual({
      bytes: bytes('abc'),
      exceeded: true,
    });
  });

  it('P12: a body that stalls past timeoutMs gives what arrived and is cancelled; a broken body rejects with its error', async () => {
    const stalled = manualSource();
    const reading = readBounded({ body: null, chunks: stalled.source }, 100, { overflow: 'cut', timeoutMs: 20 });
    stalled.state.reader?.chunk(bytes('partial'));
    await expect(reading).resolves.toEqual({ bytes: bytes('partial'), exceeded: false });
    expect(stalled.state.cancelled).toBe(1);

    const broken = manualSource();
    const failing = readBounded({ body: null, chunks: broken.source }, 100, { overflow: 'cut' });
    broken.state.reader?.fail(new TypeError('terminated'));
    await expect(failing).rejects.toThrow('terminated');
  });
});
