import { fromCallback, fromPromise } from 'xstate';
import type { AuthChallenge, GetResult, MessageSink, PostResult } from '../machines/events.js';
import type { DeleteSessionInput } from '../machines/connection.js';
import type {
  PostRequestInput,
  ReadStreamInput,
  ResumeInput,
  StreamReaderCommand,
  StreamReaderEvent,
} from '../machines/post-stream.js';
import type { OpenStandaloneInput } from '../machines/standalone-stream.js';
import type { HttpClient } from './http/client.js';
import { deleteSession, openEventStream, postMessage, type ExchangeOptions } from './http/exchanges.js';
import { readEventStream } from './sse/reader.js';
import { authorize } from './http/auth.js';
import { openLegacyStream } from './legacy/stream.js';

/** The I/O actors the charts name, bound to one transport's HTTP client and sink. */
export function createIoActors(http: HttpClient, sink: MessageSink, options: ExchangeOptions & { authProvider: object | undefined }) {
  return {
    postMessage: fromPromise<PostResult, PostRequestInput>(({ input, signal }) =>
      postMessage(http, sink, options, input, signal),
    ),
    resumeStream: fromPromise<GetResult, ResumeInput>(({ input, signal }) =>
      openEventStream(http, sink, { ...input, authorization: options.authProvider !== undefined }, signal),
    ),
    openStandalone: fromPromise<GetResult, OpenStandaloneInput>(({ input, signal }) =>
      openEventStream(http, sink, { ...input, authorization: options.authProvider !== undefined }, signal),
    ),
    authorize: fromPromise<'AUTHORIZED', { challenge: AuthChallenge | undefined }>(({ input }) => {
      if (options.authProvider === undefined) throw new Error('authorizing without an authProvider');
      return authorize({ provider: options.authProvider, serverUrl: http.url, challenge: input.challenge, fetch: http.authFetch });
    }),
    readStream: fromCallback<StreamReaderCommand, ReadStreamInput>(({ input, sendBack, receive }) => {
      const reader = readEventStream({ ...input, sink, maxMessageBytes: options.maxMessageBytes }, (event: StreamReaderEvent) => {
        sendBack(event);
      });
      receive((command) => {
        reader.command(command);
      });
      return () => {
        reader.stop();
      };
    }),
    legacyStream: fromCallback<{ type: 'noop' }, Record<string, never>>(({ sendBack }) =>
      openLegacyStream(http, sink, { authorization: options.authProvider !== undefined, maxMessageBytes: options.maxMessageBytes }, (report) => {
        sendBack(report);
      }),
    ),
    deleteSession: fromPromise<{ status: number }, DeleteSessionInput>(({ input, signal }) =>
      deleteSession(http, input, signal),
    ),
  };
}
