/**
 * W6, the connection's health: a region of the open states (`open`, `modern`) that says whether
 * the server is failing, the guard and actions that feed it, and the transitions by which a
 * call's answer or failure tells it.
 */
import { assertEvent, assign, enqueueActions } from 'xstate';
import { isServerTrouble, StreamEndedError } from '../errors.js';
import { actions, guards, type ConnectionState } from './base.js';

/**
 * W6: whether the server is failing while the connection is open (a session's, or a 2026-07-28
 * one). `degraded` while calls fail with 5xx, 429 or network errors or the standalone stream
 * waits to reconnect after an error, with why in `degradedBy`. A clean end of the stream is
 * routine (G4: servers and proxies end event streams to be reconnected, SEP-1699 polling) and
 * is not trouble, unless the stream keeps ending without progress past its retry budget (G5); the next success (a call answered, the stream
 * open again) ends it. The calls' reports are handled by the parent state (a region that took
 * them would pre-empt it), which tells this region with `health.trouble` and, only while it is
 * degraded, `health.answered`. Its entry and exit tell the direct path (`direct.degraded` /
 * `direct.steady`, emitted): only while it is degraded are happy direct answers reported to the chart at
 * all, so that the first one can end it (no event per call otherwise).
 */
export const healthRegion = {
  initial: 'steady',
  states: {
    steady: {
      on: {
        'health.trouble': { target: 'degraded', actions: 'noteTrouble' },
        'standalone.waiting': { guard: 'isTroubledWait', target: 'degraded', actions: 'noteTrouble' },
      },
    },
    degraded: {
      tags: ['degraded'],
      entry: 'directCallsDegraded',
      exit: ['forgetTrouble', 'directCallsSteady'],
      on: {
        'health.trouble': { actions: 'noteTrouble' },
        'standalone.waiting': { guard: 'isTroubledWait', actions: 'noteTrouble' },
        'health.answered': 'steady',
        'standalone.listening': 'steady',
      },
    },
  },
} as const satisfies ConnectionState;

/** A call's answer and failure while the connection is open: the call's own handling, and the health region told (W6). */
export const openFailure = { actions: ['answerFailure', 'stopPost', 'reportTrouble'] } as const;
export const openAnswer = { actions: ['deliverResponse', 'stopPost', 'reportAnswer'] } as const;

export const healthGuards = guards({
  /**
   * W6: the standalone stream waits after an error (a break, a failed GET), or past its retry
   * budget without progress; not after a clean end, which is routine (G4).
   */
  isTroubledWait: ({ event }) => event.type === 'standalone.waiting' && (event.error !== undefined || event.spent),
});

export const healthActions = actions({
  /** W6: a call failed because the server, or the way to it, is failing (5xx, 429, the network): the health region hears it. */
  reportTrouble: enqueueActions(({ event, enqueue }) => {
    assertEvent(event, 'post.failed');
    if (isServerTrouble(event.error)) enqueue.raise({ type: 'health.trouble', error: event.error });
  }),
  /** W6: a call was answered while degraded: the health region hears it (and only then: no event per happy call). */
  reportAnswer: enqueueActions(({ self, enqueue }) => {
    if (self.getSnapshot().hasTag('degraded')) enqueue.raise({ type: 'health.answered' });
  }),
  /** W6: why the connection is degraded: the latest failure (a stream that keeps ending cleanly says so). */
  noteTrouble: assign(({ event }) => {
    assertEvent(event, ['health.trouble', 'standalone.waiting']);
    return {
      degradedBy: event.error ?? new StreamEndedError('standalone stream keeps ending without progress; waiting to reconnect'),
    };
  }),
  forgetTrouble: assign({ degradedBy: undefined }),
});
