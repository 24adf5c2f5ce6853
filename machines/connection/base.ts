/**
 * What every concern of the connection chart shares: the typed `setup()` (context, events,
 * actor slots, delays), the type of a state, guard and action written beside its states, and
 * the few guards and actions that more than one concern uses.
 */
import { assertEvent, assign, emit, enqueueActions, fromCallback, fromPromise, setup, stopChild } from 'xstate';
import type { ActionFunction, GuardPredicate, ParameterizedObject, StateNodeConfig } from 'xstate';
import { DEFAULT_LEGACY_ENDPOINT_TIMEOUT, type AuthChallenge } from '../types.js';
import { postStreamMachine } from '../post-stream.js';
import { standaloneStreamMachine } from '../standalone-stream.js';
import { isSessionMissing, statusOf, StreamEndedError, TransportClosedError } from '../errors.js';
import type {
  AuthReturn,
  ConnectionContext,
  ConnectionEmitted,
  ConnectionEvent,
  ConnectionInput,
  DeleteSessionInput,
  PostRecord,
} from './types.js';

import { dropRequest, spawnPosts } from './posts.js';
import {
  BATCHING_PROTOCOL,
  cancelledRequestId,
  challengeOf,
  failCall,
  INITIALIZE,
  INITIALIZED,
  isRequest,
  asRequest,
  requestIdsOf,
} from './messages.js';

/** The session and protocol version every request of this session carries. */
export function versionFields(protocolVersion: string | undefined): Pick<ConnectionContext, 'protocolVersion' | 'batching'> {
  return { protocolVersion, batching: protocolVersion === BATCHING_PROTOCOL };
}

export function deleteInput({ context }: { context: ConnectionContext }): DeleteSessionInput {
  return { sessionId: context.sessionId ?? '', protocolVersion: context.protocolVersion };
}

/** W2: the host's network signal says offline (the connection chart's `offline` tag): a child spawned now starts paused-ready. */
export const isOffline = (self: { getSnapshot(): { hasTag(tag: string): boolean } }): boolean => self.getSnapshot().hasTag('offline');

export const connectionSetup = setup({
  types: {
    context: {} as ConnectionContext,
    input: {} as ConnectionInput,
    events: {} as ConnectionEvent,
    emitted: {} as ConnectionEmitted,
    children: {} as {
      standalone: 'standaloneStream';
      network: 'networkStatus';
      [post: `post-${number}`]: 'postStream';
      /** E7: a `subscriptions/listen` stream (2026-07-28), a POST stream of its own kind. */
      [listen: `listen-${number}`]: 'postStream';
    },
  },
  actors: {
    postStream: postStreamMachine,
    standaloneStream: standaloneStreamMachine,
    deleteSession: fromPromise<{ status: number }, DeleteSessionInput>(() => {
      throw new Error("actor 'deleteSession' must be provided with machine.provide({ actors })");
    }),
    authorize: fromPromise<'AUTHORIZED', { challenge: AuthChallenge | undefined }>(() => {
      throw new Error("actor 'authorize' must be provided with machine.provide({ actors })");
    }),
    legacyStream: fromCallback<{ type: 'noop' }, Record<string, never>>(() => {
      throw new Error("actor 'legacyStream' must be provided with machine.provide({ actors })");
    }),
    /** W2: tells the chart when the host's network goes and comes back (nothing on a host without a signal). */
    networkStatus: fromCallback<{ type: 'noop' }, Record<string, never>>(() => {
      throw new Error("actor 'networkStatus' must be provided with machine.provide({ actors })");
    }),
  },
  delays: {
    deleteTimeout: ({ context }) => context.options.deleteTimeout,
    /** How long close() waits for the server to end the standalone stream after the DELETE. */
    drainTimeout: 100,
    /** F7, L1: how long the legacy fallback waits for the server's `endpoint` event. */
    legacyEndpointTimeout: ({ context }) => context.options.legacyEndpointTimeout ?? DEFAULT_LEGACY_ENDPOINT_TIMEOUT,
    /** F3, F4: the chart's own wait before it tries the server again (R4), planned as the wait begins (W3). */
    recoveryDelay: ({ context }) => context.recoveryWait?.delayMs ?? context.options.reconnection.initialReconnectionDelay,
  },
});

type Setup = typeof connectionSetup;
type BaseAction = Parameters<Setup['createAction']>[0];
type ActorsOf<A> =
  A extends ActionFunction<ConnectionContext, ConnectionEvent, ConnectionEvent, unknown, infer T, never, never, infer _D, ConnectionEmitted>
    ? T
    : never;
type DelaysOf<A> =
  A extends ActionFunction<ConnectionContext, ConnectionEvent, ConnectionEvent, unknown, infer _T, never, never, infer D, ConnectionEmitted>
    ? D
    : never;
type Actors = ActorsOf<BaseAction>;
type Delays = DelaysOf<BaseAction>;

type Params = ParameterizedObject['params'] | undefined;

/** Guards written beside their states, typed as `setup()` would; the index registers them by name. */
export function guards<T extends Record<string, Params>>(impl: {
  [K in keyof T]: GuardPredicate<ConnectionContext, ConnectionEvent, T[K], never>;
}) {
  return impl;
}

/** Actions written beside their states, typed as `setup()` would; the index registers them by name. */
export function actions<T extends Record<string, Params>>(impl: {
  [K in keyof T]: ActionFunction<
    ConnectionContext,
    ConnectionEvent,
    ConnectionEvent,
    T[K],
    Actors,
    never,
    never,
    Delays,
    ConnectionEmitted
  >;
}) {
  return impl;
}
/** A state written beside its guards and actions; names are checked when the index assembles the chart. */
export type ConnectionState = StateNodeConfig<
  ConnectionContext,
  ConnectionEvent,
  Actors,
  { type: string; params: unknown },
  { type: string; params: unknown },
  Delays,
  string,
  unknown,
  ConnectionEmitted,
  Record<string, unknown>,
  Record<string, unknown>
>;

/**
 * W2: the host's network signal (a browser's offline/online events), watched while a connection
 * is open (a session's, or a 2026-07-28 one). Offline, the streams' waits pause and the facade
 * fails sends fast; online, every waiting stream reconnects at once.
 */
export const networkRegion = {
  // Spawned on entry, not invoked: a host without a signal (Node) runs no actor for it.
  entry: 'watchNetwork',
  exit: 'unwatchNetwork',
  initial: 'online',
  states: {
    online: { on: { 'network.offline': { target: 'offline', actions: 'tellStreams' } } },
    offline: { tags: ['offline'], on: { 'network.online': { target: 'online', actions: 'tellStreams' } } },
  },
} as const satisfies ConnectionState;

/** Answers and failures that concern only their own call. */
export const otherFailure = { actions: ['answerFailure', 'stopPost'] } as const;
export const otherAnswer = { actions: ['deliverResponse', 'stopPost'] } as const;

/** Guards more than one concern asks. */
export const sharedGuards = guards({
  isInitializeResult: ({ event }) =>
    event.type === 'post.done' && isRequest(event.message, INITIALIZE) && event.response !== undefined && 'result' in event.response,
  isInitializedAccepted: ({ event }) => event.type === 'post.done' && isRequest(event.message, INITIALIZED),
  isCancellation: ({ event }) => event.type === 'send' && cancelledRequestId(event.message) !== undefined,
  isSessionMissing: ({ event }) => event.type === 'post.failed' && isSessionMissing(event.error),
  /** A 404 for a session already replaced (a slow call racing a recovery): not this session's end. */
  isStaleSessionMissing: ({ context, event }) =>
    event.type === 'post.failed' && isSessionMissing(event.error) && event.sessionId !== context.sessionId && event.origin !== 'recovery',
  /**
   * A1: a 401 is authorized once per message (a second 401 after a successful flow fails the
   * call); A2: a 403 insufficient_scope steps up at most maxStepUpRetries times.
   */
  needsAuthorization: ({ context, event }) => {
    if (event.type !== 'post.failed' || !context.options.authorization) return false;
    const status = statusOf(event.error);
    if (status === 401) return event.attempts.auth === 0;
    return (
      status === 403 &&
      challengeOf(event.error)?.error === 'insufficient_scope' &&
      event.attempts.stepUps < context.options.maxStepUpRetries
    );
  },
});

/** Actions more than one concern takes. */
export const sharedActions = actions({
  spawnPost: assign(({ context, event, spawn, self }) => {
    assertEvent(event, 'send');
    const { message, ticket, resumptionToken, onResumptionToken, attempts, headers } = event;
    return spawnPosts(
      context,
      spawn,
      [{ message, ticket, origin: 'caller', attempts, resumptionToken, onResumptionToken, headers }],
      isOffline(self),
    );
  }),
  /** Re-established (F3) or authorized (A1): the queued messages go out in order. */
  flushQueue: assign(({ context, spawn, self }) => ({ ...spawnPosts(context, spawn, context.queue, isOffline(self)), queue: [] })),
  queueSend: assign(({ context, event }) => {
    assertEvent(event, 'send');
    return { queue: [...context.queue, { ...event, origin: 'caller' as const }] };
  }),
  /** A report's POST child is done: stop it now, since live children make every later spawn slower. */
  stopPost: enqueueActions(({ context, event, enqueue }) => {
    assertEvent(event, ['post.done', 'post.failed']);
    // A direct call reports without an actor: nothing to stop.
    if (event.postId === undefined) return;
    // E2: a stream that ended with its answer has ended (the v2 SDK's onRequestStreamEnd).
    if (event.type === 'post.done') context.posts[event.postId]?.ticket.ended?.();
    enqueue(stopChild(event.postId));
    const { [event.postId]: _done, ...posts } = context.posts;
    enqueue.assign({ posts });
  }),
  adoptSession: assign(({ context, event }) => {
    assertEvent(event, 'post.done');
    if (event.response === undefined || !('result' in event.response)) return {};
    const version = event.response.result.protocolVersion;
    return {
      sessionId: event.sessionId,
      ...versionFields(typeof version === 'string' ? version : context.protocolVersion),
      // F3: the initialize that made this session is what a recovery repeats. Cached here too, as
      // an initialize the facade POSTed itself never passed through a `send` event.
      initializeRequest: asRequest(event.message) ?? context.initializeRequest,
      sessionMissing: false,
      era: 'streamable' as const,
    };
  }),
  deliverResponse: ({ context, event }) => {
    assertEvent(event, 'post.done');
    if (event.response !== undefined) context.sink.deliver(event.response);
  },
  answerFailure: enqueueActions(({ context, event, enqueue }) => {
    assertEvent(event, 'post.failed');
    failCall(context.sink, requestIdsOf(event.message), event.ticket, event.error);
    // A stream that broke after send() resolved: onerror is where its original error can still be seen (F6).
    if (event.error instanceof StreamEndedError) enqueue(emit({ type: 'warning', error: event.error }));
  }),
  /** Like answerFailure, with the session-expired error as the reason (its cause is the 404). */
  answerExpired: ({ context, event }) => {
    assertEvent(event, 'post.failed');
    failCall(context.sink, requestIdsOf(event.message), event.ticket, context.error ?? event.error);
  },
  /** A1, A2: the message waits for authorization, then goes again; the challenge says what to ask for. */
  holdForAuthorization: assign(({ context, event }) => {
    assertEvent(event, 'post.failed');
    const attempts =
      statusOf(event.error) === 401
        ? { ...event.attempts, auth: event.attempts.auth + 1 }
        : { ...event.attempts, stepUps: event.attempts.stepUps + 1 };
    return {
      authChallenge: challengeOf(event.error) ?? context.authChallenge,
      queue: [...context.queue, { message: event.message, ticket: event.ticket, origin: event.origin, attempts }],
    };
  }),
  returnTo: assign((_, params: { state: AuthReturn }) => ({ authReturn: params.state })),
  /**
   * R8: the caller cancelled a request: its POST stream, backoff timer and resume GET stop now,
   * and a queued copy is dropped. The cancellation itself is still sent.
   */
  cancelRequest: enqueueActions(({ context, event, enqueue }) => {
    assertEvent(event, 'send');
    const id = cancelledRequestId(event.message);
    if (id === undefined) return;
    const cancelled = new StreamEndedError('request cancelled by the client');
    // The direct path (the facade's, direct.ts) stops its call for it, if it has one.
    enqueue.emit({ type: 'direct.cancel', requestId: id, error: cancelled });
    const { posts, queue, stopped } = dropRequest(context, id, cancelled);
    for (const childId of stopped) enqueue(stopChild(childId));
    enqueue.assign({ posts, queue });
  }),
  /**
   * E2, E6: the caller aborted this request's `requestSignal`: its POST stream stops now and a
   * queued copy is dropped; nothing is sent for it (the direct path stops a direct call itself).
   */
  abortRequest: enqueueActions(({ context, event, enqueue }) => {
    assertEvent(event, 'request.abort');
    const { posts, queue, stopped } = dropRequest(context, event.requestId, new StreamEndedError('request aborted by its requestSignal'));
    for (const childId of stopped) enqueue(stopChild(childId));
    enqueue.assign({ posts, queue });
  }),
  /** Sends are refused: with why the transport failed, else because it is closed (F4). */
  rejectSend: ({ context, event }) => {
    assertEvent(event, ['send', 'session.terminate']);
    event.ticket.failed(context.error ?? new TransportClosedError('transport is closed or not started; call start()'));
  },
  /** N3: the session is over (closed, terminated, failed, or forgotten by the server): the host drops what it kept for it. */
  emitSessionEnded: emit({ type: 'session.ended' as const }),
});

export type { PostRecord };
