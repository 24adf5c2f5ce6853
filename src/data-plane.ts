import type { JSONRPCId, JSONRPCMessage, JSONRPCResponse, MessageSink, PostResult, SendTicket } from '../machines/types.js';
import { StreamEndedError, toError, TransportClosedError } from '../machines/errors.js';
import type { DirectCallReport, DirectCallsCommand, DirectRoute } from '../machines/connection/index.js';
import { failCall, INITIALIZE, isRequest, NO_ATTEMPTS, requestIdsOf } from '../machines/connection/messages.js';
import type { PostStreamReport } from '../machines/post-stream.js';
import { RequestControl, type HttpClient } from './http/client.js';
import { postMessage, type ExchangeOptions } from './http/exchanges.js';
import { readEventStream, type StreamReader } from './sse/reader.js';
import type { Telemetry } from './telemetry/option.js';

/** What the data plane tells the chart: only what is not the happy call. */
export type DataPlaneEvent = PostStreamReport | DirectCallReport;

/**
 * The one side channel (ARCHITECTURE.md, "The direct path"): the facade hands its data plane a
 * call the chart routed direct (`directRoute`), with no mailbox hop per call.
 */
export interface DirectCalls {
  /** POSTs `message` on `route`'s session; `ticket` settles as a POST child's would. */
  send(
    message: JSONRPCMessage,
    ticket: SendTicket,
    route: DirectRoute,
    headers: Readonly<Record<string, string>> | undefined,
    requestSignal: AbortSignal | undefined,
  ): void;
  /** The chart's words to it but its start and end (the gate, W6's health, R8's cancel). */
  command(command: Exclude<DirectCallsCommand, { type: 'direct.start' }>): void;
  /** Every call ends now with `error` (the chart ended the direct path, or its actor stopped); `answer`: with a synthetic response (P10). */
  end(error: Error | undefined, answer: boolean): void;
  /** Calls in flight (for tests and diagnostics). */
  readonly size: number;
}

/** One call on the data plane, from its POST until its answer was delivered. */
interface DirectCall {
  readonly message: JSONRPCMessage;
  readonly requestIds: readonly JSONRPCId[];
  readonly ticket: SendTicket;
  readonly sessionId: string | undefined;
  readonly protocolVersion: string | undefined;
  readonly control: RequestControl;
  /** E2, E3: the caller's own headers for this request. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  reader: StreamReader | undefined;
  /** E6: the caller's `requestSignal` this call listens to (its `watch`), until it settles. */
  signal: AbortSignal | undefined;
  /** E6: the listener on `signal`: an object, so no closure is made per call (docs/benchmark.md). */
  watch: CallWatch | undefined;
}

/**
 * E6: the `abort` listener of one call on its caller's `requestSignal`, as an EventListener object
 * (`handleEvent`): the 2.x Client gives each modern call a signal of its own, and two closures per
 * call (the listener and its remover) showed in the profile (docs/benchmark.md).
 */
class CallWatch {
  constructor(
    private readonly plane: DataPlane,
    private readonly call: DirectCall,
  ) {}

  handleEvent(): void {
    this.plane.aborted(this.call);
  }
}

/**
 * The data plane (ARCHITECTURE.md, "The direct path"): while the chart says so (`directRoute`, read
 * by the facade), a call is POSTed here and its JSON, 202 or SSE answer
 * goes straight to the sink, with no chart event and no actor. Whatever is not that happy answer
 * goes to the chart with the facts a POST child would report: `post.failed` (404, 401/403,
 * network and protocol errors), `post.done` (a changed session ID), `post.interrupted` (a stream
 * that ended before its response). The facade makes one when the chart starts a connection
 * (`direct.start`) and hands it the chart's other words (`command`): the chart opens and closes
 * its gate, and ends calls (close, failure, cancellation); a call it ended reports nothing more.
 */
export class DataPlane implements DirectCalls {
  /** The calls in flight; dropped when the last one settles, so an idle session keeps no table (~0.1 KiB). */
  private calls: Set<DirectCall> | undefined = undefined;
  /** The chart's gate: open while a state that allows direct calls is active (its entry and exit say so). */
  private open = false;
  /** W6: while the chart says `degraded`, every answer goes to the chart too: the first happy one ends it. */
  private degraded = false;

  constructor(
    private readonly http: HttpClient,
    private readonly sink: MessageSink,
    private readonly options: ExchangeOptions,
    /** O1: the transport's telemetry, if it has one: each call's POST is a child span of its span. */
    private readonly telemetry: Telemetry | undefined,
    private readonly report: (event: DataPlaneEvent) => void,
  ) {}

  /** What the chart tells it (its start is the facade's: it makes the plane). */
  command(command: Exclude<DirectCallsCommand, { type: 'direct.start' }>): void {
    switch (command.type) {
      case 'direct.open':
        this.open = true;
        return;
      case 'direct.close':
        this.open = false;
        return;
      case 'direct.degraded':
        this.degraded = true;
        return;
      case 'direct.steady':
        this.degraded = false;
        return;
      case 'direct.end':
        this.end(command.error, command.answer);
        return;
      case 'direct.cancel':
        this.cancel(command.requestId, command.error);
        return;
    }
  }

  /** Calls in flight (for tests and diagnostics). */
  get size(): number {
    return this.calls?.size ?? 0;
  }

  send(
    message: JSONRPCMessage,
    ticket: SendTicket,
    route: DirectRoute,
    headers: Readonly<Record<string, string>> | undefined,
    requestSignal: AbortSignal | undefined,
  ): void {
    const call: DirectCall = {
      message,
      requestIds: requestIdsOf(message),
      ticket,
      sessionId: route.sessionId,
      protocolVersion: route.protocolVersion,
      control: new RequestControl(),
      headers,
      reader: undefined,
      signal: undefined,
      watch: undefined,
    };
    (this.calls ??= new Set()).add(call);
    if (requestSignal !== undefined) this.watch(call, requestSignal);
    void this.run(call);
  }

  /**
   * E2, E6: aborting the caller's `requestSignal` stops this call's POST and stream now, and
   * nothing else: no `onerror`, no answer, no resume (the caller has given up on it).
   */
  private watch(call: DirectCall, requestSignal: AbortSignal): void {
    if (requestSignal.aborted) {
      this.aborted(call);
      return;
    }
    const watch = new CallWatch(this, call);
    call.signal = requestSignal;
    call.watch = watch;
    requestSignal.addEventListener('abort', watch);
  }

  /** E6: the call's `requestSignal` was aborted (its listener, or already so when sent). */
  aborted(call: DirectCall): void {
    if (this.calls?.has(call) === true) this.stop(call, new StreamEndedError('request aborted by its requestSignal'));
  }

  /** The call leaves the set; false when it had left already (ended by the chart or its caller). */
  private settle(call: DirectCall): boolean {
    const calls = this.calls;
    if (calls === undefined || !calls.delete(call)) return false;
    if (calls.size === 0) this.calls = undefined;
    const { signal, watch } = call;
    if (signal !== undefined && watch !== undefined) {
      signal.removeEventListener('abort', watch);
      call.signal = undefined;
      call.watch = undefined;
    }
    return true;
  }

  /**
   * The chart ended every call (close, failure): each is aborted and its caller told why (F2,
   * P10); no error given means the transport closed.
   */
  end(error: Error | undefined, answer: boolean): void {
    const calls = this.calls;
    if (calls === undefined || calls.size === 0) return;
    const reason = error ?? new TransportClosedError('transport closed');
    for (const call of [...calls]) {
      this.stop(call, reason, answer);
    }
  }

  /** R8: the caller cancelled this request: its POST or stream stops now. */
  private cancel(requestId: JSONRPCId, error: Error): void {
    const calls = this.calls;
    if (calls !== undefined) for (const call of calls) if (call.requestIds.includes(requestId)) this.stop(call, error);
  }

  private stop(call: DirectCall, error: Error, answer = false): void {
    this.settle(call);
    call.reader?.stop();
    call.control.abort(error);
    // P10: the caller still awaiting send() is told there; one whose send() resolved, by a synthetic answer.
    if (answer) failCall(this.sink, call.requestIds, call.ticket, error);
    else call.ticket.failed(error);
  }

  private async run(call: DirectCall): Promise<void> {
    const input = {
      message: call.message,
      requestIds: call.requestIds,
      endpoint: undefined,
      sessionId: call.sessionId,
      protocolVersion: call.protocolVersion,
      headers: call.headers,
    };
    const telemetry = this.telemetry;
    const attempt = telemetry === undefined ? undefined : telemetry.attempt('POST', call.requestIds);
    let result: PostResult;
    try {
      result = await postMessage(this.http, this.sink, this.options, input, undefined, call.control);
    } catch (error) {
      attempt?.failed(error);
      if (!this.settle(call)) return;
      this.report({
        type: 'post.failed',
        postId: undefined,
        origin: 'caller',
        attempts: NO_ATTEMPTS,
        sessionId: call.sessionId,
        message: call.message,
        ticket: call.ticket,
        error: toError(error),
      });
      return;
    }
    if (attempt !== undefined) result = attempt.answered(result);
    if (this.calls?.has(call) !== true) {
      if (result.kind === 'sse') result.stream.release();
      return;
    }
    // U2: send(initialize) resolves once its answer's session ID is adopted: after a JSON answer
    // that is now (the chart hears it below, before send()'s caller resumes); an SSE answer is awaited.
    const handshake = result.kind === 'sse' && isRequest(call.message, INITIALIZE);
    if (!handshake) call.ticket.accepted();
    if (result.kind !== 'sse') {
      this.settle(call);
      this.answer(call, result.kind === 'json' ? result.response : undefined, result.sessionId);
      return;
    }
    const { sessionId, stream } = result;
    const seenIds = new Set<string>();
    call.reader = readEventStream(
      {
        stream,
        requestIds: call.requestIds,
        lastEventId: undefined,
        seenIds,
        replay: false,
        onEventId: undefined,
        sink: this.sink,
        maxMessageBytes: this.options.maxMessageBytes,
      },
      (event) => {
        if (!this.settle(call)) return;
        if (telemetry !== undefined && event.type === 'stream.ended') telemetry.streamEnded(stream, event.end.error);
        // P4: the call is answered now; the body gets its grace to end by itself (its connection kept), else it is cut.
        call.reader?.stop();
        if (event.type === 'stream.response') {
          this.answer(call, event.response, sessionId);
          // U2: the chart heard the InitializeResult (and adopted its session) in answer(): now send() resolves.
          if (handshake) call.ticket.accepted();
          return;
        }
        // The POST child that takes the call over takes it as accepted.
        if (handshake) call.ticket.accepted();
        this.report({
          type: 'post.interrupted',
          message: call.message,
          headers: call.headers,
          ticket: call.ticket,
          sessionId: call.sessionId,
          protocolVersion: call.protocolVersion,
          interrupted: { end: event.end, seenIds, responseSessionId: sessionId },
        });
      },
    );
  }

  /**
   * The happy answer goes straight to the sink, unless the chart must hear of it: another session
   * ID than the one sent (H7), an answer arriving after the chart stopped taking direct calls
   * (its gate closed: a session re-established meanwhile counts it as progress, F3), or the first
   * answer after the server was failing (W6, it ends `degraded`), exactly as a POST child's.
   */
  private answer(call: DirectCall, response: JSONRPCResponse | undefined, sessionId: string | undefined): void {
    if ((sessionId === undefined || sessionId === call.sessionId) && this.open && !this.degraded) {
      if (response !== undefined) this.sink.deliver(response);
      call.ticket.ended?.();
      return;
    }
    this.report({
      type: 'post.done',
      postId: undefined,
      origin: 'caller',
      attempts: NO_ATTEMPTS,
      message: call.message,
      response,
      sessionId,
    });
    // E2: answered, the call's stream has ended, heard by the chart or not.
    call.ticket.ended?.();
  }
}
