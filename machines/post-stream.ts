import { assign, enqueueActions, fromCallback, fromPromise, raise, sendParent, sendTo, setup } from 'xstate';
import type { GetResult, NetworkEvent, PostResult } from './types.js';
import { plannedDelay, planWait, resumeDelay, waitImplementations, waitStates } from './backoff.js';
import { scheduledWait } from './scheduled-wait.js';
import { idleWatch, idleWatchStates } from './idle-watch.js';
import { MessageTooLargeError, StreamEndedError, toError } from './errors.js';
import { DISCOVER, envelopeVersion, isRequest, LISTEN, requestIdsOf } from './connection/messages.js';
import { asCallersAnswer, onTheWire, readerInput } from './post-stream-wire.js';
import { emptyResumesError, resumeRules, unsendableIdError } from './post-stream-resume.js';
import type {
  PostRequestInput,
  PostStreamContext,
  PostStreamInput,
  PostStreamReport,
  ReadStreamInput,
  ReconnectDue,
  ResumeInput,
  StreamReaderCommand,
  StreamReaderEvent,
} from './post-stream-types.js';

export type * from './post-stream-types.js';

const notProvided = (name: string) => () => {
  throw new Error(`actor '${name}' must be provided with machine.provide({ actors })`);
};

/** What an invoked request resolved to, handed to a guard as typed params. */
function doneResult<T>({ event }: { event: { output: T } }): { result: T } {
  return { result: event.output };
}

/** A stream that ended before its response: resume it (R1) within budget (R5), or fail the call (R2). */
const onStreamEnded = [
  { guard: 'awaitsNothing', target: '#postStream.done' },
  // E13: a listen stream the server ended with notifications/cancelled ended gracefully, as one ended by its result.
  { guard: 'listenCancelledByServer', target: '#postStream.done' },
  // E13: any other request the server cancelled will not be answered: it fails at once, not resumed.
  { guard: 'cancelledByServer', target: '#postStream.failed', actions: 'failCancelled' },
  // R12: a resume answered with nothing again, and its budget or its 15 s window spent: fail, naming the empty resumes.
  { guard: 'emptyResumesSpent', target: '#postStream.failed', actions: 'failEmptyResumes' },
  { guard: 'canResume', target: '#postStream.backoff', actions: 'adoptEnd' },
  // R11: an event id that cannot be sent back as Last-Event-ID: not resumable, fail at once.
  { guard: 'endedUnsendable', target: '#postStream.failed', actions: 'failUnsendable' },
  { target: '#postStream.failed', actions: 'failEnded' },
] as const;

const postStreamSetup = setup({
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
    isAccepted: (_, params: { result: PostResult }) => params.result.kind === 'accepted',
    isJson: (_, params: { result: PostResult }) => params.result.kind === 'json',
    /** E13: the server sent notifications/cancelled for the request this stream carries. */
    cancelledByServer: ({ event }) => event.type === 'stream.ended' && event.end.cancelled === true,
    /** E13: … and the request is a `subscriptions/listen`: the spec's other graceful end of one. */
    listenCancelledByServer: ({ context, event }) =>
      event.type === 'stream.ended' && event.end.cancelled === true && isRequest(context.message, LISTEN),
    /** `resumeStream()` awaits no response: its stream ending is its end. */
    awaitsNothing: ({ context }) => context.requestIds.length === 0,
    gotStream: (_, params: { result: GetResult }) => params.result.kind === 'sse',
  },
  delays: {
    /** R4 within R12: planned once as the wait begins (W3); after an empty resume, never past the window. */
    resumeDelay: ({ context }) => plannedDelay(context, resumeDelay),
  },
  actions: {
    planWait: assign(({ context }, params: { delayOf: (context: PostStreamContext) => number }) => ({
      wait: planWait(context, params.delayOf),
    })),
    noteOffline: assign({ offline: true }),
    noteOnline: assign({ offline: false }),
    acknowledge: ({ context }) => {
      context.ticket.accepted();
    },
    /**
     * A stream begins: the caller's send() resolves now, except the era probe's (S7, E1): the v2
     * Client's negotiation reads a failed send() as a failure, an error answer as a verdict, so
     * the probe's send() settles with its answer or its failure.
     */
    acknowledgeStream: ({ context }) => {
      if (!(isRequest(context.message, DISCOVER) && envelopeVersion(context.message) !== undefined)) context.ticket.accepted();
    },
    /** W6, E7: a listen stream is open: the chart's health region hears the success (no event for any other stream). */
    reportListening: enqueueActions(({ context, enqueue }) => {
      if (isRequest(context.message, LISTEN))
        enqueue.sendParent({ type: 'post.listening', postId: context.postId } satisfies PostStreamReport);
    }),
    checkIdle: sendTo('reader', { type: 'idle.check' }),
    /** P1–P9: what the POST answered: the session id it gave, and its JSON response or the stream to read. */
    adoptAnswer: assign((_, params: { result: PostResult }) => {
      const { result } = params;
      if (result.kind === 'json') return { responseSessionId: result.sessionId, response: result.response };
      // (a re-issue's JSON answer is given the caller's id in `reportDone`)
      if (result.kind === 'sse') return { responseSessionId: result.sessionId, stream: result.stream };
      return { responseSessionId: result.sessionId };
    }),
    /** R1, R4, R5: what the ended stream said is what the resume goes on from; R12: an empty resume is counted. */
    adoptEnd: assign(({ context, event }) => {
      if (event.type !== 'stream.ended') return {};
      const { progressed } = event.end;
      return {
        emptyResumes: progressed ? 0 : context.fromResume ? context.emptyResumes + 1 : context.emptyResumes,
        firstEndAt: progressed || context.firstEndAt === undefined ? context.options.now() : context.firstEndAt,
        lastEventId: event.end.lastEventId ?? context.lastEventId,
        retryMs: event.end.retryMs ?? context.retryMs,
        attempt: event.end.progressed ? 1 : context.attempt + 1,
        waitAfter: 'ended' as const,
        stream: undefined,
      };
    }),
    /** R12: the call is given up, naming its empty resumes (the one that just ended included, when it was one). */
    failEmptyResumes: assign({ error: emptyResumesError }),
    failCancelled: assign({ error: () => new StreamEndedError('the server cancelled the request (notifications/cancelled)') }),
    failUnsendable: assign({
      error: ({ context, event }) => (event.type === 'stream.ended' ? unsendableIdError(event.end.error) : context.error),
    }),
    failEnded: assign({
      error: ({ context, event }) => {
        if (event.type !== 'stream.ended') return context.error;
        return event.end.error instanceof MessageTooLargeError
          ? event.end.error
          : new StreamEndedError(
              context.modern
                ? 'request stream ended before its response (the 2026-07-28 protocol has no resumption)'
                : event.end.lastEventId === undefined
                  ? 'request ended without a response'
                  : 'request stream could not be resumed',
              { cause: event.end.error },
            );
      },
    }),
    /** The direct call's stream ended: decide on that end exactly as if this machine had read it. */
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
      response: context.response === undefined ? undefined : asCallersAnswer(context, context.response),
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
})
  .extend(waitImplementations)
  .extend(idleWatch)
  .extend(resumeRules);

export const postStreamMachine = postStreamSetup.createMachine({
  id: 'postStream',
  // Every field named, no spread of the input (bench/README.md, "Code shapes"). A field added to PostStreamInput
  // is added here too.
  context: ({ input, self }) => ({
    message: input.message,
    ticket: input.ticket,
    origin: input.origin,
    attempts: input.attempts,
    endpoint: input.endpoint,
    sessionId: input.sessionId,
    protocolVersion: input.protocolVersion,
    options: input.options,
    resumptionToken: input.resumptionToken,
    onResumptionToken: input.onResumptionToken,
    interrupted: input.interrupted,
    postId: self.id,
    // E5: a re-issue is read and answered by its new id on the wire.
    requestIds: input.reissueAs === undefined ? requestIdsOf(input.message) : [input.reissueAs],
    stream: undefined,
    response: undefined,
    responseSessionId: input.interrupted?.responseSessionId,
    lastEventId: input.resumptionToken,
    seenIds: input.interrupted?.seenIds ?? new Set<string>(),
    retryMs: undefined,
    attempt: 0,
    fromResume: false,
    emptyResumes: 0,
    firstEndAt: undefined,
    waitAfter: 'ended',
    error: undefined,
    wait: undefined,
    offline: input.offline ?? false,
    modern: input.modern,
    headers: input.headers,
    reissueAs: input.reissueAs,
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
    /** Taken over from the direct path: its stream ended before the response (the call was accepted there). */
    interrupted: {
      entry: 'replayEnd',
      on: { 'stream.ended': [...onStreamEnded] },
    },
    sending: {
      invoke: {
        src: 'postMessage',
        input: ({ context }) => ({
          message: onTheWire(context),
          requestIds: context.requestIds,
          endpoint: context.endpoint,
          sessionId: context.sessionId,
          protocolVersion: context.protocolVersion,
          headers: context.headers,
        }),
        onDone: [
          {
            guard: { type: 'isAccepted', params: doneResult },
            target: 'accepted',
            actions: [{ type: 'adoptAnswer', params: doneResult }, 'acknowledge'],
          },
          {
            guard: { type: 'isJson', params: doneResult },
            target: 'json',
            actions: [{ type: 'adoptAnswer', params: doneResult }, 'acknowledge'],
          },
          { target: 'streaming', actions: [{ type: 'adoptAnswer', params: doneResult }, 'acknowledgeStream', 'reportListening'] },
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
      // R9: the idle watch runs while the reader reads.
      initial: 'choosing',
      states: idleWatchStates,
      on: {
        'stream.response': {
          target: 'done',
          actions: assign({ response: ({ context, event }) => asCallersAnswer(context, event.response) }),
        },
        'stream.ended': [...onStreamEnded],
      },
    },
    /** R4: the stream's own retry value, else exponential backoff with jitter. */
    backoff: waitStates('resumeDelay', '#postStream.resuming', resumeDelay),
    /** R1: GET with Last-Event-ID; the request is never POSTed again. */
    resuming: {
      invoke: {
        src: 'resumeStream',
        input: ({ context }) => ({
          requestIds: context.requestIds,
          // An initialize went without a session (H3); its stream is resumed in the session its answer made.
          sessionId: context.sessionId ?? context.responseSessionId,
          protocolVersion: context.protocolVersion,
          lastEventId: context.lastEventId ?? '',
        }),
        onDone: [
          {
            guard: { type: 'gotStream', params: doneResult },
            target: 'streaming',
            actions: assign({ stream: ({ event }) => (event.output.kind === 'sse' ? event.output.stream : undefined), fromResume: true }),
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
            guard: { type: 'emptyResumeWindowSpent', params: ({ event }) => ({ error: event.error }) },
            target: 'failed',
            actions: 'failEmptyResumes',
          },
          {
            guard: { type: 'canRetry', params: ({ event }) => ({ error: event.error }) },
            target: 'backoff',
            actions: assign({ attempt: ({ context }) => context.attempt + 1, waitAfter: 'failed' }),
          },
          { target: 'failed', actions: assign({ error: ({ event }) => toError(event.error) }) },
        ],
      },
    },
    done: { type: 'final', entry: ['acknowledge', 'reportDone'] },
    failed: { type: 'final', entry: 'reportFailed' },
  },
});
