import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { JSONRPCId, MessageSink, OpenStream, StreamEnd } from '../../machines/events.js';
import type { StreamReaderEvent } from '../../machines/post-stream.js';
import { clampRetry } from '../../machines/backoff.js';
import { ProtocolError, toError } from '../../machines/errors.js';
import { cut, isResponse, validateMessage } from '../schema.js';

export interface ReaderOptions {
  stream: OpenStream;
  requestIds: readonly JSONRPCId[];
  lastEventId: string | undefined;
  sink: MessageSink;
  /** Called with each new event id (resumption tokens, R10). */
  onEventId?: ((id: string) => void) | undefined;
}

/**
 * Reads one event-stream body. Every message goes straight to the sink (the data plane); the
 * chart hears once, at the end: the response that finished the stream, or how it ended.
 * Returns the cleanup that cancels the body (P4: a finished stream is cancelled, not drained).
 */
export function readEventStream(options: ReaderOptions, report: (event: StreamReaderEvent) => void): () => void {
  const { stream, requestIds, sink } = options;
  const reader = stream.body.getReader();
  const decoder = new TextDecoder();
  let lastEventId = options.lastEventId;
  let progressed = false;
  let retryMs: number | undefined;
  /** Set once: by the response, the end of the body, or cleanup (read through a function so TS does not narrow it). */
  let finished = false;
  const isFinished = () => finished;

  const end = (error: Error | undefined): StreamEnd => ({ lastEventId, progressed, retryMs, error });
  const finish = (event: StreamReaderEvent) => {
    if (finished) return;
    finished = true;
    // The SDK's Protocol runs notification handlers a microtask late but responses at once:
    // report one microtask later so the messages already delivered are handled first.
    queueMicrotask(() => { report(event); });
  };

  const parser = createParser({
    onEvent(event: EventSourceMessage) {
      if (finished) return;
      if (event.id !== undefined && event.id !== lastEventId) {
        lastEventId = event.id;
        progressed = true;
        options.onEventId?.(event.id);
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
      const checked = validateMessage(value);
      if (!checked.ok) {
        sink.warn(new ProtocolError(`invalid JSON-RPC message in server-sent event (${checked.reason}): ${cut(event.data)}`));
        return;
      }
      progressed = true;
      const message = checked.message;
      if (requestIds.length > 0 && isResponse(message) && message.id != null && requestIds.includes(message.id)) {
        // The response ends the stream; the chart delivers it after any decision it implies.
        finish({ type: 'stream.response', response: message, end: end(undefined) });
        return;
      }
      sink.deliver(message);
    },
    onRetry(ms: number) {
      retryMs = clampRetry(ms);
    },
  });

  const pump = async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (finished) return;
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
        if (isFinished()) return;
      }
      parser.feed(decoder.decode());
      finish({ type: 'stream.ended', end: end(undefined) });
    } catch (error) {
      finish({ type: 'stream.ended', end: end(toError(error)) });
    }
  };
  void pump();

  return () => {
    finished = true;
    reader.cancel().catch(() => undefined);
    stream.release();
  };
}
