/**
 * The actor of a wait handed to a caller's `reconnectionScheduler` (SDK v2): the one part of the
 * waits that is xstate code, apart from backoff.ts, which the facade imports without the engine
 * (import it from here, not through backoff.ts: a re-export there would make it, and xstate, eager).
 */
import { fromCallback } from 'xstate';
import type { ScheduledWaitInput } from './backoff.js';

/** The wait handed to a caller's `reconnectionScheduler`; stopping the state cancels it. */
export const scheduledWait = fromCallback<{ type: 'noop' }, ScheduledWaitInput>(({ input, sendBack }) => {
  let due = false;
  const cancel = input.scheduler(
    () => {
      if (due) return;
      due = true;
      sendBack({ type: 'reconnect.due' });
    },
    input.delay,
    input.attempt,
  );
  return () => {
    // Cancel a wait still pending (close, cancellation); one that already fired needs nothing.
    if (!due && typeof cancel === 'function') cancel();
    due = true;
  };
});
