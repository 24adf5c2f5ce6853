/**
 * P4: the patience of requests that wait for a connection about to be free (src/http/node.ts,
 * `awaitDrain`). One wait that runs out (a late packet, a busy event loop) changes nothing; two in a
 * row (a server whose streams go on after their answer) stop the waiting for a while; a wait that
 * ends with a freed connection starts the count again.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drains } from '../../src/http/node-response.js';

/** A process that never waited: before each (a file before this one in the worker may have left waits that ran out), and after each (for the files after it). */
function neverWaited(): void {
  drains.misses = 0;
  drains.timedOutAt = Number.NEGATIVE_INFINITY;
}
beforeEach(neverWaited);
afterEach(neverWaited);

describe('P4: patience of the drain wait', () => {
  it('P4: one wait that runs out leaves requests waiting; a second in a row stops them', () => {
    expect(drains.patient()).toBe(true);
    drains.lostPatience();
    expect(drains.patient()).toBe(true);
    drains.lostPatience();
    expect(drains.patient()).toBe(false);
  });

  it('P4: a wait served by a freed connection between two that ran out keeps requests waiting', () => {
    drains.lostPatience();
    drains.served();
    drains.lostPatience();
    expect(drains.patient()).toBe(true);
  });

  it('P4: the impatience ends 10 s after the last wait ran out', () => {
    drains.lostPatience();
    drains.lostPatience();
    drains.timedOutAt = performance.now() - 10_001;
    expect(drains.patient()).toBe(true);
  });
});
