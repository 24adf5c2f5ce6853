import { assign, fromCallback, fromPromise, raise, sendParent, sendTo, setup } from 'xstate';
import type {
  ChartOptions,
  GetResult,
  JSONRPCId,
  JSONRPCMessage,
  JSONRPCResponse,
  NetworkEvent,
  OpenStream,
  PostResult,
  SendAttempts,
  SendTicket,
  StreamEnd,
} from './events.js';
import {
  isResumableEventId,
  nextReconnectDelay,
  plannedDelay,
  planWait,
  scheduledWait,
  waitStates,
  type PlannedWait,
  type WaitContext,
} from './backoff.js';
import { isSessionMissing, MessageTooLargeError, statusOf, StreamEndedError, toError } from './errors.js';

/**
 * Who a POST is for: the caller; the caller again, after a session was re-established (F3, at
 * most once); or the chart itself, re-establishing the session.
 */
export type PostOrigin = 'caller' | 'retry' | 'recovery';

export interface PostStreamInput {
  /** The message to POST; an empty array for `resumeStream()`, which only listens. */
  message: JSONRPCMessage | JSONRPCMessage[];
  ticket: SendTicket;
  origin: PostOrigin;
  /** Authorization already gone through for this message (A1, A2); reported back unchanged. */
  attempts: SendAttempts;
  /** L1: the legacy transport's message endpoint; any 2xx accepts, replies come on its stream. */
  endpoint?: string | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  options: ChartOptions;
  /** R10: resume an earlier stream from this event id instead of POSTing. */
  resumptionToken?: string | undefined;
  /** R10: told each new event id of this stream. */
  onResumptionToken?: ((token: string) => void) | undefined;
  /**
   * A data-plane call whose SSE stream ended before its response: this machine takes the stream
   * over from that end (backoff and resume, or fail), as if it had read the stream itself.
   */
  interrupted?: InterruptedStream | undefined;
  /** W2: the network is known to be gone as the stream begins. */
  offline?: boolean | undefined;
}

/** Where a data-plane call's stream stopped: how it ended, and the event ids it delivered (R7). */
export interface InterruptedStream {
  end: StreamEnd;
  seenIds: Set<string>;
}

export interface PostRequestInput {
  message: JSONRPCMessage | JSONRPCMessage[];
  requestIds: readonly JSONRPCId[];
  endpoint: string | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
}

export interface ResumeInput {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  lastEventId: string;
}

export interface ReadStreamInput {
  stream: OpenStream;
  /** Requests whose response ends this stream (empty for the standalone stream). */
  requestIds: readonly JSONRPCId[];
  lastEventId: string | undefined;
  /** Event ids already delivered on this stream, shared by each of its readers (R7). */
  seenIds: Set<string>;
  /** R10: a resumed request's response may carry the id of the request that began the stream. */
  replay: boolean;
  onEventId: ((id: string) => void) | undefined;
}

/** Asked of a reader by the chart's idle timer (R9): was anything read since the last check? */
export type StreamReaderCommand = { type: 'idle.check' };

/** Events a stream reader sends to the chart: only what changes a decision. */
export type StreamReaderEvent =
  { type: 'stream.response'; response: JSONRPCResponse; end: StreamEnd } | { type: 'stream.ended'; end: StreamEnd };

/** A caller's reconnectionScheduler says the wait is over. */
export type ReconnectDue = { type: 'reconnect.due' };

/** Events a POST stream reports to the connection chart. */
export type PostStreamReport =
  | {
      type: 'post.done';
      /** The reporting child; undefined for a data-plane call, which has no actor. */
      postId: string | undefined;
      origin: PostOrigin;
      attempts: SendAttempts;
      message: JSONRPCMessage | JSONRPCMessage[];
      response: JSONRPCResponse | undefined;
      sessionId: string | undefined;
    }
  | {
      type: 'post.failed';
      /** The reporting child; undefined for a data-plane call, which has no actor. */
      postId: string | undefined;
      origin: PostOrigin;
      attempts: SendAttempts;
      /** The session the request carried: a 404 for an older session than the current one is stale. */
      sessionId: string | undefined;
      message: JSONRPCMessage | JSONRPCMessage[];
      ticket: SendTicket;
      error: Error;
    };

/**
 * What the data plane (the facade's calls while the session is open) hands to the connection
 * chart besides today's `post.done` / `post.failed`: a stream that ended before its response,
 * for the chart to spawn this machine on it.
 */
export type DataPlaneReport = {
  type: 'post.interrupted';
  message: JSONRPCMessage;
  ticket: SendTicket;
  /** The session and version the call carried; the resume GET carries the same (R1). */
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  interrupted: InterruptedStream;
};

export interface PostStreamContext extends PostStreamInput {
  postId: string;
  requestIds: readonly JSONRPCId[];
  stream: OpenStream | undefined;
  response: JSONRPCResponse | undefined;
  /** Session ID the server put on the POST's response, for the parent to check (H5, H7). */
  responseSessionId: string | undefined;
  lastEventId: string | undefined;
  seenIds: Set<string>;
  retryMs: number | undefined;
  /** Reconnects made since the last progress (R5). */
  attempt: number;
  /** R4: the next wait follows a stream that ended (its `retry` applies) or a resume that failed (backoff). */
  waitAfter: 'ended' | 'failed';
  error: Error | undefined;
  /** W3: the resume wait (tag `waiting`): its attempt and due time. */
  wait: PlannedWait | undefined;
  /** W2: the network is gone; a resume wait pauses. */
  offline: boolean;
}

/** R11: why a stream whose last event id cannot be a header is not resumed. */
function unsendableIdError(cause: Error | undefined): StreamEndedError {
  return new StreamEndedError(
    'request stream cannot be resumed: its last event id is not visible ASCII, so it cannot be sent as Last-Event-ID',
    { cause },
  );
}

export function requestIdsOf(message: JSONRPCMessage | JSONRPCMessage[]): JSONRPCId[] {
  const list = Array.isArray(message) ? message : [message];
  const ids: JSONRPCId[] = [];
  for (const m of list) if ('method' in m && 'id' in m) ids.push(m.id);
  return ids;
}

const notProvided = (name: string) => () => {
  throw new Error(`actor '${name}' must be provided with machine.provide({ actors })`);
};

function readerInput(context: PostStreamContext): ReadStreamInput {
  if (!context.stream) throw new Error('streaming without a stream');
  return {
    stream: context.stream,
    requestIds: context.requestIds,
    lastEventId: context.lastEventId,
    seenIds: context.seenIds,
    replay: context.resumptionToken !== undefined,
    onEventId: context.onResumptionToken,
  };
}

/** What an invoked request resolved to, handed to a guard as typed params. */
function doneResult<T>({ event }: { event: { output: T } }): { result: T } {
  return { result: event.output };
}

/** A stream that ended before its response: resume it (R1) within budget (R5), or fail the call (R2). */
const onStreamEnded = [
  { guard: 'awaitsNothing', target: '#postStream.done' },
  { guard: 'canResume', target: '#postStream.backoff', actions: 'adoptEnd' },
  // R11: an event id that cannot be sent back as Last-Event-ID: not resumable, fail at once.
  { guard: 'endedUnsendable', target: '#postStream.failed', actions: 'failUnsendable' },
  { target: '#postStream.failed', actions: 'failEnded' },
] as const;

export const postStreamMachine = setup({
  types: {
    context: {} as PostStreamContext,
    input: {} as PostStreamInput,
    events: {} as StreamReaderEvent | ReconnectDue | NetworkEvent,
  },
  actors: {
    postMessage: fromPromise<PostResult, PostRequestInput>(notProvided('postMessage')),
    resumeStream: fromPromise<GetResult, ResumeInput>(notProvided('resumeStream')),
    readStream: fromCallback<StreamReaderCommand, ReadStreamInput>(notProvided('readStream')),
    scheduledWait,
  },
  guards: {
    isResumption: ({ context }) => context.resumptionToken !== undefined,
    wasInterrupted: ({ context }) => context.interrupted !== undefined,
    /** R11: a resumption token that cannot be a Last-Event-ID header fails at once. */
    hasUnsendableToken: ({ context }) => context.resumptionToken !== undefined && !isResumableEventId(context.resumptionToken),
    /** R11: the stream's last event id cannot be sent back, so it cannot be resumed. */
    endedUnsendable: ({ context, event }) => {
      if (event.type !== 'stream.ended') return false;
      const lastEventId = event.end.lastEventId ?? context.lastEventId;
      return lastEventId !== undefined && !isResumableEventId(lastEventId);
    },
    isAccepted: (_, params: { result: PostResult }) => params.result.kind === 'accepted',
    isJson: (_, params: { result: PostResult }) => params.result.kind === 'json',
    /** `resumeStream()` awaits no response: its stream ending is its end. */
    awaitsNothing: ({ context }) => context.requestIds.length === 0,
    /** R1/R2: only a stream that has shown an event id can be resumed, and only within budget (R5). */
    canResume: ({ context, event }) => {
      if (event.type !== 'stream.ended') return false;
      if (event.end.error instanceof MessageTooLargeError) return false;
      const lastEventId = event.end.lastEventId ?? context.lastEventId;
      const attempt = event.end.progressed ? 0 : context.attempt;
      return lastEventId !== undefined && isResumableEventId(lastEventId) && attempt <= context.options.reconnection.maxRetries;
    },
    /** R6: 429, 5xx and network errors spend the same budget; a missing session or a 401 goes to the parent. */
    canRetry: ({ context }, params: { error: unknown }) =>
      // W2: a failure while offline is the network's, not the server's: it spends no budget.
      !isSessionMissing(params.error) &&
      statusOf(params.error) !== 401 &&
      (context.offline || context.attempt <= context.options.reconnection.maxRetries),
    gotStream: (_, params: { result: GetResult }) => params.result.kind === 'sse',
    watchesIdle: ({ context }) => context.options.streamIdleTimeout !== undefined,
    hasScheduler: ({ context }) => context.options.reconnectionScheduler !== undefined,
    isOffline: ({ context }) => context.offline,
  },
  delays: {
    reconnectDelay: ({ context }) => plannedDelay(context, nextReconnectDelay),
    streamIdleTimeout: ({ context }) => context.options.streamIdleTimeout ?? 0,
  },
  actions: {
    planWait: assign(({ context }, params: { delayOf: (context: WaitContext) => number }) => ({ wait: planWait(context, params.delayOf) })),
    noteOffline: assign({ offline: true }),
    noteOnline: assign({ offline: false }),
    acknowledge: ({ context }) => {
      context.ticket.accepted();
    },
    checkIdle: sendTo('reader', { type: 'idle.check' }),
    /** R1, R4, R5: what the ended stream said is what the resume goes on from. */
    adoptEnd: assign(({ context, event }) => {
      if (event.type !== 'stream.ended') return {};
      return {
        lastEventId: event.end.lastEventId ?? context.lastEventId,
        retryMs: event.end.retryMs ?? context.retryMs,
        attempt: event.end.progressed ? 1 : context.attempt + 1,
        waitAfter: 'ended' as const,
        stream: undefined,
      };
    }),
    failUnsendable: assign({
      error: ({ context, event }) => (event.type === 'stream.ended' ? unsendableIdError(event.end.error) : context.error),
    }),
    failEnded: assign({
      error: ({ context, event }) => {
        if (event.type !== 'stream.ended') return context.error;
        return event.end.error instanceof MessageTooLargeError
          ? event.end.error
          : new StreamEndedError(
              event.end.lastEventId === undefined ? 'request ended without a response' : 'request stream could not be resumed',
              { cause: event.end.error },
            );
      },
    }),
    /** The data plane's stream ended: decide on that end exactly as if this machine had read it. */
    replayEnd: raise(({ context }): StreamReaderEvent => ({
      type: 'stream.ended',
      end: context.interrupted?.end ?? { lastEventId: undefined, progressed: false, retryMs: undefined, error: undefined },
    })),
    reportDone: sendParent(({ context }): PostStreamReport => ({
      type: 'post.done',
      postId: context.postId,
      origin: context.origin,
      attempts: context.attempts,
      message: context.message,
      response: context.response,
      sessionId: context.responseSessionId,
    })),
    reportFailed: sendParent(({ context }): PostStreamReport => ({
      type: 'post.failed',
      postId: context.postId,
      origin: context.origin,
      attempts: context.attempts,
      sessionId: context.sessionId,
      message: context.message,
      ticket: context.ticket,
      error: context.error ?? new StreamEndedError('request failed'),
    })),
  },
}).createMachine({
  id: 'postStream',
  context: ({ input, self }) => ({
    ...input,
    postId: self.id,
    requestIds: requestIdsOf(input.message),
    stream: undefined,
    response: undefined,
    responseSessionId: undefined,
    lastEventId: input.resumptionToken,
    seenIds: input.interrupted?.seenIds ?? new Set<string>(),
    retryMs: undefined,
    attempt: 0,
    waitAfter: 'ended',
    error: undefined,
    wait: undefined,
    offline: input.offline ?? false,
  }),
  initial: 'starting',
  on: { 'network.offline': { actions: 'noteOffline' }, 'network.online': { actions: 'noteOnline' } },
  states: {
    starting: {
      always: [
        { guard: 'wasInterrupted', target: 'interrupted' },
        { guard: 'hasUnsendableToken', target: 'failed', actions: assign({ error: () => unsendableIdError(undefined) }) },
        { guard: 'isResumption', target: 'resuming', actions: 'acknowledge' },
        { target: 'sending' },
      ],
    },
    /** Taken over from the data plane: its stream ended before the response (the call was accepted there). */
    interrupted: {
      entry: 'replayEnd',
      on: { 'stream.ended': [...onStreamEnded] },
    },
    sending: {
      invoke: {
        src: 'postMessage',
        input: ({ context }) => ({
          message: context.message,
          requestIds: context.requestIds,
          endpoint: context.endpoint,
          sessionId: context.sessionId,
          protocolVersion: context.protocolVersion,
        }),
        onDone: [
          {
            guard: { type: 'isAccepted', params: doneResult },
            target: 'accepted',
            actions: [assign({ responseSessionId: ({ event }) => event.output.sessionId }), 'acknowledge'],
          },
          {
            guard: { type: 'isJson', params: doneResult },
            target: 'json',
            actions: [
              assign({
                responseSessionId: ({ event }) => event.output.sessionId,
                response: ({ event }) => (event.output.kind === 'json' ? event.output.response : undefined),
              }),
              'acknowledge',
            ],
          },
          {
            target: 'streaming',
            actions: [
              assign({
                responseSessionId: ({ event }) => event.output.sessionId,
                stream: ({ event }) => (event.output.kind === 'sse' ? event.output.stream : undefined),
              }),
              'acknowledge',
            ],
          },
        ],
        onError: { target: 'failed', actions: assign({ error: ({ event }) => toError(event.error) }) },
      },
    },
    /** 202/204 (or any 2xx to a notification): nothing more to wait for. */
    accepted: { type: 'final', entry: 'reportDone' },
    /** The response came as the JSON body. */
    json: { type: 'final', entry: 'reportDone' },
    streaming: {
      invoke: { id: 'reader', src: 'readStream', input: ({ context }) => readerInput(context) },
      initial: 'choosing',
      states: {
        choosing: { always: [{ guard: 'watchesIdle', target: 'watching' }, { target: 'unwatched' }] },
        /** R9: every streamIdleTimeout ms the reader is asked whether anything arrived; a silent stream is a drop. */
        watching: { after: { streamIdleTimeout: { target: 'watching', reenter: true, actions: 'checkIdle' } } },
        unwatched: {},
      },
      on: {
        'stream.response': {
          target: 'done',
          actions: assign({ response: ({ event }) => event.response }),
        },
        'stream.ended': [...onStreamEnded],
      },
    },
    /** R4: the stream's own retry value, else exponential backoff with jitter. */
    backoff: waitStates('reconnectDelay', '#postStream.resuming', nextReconnectDelay),
    /** R1: GET with Last-Event-ID; the request is never POSTed again. */
    resuming: {
      invoke: {
        src: 'resumeStream',
        input: ({ context }) => ({
          sessionId: context.sessionId,
          protocolVersion: context.protocolVersion,
          lastEventId: context.lastEventId ?? '',
        }),
        onDone: [
          {
            guard: { type: 'gotStream', params: doneResult },
            target: 'streaming',
            actions: assign({ stream: ({ event }) => (event.output.kind === 'sse' ? event.output.stream : undefined) }),
          },
          {
            target: 'failed',
            actions: assign({
              error: ({ event }) =>
                new StreamEndedError(
                  `request stream cannot be resumed: the server refused the GET${event.output.kind === 'unsupported' ? ` (HTTP ${event.output.status})` : ''}`,
                ),
            }),
          },
        ],
        onError: [
          {
            guard: { type: 'canRetry', params: ({ event }) => ({ error: event.error }) },
            target: 'backoff',
            actions: assign({ attempt: ({ context }) => context.attempt + 1, waitAfter: 'failed' }),
          },
          { target: 'failed', actions: assign({ error: ({ event }) => toError(event.error) }) },
        ],
      },
    },
    done: { type: 'final', entry: 'reportDone' },
    failed: { type: 'final', entry: 'reportFailed' },
  },
});
