/**
 * When a POST stream that ended early is resumed (R1, R2, R5, R6, R11) and when resumes that come
 * back empty are given up (R12): the guards the POST stream chart registers with
 * `setup(…).extend(resumeRules)`, and the errors it fails a call with. Read from the context and
 * the event only; the chart (post-stream.ts) says where each leads.
 */
import type { NetworkEvent } from './types.js';
import { emptyResumeTimeLeft, isResumableEventId, minReconnectDelay } from './backoff.js';
import { EmptyResumesError, isSessionMissing, MessageTooLargeError, statusOf, StreamEndedError } from './errors.js';
import type { PostStreamContext, ReconnectDue, StreamReaderEvent } from './post-stream-types.js';

type ResumeArgs = { context: PostStreamContext; event: StreamReaderEvent | ReconnectDue | NetworkEvent };

/** R6: the statuses of a resume GET worth trying again (overload, a gateway's passing trouble). */
const transientStatus: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** R6: a resume GET's failure worth retrying: a transient status or a network error, never a missing session. */
function retryable(error: unknown): boolean {
  const status = statusOf(error);
  return !isSessionMissing(error) && (status === undefined || transientStatus.has(status));
}

/** R11: why a stream whose last event id cannot be a header is not resumed. */
export function unsendableIdError(cause: Error | undefined): StreamEndedError {
  return new StreamEndedError(
    'request stream cannot be resumed: its last event id is not visible ASCII, so it cannot be sent as Last-Event-ID',
    { cause },
  );
}

/** R12: the call is given up, naming its empty resumes (the one that just ended included, when it was one). */
export function emptyResumesError({ context, event }: ResumeArgs): EmptyResumesError {
  const emptied = event.type === 'stream.ended' ? 1 : 0;
  const since = context.firstEndAt === undefined ? 0 : context.options.now() - context.firstEndAt;
  const cause = event.type === 'stream.ended' ? event.end.error : 'error' in event ? event.error : undefined;
  return new EmptyResumesError(context.emptyResumes + emptied, since, cause === undefined ? undefined : { cause });
}

export const resumeRules = {
  guards: {
    /** R11: a resumption token that cannot be a Last-Event-ID header fails at once. */
    hasUnsendableToken: ({ context }: ResumeArgs) => context.resumptionToken !== undefined && !isResumableEventId(context.resumptionToken),
    /** R11: the stream's last event id cannot be sent back, so it cannot be resumed. */
    endedUnsendable: ({ context, event }: ResumeArgs) => {
      if (event.type !== 'stream.ended') return false;
      const lastEventId = event.end.lastEventId ?? context.lastEventId;
      return lastEventId !== undefined && !isResumableEventId(lastEventId);
    },
    /** R1/R2: only a stream that has shown an event id can be resumed, and only within budget (R5); E5: never in the 2026-07-28 era. */
    canResume: ({ context, event }: ResumeArgs) => {
      if (event.type !== 'stream.ended') return false;
      if (event.end.error instanceof MessageTooLargeError) return false;
      const lastEventId = event.end.lastEventId ?? context.lastEventId;
      const attempt = event.end.progressed ? 0 : context.attempt;
      return (
        !context.modern &&
        lastEventId !== undefined &&
        isResumableEventId(lastEventId) &&
        attempt <= context.options.reconnection.maxRetries
      );
    },
    /**
     * R6 (revised): only a transient answer to a resume GET is retried under the budget: 429, 502,
     * 503, 504 or a network error. Any other status (500, 501, 400, 403, …) means the stream cannot
     * be resumed, and the call fails at once; a missing session or a 401 goes to the parent.
     */
    canRetry: ({ context }: ResumeArgs, params: { error: unknown }) =>
      retryable(params.error) &&
      // W2: a failure while offline is the network's, not the server's: it spends no budget.
      (context.offline || context.attempt <= context.options.reconnection.maxRetries),
    /**
     * R12: a resumed stream ended with no progress (an empty 200, comments only) and no other resume
     * fits: the budget is spent (R5), or the window since the first end has no room for one more wait.
     */
    emptyResumesSpent: ({ context, event }: ResumeArgs) => {
      if (event.type !== 'stream.ended' || event.end.progressed || !context.fromResume || context.modern === true) return false;
      const lastEventId = event.end.lastEventId ?? context.lastEventId;
      if (lastEventId === undefined || !isResumableEventId(lastEventId)) return false;
      return context.attempt > context.options.reconnection.maxRetries || emptyResumeTimeLeft(context) < minReconnectDelay;
    },
    /**
     * R12: a resume GET failed for a cause worth retrying (R6) after resumes came back empty, and the
     * window has no room for another wait (offline waits spend none). A missing session or a 401 still
     * goes to the parent as itself.
     */
    emptyResumeWindowSpent: ({ context }: ResumeArgs, params: { error: unknown }) =>
      context.emptyResumes > 0 && !context.offline && retryable(params.error) && emptyResumeTimeLeft(context) < minReconnectDelay,
  },
};
