import { fromCallback, fromPromise, type ActorRef, type Snapshot, type Subscription } from 'xstate';
import { connectionMachine, type ConnectionMachine } from '../machines/connection/index.js';
import { postStreamMachine } from '../machines/post-stream.js';
import { standaloneStreamMachine } from '../machines/standalone-stream.js';
import type { AuthChallenge, GetResult, MessageSink, PostResult } from '../machines/types.js';
import type { DeleteSessionInput } from '../machines/connection/index.js';
import { McpTransportError, ProtocolError, StreamEndedError, toError } from '../machines/errors.js';
import { cancelBody } from './http/body.js';
import type { DirectCalls } from './data-plane.js';
import type { PostRequestInput, ReadStreamInput, ResumeInput, StreamReaderCommand, StreamReaderEvent } from '../machines/post-stream.js';
import type { OpenStandaloneInput } from '../machines/standalone-stream.js';
import type { HttpClient } from './http/client.js';
import { deleteSession, openEventStream, postMessage, type ExchangeOptions } from './http/exchanges.js';
import { readEventStream, type StreamReader } from './sse/reader.js';
import type { SdkAuthOption, SdkGeneration } from './http/auth.js';
import { networkEvents, type NetworkSignal } from './network.js';
import type { HttpAttempt, Telemetry } from './telemetry/option.js';

/** One transport's I/O: what its actors use. The chart holds it as an opaque value (`io`). */
export interface TransportIo {
  http: HttpClient;
  sink: MessageSink;
  options: ExchangeOptions;
  authProvider: object | undefined;
  /** W2: the host's online/offline signal, if it has one. */
  network?: NetworkSignal | undefined;
  /** The SDK generation of the Client on top, as it has shown itself: whose OAuth flow to run (A1). */
  sdk?: SdkGeneration | undefined;
  /** The v2 SDK's opt-out of the metadata issuer check, for its OAuth flow. */
  skipIssuerMetadataValidation?: boolean | undefined;
  /** The `sdkAuth` option: the SDK's OAuth functions, handed over by a bundled app. */
  sdkAuth?: SdkAuthOption | undefined;
  /**
   * The one side channel (ARCHITECTURE.md, "The direct path"): the facade's data plane, to which
   * it hands the calls `directRoute` routes direct; set while the chart runs the direct path (from
   * its `direct.start` on start() until its `direct.end` on close or failure), else undefined. No
   * actor uses it; it is here for `directCallsIn`.
   */
  directCalls?: DirectCalls | undefined;
  /** O1: the transport's telemetry, once start() loaded it; undefined (the default) costs one check per request. */
  telemetry?: Telemetry | undefined;
}

/**
 * X3: each transport's I/O, by its actor system (one per transport). It is not chart context: the
 * HTTP client holds the caller's headers (an Authorization among them) and the token source, and
 * nothing of that may reach an inspector; the chart knows only that credentials exist.
 */
const ioBySystem = new WeakMap<object, TransportIo>();

/** Gives the actors of `system` their transport's I/O (before the root actor starts). */
export function attachIo(system: object, io: TransportIo): void {
  ioBySystem.set(system, io);
}

/** How many direct calls `system`'s transport has in flight (for tests and diagnostics; 0 when it runs none). */
export function directCallsIn(system: object): number {
  return ioBySystem.get(system)?.directCalls?.size ?? 0;
}

/** The I/O of the transport this actor runs in. */
function ioOf(system: object): TransportIo {
  const io = ioBySystem.get(system);
  if (io === undefined) throw new Error('no transport I/O for this actor system: attachIo(actor.system, io) before start()');
  return io;
}

/** A GET stream of this session (a resume or the standalone stream); its spec is one literal, not a spread of the input. */
function openGet(
  io: TransportIo,
  input: { sessionId: string | undefined; protocolVersion: string | undefined; lastEventId: string | undefined },
  established: boolean,
  standalone: boolean,
  signal: AbortSignal,
): Promise<GetResult> {
  const spec = {
    sessionId: input.sessionId,
    protocolVersion: input.protocolVersion,
    lastEventId: input.lastEventId,
    authorization: io.authProvider !== undefined,
    established,
    // G2: the standalone chart says its refusals (reportRefusal); a resume's are said here.
    warnRefusal: !standalone,
  };
  return openEventStream(io.http, io.sink, spec, signal);
}

/** O1: an HTTP attempt's child span ends with its answer (or, for a stream, when the stream is released). */
function traced<R extends PostResult | GetResult>(request: Promise<R>, attempt: HttpAttempt): Promise<R> {
  return request.then(
    (result) => attempt.answered(result),
    (error: unknown) => {
      attempt.failed(error);
      throw error;
    },
  );
}

/**
 * A stream's reader: what it reads is told to `report` (its chart). The telemetry, when there is
 * one, is attached before the chart starts (`loadTelemetry` runs before `begin()`), so without it
 * the reader reports straight to `report` and keeps no closure over its input (issue 44).
 */
function startReader(io: TransportIo, input: ReadStreamInput, report: (event: StreamReaderEvent) => void): StreamReader {
  // One literal, not a spread of `input`: the reader keeps it for the stream's life (bench/README.md, "Code shapes").
  const options = {
    stream: input.stream,
    requestIds: input.requestIds,
    lastEventId: input.lastEventId,
    seenIds: input.seenIds,
    replay: input.replay,
    onEventId: input.onEventId,
    sink: io.sink,
    maxMessageBytes: io.options.maxMessageBytes,
  };
  const telemetry = io.telemetry;
  if (telemetry === undefined) return readEventStream(options, report);
  const { stream } = input;
  return readEventStream(options, (event: StreamReaderEvent) => {
    if (event.type === 'stream.ended') telemetry.streamEnded(stream, event.end.error);
    report(event);
  });
}

/**
 * The standalone stream's reader while it listens, held by the stream's actor, and the watch that
 * stops it with that actor: one object, its observer methods on the prototype (issue 44: a held
 * session kept two closures, their context and the reader's input here).
 */
class StandaloneReading {
  watch: Subscription | undefined = undefined;
  constructor(
    private readonly self: object,
    readonly reader: StreamReader,
  ) {}

  /** The stream's actor completed (stopped from outside, where no exit action runs): the reader stops with it. */
  complete(): void {
    stopStandaloneReader(this.self);
  }

  /** The stream's actor failed: the reader stops with it. */
  error(): void {
    stopStandaloneReader(this.self);
  }
}

/** The standalone stream's reader while it listens, by the stream's actor. */
const standaloneReaders = new WeakMap<object, StandaloneReading>();

function stopStandaloneReader(self: object): void {
  const held = standaloneReaders.get(self);
  if (held === undefined) return;
  standaloneReaders.delete(self);
  held.watch?.unsubscribe();
  held.reader.stop();
}

/**
 * The standalone stream's reader (issue 44): not an actor of its own but three actions of the
 * stream's chart. `listening` starts it on entry and stops it on exit; an actor stopped from
 * outside runs no exit actions, so its end (`complete`, `error`) stops the reader too.
 */
export const standaloneReaderActions = {
  startReading: ({ self, system }: { self: ActorRef<Snapshot<unknown>, StreamReaderEvent>; system: object }, input: ReadStreamInput) => {
    stopStandaloneReader(self);
    // `self.send` is bound to its actor by xstate: no closure of ours per stream.
    const reading = new StandaloneReading(self, startReader(ioOf(system), input, self.send));
    standaloneReaders.set(self, reading);
    reading.watch = self.subscribe(reading);
  },
  stopReading: ({ self }: { self: object }) => {
    stopStandaloneReader(self);
  },
  checkIdle: ({ self }: { self: object }) => {
    standaloneReaders.get(self)?.reader.command({ type: 'idle.check' });
  },
};

/**
 * The I/O actors the charts name. They are created once, for every transport: a machine
 * provided per transport would rebuild the whole chart each time (bench/README.md, "Code shapes").
 */
export const ioActors = {
  postMessage: fromPromise<PostResult, PostRequestInput>(({ input, signal, system }) => {
    const io = ioOf(system);
    const attempt = io.telemetry === undefined ? undefined : io.telemetry.attempt('POST', input.requestIds);
    const request = postMessage(io.http, io.sink, io.options, input, signal);
    return attempt === undefined ? request : traced(request, attempt);
  }),
  resumeStream: fromPromise<GetResult, ResumeInput>(({ input, signal, system }) => {
    const io = ioOf(system);
    const attempt = io.telemetry === undefined ? undefined : io.telemetry.attempt('GET', input.requestIds);
    // A resume follows a stream of this session: a 404 to it is session-missing (R6).
    const request = openGet(io, input, true, false, signal);
    return attempt === undefined ? request : traced(request, attempt);
  }),
  openStandalone: fromPromise<GetResult, OpenStandaloneInput>(({ input, signal, system }) =>
    openGet(ioOf(system), input, input.established, true, signal),
  ),
  authorize: fromPromise<'AUTHORIZED', { challenge: AuthChallenge | undefined }>(({ input, signal, system }) => {
    const io = ioOf(system);
    if (io.authProvider === undefined) throw new Error('authorizing without an authProvider');
    const provider = io.authProvider;
    // Leaving `authorizing` (close, for one) aborts the OAuth requests still running.
    const fetch = io.http.authFetchFor(signal);
    // The OAuth glue is loaded with the first authorization: a transport without an authProvider carries none of it.
    return import('./http/auth.js').then(({ authorize }) =>
      authorize({
        provider,
        serverUrl: io.http.url,
        challenge: input.challenge,
        fetch,
        sdk: io.sdk,
        skipIssuerMetadataValidation: io.skipIssuerMetadataValidation,
        TransportError: McpTransportError,
        sdkAuth: io.sdkAuth,
      }),
    );
  }),
  readStream: fromCallback<StreamReaderCommand, ReadStreamInput>(({ input, sendBack, receive, system }) => {
    const reader = startReader(ioOf(system), input, sendBack);
    receive((command) => {
      reader.command(command);
    });
    return () => {
      reader.stop();
    };
  }),
  legacyStream: fromCallback<{ type: 'noop' }, Record<string, never>>(({ sendBack, system }) => {
    const io = ioOf(system);
    // L1's stream is loaded with the first fallback to the 2024-11-05 transport: a transport that never falls back carries none of it.
    let stop: (() => void) | undefined;
    let stopped = false;
    import('./legacy/stream.js').then(
      ({ openLegacyStream }) => {
        if (stopped) return;
        stop = openLegacyStream(
          io.http,
          io.sink,
          { authorization: io.authProvider !== undefined, maxMessageBytes: io.options.maxMessageBytes },
          (report) => {
            sendBack(report);
          },
          { ProtocolError, StreamEndedError, toError, cancelBody, openEventStream, readEventStream },
        );
      },
      (error: unknown) => {
        if (!stopped) sendBack({ type: 'legacy.ended', error: toError(error) });
      },
    );
    return () => {
      stopped = true;
      stop?.();
    };
  }),
  /** W2: tells the chart the network's state now, then each change (nothing without a signal). */
  networkStatus: fromCallback<{ type: 'noop' }, Record<string, never>>(({ sendBack, system }) =>
    networkEvents(ioOf(system).network, sendBack),
  ),
  deleteSession: fromPromise<{ status: number }, DeleteSessionInput>(({ input, signal, system }) =>
    deleteSession(ioOf(system).http, input, signal),
  ),
};

/** The connection chart with the I/O provided: built once, shared by every transport. */
export const providedConnectionMachine: ConnectionMachine = connectionMachine.provide({
  actors: {
    postStream: postStreamMachine.provide({
      actors: { postMessage: ioActors.postMessage, resumeStream: ioActors.resumeStream, readStream: ioActors.readStream },
    }),
    standaloneStream: standaloneStreamMachine.provide({
      actors: { openStandalone: ioActors.openStandalone },
      actions: standaloneReaderActions,
    }),
    deleteSession: ioActors.deleteSession,
    networkStatus: ioActors.networkStatus,
    authorize: ioActors.authorize,
    legacyStream: ioActors.legacyStream,
  },
});
