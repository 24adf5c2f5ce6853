import type { MessageSink } from '../../machines/types.js';
import type { LegacyStreamReport } from '../../machines/connection/index.js';
import type { ProtocolError, StreamEndedError, toError } from '../../machines/errors.js';
import type { cancelBody } from '../http/body.js';
import type { HttpClient } from '../http/client.js';
import type { openEventStream } from '../http/exchanges.js';
import type { readEventStream, StreamReader } from '../sse/reader.js';

/**
 * What the legacy stream uses of the transport's own code, handed over by its caller: this module
 * is loaded with `import()` at the first fallback, and a run-time import of those modules would
 * make a bundler split the page's eager code into a chunk shared with it (the doors test holds it).
 */
export interface LegacyKit {
  ProtocolError: typeof ProtocolError;
  StreamEndedError: typeof StreamEndedError;
  toError: typeof toError;
  cancelBody: typeof cancelBody;
  openEventStream: typeof openEventStream;
  readEventStream: typeof readEventStream;
}

/**
 * L1: the 2024-11-05 HTTP+SSE transport's one stream: GET the URL, wait for the `endpoint` event
 * (resolved against the URL; another origin is refused), then deliver every message it carries.
 * Returns the cleanup that ends the stream.
 */
export function openLegacyStream(
  http: HttpClient,
  sink: MessageSink,
  options: { authorization: boolean; maxMessageBytes: number },
  report: (event: LegacyStreamReport) => void,
  kit: LegacyKit,
): () => void {
  const { ProtocolError, StreamEndedError, toError, cancelBody, openEventStream, readEventStream } = kit;
  const controller = new AbortController();
  let reader: StreamReader | undefined;
  let ended = false;
  const stopStream = () => {
    controller.abort();
    reader?.stop();
  };
  const end = (error: Error) => {
    if (ended) return;
    ended = true;
    report({ type: 'legacy.ended', error });
  };
  const onEndpoint = (data: string) => {
    let endpoint: URL;
    try {
      endpoint = new URL(data, http.url);
    } catch (cause) {
      end(new ProtocolError(`legacy endpoint event is not a URL: ${data.slice(0, 200)}`, { cause }));
      return;
    }
    if (endpoint.origin !== http.url.origin) {
      end(new ProtocolError(`legacy endpoint ${endpoint.origin} is not the server's origin; refusing it`));
      return;
    }
    report({ type: 'legacy.endpoint', endpoint: endpoint.href });
  };
  openEventStream(
    http,
    sink,
    {
      sessionId: undefined,
      protocolVersion: undefined,
      lastEventId: undefined,
      authorization: options.authorization,
      established: false,
      warnRefusal: true,
    },
    controller.signal,
  )
    .then((result) => {
      if (ended || controller.signal.aborted) {
        if (result.kind === 'sse') {
          cancelBody(result.stream.body);
          result.stream.release();
        }
        return;
      }
      if (result.kind !== 'sse') {
        end(new ProtocolError(`legacy fallback: GET answered HTTP ${result.status}, not an event stream`, { cause: result.warning }));
        return;
      }
      reader = readEventStream(
        {
          stream: result.stream,
          requestIds: [],
          lastEventId: undefined,
          seenIds: new Set(),
          replay: false,
          onEventId: undefined,
          maxMessageBytes: options.maxMessageBytes,
          onEndpoint,
          sink,
        },
        (event) => {
          end(event.type === 'stream.ended' && event.end.error ? event.end.error : new StreamEndedError('the legacy SSE stream ended'));
        },
      );
    })
    .catch((error: unknown) => {
      end(toError(error));
    });
  return () => {
    ended = true;
    stopStream();
  };
}
