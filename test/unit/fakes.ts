/** Fake I/O for the charts: every request is a pending promise the test settles by hand. */
import { createActor, fromCallback, fromPromise, SimulatedClock, type Actor, type ActorRef, type Snapshot } from 'xstate';
import { connectionMachine, type DeleteSessionInput } from '../../machines/connection/index.js';
import {
  postStreamMachine,
  type PostRequestInput,
  type ReadStreamInput,
  type ResumeInput,
  type StreamReaderCommand,
  type StreamReaderEvent,
} from '../../machines/post-stream.js';
import { standaloneStreamMachine, type OpenStandaloneInput } from '../../machines/standalone-stream.js';
import { defaultReconnection } from '../../machines/backoff.js';
import type {
  AuthChallenge,
  ChartOptions,
  GetResult,
  JSONRPCMessage,
  MessageSink,
  NetworkEvent,
  OpenStream,
  PostResult,
  SendTicket,
  StreamEnd,
} from '../../machines/types.js';

export interface Pending<I, O> {
  input: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
}

export interface FakeReader {
  input: ReadStreamInput;
  send: (event: StreamReaderEvent) => void;
  stopped: boolean;
  commands: string[];
}

export function fakeIo() {
  const posts: Pending<PostRequestInput, PostResult>[] = [];
  const resumes: Pending<ResumeInput, GetResult>[] = [];
  const gets: Pending<OpenStandaloneInput, GetResult>[] = [];
  const deletes: Pending<DeleteSessionInput, { status: number }>[] = [];
  const authorizations: Pending<{ challenge: AuthChallenge | undefined }, 'AUTHORIZED'>[] = [];
  const readers: FakeReader[] = [];
  /** W2: the host's network signal, driven by the test. */
  const network = { online: true, listeners: new Set<(event: NetworkEvent) => void>() };
  const setOnline = (online: boolean) => {
    network.online = online;
    for (const listener of network.listeners) listener({ type: online ? 'network.online' : 'network.offline' });
  };
  const pending = <I, O>(list: Pending<I, O>[]) =>
    fromPromise<O, I>(
      ({ input, signal }) =>
        new Promise<O>((resolve, reject) => {
          list.push({ input, resolve, reject, signal });
        }),
    );
  const actors = {
    postMessage: pending(posts),
    resumeStream: pending(resumes),
    openStandalone: pending(gets),
    deleteSession: pending(deletes),
    authorize: pending(authorizations),
    networkStatus: fromCallback<{ type: 'noop' }, Record<string, never>>(({ sendBack }) => {
      if (!network.online) sendBack({ type: 'network.offline' });
      network.listeners.add(sendBack);
      return () => {
        network.listeners.delete(sendBack);
      };
    }),
    readStream: fromCallback<StreamReaderCommand, ReadStreamInput>(({ input, sendBack, receive }) => {
      const reader: FakeReader = {
        input,
        send: (event) => {
          sendBack(event);
        },
        stopped: false,
        commands: [],
      };
      receive((command) => reader.commands.push(command.type));
      readers.push(reader);
      return () => {
        reader.stopped = true;
      };
    }),
  };
  /**
   * The standalone stream's reader, as src/actors.ts provides it (three actions of its chart, not
   * an actor): a FakeReader in `readers` from `listening`'s entry, stopped on its exit or when
   * the stream's actor stops.
   */
  const standaloneByActor = new WeakMap<object, FakeReader>();
  const stopStandalone = (self: object) => {
    const reader = standaloneByActor.get(self);
    if (reader === undefined) return;
    standaloneByActor.delete(self);
    reader.stopped = true;
  };
  const standaloneReaderActions = {
    startReading: ({ self }: { self: ActorRef<Snapshot<unknown>, StreamReaderEvent> }, input: ReadStreamInput) => {
      stopStandalone(self);
      const reader: FakeReader = {
        input,
        send: (event) => {
          self.send(event);
        },
        stopped: false,
        commands: [],
      };
      readers.push(reader);
      standaloneByActor.set(self, reader);
      const stop = () => {
        stopStandalone(self);
      };
      self.subscribe({ complete: stop, error: stop });
    },
    stopReading: ({ self }: { self: object }) => {
      stopStandalone(self);
    },
    checkIdle: ({ self }: { self: object }) => {
      standaloneByActor.get(self)?.commands.push('idle.check');
    },
  };
  return { posts, resumes, gets, deletes, authorizations, readers, actors, standaloneReaderActions, setOnline };
}

export type FakeIo = ReturnType<typeof fakeIo>;

export function machineWith(io: FakeIo) {
  return connectionMachine.provide({
    actors: {
      postStream: postStreamMachine.provide({
        actors: { postMessage: io.actors.postMessage, resumeStream: io.actors.resumeStream, readStream: io.actors.readStream },
      }),
      standaloneStream: standaloneStreamMachine.provide({
        actors: { openStandalone: io.actors.openStandalone },
        actions: io.standaloneReaderActions,
      }),
      deleteSession: io.actors.deleteSession,
      authorize: io.actors.authorize,
      networkStatus: io.actors.networkStatus,
    },
  });
}

/**
 * The connection chart on fake I/O, started, with a simulated clock (that `options.now` reads too),
 * a recording sink, and the types of the events it emits, in order.
 */
export function startConnection(overrides: Partial<ChartOptions> = {}) {
  const io = fakeIo();
  const sink = recordingSink();
  const clock = new SimulatedClock();
  const options = chartOptions({ now: () => clock.now(), ...overrides });
  const actor = createActor(machineWith(io), { input: { options, sink }, clock });
  const emitted: string[] = [];
  actor.on('*', (event) => emitted.push(event.type));
  actor.start();
  return { io, sink, clock, actor, emitted };
}

export type ConnectionActor = ReturnType<typeof startConnection>['actor'];

export function chartOptions(overrides: Partial<ChartOptions> = {}): ChartOptions {
  return {
    reconnection: { ...defaultReconnection, jitter: false },
    standaloneStream: true,
    terminateOnClose: true,
    deleteTimeout: 5_000,
    sessionRecovery: 'fail',
    strict: false,
    authorization: false,
    legacyFallback: false,
    maxStepUpRetries: 1,
    streamIdleTimeout: undefined,
    maxMessageBytes: 16 * 1024 * 1024,
    sessionId: undefined,
    restored: undefined,
    reconnectionScheduler: undefined,
    random: () => 0,
    now: () => 0,
    ...overrides,
  };
}

export function recordingSink(): MessageSink & { delivered: JSONRPCMessage[]; warnings: Error[] } {
  const delivered: JSONRPCMessage[] = [];
  const warnings: Error[] = [];
  return {
    delivered,
    warnings,
    deliver: (message) => delivered.push(message),
    warn: (error) => warnings.push(error),
  };
}

export function ticket(): SendTicket & { outcome: 'pending' | 'accepted' | Error } {
  const t = {
    outcome: 'pending' as 'pending' | 'accepted' | Error,
    accepted() {
      if (t.outcome === 'pending') t.outcome = 'accepted';
    },
    failed(error: Error) {
      if (t.outcome !== 'pending') return false;
      t.outcome = error;
      return true;
    },
  };
  return t;
}

export function openStream(): OpenStream & { released: boolean } {
  const s = {
    body: new ReadableStream<Uint8Array>(),
    released: false,
    release: () => {
      s.released = true;
    },
  };
  return s;
}

export function streamEnd(overrides: Partial<StreamEnd> = {}): StreamEnd {
  return { lastEventId: undefined, progressed: false, retryMs: undefined, error: undefined, ...overrides };
}

/** Lets promise callbacks and the actors' reactions run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export const initializeRequest = {
  jsonrpc: '2.0' as const,
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
export const initializeResult = {
  jsonrpc: '2.0' as const,
  id: 0,
  result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } },
};
export const initialized = { jsonrpc: '2.0' as const, method: 'notifications/initialized' };

/**
 * Drives a started connection chart from idle to open: initialize answered with `sessionId`,
 * the protocol version set as the SDK Client sets it (unless `protocolVersion` is undefined),
 * notifications/initialized accepted.
 */
export async function handshake(
  io: FakeIo,
  actor: Actor<ReturnType<typeof machineWith>>,
  { sessionId, protocolVersion }: { sessionId: string; protocolVersion: string | undefined },
): Promise<void> {
  actor.send({ type: 'start' });
  actor.send({ type: 'send', message: initializeRequest, ticket: ticket() });
  await flush();
  io.posts[0]!.resolve({ kind: 'json', sessionId, response: initializeResult });
  await flush();
  if (protocolVersion !== undefined) actor.send({ type: 'protocolVersion.set', version: protocolVersion });
  actor.send({ type: 'send', message: initialized, ticket: ticket() });
  await flush();
  io.posts[1]!.resolve({ kind: 'accepted', sessionId: undefined });
  await flush();
}
