import { assign, emit, enqueueActions, fromCallback, fromPromise, or, setup, stateIn, stopChild } from 'xstate';
import type {
  AuthChallenge,
  ChartOptions,
  JSONRPCMessage,
  JSONRPCRequest,
  JSONRPCResponse,
  MessageSink,
  SendAttempts,
  SendTicket,
} from './events.js';
import {
  postStreamMachine,
  requestIdsOf,
  type PostOrigin,
  type PostStreamInput,
  type PostStreamReport,
} from './post-stream.js';
import { standaloneStreamMachine, type StandaloneStreamReport } from './standalone-stream.js';
import {
  asFailure,
  isSessionMissing,
  isUnauthorized,
  McpTransportError,
  ProtocolError,
  SessionExpiredError,
  StreamableHTTPError,
  StreamEndedError,
  toError,
  TransportClosedError,
  sessionExpiredMessage,
} from './errors.js';

export interface ConnectionInput {
  options: ChartOptions;
  sink: MessageSink;
  /** The host's I/O, opaque to the chart: the provided actors find it here (one actor system per transport). */
  io?: unknown;
}

export interface DeleteSessionInput {
  sessionId: string;
  protocolVersion: string | undefined;
}

export type ConnectionEvent =
  | { type: 'start' }
  | ({ type: 'send' } & Omit<QueuedSend, 'origin'>)
  | { type: 'protocolVersion.set'; version: string }
  | { type: 'close' }
  | { type: 'session.terminate'; ticket: SendTicket }
  | PostStreamReport
  | StandaloneStreamReport
  | LegacyStreamReport;

/** What the legacy (2024-11-05) stream actor tells the chart (L1). */
export type LegacyStreamReport =
  | { type: 'legacy.endpoint'; endpoint: string }
  | { type: 'legacy.ended'; error: Error };

/** What the running chart tells its host (the facade, a UI) without being asked. */
export type ConnectionEmitted =
  | { type: 'warning'; error: Error }
  | { type: 'failed'; error: Error }
  | { type: 'closed' }
  /** The session was re-established (F3); IDs are fingerprints, never the IDs themselves (X1). */
  | { type: 'session.changed'; previous: string | undefined; current: string | undefined };

/** The states that can meet a 401 or 403 and return once authorized. */
export type AuthReturn = 'connecting' | 'initializing' | 'open';

/** A message waiting for a session to exist again. */
export interface QueuedSend {
  message: JSONRPCMessage | JSONRPCMessage[];
  ticket: SendTicket;
  origin: PostOrigin;
  /** Authorization already gone through for this message (A1, A2). */
  attempts?: SendAttempts | undefined;
  /** R10: resume an earlier stream instead of POSTing. */
  resumptionToken?: string | undefined;
  onResumptionToken?: ((token: string) => void) | undefined;
}

export interface ConnectionContext extends ConnectionInput {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** The client's `initialize` request, kept to re-establish an expired session (F3). */
  initializeRequest: JSONRPCRequest | undefined;
  /** The server said the session is gone: no DELETE for it (F1). */
  sessionMissing: boolean;
  /** The session that expired, while it is being replaced (for `session.changed`). */
  expiredSessionId: string | undefined;
  /** Messages held while the session is re-established, sent in order afterwards (F3). */
  queue: QueuedSend[];
  /** Why the transport failed; `send()` rejects with exactly this while failed (F4). */
  error: Error | undefined;
  /** The last `WWW-Authenticate` challenge: what the next authorization asks for (A1, A2). */
  authChallenge: AuthChallenge | undefined;
  /** The state that met the 401 or 403, where authorizing returns to. */
  authReturn: AuthReturn;
  /** L1: where messages are POSTed on the legacy HTTP+SSE transport. */
  legacyEndpoint: string | undefined;
  /** L1: the initialize failure that started the fallback, kept for the error if the fallback fails too. */
  fallbackCause: Error | undefined;
  /** A different session ID was already reported once (H7). */
  sessionIdMismatchReported: boolean;
  /** Sessions re-established since a call last got its response (bounds recovery loops, F3). */
  recoveriesWithoutProgress: number;
  nextPostId: number;
  /** The caller of terminateSession() while its DELETE runs. */
  terminateTicket: SendTicket | undefined;
}

const INITIALIZE = 'initialize';
const INITIALIZED = 'notifications/initialized';
const CANCELLED = 'notifications/cancelled';

function isRequest(message: JSONRPCMessage | JSONRPCMessage[], method: string): boolean {
  return !Array.isArray(message) && 'method' in message && message.method === method;
}

/** The request an outgoing `notifications/cancelled` names (R8). */
function cancelledRequestId(message: JSONRPCMessage | JSONRPCMessage[]): JSONRPCRequest['id'] | undefined {
  if (!isRequest(message, CANCELLED) || Array.isArray(message) || !('params' in message)) return undefined;
  const id = message.params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The HTTP status behind an error, looked for along its `cause` chain (a SessionExpiredError's 404). */
function statusOf(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const status = (e as { status?: unknown }).status;
    if (typeof status === 'number') return status;
  }
  return undefined;
}

/** The synthetic answer to a call that failed, so a waiting client rejects at once (P10). */
export function failureResponse(id: JSONRPCRequest['id'], error: Error): JSONRPCResponse {
  const status = statusOf(error);
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: -32000,
      message: error.message,
      data: {
        type: error.name,
        ...(status === undefined ? {} : { status }),
        ...(error.cause instanceof Error ? { cause: error.cause.message } : {}),
      },
    },
  };
}

/** A short, stable, non-reversible tag for a session ID, for events and logs (X1). */
export function fingerprint(sessionId: string | undefined): string | undefined {
  if (sessionId === undefined) return undefined;
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    hash ^= sessionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `#${hash.toString(16).padStart(8, '0')}`;
}

/** While an open session closes: sends are refused, another close() waits, stream reports are moot. */
const whileClosing = {
  close: {},
  send: { actions: 'rejectSend' },
  'session.terminate': { actions: 'rejectSend' },
  'standalone.sessionMissing': {},
  'standalone.unauthorized': {},
  'standalone.degraded': {},
} as const;

const noTicket: SendTicket = { accepted: () => undefined, failed: () => undefined };

function freshSession(context: ConnectionContext): ConnectionContext {
  return {
    ...context,
    sessionId: context.options.sessionId,
    protocolVersion: undefined,
    initializeRequest: undefined,
    sessionMissing: false,
    expiredSessionId: undefined,
    queue: [],
    error: undefined,
    legacyEndpoint: undefined,
    fallbackCause: undefined,
    recoveriesWithoutProgress: 0,
    sessionIdMismatchReported: false,
  };
}

function postInput(context: ConnectionContext, send: QueuedSend): PostStreamInput {
  const initializing = isRequest(send.message, INITIALIZE);
  return {
    message: send.message,
    ticket: send.ticket,
    origin: send.origin,
    attempts: send.attempts ?? { auth: 0, stepUps: 0 },
    endpoint: context.legacyEndpoint,
    resumptionToken: send.resumptionToken,
    onResumptionToken: send.onResumptionToken,
    // H3: an initialize never carries a session or version, even stale ones.
    sessionId: initializing ? undefined : context.sessionId,
    protocolVersion: initializing ? undefined : context.protocolVersion,
    options: context.options,
  };
}

export const connectionMachine = setup({
  types: {
    context: {} as ConnectionContext,
    input: {} as ConnectionInput,
    events: {} as ConnectionEvent,
    emitted: {} as ConnectionEmitted,
    children: {} as { standalone: 'standaloneStream'; [post: `post-${number}`]: 'postStream' },
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
  },
  guards: {
    hasPresetSession: ({ context }) => context.options.sessionId !== undefined,
    isInitialize: ({ event }) => event.type === 'send' && isRequest(event.message, INITIALIZE),
    isCancellation: ({ event }) => event.type === 'send' && cancelledRequestId(event.message) !== undefined,
    isInitializeResult: ({ event }) =>
      event.type === 'post.done' && isRequest(event.message, INITIALIZE) && event.response !== undefined && 'result' in event.response,
    isInitializeFailure: ({ event }) =>
      (event.type === 'post.failed' || event.type === 'post.done') && isRequest(event.message, INITIALIZE),
    isInitializedAccepted: ({ event }) => event.type === 'post.done' && isRequest(event.message, INITIALIZED),
    /** A report about the chart's own recovery POST (F3). */
    isRecovery: ({ event }) => (event.type === 'post.done' || event.type === 'post.failed') && event.origin === 'recovery',
    isSessionMissing: ({ event }) => event.type === 'post.failed' && isSessionMissing(event.error),
    /** A 404 for a session already replaced (a slow call racing a recovery): not this session's end. */
    isStaleSessionMissing: ({ context, event }) =>
      event.type === 'post.failed' &&
      isSessionMissing(event.error) &&
      event.sessionId !== context.sessionId &&
      event.origin === 'caller',
    /**
     * A1: a 401 is authorized once per message (a second 401 after a successful flow fails the
     * call); A2: a 403 insufficient_scope steps up at most maxStepUpRetries times.
     */
    needsAuthorization: ({ context, event }) => {
      if (event.type !== 'post.failed' || !context.options.authorization) return false;
      const { status, challenge } = event.error as { status?: unknown; challenge?: AuthChallenge };
      if (status === 401) return event.attempts.auth === 0;
      return status === 403 && challenge?.error === 'insufficient_scope' && event.attempts.stepUps < context.options.maxStepUpRetries;
    },
    /** F3: recover when asked to, when there is an initialize to repeat, and not for a request already repeated once. */
    canRecover: ({ context, event }) =>
      context.options.sessionRecovery === 'reinitialize' &&
      context.initializeRequest !== undefined &&
      (event.type !== 'post.failed' || event.origin === 'caller'),
    /** A 404 met while recovering: the request waits for the new session, unless it was already repeated. */
    canRequeue: ({ event }) => event.type === 'post.failed' && isSessionMissing(event.error) && event.origin === 'caller',
    isOtherSessionId: ({ context, event }) =>
      event.type === 'post.done' &&
      event.sessionId !== undefined &&
      context.sessionId !== undefined &&
      event.sessionId !== context.sessionId &&
      !context.sessionIdMismatchReported,
    standaloneEnabled: ({ context }) => context.options.standaloneStream,
    standaloneDone: or([stateIn('#connection.open.standalone.ended'), stateIn('#connection.open.standalone.off')]),
    authorizes: ({ context }) => context.options.authorization,
    needsUserMidSession: ({ context, event }) =>
      context.authReturn === 'open' && isUnauthorized((event as { error?: unknown }).error),
    /** A session re-established and no call answered since: another 404 is not the session's fault to chase again. */
    recoveredWithoutProgress: ({ context }) => context.recoveriesWithoutProgress > 0,
    /** L1: 400, 404 or 405 to initialize (never 401/403) means a server of the 2024-11-05 transport. */
    canFallBackToLegacy: ({ context, event }) => {
      if (event.type !== 'post.failed' || !context.options.legacyFallback || !isRequest(event.message, INITIALIZE)) return false;
      const status = (event.error as { status?: unknown }).status;
      return status === 400 || status === 404 || status === 405;
    },
    returnsTo: ({ context }, params: { state: AuthReturn }) => context.authReturn === params.state,
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
    /** How long close() waits for the server to end the standalone stream after the DELETE. */
    drainTimeout: 100,
  },
  actions: {
    startFresh: assign(({ context }) => freshSession(context)),
    cacheInitialize: assign({
      initializeRequest: ({ event }) =>
        event.type === 'send' && !Array.isArray(event.message) && 'id' in event.message && 'method' in event.message
          ? event.message
          : undefined,
      sessionId: undefined,
      protocolVersion: undefined,
      sessionMissing: false,
    }),
    spawnPost: assign(({ context, event, spawn }) => {
      if (event.type !== 'send') return {};
      spawn('postStream', {
        id: `post-${context.nextPostId}`,
        input: postInput(context, { ...event, origin: 'caller' }),
      });
      return { nextPostId: context.nextPostId + 1 };
    }),
    /** A report's POST child is done: stop it now, since live children make every later spawn slower. */
    stopPost: stopChild(({ event }) => (event.type === 'post.done' || event.type === 'post.failed' ? event.postId : '')),
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
      // The SDK's UnauthorizedError reaches the caller through send() itself, so that
      // `error instanceof UnauthorizedError` holds after client.connect(), as with the SDK.
      if (!isUnauthorized(event.error)) {
        for (const id of requestIdsOf(event.message)) context.sink.deliver(failureResponse(id, event.error));
      }
      // A stream that broke after send() resolved: onerror is where its original error can still be seen (F6).
      if (event.error instanceof StreamEndedError) context.sink.warn(event.error);
      event.ticket.failed(event.error);
    },
    /** A1, A2: the message waits for authorization, then goes again; the challenge says what to ask for. */
    holdForAuthorization: assign(({ context, event }) => {
      if (event.type !== 'post.failed') return {};
      const { status, challenge } = event.error as { status?: unknown; challenge?: AuthChallenge };
      const attempts =
        status === 401
          ? { ...event.attempts, auth: event.attempts.auth + 1 }
          : { ...event.attempts, stepUps: event.attempts.stepUps + 1 };
      return {
        authChallenge: challenge ?? context.authChallenge,
        queue: [...context.queue, { message: event.message, ticket: event.ticket, origin: event.origin, attempts }],
      };
    }),
    holdForLegacy: assign({
      queue: ({ context, event }) =>
        event.type === 'post.failed'
          ? [...context.queue, { message: event.message, ticket: event.ticket, origin: 'retry' as const, attempts: event.attempts }]
          : context.queue,
      fallbackCause: ({ event }) => (event.type === 'post.failed' ? event.error : undefined),
    }),
    adoptEndpoint: assign({
      legacyEndpoint: ({ context, event }) => (event.type === 'legacy.endpoint' ? event.endpoint : context.legacyEndpoint),
    }),
    /** The fallback failed too: the error names both, and keeps the initialize's HTTP status. */
    failLegacy: assign({
      error: ({ context, event }) => {
        if (event.type !== 'legacy.ended') return context.error;
        const first = context.fallbackCause;
        const status = (first as { status?: unknown } | undefined)?.status;
        return new StreamableHTTPError(
          `${first?.message ?? 'initialize failed'}; the legacy HTTP+SSE fallback failed too: ${event.error.message}`,
          { status: typeof status === 'number' ? status : undefined, cause: event.error },
        );
      },
    }),
    returnTo: assign((_, params: { state: AuthReturn }) => ({ authReturn: params.state })),
    holdStandaloneChallenge: assign({
      authChallenge: ({ context, event }) =>
        event.type === 'standalone.unauthorized'
          ? ((event.error as { challenge?: AuthChallenge }).challenge ?? context.authChallenge)
          : context.authChallenge,
    }),
    /** The calls that met the 401/403 fail with the SDK's UnauthorizedError; sends queued meanwhile go on. */
    failAuthorizationTriggers: enqueueActions(({ context, event, enqueue }) => {
      const error = toError((event as { error?: unknown }).error);
      const kept: QueuedSend[] = [];
      for (const queued of context.queue) {
        if (queued.attempts === undefined) kept.push(queued);
        else queued.ticket.failed(error);
      }
      enqueue.assign({ queue: kept });
    }),
    /** Authorization did not complete: every waiting message fails with its reason (the SDK's UnauthorizedError for a redirect). */
    failQueued: enqueueActions(({ context, event, enqueue }) => {
      const error = toError((event as { error?: unknown }).error);
      for (const queued of context.queue) {
        if (!isUnauthorized(error)) {
          for (const id of requestIdsOf(queued.message)) context.sink.deliver(failureResponse(id, error));
        }
        queued.ticket.failed(error);
      }
      enqueue.assign({ queue: [], error: asFailure(error) });
    }),
    /** Like answerFailure, with the session-expired error as the reason (its cause is the 404). */
    answerExpired: ({ context, event }) => {
      if (event.type !== 'post.failed') return;
      const error: Error = context.error ?? event.error;
      for (const id of requestIdsOf(event.message)) context.sink.deliver(failureResponse(id, error));
      event.ticket.failed(error);
    },
    setVersion: assign({
      protocolVersion: ({ context, event }) => (event.type === 'protocolVersion.set' ? event.version : context.protocolVersion),
    }),
    rejectSend: ({ context, event }) => {
      if (event.type !== 'send' && event.type !== 'session.terminate') return;
      event.ticket.failed(context.error ?? new TransportClosedError('transport is closed or not started; call start()'));
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
      error: ({ context, event }) =>
        new SessionExpiredError(sessionExpiredMessage(context.options.sessionId !== undefined), {
          cause:
            event.type === 'post.failed' || event.type === 'standalone.sessionMissing'
              ? event.error
              : event.type === 'post.done'
                ? new ProtocolError('re-initialize was not answered with an InitializeResult')
                : undefined,
        }),
    }),
    /** F3: forget the expired session; the request that met the 404 waits for the new one. */
    beginRecovery: assign(({ context, event }) => ({
      expiredSessionId: context.sessionId,
      sessionId: undefined,
      sessionMissing: false,
      queue:
        event.type === 'post.failed'
          ? [...context.queue, { message: event.message, ticket: event.ticket, origin: 'retry' as const, attempts: event.attempts }]
          : context.queue,
    })),
    requeue: assign({
      queue: ({ context, event }) =>
        event.type === 'post.failed'
          ? [...context.queue, { message: event.message, ticket: event.ticket, origin: 'retry' as const, attempts: event.attempts }]
          : context.queue,
    }),
    queueSend: assign({
      queue: ({ context, event }) =>
        event.type === 'send' ? [...context.queue, { ...event, origin: 'caller' as const }] : context.queue,
    }),
    reinitialize: assign(({ context, spawn }) => {
      if (context.initializeRequest === undefined) return {};
      spawn('postStream', {
        id: `post-${context.nextPostId}`,
        input: postInput(context, { message: context.initializeRequest, ticket: noTicket, origin: 'recovery' }),
      });
      return { nextPostId: context.nextPostId + 1 };
    }),
    confirmInitialized: assign(({ context, spawn }) => {
      spawn('postStream', {
        id: `post-${context.nextPostId}`,
        input: postInput(context, {
          message: { jsonrpc: '2.0', method: INITIALIZED },
          ticket: noTicket,
          origin: 'recovery',
        }),
      });
      return { nextPostId: context.nextPostId + 1 };
    }),
    /** F3: a call that met the 404 of a session already replaced goes again, once, on the current one. */
    resendOnCurrentSession: assign(({ context, event, spawn }) => {
      if (event.type !== 'post.failed') return {};
      spawn('postStream', {
        id: `post-${context.nextPostId}`,
        input: postInput(context, { message: event.message, ticket: event.ticket, origin: 'retry', attempts: event.attempts }),
      });
      return { nextPostId: context.nextPostId + 1 };
    }),
    /** F3: the queued messages go out in order on the new session. */
    flushQueue: assign(({ context, spawn }) => {
      let next = context.nextPostId;
      for (const send of context.queue) spawn('postStream', { id: `post-${next++}`, input: postInput(context, send) });
      return { nextPostId: next, queue: [] };
    }),
    reportStandaloneDegraded: emit(({ event }) => ({
      type: 'warning' as const,
      error: event.type === 'standalone.degraded' ? event.error : new StreamEndedError('standalone stream degraded'),
    })),
    reportStandaloneGone: emit(({ event }) => ({
      type: 'warning' as const,
      error: new StreamEndedError('standalone stream: the server answers 404 for a session just re-established; not listening any more', {
        cause: event.type === 'standalone.sessionMissing' ? event.error : undefined,
      }),
    })),
    countRecovery: assign({ recoveriesWithoutProgress: ({ context }) => context.recoveriesWithoutProgress + 1 }),
    resetRecoveries: assign({ recoveriesWithoutProgress: 0 }),
    emitSessionChanged: emit(({ context }) => ({
      type: 'session.changed' as const,
      previous: fingerprint(context.expiredSessionId),
      current: fingerprint(context.sessionId),
    })),
    /**
     * R8: the caller cancelled a request: its POST stream, backoff timer and resume GET stop now,
     * and a queued copy is dropped. The cancellation itself is still sent.
     */
    cancelRequest: enqueueActions(({ context, event, self, enqueue }) => {
      if (event.type !== 'send') return;
      const id = cancelledRequestId(event.message);
      const cancelled = new StreamEndedError('request cancelled by the client');
      for (const [childId, child] of Object.entries(self.getSnapshot().children)) {
        const snapshot: unknown = child?.getSnapshot();
        const post = (snapshot as { context?: { requestIds?: unknown; ticket?: SendTicket } } | undefined)?.context;
        if (!Array.isArray(post?.requestIds) || !post.requestIds.includes(id)) continue;
        post.ticket?.failed(cancelled);
        enqueue.stopChild(childId);
      }
      const kept = context.queue.filter((queued) => !requestIdsOf(queued.message).includes(id as JSONRPCRequest['id']));
      for (const dropped of context.queue) if (!kept.includes(dropped)) dropped.ticket.failed(cancelled);
      if (kept.length !== context.queue.length) enqueue.assign({ queue: kept });
    }),
    windDownStandalone: enqueueActions(({ self, enqueue }) => {
      // The snapshot read here is the one before this step: only a child still running is told.
      const standalone = self.getSnapshot().children.standalone;
      if ((standalone?.getSnapshot() as { status?: string } | undefined)?.status === 'active' && standalone) {
        enqueue.sendTo(standalone, { type: 'windDown' });
      }
    }),
    /** Every child stops now; callers still waiting on `send()` learn why (F2). */
    stopEverything: enqueueActions(({ context, self, enqueue }, params: { answer: boolean; keep?: string }) => {
      const reason = context.error ?? new TransportClosedError('transport closed');
      for (const [id, child] of Object.entries(self.getSnapshot().children)) {
        if (id === params.keep) continue;
        const snapshot = child?.getSnapshot() as
          | { status?: string; context?: { ticket?: SendTicket; requestIds?: unknown; origin?: unknown } }
          | undefined;
        // The snapshot read here is the one before this step: a child that already finished was answered.
        if (snapshot?.status !== 'active') {
          enqueue.stopChild(id);
          continue;
        }
        const post = snapshot.context;
        // On failure, calls whose response is still streaming are answered (P10); on close the
        // Client's onclose does that.
        if (params.answer && post?.origin !== 'recovery' && Array.isArray(post?.requestIds) && !isUnauthorized(reason)) {
          for (const requestId of post.requestIds as JSONRPCRequest['id'][]) context.sink.deliver(failureResponse(requestId, reason));
        }
        post?.ticket?.failed(reason);
        enqueue.stopChild(id);
      }
      for (const queued of context.queue) queued.ticket.failed(reason);
      context.terminateTicket?.failed(reason);
      enqueue.assign({ queue: [], terminateTicket: undefined });
    }),
    emitFailed: emit(({ context }) => ({
      type: 'failed' as const,
      error: context.error ?? asFailure(new Error('unknown failure')),
    })),
    emitClosed: emit({ type: 'closed' as const }),
    forgetError: assign({ error: undefined }),
    /** The session ended with close(): `transport.sessionId` no longer names it. */
    forgetClosedSession: assign({ sessionId: undefined }),
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
    /** A terminateSession() whose DELETE was cut short by another turn of events is told so. */
    abandonTerminate: enqueueActions(({ context, enqueue }) => {
      if (context.terminateTicket === undefined) return;
      context.terminateTicket.failed(new McpTransportError('terminateSession() was interrupted before its DELETE was answered'));
      enqueue.assign({ terminateTicket: undefined });
    }),
    /** B2: terminateSession() where there is no open session to end: nothing to do, or not now. */
    terminateNotNow: ({ context, event }) => {
      if (event.type !== 'session.terminate') return;
      if (context.sessionId === undefined) event.ticket.accepted();
      else event.ticket.failed(new McpTransportError('terminateSession() is possible only while the session is open'));
    },
  },
}).createMachine({
  id: 'connection',
  context: ({ input }) => ({
    ...input,
    sessionId: undefined,
    protocolVersion: undefined,
    initializeRequest: undefined,
    sessionMissing: false,
    expiredSessionId: undefined,
    queue: [],
    error: undefined,
    authChallenge: undefined,
    authReturn: 'connecting',
    legacyEndpoint: undefined,
    fallbackCause: undefined,
    sessionIdMismatchReported: false,
    recoveriesWithoutProgress: 0,
    nextPostId: 0,
    terminateTicket: undefined,
  }),
  initial: 'idle',
  on: {
    'protocolVersion.set': { actions: 'setVersion' },
    close: '.closing',
    'session.terminate': { actions: 'terminateNotNow' },
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
    /** The initialize POST is in flight, or awaited. */
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
          {
            guard: 'needsAuthorization',
            target: 'authorizing',
            actions: ['stopPost', 'holdForAuthorization', { type: 'returnTo', params: { state: 'connecting' } }],
          },
          { guard: 'canFallBackToLegacy', target: 'legacy', actions: ['stopPost', 'holdForLegacy'] },
          { guard: 'isInitializeFailure', target: 'failed', actions: ['answerFailure', 'stopPost', 'failInitialize'] },
          { actions: ['answerFailure', 'stopPost'] },
        ],
      },
    },
    /** InitializeResult received; waiting for notifications/initialized to be accepted. */
    initializing: {
      tags: ['connecting'],
      on: {
        send: { actions: 'spawnPost' },
        'post.done': [
          { guard: 'isInitializedAccepted', target: 'open', actions: 'stopPost' },
          { actions: ['deliverResponse', 'stopPost'] },
        ],
        'post.failed': [
          {
            guard: 'needsAuthorization',
            target: 'authorizing',
            actions: ['stopPost', 'holdForAuthorization', { type: 'returnTo', params: { state: 'initializing' } }],
          },
          { guard: 'isStaleSessionMissing', actions: ['stopPost', 'resendOnCurrentSession'] },
          { guard: 'isSessionMissing', target: 'failed', actions: ['stopPost', 'expireSession', 'answerExpired'] },
          { actions: ['answerFailure', 'stopPost'] },
        ],
      },
    },
    open: {
      type: 'parallel',
      on: {
        send: [{ guard: 'isCancellation', actions: ['cancelRequest', 'spawnPost'] }, { actions: 'spawnPost' }],
        'post.done': [
          { guard: 'isOtherSessionId', actions: ['reportOtherSessionId', 'deliverResponse', 'stopPost'] },
          { guard: 'recoveredWithoutProgress', actions: ['resetRecoveries', 'deliverResponse', 'stopPost'] },
          { actions: ['deliverResponse', 'stopPost'] },
        ],
        'post.failed': [
          {
            guard: 'needsAuthorization',
            target: 'authorizing',
            actions: ['stopPost', 'holdForAuthorization', { type: 'returnTo', params: { state: 'open' } }],
          },
          { guard: 'isStaleSessionMissing', actions: ['stopPost', 'resendOnCurrentSession'] },
          { guard: 'isSessionMissing', target: 'recovering', actions: 'stopPost' },
          { actions: ['answerFailure', 'stopPost'] },
        ],
        'standalone.sessionMissing': [
          { guard: 'recoveredWithoutProgress', actions: 'reportStandaloneGone' },
          { target: 'recovering' },
        ],
        'standalone.degraded': { actions: 'reportStandaloneDegraded' },
        'standalone.unauthorized': {
          guard: 'authorizes',
          target: 'authorizing',
          actions: ['holdStandaloneChallenge', { type: 'returnTo', params: { state: 'open' } }],
        },
      },
      states: {
        session: {
          initial: 'active',
          states: {
            active: {
              tags: ['connected'],
              on: {
                // F1: DELETE first, while the standalone stream still runs (the server ends it and
                // its connection is reused), then everything stops. Defined here, in the session
                // region, so that the standalone region is not exited and re-entered.
                close: [{ guard: 'shouldTerminate', target: 'closing' }, { target: '#connection.closing' }],
                'session.terminate': [
                  { guard: 'hasSession', target: 'terminating', actions: 'holdTerminateTicket' },
                  { actions: 'acknowledgeTerminate' },
                ],
              },
            },
            /** F1: close() of an open session: calls stop, the DELETE runs (bounded), then closed. */
            closing: {
              tags: ['closing'],
              entry: [{ type: 'stopEverything', params: { answer: false, keep: 'standalone' } }, 'windDownStandalone'],
              invoke: {
                src: 'deleteSession',
                input: ({ context }) => ({ sessionId: context.sessionId ?? '', protocolVersion: context.protocolVersion }),
                onDone: 'draining',
                onError: 'draining',
              },
              after: { deleteTimeout: '#connection.closed' },
              on: whileClosing,
            },
            /**
             * The DELETE was answered: the server ends the standalone stream; its end is read (so
             * the connection is reused, not torn down) before everything stops, for a bounded moment.
             */
            draining: {
              tags: ['closing'],
              always: { guard: 'standaloneDone', target: '#connection.closed' },
              after: { drainTimeout: '#connection.closed' },
              on: whileClosing,
            },
            /** terminateSession(): DELETE, then the transport waits for a new initialize. */
            terminating: {
              tags: ['connected'],
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
    /**
     * A1, A2: the SDK's OAuth flow runs; POSTs, the standalone GET and resumes that meet 401 (or
     * 403 insufficient_scope) wait here with every new send, and go again once authorized.
     */
    authorizing: {
      tags: ['authorizing'],
      entry: 'abandonTerminate',
      invoke: {
        src: 'authorize',
        input: ({ context }) => ({ challenge: context.authChallenge }),
        onDone: [
          { guard: { type: 'returnsTo', params: { state: 'connecting' } }, target: 'connecting', actions: 'flushQueue' },
          { guard: { type: 'returnsTo', params: { state: 'initializing' } }, target: 'initializing', actions: 'flushQueue' },
          { target: 'open', actions: 'flushQueue' },
        ],
        onError: [
          // Mid-session, a flow that needs the user fails only the calls that met the 401/403 (F5).
          {
            guard: 'needsUserMidSession',
            target: 'open',
            actions: ['failAuthorizationTriggers', 'flushQueue'],
          },
          { target: 'failed', actions: 'failQueued' },
        ],
      },
      on: {
        send: { actions: 'queueSend' },
        // Answers to what was sent before the 401 still move the session on.
        'post.done': [
          {
            guard: 'isInitializeResult',
            actions: ['adoptSession', 'deliverResponse', 'stopPost', { type: 'returnTo', params: { state: 'initializing' } }],
          },
          { guard: 'isInitializedAccepted', actions: ['stopPost', { type: 'returnTo', params: { state: 'open' } }] },
          { actions: ['deliverResponse', 'stopPost'] },
        ],
        'post.failed': [
          { guard: 'needsAuthorization', actions: ['stopPost', 'holdForAuthorization'] },
          { actions: ['answerFailure', 'stopPost'] },
        ],
      },
    },
    /**
     * L1, L2: the server speaks the 2024-11-05 HTTP+SSE transport: one GET stream announces the
     * endpoint for POSTs and carries every message; the API does not change.
     */
    legacy: {
      invoke: { src: 'legacyStream', input: {} },
      initial: 'awaitingEndpoint',
      on: {
        'legacy.ended': { target: 'failed', actions: 'failLegacy' },
        'post.done': { actions: ['deliverResponse', 'stopPost'] },
        'post.failed': { actions: ['answerFailure', 'stopPost'] },
      },
      states: {
        awaitingEndpoint: {
          tags: ['connecting'],
          on: {
            send: { actions: 'queueSend' },
            'legacy.endpoint': { target: 'ready', actions: ['adoptEndpoint', 'flushQueue'] },
          },
        },
        ready: {
          tags: ['connected'],
          on: { send: { actions: 'spawnPost' } },
        },
      },
    },
    /** The server forgot the session (P8): re-establish it (F3) or fail with SessionExpiredError. */
    recovering: {
      entry: 'abandonTerminate',
      always: [
        { guard: 'canRecover', target: 'reconnecting', actions: 'beginRecovery' },
        { target: 'failed', actions: ['expireSession', 'answerExpired'] },
      ],
    },
    /** F3: a new session from the cached initialize; sends wait in the queue meanwhile. */
    reconnecting: {
      tags: ['reconnecting'],
      initial: 'reinitializing',
      // Reports of POSTs still in flight are handled by each sub-state, next to its own.
      on: {
        send: [{ guard: 'isCancellation', actions: ['cancelRequest', 'queueSend'] }, { actions: 'queueSend' }],
      },
      states: {
        reinitializing: {
          entry: 'reinitialize',
          on: {
            'post.done': [
              { guard: 'isRecovery', target: 'confirming', actions: ['adoptSession', 'stopPost'] },
              { actions: ['deliverResponse', 'stopPost'] },
            ],
            'post.failed': [
              { guard: 'isRecovery', target: '#connection.failed', actions: ['stopPost', 'expireSession'] },
              { guard: 'canRequeue', actions: ['requeue', 'stopPost'] },
              { actions: ['answerFailure', 'stopPost'] },
            ],
          },
        },
        confirming: {
          entry: 'confirmInitialized',
          on: {
            'post.done': [
              {
                guard: 'isRecovery',
                target: '#connection.open',
                actions: ['stopPost', 'countRecovery', 'emitSessionChanged', 'flushQueue'],
              },
              { actions: ['deliverResponse', 'stopPost'] },
            ],
            'post.failed': [
              { guard: 'isRecovery', target: '#connection.failed', actions: ['stopPost', 'expireSession'] },
              { guard: 'canRequeue', actions: ['requeue', 'stopPost'] },
              { actions: ['answerFailure', 'stopPost'] },
            ],
          },
        },
      },
    },
    closing: {
      tags: ['closing'],
      entry: { type: 'stopEverything', params: { answer: false } },
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
      entry: ['forgetError', 'forgetClosedSession', 'emitClosed'],
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
      entry: [{ type: 'stopEverything', params: { answer: true } }, 'emitFailed'],
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
