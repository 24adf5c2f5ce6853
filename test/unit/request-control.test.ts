/**
 * H10: a request's abort handle. The Node client listens to it directly (no AbortSignal per
 * request); fetch gets a real signal, linked whenever it is made.
 */
import { describe, expect, it } from 'vitest';
import { RequestControl } from '../../src/http/client.js';

describe('H10. RequestControl', () => {
  it('H10: abort() tells the one listener once, with the reason given; a second abort() changes nothing', () => {
    const control = new RequestControl();
    const heard: unknown[] = [];
    control.onAbort(() => heard.push(control.reason));
    const reason = new Error('stop');
    control.abort(reason);
    control.abort(new Error('again'));
    expect(heard).toEqual([reason]);
    expect(control.aborted).toBe(true);
    expect(control.reason).toBe(reason);
  });

  it('H10: without a reason, the reason is an AbortError, as an AbortSignal has', () => {
    const control = new RequestControl();
    expect(control.reason).toBeUndefined();
    control.abort();
    expect(control.reason).toBeInstanceOf(DOMException);
    expect(control.reason).toMatchObject({ name: 'AbortError' });
  });

  it('H10: a listener removed, or replaced by a later one, is not told', () => {
    const control = new RequestControl();
    const heard: string[] = [];
    const first = () => heard.push('first');
    control.onAbort(first);
    control.offAbort(first);
    const second = () => heard.push('second');
    control.onAbort(second);
    control.onAbort(() => heard.push('third'));
    // Removing a listener that was replaced leaves the current one in place.
    control.offAbort(second);
    control.abort();
    expect(heard).toEqual(['third']);
  });

  it('H10: the signal for fetch follows the handle, made before or after abort()', () => {
    const before = new RequestControl();
    const signal = before.signal;
    expect(signal.aborted).toBe(false);
    const reason = new Error('stop');
    before.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);

    const after = new RequestControl();
    after.abort();
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe(after.reason);
  });
});
