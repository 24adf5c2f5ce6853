/**
 * Closing: close() of an open session (inside `open`, so the standalone stream can drain), close()
 * from anywhere else (root `closing`), and terminateSession() (DELETE, then a new initialize).
 */
import { assertEvent, assign, enqueueActions, or, sendTo, stateIn, stopChild } from 'xstate';
import type { DoneActorEvent, ErrorActorEvent } from 'xstate';
import { McpTransportError, StreamableHTTPError, TransportClosedError } from '../errors.js';
import { deleteInput, actions, guards, type ConnectionState } from './base.js';
import { failCall } from './messages.js';
import type { ConnectionContext } from './types.js';

/** What a DELETE's answer is reported as (typed params, not a look into the event). */
const deleteStatus = ({ event }: { event: DoneActorEvent<{ status: number }> }) => ({ status: event.output.status });
const deleteFailure = ({ event }: { event: ErrorActorEvent }) => ({ cause: event.error });
/** F7: the DELETE was not answered within deleteTimeout (the `after` that left its state aborted it). */
const deleteTimedOut = ({ context }: { context: ConnectionContext }) => ({
  cause: new StreamableHTTPError(`DELETE was not answered within deleteTimeout (${context.options.deleteTimeout} ms)`),
});

/** The standalone stream ended or never ran (a guard built from `stateIn`, registered by the index). */
export const standaloneDone = or([stateIn('#connection.open.standalone.ended'), stateIn('#connection.open.standalone.off')]);

export const closingGuards = guards({
  hasSession: ({ context }) => context.sessionId !== undefined,
  shouldTerminate: ({ context }) => context.sessionId !== undefined && !context.sessionMissing && context.options.terminateOnClose,
  /** SDK semantics: 405 means the server does not allow termination, which is fine. */
  deleteAccepted: (_, params: { status: number }) => (params.status >= 200 && params.status < 300) || params.status === 405,
});

export const closingActions = actions({
  /** Every child stops now; callers still waiting on `send()` learn why (F2). */
  stopEverything: enqueueActions(({ context, enqueue }, params: { answer: boolean }) => {
    // Made only when someone is told (an error costs its stack): most closes leave no call.
    let closed: Error | undefined;
    const reason = () => context.error ?? (closed ??= new TransportClosedError('transport closed'));
    for (const [id, post] of Object.entries(context.posts)) {
      // On failure, calls whose response is still streaming are answered (P10); on close the
      // Client's onclose does that.
      if (params.answer && post.origin !== 'recovery') failCall(context.sink, post.requestIds, post.ticket, reason());
      else post.ticket.failed(reason());
      enqueue(stopChild(id));
    }
    // The direct calls end too, told the same; the direct path ends with the connection it served.
    enqueue.emit({ type: 'direct.end', error: context.error ?? closed, answer: params.answer });
    for (const queued of context.queue) queued.ticket.failed(reason());
    if (context.terminateTicket !== undefined) context.terminateTicket.failed(reason());
    enqueue.assign({ queue: [], posts: {}, terminateTicket: undefined });
  }),
  /** F1: the standalone stream reads on until the server ends it, then stops. */
  windDownStandalone: enqueueActions(({ self, enqueue }) => {
    // The chart's own snapshot before this step: only a stream still running is told.
    if (self.getSnapshot().matches({ open: { standalone: 'active' } })) enqueue(sendTo('standalone', { type: 'windDown' }));
  }),
  holdTerminateTicket: assign(({ event }) => {
    assertEvent(event, 'session.terminate');
    return { terminateTicket: event.ticket };
  }),
  acknowledgeTerminate: enqueueActions(({ context, event, enqueue }) => {
    (event.type === 'session.terminate' ? event.ticket : context.terminateTicket)?.accepted();
    enqueue.assign({ terminateTicket: undefined });
  }),
  refuseTerminate: enqueueActions(({ context, enqueue }, params: { status?: number | undefined; cause?: unknown }) => {
    const { status, cause } = params;
    context.terminateTicket?.failed(
      new StreamableHTTPError(status === undefined ? 'DELETE of the session failed' : `DELETE of the session answered HTTP ${status}`, {
        status,
        cause,
      }),
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
});

/** While an open session closes: sends are refused, another close() waits, stream reports are moot. */
const whileClosing = {
  close: {},
  send: { actions: 'rejectSend' },
  'session.terminate': { actions: 'rejectSend' },
  'standalone.sessionMissing': {},
  'standalone.unauthorized': {},
  'standalone.degraded': {},
} as const;

/** The `open.session` region's states other than `active`. */
export const sessionClosingStates = {
  /** F1: close() of an open session: calls stop, the DELETE runs (bounded), then closed. */
  closing: {
    tags: ['closing'],
    entry: [{ type: 'stopEverything', params: { answer: false } }, 'windDownStandalone'],
    invoke: { src: 'deleteSession', input: deleteInput, onDone: 'draining', onError: 'draining' },
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
  /** terminateSession(): DELETE (bounded by deleteTimeout, F7), then the transport waits for a new initialize. */
  terminating: {
    tags: ['connected'],
    after: { deleteTimeout: { target: 'active', actions: { type: 'refuseTerminate', params: deleteTimedOut } } },
    invoke: {
      src: 'deleteSession',
      input: deleteInput,
      onDone: [
        {
          guard: { type: 'deleteAccepted', params: deleteStatus },
          target: '#connection.connecting',
          actions: ['acknowledgeTerminate', 'forgetSession', 'emitSessionEnded'],
        },
        { target: 'active', actions: { type: 'refuseTerminate', params: deleteStatus } },
      ],
      onError: { target: 'active', actions: { type: 'refuseTerminate', params: deleteFailure } },
    },
  },
} as const satisfies Record<string, ConnectionState>;

/** close() anywhere but an open session: everything stops, the DELETE (if any) runs, bounded. */
export const closingState = {
  tags: ['closing'],
  entry: { type: 'stopEverything', params: { answer: false } },
  initial: 'choosing',
  states: {
    choosing: {
      always: [{ guard: 'shouldTerminate', target: 'deleting' }, { target: '#connection.closed' }],
    },
    deleting: {
      invoke: { src: 'deleteSession', input: deleteInput, onDone: '#connection.closed', onError: '#connection.closed' },
      after: { deleteTimeout: '#connection.closed' },
    },
  },
  on: { 'session.terminate': { actions: 'rejectSend' }, close: {} },
} as const satisfies ConnectionState;
