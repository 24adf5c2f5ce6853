/**
 * S1: the transport's event-stream parser (src/sse/parser.ts) against `eventsource-parser`, whose
 * parsing it reproduces: the same events, retries and comments for the same text, however the
 * text is cut into chunks.
 */
import { describe, expect, it } from 'vitest';
import { createParser } from 'eventsource-parser';
import { EventStreamParser } from '../../src/sse/parser.js';

type Heard = (string | number | { id: string | undefined; event: string | undefined; data: string })[];

function ours(chunks: readonly string[], resetAfter?: number): Heard {
  const heard: Heard = [];
  const parser = new EventStreamParser({
    onEvent: (event) => heard.push({ id: event.id, event: event.event, data: event.data }),
    onRetry: (ms) => heard.push(ms),
    onComment: (comment) => heard.push(`comment:${comment}`),
  });
  chunks.forEach((chunk, i) => {
    parser.feed(chunk);
    if (i === resetAfter) parser.reset();
  });
  return heard;
}

function theirs(chunks: readonly string[], resetAfter?: number): Heard {
  const heard: Heard = [];
  const parser = createParser({
    onEvent: (event) => heard.push({ id: event.id, event: event.event, data: event.data }),
    onRetry: (ms) => heard.push(ms),
    onComment: (comment) => heard.push(`comment:${comment}`),
  });
  chunks.forEach((chunk, i) => {
    parser.feed(chunk);
    if (i === resetAfter) parser.reset({ consume: false });
  });
  return heard;
}

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pieces = [
  'data: {"jsonrpc":"2.0","method":"x"}',
  'data:no space',
  'data',
  'data:',
  'data:  two spaces',
  'event: message',
  'event:',
  'event: other',
  'event:tight',
  'id:5',
  'retry:20',
  ':tight comment',
  'id: 7',
  'id:',
  'id: a\0b',
  'retry: 1500',
  'retry: 15x',
  'retry:',
  ': a comment',
  ':',
  'field without colon',
  'unknown: value',
  'DATA: upper',
  '',
  'ï»¿data: bom as text',
  '\uFEFFdata: a real BOM',
];
const ends = ['\n', '\r', '\r\n'];

describe('S1: the event-stream parser', () => {
  it('S1: parses as eventsource-parser does: 2,000 random streams, each cut into chunks at random places, some reset midway', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const next = random(seed);
      let text = '';
      const lines = 1 + Math.floor(next() * 14);
      for (let i = 0; i < lines; i++) {
        text += pieces[Math.floor(next() * pieces.length)] ?? '';
        text += ends[Math.floor(next() * ends.length)] ?? '\n';
      }
      const chunks: string[] = [];
      for (let at = 0; at < text.length;) {
        const size = 1 + Math.floor(next() * 12);
        chunks.push(text.slice(at, at + size));
        at += size;
      }
      const resetAfter = next() < 0.2 ? Math.floor(next() * chunks.length) : undefined;
      expect(ours(chunks, resetAfter), `seed ${seed}: ${JSON.stringify(chunks)}`).toEqual(theirs(chunks, resetAfter));
    }
  });

  it('S1: one data line and its blank line in one chunk is an event; multi-line data joins with LF; CR, LF and CRLF end lines', () => {
    const heard = ours(['data: a\n\ndata: b\r\ndata: c\r\rid: 1\nevent: e\ndata: d\n\n']);
    expect(heard).toEqual([
      { id: undefined, event: undefined, data: 'a' },
      { id: undefined, event: undefined, data: 'b\nc' },
      { id: '1', event: 'e', data: 'd' },
    ]);
  });
});
