import type { ChunkReader, MessageSink, StreamEnd } from '../../machines/types.js';
import type { ReadStreamInput, StreamReaderCommand, StreamReaderEvent } from '../../machines/post-stream.js';
import { clampRetry } from '../../machines/backoff.js';
import { cancelledRequestId } from '../../machines/connection/messages.js';
import { formatStack, MessageTooLargeError, ProtocolError, StreamIdleError, toError } from '../../machines/errors.js';
import { readChunks } from '../http/body.js';
import { EventStreamParser, type ParsedEvent, type ParserHandler } from './parser.js';
import { answersOneOf, cut, isJsonRpcMessage, isResponse, lastMessageProblem, messageTooDeep, nestsTooDeep } from '../schema.js';

export interface ReaderOptions extends ReadStreamInput {
  sink: MessageSink;
  /** S5: the largest single event, in bytes. */
  maxMessageBytes: number;
  /** L1: the legacy transport's `endpoint` event. */
  onEndpoint?: ((data: string) => void) | undefined;
}

/**
 * S5, P12: the error for an event past the limit, made where nothing of the refused event is in
 * scope; its stack is formatted at once, so no captured frame keeps the reader's buffers alive.
 */
function eventTooLarge(limit: number): MessageTooLargeError {
  const error = new MessageTooLargeError(`a server-sent event exceeded maxMessageBytes (${limit} bytes); stream ended`);
  formatStack(error);
  return error;
}

/** The decoder's options for a chunk, made once, not per chunk. */
const streaming: TextDecodeOptions = { stream: true };

/**
 * Issue 44: a chunk that ends a character (its last byte ASCII: an event stream's chunk ends with
 * a line end) after one that did, is decoded whole, without the stream's state: a `stream: true`
 * decode takes the converter's slow path (Node: ICU, 0.4-0.9 µs for a 100-byte event against
 * 0.1-0.4 whole; a decoder once used so never takes the fast one again). One for every stream: it
 * keeps nothing between calls. A byte order mark is kept (only the stream's first chunk may drop
 * one, and that one goes through the stream's own decoder).
 */
const wholeDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** How many delivered event ids a stream remembers to drop replays (R7); older ones are forgotten. */
const rememberedIds = 1024;

export interface StreamReader {
  /** Answers the chart's commands (R9's idle check). */
  command(command: StreamReaderCommand): void;
  /**
   * Done with the stream: cancels the body and releases the request; once the stream delivered
   * its response, the body first gets its grace to end by itself (P4).
   */
  stop(): void;
}

/**
 * P4: after its response, a stream gets this long and this many bytes to end by itself, so that
 * its keep-alive connection is reused (cutting a body before its end closes the connection: a
 * new one, and over https a TLS handshake, per call). A stream that does not end within it is
 * cut. Closing the transport cuts it at once (F2): it stays in the lifetime's requests until then.
 */
export const streamGrace = { ms: 1_000, bytes: 64 * 1024 };

/**
 * Reads one event-stream body. Every message goes straight to the sink (messages stay off the chart); the
 * chart hears once, at the end: the response that finished the stream, or how it ended.
 */
export function readEventStream(options: ReaderOptions, report: (event: StreamReaderEvent) => void): StreamReader {
  return new EventStreamReader(options, report);
}

/**
 * One object per stream, its own chunk reader, its parser's handler and the chart's
 * `StreamReader`: methods on the prototype, not closures over one context, which a held stream
 * kept (bench/README.md, "Code shapes").
 */
class EventStreamReader implements StreamReader, ChunkReader, ParserHandler {
  /** Made with the first chunk: a held stream that has received nothing keeps none. */
  private decoder: TextDecoder | undefined = undefined;
  /** The stream's decoder may hold part of a character (or has seen no chunk yet): the next chunk goes through it. */
  private midCharacter = true;
  private lastEventId: string | undefined;
  private progressed = false;
  private retryMs: number | undefined = undefined;
  /**
   * An upper bound of the size of the event being received (S5): reset when an event is
   * dispatched, grown by each chunk, less comment lines (dropped by the parser, costing no
   * memory). In characters, which for UTF-8 never exceed the bytes.
   */
  private pendingBytes = 0;
  /** Anything read since the chart's last idle check (R9). */
  private active = true;
  /** Set once: by the response, the end of the body, or stop. */
  private finished = false;
  /** The stream delivered its request's response (P4: its body may have its grace). */
  private answered = false;
  /** The body ended or failed: nothing is left to cancel. */
  private bodyDone = false;
  /** P4: the grace running after stop(): bytes still allowed, and its timer. */
  private grace: { bytes: number; timer: ReturnType<typeof setTimeout> } | undefined = undefined;
  private readonly parser: EventStreamParser;
  private readonly reading: { cancel(): void };

  constructor(
    private readonly options: ReaderOptions,
    private readonly report: (event: StreamReaderEvent) => void,
  ) {
    this.lastEventId = options.lastEventId;
    this.parser = new EventStreamParser(this);
    this.reading = readChunks(options.stream.body, this);
  }

  /** The parser's callbacks may have finished the stream (read through a method so TS does not narrow it). */
  private isFinished(): boolean {
    return this.finished;
  }

  /** Ends the grace: the body ended by itself (kept connection) or is cut; the request is released. */
  private endGrace(cut: boolean): void {
    const grace = this.grace;
    if (grace === undefined) return;
    clearTimeout(grace.timer);
    this.grace = undefined;
    if (cut) this.reading.cancel();
    this.options.stream.release();
  }

  private endOf(error: Error | undefined): StreamEnd {
    return { lastEventId: this.lastEventId, progressed: this.progressed, retryMs: this.retryMs, error };
  }

  private finish(event: StreamReaderEvent): void {
    if (this.finished) return;
    this.finished = true;
    // The SDK's Protocol runs notification handlers a microtask late but responses at once:
    // report one microtask later so the messages already delivered are handled first.
    const report = this.report;
    queueMicrotask(() => {
      report(event);
    });
  }

  /** ParserHandler: a `retry` field. */
  onRetry(ms: number): void {
    this.retryMs = clampRetry(ms);
  }

  /** ParserHandler: a comment line, which the parser drops (S5: it costs no memory). */
  onComment(comment: string): void {
    this.pendingBytes = Math.max(this.pendingBytes - comment.length - 2, 0);
  }

  /** ParserHandler: an event. */
  onEvent(event: ParsedEvent): void {
    this.pendingBytes = 0;
    if (this.finished) return;
    const { options } = this;
    const { requestIds, sink, seenIds } = options;
    if (event.id !== undefined && event.id !== '') {
      // R7: a replayed event already delivered on this stream is not delivered again.
      if (seenIds.has(event.id)) return;
      seenIds.add(event.id);
      if (seenIds.size > rememberedIds) seenIds.delete(seenIds.values().next().value as string);
      this.lastEventId = event.id;
      this.progressed = true;
      options.onEventId?.(event.id);
    }
    if (event.event === 'endpoint' && options.onEndpoint !== undefined) {
      options.onEndpoint(event.data);
      return;
    }
    // S2: priming events (empty data) and events of other names are not messages.
    if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return;
    let value: unknown;
    try {
      value = JSON.parse(event.data);
    } catch (error) {
      sink.warn(new ProtocolError(`invalid JSON in server-sent event: ${cut(event.data)}`, { cause: error }));
      return;
    }
    // S7: nested too deep for the Client's validation: never delivered; as this stream's response, it fails the call.
    if (nestsTooDeep(value, event.data.length)) {
      const error = messageTooDeep();
      sink.warn(error);
      if (answersOneOf(value, requestIds)) this.finish({ type: 'stream.ended', end: this.endOf(error) });
      return;
    }
    // Checked without a result object: nothing per event beyond the parser's and JSON.parse's.
    if (!isJsonRpcMessage(value)) {
      sink.warn(new ProtocolError(`invalid JSON-RPC message in server-sent event (${lastMessageProblem()}): ${cut(event.data)}`));
      return;
    }
    this.progressed = true;
    const message = value;
    if (requestIds.length > 0 && isResponse(message)) {
      const first = requestIds[0];
      if (options.replay && first !== undefined && message.id != null && !requestIds.includes(message.id)) {
        // R10: a resumed request's response carries the id of the request that began the stream.
        message.id = first;
      }
      if (message.id != null && requestIds.includes(message.id)) {
        // The response ends the stream; the chart delivers it after any decision it implies.
        this.answered = true;
        this.finish({ type: 'stream.response', response: message, end: this.endOf(undefined) });
        return;
      }
    }
    sink.deliver(message);
    // E13: the server ended this stream's request with notifications/cancelled (delivered first): the stream is over.
    if (requestIds.length > 0) {
      const cancelled = cancelledRequestId(message);
      if (cancelled !== undefined && requestIds.includes(cancelled))
        this.finish({ type: 'stream.ended', end: { ...this.endOf(undefined), cancelled: true } });
    }
  }

  /**
   * Counts a fed chunk towards the event in progress. Cheap on every chunk; only past the limit
   * is the chunk scanned for its last blank line (an event's end, dispatched or empty), so that
   * what came before it is not counted.
   */
  private tooLarge(text: string): boolean {
    const limit = this.options.maxMessageBytes;
    this.pendingBytes += text.length;
    if (this.pendingBytes <= limit) return false;
    const end = Math.max(text.lastIndexOf('\n\n'), text.lastIndexOf('\r\r'), text.lastIndexOf('\n\r\n'));
    if (end !== -1) this.pendingBytes = text.length - end;
    return this.pendingBytes > limit;
  }

  /** ChunkReader: each chunk is decoded to text (or only counted, in the grace) during `chunk()`; its bytes are not kept. */
  get transient(): true {
    return true;
  }

  /** ChunkReader: a chunk of the body. */
  chunk(value: Uint8Array): void {
    const grace = this.grace;
    if (grace !== undefined) {
      grace.bytes -= value.byteLength;
      if (grace.bytes < 0) this.endGrace(true);
      return;
    }
    if (this.finished) return;
    this.active = true;
    const text = this.decode(value);
    this.parser.feed(text);
    if (this.isFinished()) return;
    if (this.tooLarge(text)) {
      // The parser's partial event is dropped and the body cancelled: nothing refused is kept (P12).
      this.parser.reset();
      this.reading.cancel();
      const error = eventTooLarge(this.options.maxMessageBytes);
      this.options.sink.warn(error);
      this.finish({ type: 'stream.ended', end: this.endOf(error) });
    }
  }

  /** A chunk as text: whole when it ends a character and the one before did (`wholeDecoder`), else through the stream's decoder. */
  private decode(value: Uint8Array): string {
    const ends = value.byteLength === 0 || (value[value.byteLength - 1] ?? 0) < 0x80;
    if (ends && !this.midCharacter) return wholeDecoder.decode(value);
    this.midCharacter = !ends;
    return (this.decoder ??= new TextDecoder()).decode(value, streaming);
  }

  /** ChunkReader: the body ended. */
  end(): void {
    this.bodyDone = true;
    this.endGrace(false);
    if (this.finished) return;
    this.parser.feed(this.decoder === undefined ? '' : this.decoder.decode());
    this.finish({ type: 'stream.ended', end: this.endOf(undefined) });
  }

  /** ChunkReader: the body failed. */
  fail(error: unknown): void {
    this.bodyDone = true;
    this.endGrace(false);
    this.finish({ type: 'stream.ended', end: this.endOf(toError(error)) });
  }

  /** Answers the chart's commands (R9's idle check). */
  command(): void {
    if (this.finished) return;
    if (this.active) {
      this.active = false;
      return;
    }
    this.finish({
      type: 'stream.ended',
      end: this.endOf(new StreamIdleError('stream sent nothing within streamIdleTimeout; treating it as dropped')),
    });
    this.reading.cancel();
  }

  stop(): void {
    if (this.grace !== undefined) return;
    this.finished = true;
    if (this.answered && !this.bodyDone) {
      // P4: the rest of the body is read and dropped until its end, within the grace; then cut.
      const timer = setTimeout(() => {
        this.endGrace(true);
      }, streamGrace.ms);
      this.grace = { bytes: streamGrace.bytes, timer };
      const { body } = this.options.stream;
      if (!('getReader' in body)) body.draining?.();
      return;
    }
    this.reading.cancel();
    this.options.stream.release();
  }
}
