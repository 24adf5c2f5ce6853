import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { MessageSink, StreamEnd } from '../../machines/types.js';
import type { ReadStreamInput, StreamReaderCommand, StreamReaderEvent } from '../../machines/post-stream.js';
import { clampRetry } from '../../machines/backoff.js';
import { cancelledRequestId } from '../../machines/connection/messages.js';
import { formatStack, MessageTooLargeError, ProtocolError, StreamIdleError, toError } from '../../machines/errors.js';
import { readChunks } from '../http/body.js';
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
  const { stream, requestIds, sink, seenIds, maxMessageBytes } = options;
  const decoder = new TextDecoder();
  let lastEventId = options.lastEventId;
  let progressed = false;
  let retryMs: number | undefined;
  /**
   * An upper bound of the size of the event being received (S5): reset when an event is
   * dispatched, grown by each chunk, less comment lines (dropped by the parser, costing no
   * memory). In characters, which for UTF-8 never exceed the bytes.
   */
  let pendingBytes = 0;
  /** Anything read since the chart's last idle check (R9). */
  let active = true;
  /** Set once: by the response, the end of the body, or stop (read through a function so TS does not narrow it). */
  let finished = false;
  const isFinished = () => finished;
  /** The stream delivered its request's response (P4: its body may have its grace). */
  let answered = false;
  /** The body ended or failed: nothing is left to cancel. */
  let bodyDone = false;
  /** P4: the grace running after stop(): bytes still allowed, and its timer. */
  let grace: { bytes: number; timer: ReturnType<typeof setTimeout> } | undefined;
  /** Ends the grace: the body ended by itself (kept connection) or is cut; the request is released. */
  const endGrace = (cut: boolean) => {
    if (grace === undefined) return;
    clearTimeout(grace.timer);
    grace = undefined;
    if (cut) reading.cancel();
    stream.release();
  };

  const end = (error: Error | undefined): StreamEnd => ({ lastEventId, progressed, retryMs, error });
  const finish = (event: StreamReaderEvent) => {
    if (finished) return;
    finished = true;
    // The SDK's Protocol runs notification handlers a microtask late but responses at once:
    // report one microtask later so the messages already delivered are handled first.
    queueMicrotask(() => {
      report(event);
    });
  };

  const parser = createParser({
    onEvent(event: EventSourceMessage) {
      pendingBytes = 0;
      if (finished) return;
      if (event.id !== undefined && event.id !== '') {
        // R7: a replayed event already delivered on this stream is not delivered again.
        if (seenIds.has(event.id)) return;
        seenIds.add(event.id);
        if (seenIds.size > rememberedIds) seenIds.delete(seenIds.values().next().value as string);
        lastEventId = event.id;
        progressed = true;
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
        if (answersOneOf(value, requestIds)) finish({ type: 'stream.ended', end: end(error) });
        return;
      }
      // Checked without a result object: nothing per event beyond the parser's and JSON.parse's.
      if (!isJsonRpcMessage(value)) {
        sink.warn(new ProtocolError(`invalid JSON-RPC message in server-sent event (${lastMessageProblem()}): ${cut(event.data)}`));
        return;
      }
      progressed = true;
      const message = value;
      if (requestIds.length > 0 && isResponse(message)) {
        const first = requestIds[0];
        if (options.replay && first !== undefined && message.id != null && !requestIds.includes(message.id)) {
          // R10: a resumed request's response carries the id of the request that began the stream.
          message.id = first;
        }
        if (message.id != null && requestIds.includes(message.id)) {
          // The response ends the stream; the chart delivers it after any decision it implies.
          answered = true;
          finish({ type: 'stream.response', response: message, end: end(undefined) });
          return;
        }
      }
      sink.deliver(message);
      // E13: the server ended this stream's request with notifications/cancelled (delivered first): the stream is over.
      if (requestIds.length > 0) {
        const cancelled = cancelledRequestId(message);
        if (cancelled !== undefined && requestIds.includes(cancelled))
          finish({ type: 'stream.ended', end: { ...end(undefined), cancelled: true } });
      }
    },
    onRetry(ms: number) {
      retryMs = clampRetry(ms);
    },
    onComment(comment: string) {
      pendingBytes = Math.max(pendingBytes - comment.length - 2, 0);
    },
  });

  /**
   * Counts a fed chunk towards the event in progress. Cheap on every chunk; only past the limit
   * is the chunk scanned for its last blank line (an event's end, dispatched or empty), so that
   * what came before it is not counted.
   */
  const tooLarge = (text: string): boolean => {
    pendingBytes += text.length;
    if (pendingBytes <= maxMessageBytes) return false;
    const end = Math.max(text.lastIndexOf('\n\n'), text.lastIndexOf('\r\r'), text.lastIndexOf('\n\r\n'));
    if (end !== -1) pendingBytes = text.length - end;
    return pendingBytes > maxMessageBytes;
  };

  const reading = readChunks(stream.body, {
    chunk(value) {
      if (grace !== undefined) {
        grace.bytes -= value.byteLength;
        if (grace.bytes < 0) endGrace(true);
        return;
      }
      if (finished) return;
      active = true;
      const text = decoder.decode(value, streaming);
      parser.feed(text);
      if (isFinished()) return;
      if (tooLarge(text)) {
        // The parser's partial event is dropped and the body cancelled: nothing refused is kept (P12).
        parser.reset({ consume: false });
        reading.cancel();
        const error = eventTooLarge(maxMessageBytes);
        sink.warn(error);
        finish({ type: 'stream.ended', end: end(error) });
      }
    },
    end() {
      bodyDone = true;
      endGrace(false);
      if (finished) return;
      parser.feed(decoder.decode());
      finish({ type: 'stream.ended', end: end(undefined) });
    },
    fail(error) {
      bodyDone = true;
      endGrace(false);
      finish({ type: 'stream.ended', end: end(toError(error)) });
    },
  });

  return {
    command() {
      if (finished) return;
      if (active) {
        active = false;
        return;
      }
      finish({
        type: 'stream.ended',
        end: end(new StreamIdleError('stream sent nothing within streamIdleTimeout; treating it as dropped')),
      });
      reading.cancel();
    },
    stop() {
      if (grace !== undefined) return;
      finished = true;
      if (answered && !bodyDone) {
        // P4: the rest of the body is read and dropped until its end, within the grace; then cut.
        const timer = setTimeout(() => {
          endGrace(true);
        }, streamGrace.ms);
        grace = { bytes: streamGrace.bytes, timer };
        return;
      }
      reading.cancel();
      stream.release();
    },
  };
}
