/**
 * What the POST-stream chart takes and reports: its input, its context, the events it sends the
 * connection chart, and the protocol every stream reader speaks (shared with the standalone stream).
 */
import type { ChartOptions, JSONRPCId, JSONRPCMessage, JSONRPCResponse, OpenStream, SendAttempts, SendTicket, StreamEnd } from './types.js';
import type { PlannedWait } from './backoff.js';

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
   * A direct call whose SSE stream ended before its response: this machine takes the stream
   * over from that end (backoff and resume, or fail), as if it had read the stream itself.
   */
  interrupted?: InterruptedStream | undefined;
  /** W2: the network is known to be gone as the stream begins. */
  offline?: boolean | undefined;
  /** E5: the 2026-07-28 era has no resumption: a stream that ends before its response fails the call. */
  modern?: boolean | undefined;
  /** E2, E3: the caller's own headers for this request (reserved names already removed). */
  headers?: Readonly<Record<string, string>> | undefined;
  /**
   * E5: a re-issue: the request goes out under this id, and its answer is delivered under the
   * message's own id (the caller's), which is also what a failure is reported for.
   */
  reissueAs?: JSONRPCId | undefined;
}

/** Where a direct call's stream stopped: how it ended, and the event ids it delivered (R7). */
export interface InterruptedStream {
  end: StreamEnd;
  seenIds: Set<string>;
  /** The session ID the POST's answer carried (an initialize's new session): reported with the response, as a POST child reports it. */
  responseSessionId?: string | undefined;
}

export interface PostRequestInput {
  message: JSONRPCMessage | JSONRPCMessage[];
  requestIds: readonly JSONRPCId[];
  endpoint: string | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** E2, E3: the caller's own headers for this request (reserved names already removed). */
  headers: Readonly<Record<string, string>> | undefined;
}

export interface ResumeInput {
  /** The requests whose stream this GET resumes (for the host's telemetry, O1). */
  requestIds: readonly JSONRPCId[];
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
  /**
   * W6, E7: a `subscriptions/listen` POST was answered with its event stream: the server is
   * answering again (a success, as the standalone stream's `standalone.listening` is in the 2025 era).
   */
  | { type: 'post.listening'; postId: string }
  | {
      type: 'post.done';
      /** The reporting child; undefined for a direct call, which has no actor. */
      postId: string | undefined;
      origin: PostOrigin;
      attempts: SendAttempts;
      message: JSONRPCMessage | JSONRPCMessage[];
      response: JSONRPCResponse | undefined;
      sessionId: string | undefined;
    }
  | {
      type: 'post.failed';
      /** The reporting child; undefined for a direct call, which has no actor. */
      postId: string | undefined;
      origin: PostOrigin;
      attempts: SendAttempts;
      /** The session the request carried: a 404 for an older session than the current one is stale. */
      sessionId: string | undefined;
      message: JSONRPCMessage | JSONRPCMessage[];
      ticket: SendTicket;
      error: Error;
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
  /** R12: the stream being read is a resume's (a GET's answer), not the POST's own. */
  fromResume: boolean;
  /** R12: resumes answered with a stream that ended with no progress, since the last progress. */
  emptyResumes: number;
  /** R12: when the stream first ended since its last progress (`options.now`). */
  firstEndAt: number | undefined;
  /** R4: the next wait follows a stream that ended (its `retry` applies) or a resume that failed (backoff). */
  waitAfter: 'ended' | 'failed';
  error: Error | undefined;
  /** W3: the resume wait (tag `waiting`): its attempt and due time. */
  wait: PlannedWait | undefined;
  /** W2: the network is gone; a resume wait pauses. */
  offline: boolean;
}
