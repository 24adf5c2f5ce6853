/**
 * H10: a request's abort handle. The Node client listens to it directly (no AbortSignal per
 * request); fetch gets a real signal, linked whenever it is made.
 */
import { describe, expect, it } from 'vitest';
import { HttpClient, RequestControl, type HttpSend } from '../../src/http/client.js';
import { baseHeaders } from '../../src/http/headers.js';

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

/** An HttpClient whose sender answers when told to; the handles it was given. */
function clientWithHeldAnswers(): { http: HttpClient; controls: RequestControl[]; answer: () => void } {
  const controls: RequestControl[] = [];
  const waiting: (() => void)[] = [];
  const send: HttpSend = (_url, _init, control) => {
    if (control !== undefined) controls.push(control);
    return new Promise((resolve) => {
      waiting.push(() => {
        resolve(new Response('', { status: 200 }));
      });
    });
  };
  const http = new HttpClient({
    url: new URL('http://127.0.0.1:1/mcp'),
    signal: undefined,
    fetch: () => Promise.reject(new Error('no fetch here')),
    send,
    init: {},
    headers: baseHeaders(undefined, false),
    tokens: undefined,
    dpop: undefined,
    redirectPolicy: 'follow',
  });
  http.begin();
  return {
    http,
    controls,
    answer: () => {
      for (const go of waiting.splice(0)) go();
    },
  };
}

const getSpec = (signal: AbortSignal | undefined) =>
  ({
    method: 'GET',
    url: undefined,
    sessionId: undefined,
    protocolVersion: undefined,
    lastEventId: undefined,
    headers: undefined,
    body: undefined,
    signal,
    control: undefined,
  }) as const;

/** A GET exchange whose answer has come, then detached (as a held stream's is). */
async function detachedExchange(signal: AbortSignal | undefined) {
  const { http, controls, answer } = clientWithHeldAnswers();
  const pending = http.request(getSpec(signal));
  await Promise.resolve();
  answer();
  const exchange = await pending;
  exchange.detach();
  return { http, controls, exchange };
}

describe('H10. An exchange and the calling actor signal', () => {
  it('H10: the calling signal aborted while the request is under way aborts its handle', async () => {
    const { http, controls } = clientWithHeldAnswers();
    const caller = new AbortController();
    void http.request(getSpec(caller.signal)).catch(() => undefined);
    await Promise.resolve();
    expect(controls).toHaveLength(1);
    expect(controls[0]?.aborted).toBe(false);
    caller.abort();
    expect(controls[0]?.aborted).toBe(true);
  });

  it('H10: once detached (a held stream), the calling signal no longer aborts it; its stream handle releases it, so ending the lifetime does not abort it', async () => {
    const caller = new AbortController();
    const { http, controls, exchange } = await detachedExchange(caller.signal);
    caller.abort();
    expect(controls[0]?.aborted).toBe(false);
    const stream = exchange.stream(new ReadableStream<Uint8Array>());
    expect(Object.keys(stream)).toEqual(['body']);
    stream.release();
    http.end();
    expect(controls[0]?.aborted).toBe(false);
  });

  it('H10: a request still held (not released) is aborted when the lifetime ends', async () => {
    const { http, controls } = await detachedExchange(undefined);
    http.end();
    expect(controls[0]?.aborted).toBe(true);
  });
});
