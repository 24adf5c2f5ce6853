/**
 * The connection chart's vocabulary: its input, context, events in and events out, and what it
 * and the facade's direct path (direct.ts, src/data-plane.ts) say to each other.
 */
import type {
  AuthChallenge,
  ChartOptions,
  JSONRPCId,
  JSONRPCMessage,
  JSONRPCRequest,
  MessageSink,
  NetworkEvent,
  SendAttempts,
  SendTicket,
} from '../types.js';
import type { InterruptedStream, PostOrigin, PostStreamReport } from '../post-stream.js';
import type { StandaloneStreamReport } from '../standalone-stream.js';

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
  | ({ type: 'send' } & Omit<QueuedSend, 'origin'>)
  | { type: 'protocolVersion.set'; version: string }
  | { type: 'close' }
  | { type: 'session.terminate'; ticket: SendTicket }
  /** E2, E6: the caller aborted this request's `requestSignal`: its POST and stream stop, nothing is sent. */
  | { type: 'request.abort'; requestId: JSONRPCId }
  /** A warning from the host's I/O (a bad event on a stream): the chart emits it, the one channel for warnings. */
  | { type: 'warning'; error: Error; once?: string | undefined }
  | PostStreamReport
  | DirectCallReport
  | StandaloneStreamReport
  | LegacyStreamReport
  /** W2: the host's network signal (the `networkStatus` actor). */
  | NetworkEvent
  /** W6: the chart's own word to its health region: a call failed for the server's trouble, or one was answered. */
  | { type: 'health.trouble'; error: Error }
  | { type: 'health.answered' };

/**
 * What the chart tells the direct path, the facade's data plane (src/data-plane.ts): events it
 * emits, heard through `actor.on()`. The chart owns the plane's life (`direct.start` on start(),
 * `direct.end` on close and failure) and its gate; the plane decides nothing.
 */
export type DirectCallsCommand =
  /** A connection starts: the facade makes its data plane, gate closed, steady. */
  | { type: 'direct.start' }
  /** The gate: open, an answer that keeps its call's session goes straight to the sink; closed, the chart hears every answer. */
  | { type: 'direct.open' }
  | { type: 'direct.close' }
  /** W6: while `degraded`, every answer goes to the chart too, so that the first happy one ends it. */
  | { type: 'direct.degraded' }
  | { type: 'direct.steady' }
  /**
   * Its calls end now (close, failure), each told `error` (undefined: the transport closed, and
   * whoever ends a call makes its `TransportClosedError`); `answer`: with a synthetic response
   * (P10). The plane ends with them: the facade drops it.
   */
  | { type: 'direct.end'; error: Error | undefined; answer: boolean }
  /** R8: its call for this request stops now. */
  | { type: 'direct.cancel'; requestId: JSONRPCId; error: Error };

/**
 * What the direct path reports besides `post.done` / `post.failed`: a stream that ended before
 * its response, for the chart to spawn a POST child on it.
 */
export type DirectCallReport = {
  type: 'post.interrupted';
  message: JSONRPCMessage;
  /** E3: the caller's own headers for this request, for the POST child that takes the call over. */
  headers?: Readonly<Record<string, string>> | undefined;
  ticket: SendTicket;
  /** The session and version the call carried; the resume GET carries the same (R1). */
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  interrupted: InterruptedStream;
};

/** What the legacy (2024-11-05) stream actor tells the chart (L1). */
export type LegacyStreamReport = { type: 'legacy.endpoint'; endpoint: string } | { type: 'legacy.ended'; error: Error };

/** What the running chart tells its host (the facade, a UI) without being asked. */
export type ConnectionEmitted =
  | { type: 'warning'; error: Error }
  | { type: 'failed'; error: Error }
  | { type: 'closed' }
  /**
   * The session, if there was one, is over: closed, terminated, failed, or forgotten by the server
   * (before a new one is made, F3). What the host kept for it (N3: cookies) goes with it.
   */
  | { type: 'session.ended' }
  /** The session was re-established (F3); IDs are fingerprints, never the IDs themselves (X1). */
  | { type: 'session.changed'; previous: string | undefined; current: string | undefined }
  /** The chart's words to the direct path (`direct.*`), which the facade runs. */
  | DirectCallsCommand;

/** The states that can meet a 401 or 403 and return once authorized. */
export type AuthReturn = 'connecting' | 'initializing' | 'open' | 'modern';

/**
 * E1: which protocol era the connection speaks: 2026-07-28 and later (`modern`, sessionless),
 * 2025-03-26 … 2025-11-25 (`streamable`, sessions), or 2024-11-05 (`httpSse`, the old transport).
 */
export type Era = 'modern' | 'streamable' | 'httpSse';

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
  /** E2, E3: the caller's own headers for this request (reserved names already removed). */
  headers?: Readonly<Record<string, string>> | undefined;
}

/** What the chart keeps of each POST child it spawned, so it never reads a child's snapshot. */
export interface PostRecord {
  ticket: SendTicket;
  requestIds: readonly JSONRPCId[];
  origin: PostOrigin;
}

export interface ConnectionContext extends ConnectionInput {
  /** E1: the era negotiated with this endpoint; kept across restarts for the transport's life (E10). */
  era: Era | undefined;
  /** E10: the server's answer to the era probe (`server/discover`), so a restart need not probe again. */
  discover: Record<string, unknown> | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** H1: the negotiated protocol revision allows JSON-RPC batches in one POST (2025-03-26 only). */
  batching: boolean;
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
  /** The keys of the warnings already said once (P11, H7): the chart, not the I/O, remembers. */
  warned: readonly string[];
  /** A different session ID was already reported once (H7). */
  sessionIdMismatchReported: boolean;
  /** Sessions re-established since a call last got its response (bounds recovery loops, F3). */
  recoveriesWithoutProgress: number;
  /** The POST children running, by id: who waits on each, and for which requests. */
  posts: Record<string, PostRecord>;
  /** The caller of terminateSession() while its DELETE runs. */
  terminateTicket: SendTicket | undefined;
  /** W1: a restored session's standalone stream resumes from here, once (spent when `open` is left). */
  standaloneResumeFrom: string | undefined;
  /** W6: why the connection is `degraded` (the latest failure), while it is. */
  degradedBy: Error | undefined;
  /** F3, F4: attempts to re-establish the connection since it last worked (a re-initialize, or the 2026-07-28 probe). */
  recoveryAttempts: number;
  /** F4, W3: the chart's own wait before its next attempt, and why it waits; read it while `reconnecting` or `waiting`. */
  recoveryWait: RecoveryWait | undefined;
  /** F4: the era probe (`server/discover`) the Client sent, repeated to see whether a 2026-07-28 server is back. */
  probeRequest: JSONRPCRequest | undefined;
}

/** F4, W3: the chart's wait before it tries the server again: which attempt, when it is due, and why. */
export interface RecoveryWait {
  attempt: number;
  delayMs: number;
  dueAt: number;
  cause: Error;
}
