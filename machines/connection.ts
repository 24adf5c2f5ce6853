import { assign, emit, enqueueActions, fromPromise, setup, stopChild } from 'xstate';
import type {
  ChartOptions,
  JSONRPCMessage,
  JSONRPCRequest,
  JSONRPCResponse,
  MessageSink,
  SendTicket,
} from './events.js';
import { postStreamMachine, requestIdsOf, type PostStreamReport } from './post-stream.js';
import { standaloneStreamMachine, type StandaloneStreamReport } from './standalone-stream.js';
import {
  asFailure,
  isSessionMissing,
  McpTransportError,
  ProtocolError,
  SessionExpiredError,
  StreamableHTTPError,
  TransportClosedError,
} from './errors.js';

export interface ConnectionInput {
  options: ChartOptions;
  sink: MessageSink;
}

export interface DeleteSessionInput {
  sessionId: string;
  protocolVersion: string | undefined;
}

export type ConnectionEvent =
  | { type: 'start' }
  | { type: 'send'; message: JSONRPCMessage | JSONRPCMessage[]; ticket: SendTicket }
  | { type: 'protocolVersion.set'; version: string }
  | { type: 'close' }
  | { type: 'session.terminate'; ticket: SendTicket }
  | PostStreamReport
  | StandaloneStreamReport;

/** What the running chart tells its host (the facade, a UI) without being asked. */
export type ConnectionEmitted =
  | { type: 'warning'; error: Error }
  | { type: 'failed'; error: McpTransportError }
  | { type: 'closed' };

export interface ConnectionContext extends ConnectionInput {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** The client's `initialize` request, kept to re-establish an expired session (F3). */
  initializeRequest: JSONRPCRequest | undefined;
  /** The server said the session is gone: no DELETE for it (F1). */
  sessionMissing: boolean;
  /** Why the transport failed; `send()` rejects with exactly this while failed (F4). */
  error: McpTransportError | undefined;
  /** A different session ID was already reported once (H7). */
  sessionIdMismatchReported: boolean;
  nextPostId: number;
  /** The caller of terminateSession() while its DELETE runs. */
  terminateTicket: SendTicket | undefined;
}

const INITIALIZE = 'initialize';
const INITIALIZED = 'notifications/initialized';

function isRequest(message: JSONRPCMessage | JSONRPCMessage[], method: string): boolean {
  return !Array.isArray(message) && 'method' in message && message.method === method;
}

/** The synthetic answer to a call that failed, so a waiting client rejects at once (P10). */
export function failureResponse(id: JSONRPCRequest['id'], error: Error): JSONRPCResponse {
  const status = (error as { status?: unknown }).status;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: -32000,
      message: error.message,
      data: { type: error.name, ...(typeof status === 'number' ? { status } : {}) },
    },
  };
}

function freshSession(context: ConnectionContext): ConnectionContext {
  return {
    ...context,
    sessionId: context.options.sessionId,
    protocolVersion: undefined,
    initializeRequest: undefined,
    sessionMissing: false,
    error: undefined,
    sessionIdMismatchReported: false,
  };
}

export const connectionMachine = setup({
  types: {
    context: {} as ConnectionContext,
    input: {} as ConnectionInput,
    events: {} as ConnectionEvent,
    emitted: {} as ConnectionEmitted,
  },
  actors: {
    postStream: postStreamMachine,
    standaloneStream: standaloneStreamMachine,
    deleteSession: fromPromise<{ status: number }, DeleteSessionInput>(() => {
      throw new Error("actor 'deleteSession' must be provided with machine.provide({ actors })");
    }),
  },
  guards: {
    hasPresetSession: ({ context }) => context.options.sessionId !== undefined,
    isInitialize: ({ event }) => event.type === 'send' && isRequest(event.message, INITIALIZE),
    isInitializeResult: ({ event }) =>
      event.type === 'post.done' && isRequest(event.message, INITIALIZE) && event.response !== undefined && 'result' in event.response,
    isInitializeFailure: ({ event }) =>
      (event.type === 'post.failed' || event.type === 'post.done') && isRequest(event.message, INITIALIZE),
    isInitializedAccepted: ({ event }) => event.type === 'post.done' && isRequest(event.message, INITIALIZED),
    isSessionMissing: ({ event }) => event.type === 'post.failed' && isSessionMissing(event.error),
    isOtherSessionId: ({ context, event }) =>
      event.type === 'post.done' &&
      event.sessionId !== undefined &&
      context.sessionId !== undefined &&
      event.sessionId !== context.sessionId &&
      !context.sessionIdMismatchReported,
    standaloneEnabled: ({ context }) => context.options.standaloneStream,
    hasSession: ({ context }) => context.sessionId !== undefined,
    /** SDK semantics: 405 means the server does not allow termination, which is fine. */
    deleteAccepted: ({ event }) => {
      const status = (event as { output?: { status?: number } }).output?.status ?? 0;
      return (status >= 200 && status < 300) || status === 405;
    },
    shouldTerminate: ({ context }) =>
      context.sessionId !== undefined && !context.sessionMissing && context.options.terminateOnClose,
  },
  delays: {
    deleteTimeout: ({ context }) => context.options.deleteTimeout,
  },
  actions: {
    startFresh: assign(({ context }) => freshSession(context)),
    cacheInitialize: assign({
      initializeRequest: ({ event }) =>
        event.type === 'send' && !Array.isArray(event.message) && 'id' in event.message && 'method' in event.message
          ? event.message
          : undefined,
      // H3: a new initialize never carries a stale session or version.
      sessionId: undefined,
      protocolVersion: undefined,
      sessionMissing: false,
    }),
    spawnPost: assign(({ context, event, spawn }) => {
      if (event.type !== 'send') return {};
      const initializing = isRequest(event.message, INITIALIZE);
      spawn('postStream', {
        id: `post-${context.nextPostId}`,
        input: {
          message: event.message,
          ticket: event.ticket,
          sessionId: initializing ? undefined : context.sessionId,
          protocolVersion: initializing ? undefined : context.protocolVersion,
          options: context.options,
        },
      });
      return { nextPostId: context.nextPostId + 1 };
    }),
    adoptSession: assign(({ context, event }) => {
      if (event.type !== 'post.done' || event.response === undefined || !('result' in event.response)) return {};
      const version = event.response.result.protocolVersion;
      return {
        sessionId: event.sessionId,
        protocolVersion: typeof version === 'string' ? version : context.protocolVersion,
      };
    }),
    deliverResponse: ({ context, event }) => {
      if (event.type === 'post.done' && event.response !== undefined) context.sink.deliver(event.response);
    },
    answerFailure: ({ context, event }) => {
      if (event.type !== 'post.failed') return;
      for (const id of requestIdsOf(event.message)) context.sink.deliver(failureResponse(id, event.error));
      event.ticket.failed(event.error);
    },
    setVersion: assign({
      protocolVersion: ({ context, event }) => (event.type === 'protocolVersion.set' ? event.version : context.protocolVersion),
    }),
    rejectSend: ({ context, event }) => {
      if (event.type !== 'send' && event.type !== 'session.terminate') return;
      event.ticket.failed(context.error ?? new TransportClosedError('transport is not started'));
    },
    reportOtherSessionId: enqueueActions(({ enqueue }) => {
      enqueue.assign({ sessionIdMismatchReported: true });
      enqueue.emit({
        type: 'warning',
        error: new ProtocolError('server sent a different session ID on a later response; keeping the established one'),
      });
    }),
    failInitialize: assign({
      error: ({ event }) =>
        asFailure(
          event.type === 'post.failed'
            ? event.error
            : new ProtocolError('initialize was answered without an InitializeResult'),
        ),
    }),
    expireSession: assign({
      sessionMissing: true,
      error: ({ event }) =>
        new SessionExpiredError('the server no longer knows this session', {
          cause: event.type === 'post.failed' || event.type === 'standalone.sessionMissing' ? event.error : undefined,
        }),
    }),
    /** Every child stops now; callers still waiting on `send()` learn why (F2). */
    stopEverything: enqueueActions(({ context, self, enqueue }) => {
      const reason = context.error ?? new TransportClosedError('transport closed');
      for (const [id, child] of Object.entries(self.getSnapshot().children)) {
        const snapshot: unknown = child?.getSnapshot();
        const ticket = (snapshot as { context?: { ticket?: SendTicket } } | undefined)?.context?.ticket;
        ticket?.failed(reason);
        enqueue.stopChild(id);
      }
    }),
    emitFailed: emit(({ context }) => ({
      type: 'failed' as const,
      error: context.error ?? asFailure(new Error('unknown failure')),
    })),
    emitClosed: emit({ type: 'closed' as const }),
    /** A finished POST child is stopped at once: live children make every later spawn slower. */
    stopPost: stopChild(({ event }) => (event.type === 'post.done' || event.type === 'post.failed' ? event.postId : '')),
    forgetError: assign({ error: undefined }),
    holdTerminateTicket: assign({
      terminateTicket: ({ event }) => (event.type === 'session.terminate' ? event.ticket : undefined),
    }),
    acknowledgeTerminate: enqueueActions(({ context, event, enqueue }) => {
      (event.type === 'session.terminate' ? event.ticket : context.terminateTicket)?.accepted();
      enqueue.assign({ terminateTicket: undefined });
    }),
    refuseTerminate: enqueueActions(({ context, event, enqueue }) => {
      const status = (event as { output?: { status?: number } }).output?.status;
      const cause = (event as { error?: unknown }).error;
      context.terminateTicket?.failed(
        new StreamableHTTPError(
          status === undefined ? 'DELETE of the session failed' : `DELETE of the session answered HTTP ${status}`,
          { status, cause },
        ),
      );
      enqueue.assign({ terminateTicket: undefined });
    }),
    forgetSession: assign({ sessionId: undefined, initializeRequest: undefined }),
  },
}).createMachine({
  id: 'connection',
  context: ({ input }) => ({
    ...input,
    sessionId: undefined,
    protocolVersion: undefined,
    initializeRequest: undefined,
    sessionMissing: false,
    error: undefined,
    sessionIdMismatchReported: false,
    nextPostId: 0,
    terminateTicket: undefined,
  }),
  initial: 'idle',
  on: {
    'protocolVersion.set': { actions: 'setVersion' },
    close: '.closing',
  },
  states: {
    idle: {
      on: {
        start: [
          { guard: 'hasPresetSession', target: 'open', actions: 'startFresh' },
          { target: 'connecting', actions: 'startFresh' },
        ],
        send: { actions: 'rejectSend' },
        'session.terminate': { actions: 'rejectSend' },
      },
    },
    connecting: {
      tags: ['connecting'],
      on: {
        send: [
          { guard: 'isInitialize', actions: ['cacheInitialize', 'spawnPost'] },
          { actions: 'spawnPost' },
        ],
        'post.done': [
          { guard: 'isInitializeResult', target: 'initializing', actions: ['adoptSession', 'deliverResponse', 'stopPost'] },
          { guard: 'isInitializeFailure', target: 'failed', actions: ['deliverResponse', 'stopPost', 'failInitialize'] },
          { actions: ['deliverResponse', 'stopPost'] },
        ],
        'post.failed': [
          { guard: 'isInitializeFailure', target: 'failed', actions: ['answerFailure', 'stopPost', 'failInitialize'] },
          { actions: ['answerFailure', 'stopPost'] },
        ],
      },
    },
    initializing: {
      tags: ['connecting'],
      on: {
        send: { actions: 'spawnPost' },
        'post.done': [
          { guard: 'isInitializedAccepted', target: 'open', actions: 'stopPost' },
          { actions: ['deliverResponse', 'stopPost'] },
        ],
        'post.failed': [
          { guard: 'isSessionMissing', target: 'failed', actions: ['answerFailure', 'stopPost', 'expireSession'] },
          { actions: ['answerFailure', 'stopPost'] },
        ],
      },
    },
    open: {
      tags: ['connected'],
      type: 'parallel',
      on: {
        send: { actions: 'spawnPost' },
        'post.done': [
          { guard: 'isOtherSessionId', actions: ['reportOtherSessionId', 'deliverResponse', 'stopPost'] },
          { actions: ['deliverResponse', 'stopPost'] },
        ],
        'post.failed': [
          { guard: 'isSessionMissing', target: 'failed', actions: ['answerFailure', 'stopPost', 'expireSession'] },
          { actions: ['answerFailure', 'stopPost'] },
        ],
        'standalone.sessionMissing': { target: 'failed', actions: 'expireSession' },
      },
      states: {
        session: {
          initial: 'active',
          states: {
            active: {
              on: {
                'session.terminate': [
                  { guard: 'hasSession', target: 'terminating', actions: 'holdTerminateTicket' },
                  { actions: 'acknowledgeTerminate' },
                ],
              },
            },
            /** terminateSession(): DELETE, then the transport waits for a new initialize. */
            terminating: {
              invoke: {
                src: 'deleteSession',
                input: ({ context }) => ({ sessionId: context.sessionId ?? '', protocolVersion: context.protocolVersion }),
                onDone: [
                  {
                    guard: 'deleteAccepted',
                    target: '#connection.connecting',
                    actions: ['acknowledgeTerminate', 'forgetSession'],
                  },
                  { target: 'active', actions: 'refuseTerminate' },
                ],
                onError: { target: 'active', actions: 'refuseTerminate' },
              },
            },
          },
        },
        /** The optional server-to-client stream; its lifetime is the session's (G6). */
        standalone: {
          initial: 'deciding',
          states: {
            deciding: {
              always: [{ guard: 'standaloneEnabled', target: 'active' }, { target: 'off' }],
            },
            active: {
              invoke: {
                id: 'standalone',
                src: 'standaloneStream',
                input: ({ context }) => ({
                  sessionId: context.sessionId,
                  protocolVersion: context.protocolVersion,
                  options: context.options,
                }),
                onDone: 'ended',
              },
            },
            off: {},
            /** The server offers no standalone stream (G2). */
            ended: {},
          },
        },
      },
    },
    reconnecting: {
      tags: ['reconnecting'],
    },
    closing: {
      tags: ['closing'],
      entry: 'stopEverything',
      initial: 'choosing',
      states: {
        choosing: {
          always: [{ guard: 'shouldTerminate', target: 'deleting' }, { target: '#connection.closed' }],
        },
        deleting: {
          invoke: {
            src: 'deleteSession',
            input: ({ context }) => ({ sessionId: context.sessionId ?? '', protocolVersion: context.protocolVersion }),
            onDone: '#connection.closed',
            onError: '#connection.closed',
          },
          after: { deleteTimeout: '#connection.closed' },
        },
      },
      on: {
        send: { actions: 'rejectSend' },
        'session.terminate': { actions: 'rejectSend' },
        close: {},
      },
    },
    closed: {
      tags: ['closed'],
      entry: ['forgetError', 'emitClosed'],
      on: {
        start: [
          { guard: 'hasPresetSession', target: 'open', actions: 'startFresh' },
          { target: 'connecting', actions: 'startFresh' },
        ],
        send: { actions: 'rejectSend' },
        'session.terminate': { actions: 'rejectSend' },
        close: {},
      },
    },
    failed: {
      tags: ['failed'],
      entry: ['stopEverything', 'emitFailed'],
      on: {
        start: [
          { guard: 'hasPresetSession', target: 'open', actions: 'startFresh' },
          { target: 'connecting', actions: 'startFresh' },
        ],
        send: { actions: 'rejectSend' },
        'session.terminate': { actions: 'rejectSend' },
      },
    },
  },
});

export type ConnectionMachine = typeof connectionMachine;
