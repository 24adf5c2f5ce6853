/**
 * Streams that survive: POST streams cut, stalled and refused on their way from the SDK's real
 * server (with an event store that replays in order) to the SDK Client over this transport,
 * through the fault proxy (test/support/fault-proxy.ts). R1–R10, S3.
 *
 * The reconnect delays the behaviour defines (R4, S3) are asserted as the chart chose them (its
 * stream's planned wait, W3); the wall clock gives only lower bounds (a timer never fires early;
 * a loaded machine makes it late). Everything else waits for events, bounded by the test timeout.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallToolResultSchema, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { EmptyResumesError, findTransportError, type JSONRPCMessage, type ReconnectionOptions } from '../../src/index.js';
import type { FaultProxy, FaultProxyOptions, ProxiedRequest } from '../support/fault-proxy.js';
import { closedForGood, noCallsInFlight, only, textOf, until } from '../support/harness.js';
import { recordWaits } from '../support/waits.js';
import {
  closeRigs,
  connectThrough,
  isCancellation,
  isResume,
  progressOf,
  rejection,
  responsesTo,
  rig,
  startProxy,
  transportThrough,
  within,
} from '../support/proxy-rig.js';

afterEach(async () => {
  vi.restoreAllMocks();
  await closeRigs();
});

/** Timers never fire early; this covers rounding between clocks. */
const early = 3;

const posts = (requests: readonly ProxiedRequest[], tool: string) => requests.filter((r) => r.tool === tool);

/** Backoff for the R4 timing tests: 100 ms doubling up to 5 s, five retries, no jitter; `overrides` change one thing. */
const backoff = (overrides: Partial<ReconnectionOptions> = {}): ReconnectionOptions => ({
  initialReconnectionDelay: 100,
  reconnectionDelayGrowFactor: 2,
  maxReconnectionDelay: 5_000,
  maxRetries: 5,
  jitter: false,
  ...overrides,
});

/**
 * R4: a progress call whose stream the proxy cuts after two events and whose first `refused`
 * resumes it answers 503. Gives the call's text, its resumes, and the gaps (ms) between the cut
 * and each resume, in order.
 */
async function cutAndRefused(
  refused: number,
  reconnectionOptions: ReconnectionOptions,
  options: { server?: FaultProxyOptions; stripRetry?: boolean } = {},
) {
  const { proxy, client, transport } = await rig({
    ...(options.server ? { server: options.server } : {}),
    transport: { reconnectionOptions },
  });
  const waits = recordWaits(transport);
  proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2, stripRetry: options.stripRetry ?? false });
  proxy.rule({ method: 'GET', resume: true, times: refused, respond: { status: 503, body: 'busy' } });

  const text = textOf(await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined }));

  const post = only(posts(proxy.requests, 'progress'), 'progress POST');
  const resumes = proxy.requests.filter(isResume);
  return {
    text,
    resumes,
    observed: gaps([post.cutAt!, ...resumes.map((r) => r.at)]),
    /** The delays the POST stream's chart chose, attempt by attempt (W3). */
    planned: waits.filter((wait) => wait.stream !== 'standalone').map((wait) => wait.delayMs),
  };
}

/** Arrival times of the resume GETs of the stream that `post` began, in order. */
function resumesOf(requests: readonly ProxiedRequest[], post: ProxiedRequest, carrierOf: (id: string) => ProxiedRequest | undefined) {
  const chain = new Set<ProxiedRequest>([post]);
  const found: ProxiedRequest[] = [];
  for (const request of requests) {
    if (!isResume(request)) continue;
    const carrier = carrierOf(request.lastEventId!);
    if (carrier !== undefined && chain.has(carrier)) {
      chain.add(request);
      found.push(request);
    }
  }
  return found;
}

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((time, i) => time - (times[i] as number));
}

/** Ids the proxy sent the client on these responses, in order. */
const idsSent = (requests: readonly ProxiedRequest[]) =>
  requests.flatMap((request) => request.events.map((event) => event.id).filter((id) => id !== undefined));

describe('R1, R2, R3: a POST stream that breaks', { timeout: 10_000 }, () => {
  it.each(['destroy', 'end'] as const)(
    'R1: a POST stream cut (%s) after an event id resumes by GET with Last-Event-ID, session and version headers; never re-POSTed; the call gets its result',
    async (cutMode) => {
      const { proxy, transport, client, delivered } = await rig({
        transport: { authProvider: { tokens: () => ({ access_token: 'resume-token', token_type: 'Bearer' }) } },
      });
      const cut = proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 3, cutMode });
      const seen: number[] = [];
      const result = await client.callTool({ name: 'progress', arguments: { steps: 5 } }, undefined, {
        onprogress: (p) => seen.push(p.progress),
      });

      expect(textOf(result)).toBe('done 5');
      expect(seen).toEqual([1, 2, 3, 4, 5]);
      const [post, ...others] = posts(proxy.requests, 'progress');
      expect(others).toEqual([]);
      expect(post?.rule).toBe(cut);
      expect(post?.outcome).toBe('cut');
      const resumes = proxy.requests.filter(isResume);
      expect(resumes).toHaveLength(1);
      const resume = only(resumes, 'resume GET');
      const sent = idsSent([post!]);
      expect(sent).toHaveLength(3);
      // A cleanly ended body was read to its end; a broken one may lose what was not read yet.
      if (cutMode === 'end') expect(resume.lastEventId).toBe(sent.at(-1));
      else expect(sent).toContain(resume.lastEventId);
      expect(resume.headers.accept).toBe('text/event-stream');
      expect(resume.headers['mcp-session-id']).toBe(transport.sessionId);
      expect(resume.headers['mcp-protocol-version']).toBe(LATEST_PROTOCOL_VERSION);
      expect(resume.headers.authorization).toBe('Bearer resume-token');
      expect(resume.at).toBeGreaterThan(post!.cutAt!);
      expect(responsesTo(delivered, 1)).toHaveLength(1);
    },
  );

  it.each(['destroy', 'end'] as const)(
    "R2, P10: a POST stream cut (%s) with no event id ever seen fails the call at once with 'request ended without a response'; no GET",
    async (cutMode) => {
      const { proxy, client, transport } = await rig();
      proxy.rule({ method: 'POST', tool: 'echo', stripIds: true, cutAfter: 1, cutMode });

      // The bound is the test's, far below the SDK Client's 60 s request timeout.
      const error = await within(rejection(client.callTool({ name: 'echo', arguments: { text: 'lost' } })), 'the call to fail');
      expect(error).toBeInstanceOf(McpError);
      expect(error.message).toContain('request ended without a response');
      expect(proxy.requests.filter((r) => r.method === 'GET' && r.lastEventId !== undefined)).toEqual([]);
      expect(posts(proxy.requests, 'echo')).toHaveLength(1);
      // The session lives on.
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'next' } }))).toBe('next');
      expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    },
  );

  it('R2: against a server without an event store (no ids at all), a cut after a notification fails the call at once; what came before the cut was delivered', async () => {
    const { proxy, client } = await rig({ server: { eventStore: false } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2, cutMode: 'end' });
    const seen: number[] = [];
    const error = await within(
      rejection(client.callTool({ name: 'progress', arguments: { steps: 5 } }, undefined, { onprogress: (p) => seen.push(p.progress) })),
      'the call to fail',
    );
    expect(error.message).toContain('request ended without a response');
    expect(seen).toEqual([1, 2]);
    expect(proxy.requests.filter(isResume)).toEqual([]);
  });

  it('R3: a drop is never treated as cancellation: no notifications/cancelled is sent, neither for a resumed call nor for a failed one', async () => {
    const { proxy, client } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'POST', tool: 'echo', stripIds: true, cutAfter: 1 });

    expect(textOf(await client.callTool({ name: 'progress', arguments: { steps: 4 } }, undefined, { onprogress: () => undefined }))).toBe(
      'done 4',
    );
    await rejection(client.callTool({ name: 'echo', arguments: { text: 'dropped' } }));
    // Something sent after both: when it arrived, anything sent earlier had arrived too.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');

    expect(proxy.requests.filter(isResume)).toHaveLength(1);
    expect(proxy.requests.filter(isCancellation)).toEqual([]);
  });
});

describe('R4, S3: how long a reconnect waits', { timeout: 15_000 }, () => {
  it('R4: without retry, the delays grow initial × factor^(n−1): 100, 200, 400, 800, 1600 ms (jitter off)', async () => {
    // The server does send retry: 5000; the proxy strips it, so backoff alone decides.
    const { text, resumes, observed, planned } = await cutAndRefused(4, backoff(), { server: { retryInterval: 5_000 }, stripRetry: true });

    expect(text).toBe('done 3');
    expect(resumes.map((r) => r.status)).toEqual([503, 503, 503, 503, 200]);
    // Every attempt resumes after the same event: the refused ones delivered none.
    expect(new Set(resumes.map((resume) => resume.lastEventId)).size).toBe(1);
    console.log(`R4 backoff gaps (ms), expected 100/200/400/800/1600: ${observed.map((g) => g.toFixed(0)).join(', ')}`);
    expect(planned).toEqual([100, 200, 400, 800, 1600]);
    [100, 200, 400, 800, 1600].forEach((delay, i) => {
      expect(observed[i], `reconnect ${String(i + 1)}`).toBeGreaterThanOrEqual(delay - early);
    });
  });

  it('R4: the delay is capped at maxReconnectionDelay: 100, then 150, 150 (factor 10, cap 150)', async () => {
    const { observed, planned } = await cutAndRefused(2, backoff({ reconnectionDelayGrowFactor: 10, maxReconnectionDelay: 150 }));

    console.log(`R4 capped gaps (ms), expected 100/150/150: ${observed.map((g) => g.toFixed(0)).join(', ')}`);
    expect(planned).toEqual([100, 150, 150]);
    [100, 150, 150].forEach((delay, i) => {
      expect(observed[i]).toBeGreaterThanOrEqual(delay - early);
    });
  });

  it('R4: with jitter, each delay lies within [d, 2d) of its backoff step d', async () => {
    const { observed, planned } = await cutAndRefused(3, backoff({ jitter: true }));

    console.log(`R4 jittered gaps (ms), steps 100/200/400/800: ${observed.map((g) => g.toFixed(0)).join(', ')}`);
    expect(observed).toHaveLength(4);
    expect(planned).toHaveLength(4);
    [100, 200, 400, 800].forEach((step, i) => {
      // What the chart chose lies in [d, 2d); the wall clock can only confirm it was not early.
      expect(planned[i]).toBeGreaterThanOrEqual(step);
      expect(planned[i]).toBeLessThan(2 * step);
      expect(observed[i]).toBeGreaterThanOrEqual(planned[i]! - early);
    });
  });

  it('R4: the jitter is full jitter: with the random source at 0.9 every delay is 1.9 × d', async () => {
    // The transport reads Math.random when it is built: a fixed value makes the jitter visible.
    vi.spyOn(Math, 'random').mockReturnValue(0.9);
    const { observed, planned } = await cutAndRefused(2, backoff({ jitter: true }));

    console.log(`R4 jitter 0.9 gaps (ms), expected 190/380/760: ${observed.map((g) => g.toFixed(0)).join(', ')}`);
    expect(planned).toEqual([190, 380, 760]);
    [190, 380, 760].forEach((delay, i) => {
      expect(observed[i]).toBeGreaterThanOrEqual(delay - early);
    });
  });

  it('S3, R4 (sse-retry): a stream whose priming event says retry: 500, closed by the server, is resumed with Last-Event-ID after the 500 ms it was told', async () => {
    // As in the conformance suite's sse-retry scenario: the server's own retry, then the stream ends.
    const { proxy, client, transport } = await rig({ server: { retryInterval: 500 } });
    const waits = recordWaits(transport);
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 1, cutMode: 'end' });

    expect(textOf(await client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, { onprogress: () => undefined }))).toBe(
      'done 2',
    );

    const post = only(posts(proxy.requests, 'progress'), 'progress POST');
    expect(post.events[0]?.raw).toContain('retry: 500');
    const [resume, ...more] = proxy.requests.filter(isResume);
    expect(more).toEqual([]);
    expect(resume?.lastEventId).toBe(post.events[0]?.id);
    const delay = resume!.at - post.cutAt!;
    console.log(`S3 sse-retry: reconnected ${delay.toFixed(0)} ms after the stream ended (retry: 500)`);
    expect(waits.filter((wait) => wait.stream !== 'standalone').map((wait) => wait.delayMs)).toEqual([500]);
    expect(delay).toBeGreaterThanOrEqual(500 - early);
  });

  it('S3: retry is per stream: a stream told retry: 400 waits 400 ms while a concurrent stream without one backs off 100 ms', async () => {
    const { proxy, client, transport } = await rig();
    const waits = recordWaits(transport);
    proxy.rule({ method: 'POST', tool: 'progress', match: (r) => steps(r) === 2, cutAfter: 2, retry: 400 });
    proxy.rule({ method: 'POST', tool: 'progress', match: (r) => steps(r) === 3, cutAfter: 2 });

    const [told, untold] = await Promise.all([
      client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, { onprogress: () => undefined }),
      client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined }),
    ]);
    expect(textOf(told)).toBe('done 2');
    expect(textOf(untold)).toBe('done 3');

    const toldPost = posts(proxy.requests, 'progress').find((r) => steps(r) === 2)!;
    const untoldPost = posts(proxy.requests, 'progress').find((r) => steps(r) === 3)!;
    const toldResume = only(resumesOf(proxy.requests, toldPost, proxy.carrierOf), 'resume of the stream told retry: 400');
    const untoldResume = only(resumesOf(proxy.requests, untoldPost, proxy.carrierOf), 'resume of the stream told nothing');
    const toldDelay = toldResume.at - toldPost.cutAt!;
    const untoldDelay = untoldResume.at - untoldPost.cutAt!;
    console.log(`S3 per stream: retry 400 → ${toldDelay.toFixed(0)} ms; no retry (backoff 100) → ${untoldDelay.toFixed(0)} ms`);
    // The chart planned one wait per stream: 400 ms for the told one, the 100 ms backoff step for the other.
    const planned = waits.filter((wait) => wait.stream !== 'standalone');
    expect(new Set(planned.map((wait) => wait.stream)).size).toBe(2);
    expect(planned.map((wait) => wait.delayMs).sort((a, b) => a - b)).toEqual([100, 400]);
    expect(toldDelay).toBeGreaterThanOrEqual(400 - early);
    expect(untoldDelay).toBeGreaterThanOrEqual(100 - early);
  });
});

function steps(request: ProxiedRequest): unknown {
  const body = request.body as { params?: { arguments?: { steps?: unknown } } } | undefined;
  return body?.params?.arguments?.steps;
}

describe('R5: the retry budget', { timeout: 10_000 }, () => {
  const budget = { initialReconnectionDelay: 20, reconnectionDelayGrowFactor: 1, maxReconnectionDelay: 100, maxRetries: 3, jitter: false };

  it('R5, R6, P10: resume GETs that keep failing (503) end the call after exactly maxRetries + 1 GETs, then nothing more', async () => {
    const { proxy, client, transport } = await rig({ transport: { reconnectionOptions: budget } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 1 });
    proxy.rule({ method: 'GET', resume: true, times: Infinity, respond: { status: 503, body: 'busy' } });

    const error = await rejection(
      client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, { onprogress: () => undefined }),
    );
    expect(error.message).toContain('503');
    expect(proxy.requests.filter(isResume)).toHaveLength(budget.maxRetries + 1);
    // The moment: no call is in flight, so no POST child is left to send another GET.
    await noCallsInFlight(transport, 'the call given up on');
    expect(proxy.requests.filter(isResume)).toHaveLength(budget.maxRetries + 1);
    expect(posts(proxy.requests, 'progress')).toHaveLength(1);
    // R3: a call the transport gave up on is not cancelled either.
    expect(proxy.requests.filter(isCancellation)).toEqual([]);
  });

  it('R5: resume streams that open and end without progress end the call after exactly maxRetries + 1 GETs', async () => {
    const { proxy, client, transport } = await rig({ transport: { reconnectionOptions: budget } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 1 });
    proxy.rule({ method: 'GET', resume: true, times: Infinity, cutAfter: 0, cutMode: 'end' });

    const error = await rejection(
      client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, { onprogress: () => undefined }),
    );
    expect(error.message).toContain('could not be resumed');
    expect(proxy.requests.filter(isResume)).toHaveLength(budget.maxRetries + 1);
    await noCallsInFlight(transport, 'the call that could not be resumed');
    expect(proxy.requests.filter(isResume)).toHaveLength(budget.maxRetries + 1);
  });

  it('R5: progress (a new event id) resets the count: 503, 503, a stream with one event, 503, 503, then success — 6 GETs with maxRetries 2', async () => {
    const { proxy, client } = await rig({ transport: { reconnectionOptions: { ...budget, maxRetries: 2 } } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 1 });
    proxy.rule({ method: 'GET', resume: true, times: 2, respond: { status: 503 } });
    proxy.rule({ method: 'GET', resume: true, cutAfter: 1 });
    proxy.rule({ method: 'GET', resume: true, times: 2, respond: { status: 503 } });

    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 4 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(textOf(result)).toBe('done 4');
    expect(seen).toEqual([1, 2, 3, 4]);
    const resumes = proxy.requests.filter(isResume);
    expect(resumes.map((r) => r.status)).toEqual([503, 503, 200, 503, 503, 200]);
    // The GETs after the first that delivered an event resume after that event.
    const progressed = resumes.find((resume) => resume.events.length > 0)!;
    const later = resumes.filter((resume) => resume.at > progressed.at);
    expect(later).toHaveLength(3);
    for (const resume of later) expect(resume.lastEventId).toBe(progressed.events[0]!.id);
  });

  it('R5: without progress, the budget is not reset: 503, 503, an empty stream, then the call fails (maxRetries 2)', async () => {
    const { proxy, client } = await rig({ transport: { reconnectionOptions: { ...budget, maxRetries: 2 } } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 1 });
    proxy.rule({ method: 'GET', resume: true, times: 2, respond: { status: 503 } });
    proxy.rule({ method: 'GET', resume: true, cutAfter: 0 });
    proxy.rule({ method: 'GET', resume: true, times: Infinity, respond: { status: 503 } });

    await rejection(client.callTool({ name: 'progress', arguments: { steps: 4 } }, undefined, { onprogress: () => undefined }));
    expect(proxy.requests.filter(isResume).map((r) => r.status)).toEqual([503, 503, 200]);
  });
});

describe('R12: resumes answered but empty', { timeout: 15_000 }, () => {
  it('R12, R4, R5: a call whose resumes come back 200 and empty (the defaults, jitter on) settles with EmptyResumesError; the waits the chart planned end within 15 s of the first end', async () => {
    // The clock is driven: Date is faked (only Date), and the caller's reconnectionScheduler moves it by
    // each planned delay before it lets the resume go, so the chart's 15 s window is measured on that clock.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const planned: number[] = [];
      const reconnectionScheduler = (reconnect: () => void, delay: number) => {
        planned.push(delay);
        vi.advanceTimersByTime(delay);
        setImmediate(reconnect);
      };
      const defaults = {
        initialReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 1.5,
        maxReconnectionDelay: 30_000,
        maxRetries: 5,
        jitter: true,
      };
      const { proxy, client, transport, errors } = await rig({ transport: { reconnectionOptions: defaults, reconnectionScheduler } });
      proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 1 });
      proxy.rule({ method: 'GET', resume: true, times: Infinity, cutAfter: 0, cutMode: 'end' });
      const firstEnd = Date.now();

      const error = await rejection(
        client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, { onprogress: () => undefined }),
      );
      // The Client sees a JSON-RPC error naming the empty resumes; the typed error goes to onerror.
      expect(error.message).toMatch(/resumes answered with an empty stream/);
      const typed = errors.map((e) => findTransportError(e, EmptyResumesError)).find((e) => e !== undefined);
      expect(typed, errors.map(String).join('; ')).toBeInstanceOf(EmptyResumesError);
      // Every planned wait led to one resume GET, each answered 200 with nothing in it.
      const resumes = proxy.requests.filter(isResume);
      expect(resumes).toHaveLength(planned.length);
      expect(typed!.emptyResumes).toBe(planned.length);
      // What the chart chose: unbounded, six jittered waits sum to 20.8–41.6 s; here they end inside the window.
      // wall-clock guard: driven clock (Date is faked and moved by the planned waits only)
      expect(planned.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(14_000);
      // wall-clock guard: driven clock (Date is faked and moved by the planned waits only)
      expect(typed!.sinceFirstEndMs).toBeLessThanOrEqual(15_000);
      // wall-clock guard: driven clock (Date is faked and moved by the planned waits only)
      expect(Date.now() - firstEnd).toBeLessThanOrEqual(15_000);
      await noCallsInFlight(transport, 'the call whose resumes came back empty');
      expect(proxy.requests.filter(isResume)).toHaveLength(planned.length);
      expect(posts(proxy.requests, 'progress')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('R6: a resume GET that is refused', { timeout: 10_000 }, () => {
  it('R6: 503, 429 and a network error are retried under the same budget, with the same Last-Event-ID; the call gets its result', async () => {
    const { proxy, client } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'GET', resume: true, respond: { status: 503 } });
    proxy.rule({ method: 'GET', resume: true, respond: { status: 429 } });
    proxy.rule({ method: 'GET', resume: true, reset: true });

    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(textOf(result)).toBe('done 3');
    expect(seen).toEqual([1, 2, 3]);
    const resumes = proxy.requests.filter(isResume);
    expect(resumes.map((r) => r.status)).toEqual([503, 429, undefined, 200]);
    expect(new Set(resumes.map((r) => r.lastEventId)).size).toBe(1);
    expect(posts(proxy.requests, 'progress')).toHaveLength(1);
  });

  it('R6, P10: 500 to the resume GET (every time) ends that call at once: one GET, no backoff loop; other calls are fine', async () => {
    const { proxy, client, transport } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'GET', resume: true, times: Infinity, respond: { status: 500 } });

    const error = await within(
      rejection(client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined })),
      'the call to fail',
      3_000,
    );
    expect(error.message).toContain('500');
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'fine' } }))).toBe('fine');
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it('R6, P10: 405 to the resume GET ends that call with an error at once; no further GET; other calls are fine', async () => {
    const { proxy, client, transport } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'GET', resume: true, respond: { status: 405 } });

    const error = await within(
      rejection(client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined })),
      'the call to fail',
    );
    expect(error.message).toMatch(/cannot be resumed/);
    expect(error.message).toContain('405');
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'fine' } }))).toBe('fine');
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it('R6, G2: 403 to the resume GET ends that call, and onerror hears the refusal once, with its status and body', async () => {
    const { proxy, client, errors } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'GET', resume: true, respond: { status: 403, body: 'no resume here' } });

    const error = await within(
      rejection(client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined })),
      'the call to fail',
    );
    expect(error.message).toContain('403');
    const refusals = errors.filter((heard) => heard.message.includes('GET stream refused'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.message).toContain('403');
    expect(refusals[0]?.message).toContain('no resume here');
  });

  it('R6, F3: 404 to the resume GET is session-missing: the transport re-initializes and re-sends the request once; the Client gets its result', async () => {
    const { proxy, client, transport } = await rig();
    const before = transport.sessionId;
    proxy.rule({ method: 'POST', tool: 'echo', cutAfter: 1 });
    proxy.rule({
      method: 'GET',
      resume: true,
      respond: {
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
      },
    });

    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'again' } }))).toBe('again');

    const after = transport.sessionId;
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    const calls = posts(proxy.requests, 'echo');
    expect(calls.map((r) => r.sessionId)).toEqual([before, after]);
    const resume = proxy.requests.find(isResume)!;
    const afterResume = proxy.requests.filter((r) => r.seq > resume.seq && r.method === 'POST').map((r) => r.rpc);
    expect(afterResume.slice(0, 3)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    const reinitialize = proxy.requests.find((r) => r.seq > resume.seq && r.rpc === 'initialize')!;
    expect(reinitialize.sessionId).toBeUndefined();
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
  });
});

it(
  'R6, F3: the server restarts (every session lost) while a call waits to resume: the resume meets 404, the transport re-initializes and re-sends once; the Client gets its result',
  { timeout: 10_000 },
  async () => {
    const { proxy, client, transport } = await rig();
    const before = transport.sessionId;
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'GET', resume: true, match: (r) => r.sessionId === before, stallHeaders: 'release' });
    const call = client.callTool({ name: 'progress', arguments: { steps: 3, tag: 'after restart' } }, undefined, {
      onprogress: () => undefined,
    });
    const resume = await proxy.waitFor(isResume);
    await proxy.restartBackend();
    proxy.release();

    expect(textOf(await call)).toBe('done 3 after restart');
    expect(resume.status).toBe(404);
    expect(transport.sessionId).not.toBe(before);
    expect(proxy.backend.sessions.has(transport.sessionId!)).toBe(true);
    expect(posts(proxy.requests, 'progress').map((r) => r.sessionId)).toEqual([before, transport.sessionId]);
    expect(proxy.requests.filter((r) => r.rpc === 'initialize')).toHaveLength(2);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'new session' } }))).toBe('new session');
  },
);

describe('R7: replayed events', { timeout: 10_000 }, () => {
  it('R7: after a cut, replayed events are delivered once each and in order, even when the proxy replays already-delivered events and sends every event twice', async () => {
    const { proxy, client, delivered } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 4, cutMode: 'end' });
    proxy.rule({
      method: 'GET',
      resume: true,
      duplicate: true,
      // Before the server's replay: the events the client already had from the cut POST, again.
      prefix: (request) => (proxy.carrierOf(request.lastEventId!)?.events ?? []).map((event) => event.raw).join(''),
    });

    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 6 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });

    expect(textOf(result)).toBe('done 6');
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(progressOf(delivered, 1)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(responsesTo(delivered, 1)).toHaveLength(1);
    const resume = proxy.requests.find(isResume)!;
    // The replayed stream did carry duplicates, the final response included.
    expect(resume.events.length).toBeGreaterThanOrEqual(3);
    expect(resume.events.at(-1)?.data).toContain('"result"');
  });

  it('R7: every event sent twice on the POST stream itself is delivered once', async () => {
    const { proxy, client, delivered } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', duplicate: true });
    const seen: number[] = [];
    expect(
      textOf(await client.callTool({ name: 'progress', arguments: { steps: 5 } }, undefined, { onprogress: (p) => seen.push(p.progress) })),
    ).toBe('done 5');
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(responsesTo(delivered, 1)).toHaveLength(1);
  });
});

describe('R8: cancelling a request stops its stream', { timeout: 10_000 }, () => {
  const slowBackoff = {
    initialReconnectionDelay: 400,
    reconnectionDelayGrowFactor: 1,
    maxReconnectionDelay: 400,
    maxRetries: 5,
    jitter: false,
  };

  it('R8: cancelled (AbortSignal) during backoff: notifications/cancelled is sent, the call rejects, and no GET follows for it', async () => {
    const { proxy, client, transport } = await rig({ transport: { reconnectionOptions: slowBackoff } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    const controller = new AbortController();
    const call = rejection(
      client.callTool({ name: 'progress', arguments: { steps: 20, delayMs: 50 } }, undefined, {
        onprogress: () => undefined,
        signal: controller.signal,
      }),
    );
    const post = await proxy.waitFor((r) => r.tool === 'progress');
    await post.ended;
    controller.abort(new Error('user gave up'));

    const error = await call;
    expect(error.message).toContain('user gave up');
    const cancellation = await proxy.waitFor(isCancellation);
    expect((cancellation.body as { params?: { requestId?: unknown } }).params?.requestId).toBe(1);
    // The moment: no call is in flight; the backoff timer was the POST child's, stopped with it.
    await noCallsInFlight(transport, 'the cancelled call');
    expect(proxy.requests.filter(isResume)).toEqual([]);
  });

  it('R8: cancelled while the resume GET waits for headers: that GET is aborted at once and none follows', async () => {
    const { proxy, client, transport } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'GET', resume: true, stallHeaders: 'release' });
    const controller = new AbortController();
    const call = rejection(
      client.callTool({ name: 'progress', arguments: { steps: 20, delayMs: 50 } }, undefined, {
        onprogress: () => undefined,
        signal: controller.signal,
      }),
    );
    const resume = await proxy.waitFor(isResume);
    controller.abort(new Error('cancelled by the user'));
    await call;
    await within(resume.ended, 'the client to abort the held GET');
    expect(resume.outcome).toBe('closed');
    await proxy.waitFor(isCancellation);
    await noCallsInFlight(transport, 'the cancelled call');
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
  });

  it('R8: cancelled while the resumed stream is open: its body is cancelled and no GET follows', async () => {
    const { proxy, client, transport } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    proxy.rule({ method: 'GET', resume: true, stallBodyAfter: 1, stallBody: 'release' });
    const controller = new AbortController();
    const seen: number[] = [];
    const call = rejection(
      client.callTool({ name: 'progress', arguments: { steps: 20, delayMs: 30 } }, undefined, {
        onprogress: (p) => seen.push(p.progress),
        signal: controller.signal,
      }),
    );
    const resume = await proxy.waitFor(isResume);
    await until(() => resume.events.length === 1, 'one replayed event');
    controller.abort(new Error('cancelled by the user'));
    await call;
    await within(resume.ended, 'the client to cancel the resumed body');
    expect(resume.outcome).toBe('closed');
    await noCallsInFlight(transport, 'the cancelled call');
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
  });

  it('R8, F2: close() during backoff stops the timer: no GET follows', async () => {
    const { proxy, client, transport } = await rig({ transport: { reconnectionOptions: slowBackoff } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
    const call = rejection(
      client.callTool({ name: 'progress', arguments: { steps: 20, delayMs: 50 } }, undefined, { onprogress: () => undefined }),
    );
    const post = await proxy.waitFor((r) => r.tool === 'progress');
    await post.ended;
    await client.close();
    await call;
    // The moment: the chart is closed with no child left, so no backoff wait is left to fire.
    expect(closedForGood(transport)).toBe(true);
    expect(proxy.requests.filter(isResume)).toEqual([]);
  });
});

describe('R9: silent and broken bodies', { timeout: 10_000 }, () => {
  it('R9: a body that stalls (nothing, not even a comment) for streamIdleTimeout is treated as a drop and resumed; no error is shown', async () => {
    const { proxy, client, errors } = await rig({ transport: { streamIdleTimeout: 300 } });
    proxy.rule({ method: 'POST', tool: 'progress', stallBodyAfter: 2, stallBody: 'release' });

    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 4 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(textOf(result)).toBe('done 4');
    expect(seen).toEqual([1, 2, 3, 4]);
    const post = only(posts(proxy.requests, 'progress'), 'progress POST');
    // The client gave up on the stalled body itself.
    expect(post.outcome).toBe('closed');
    const resumes = proxy.requests.filter(isResume);
    const resume = only(resumes, 'resume GET');
    expect(resume.lastEventId).toBe(post.events.at(-1)!.id);
    expect(resume.at - post.events.at(-1)!.at).toBeGreaterThanOrEqual(300 - early);
    expect(errors).toEqual([]);
  });

  it('R9: keep-alive comments count as activity: a slow tool with comments more often than streamIdleTimeout is not dropped', async () => {
    const { proxy, client, errors } = await rig({ server: { keepAliveMs: 100 }, transport: { streamIdleTimeout: 400 } });
    const result = await client.callTool({ name: 'progress', arguments: { steps: 2, delayMs: 700 } }, undefined, {
      onprogress: () => undefined,
    });
    expect(textOf(result)).toBe('done 2');
    expect(proxy.requests.filter(isResume)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("R9: a body the runtime cuts mid-event (undici 'terminated') is a drop: resumed silently, no onerror", async () => {
    const { proxy, client, transport, errors } = await rig();
    const transportErrors: Error[] = [];
    const clientOnError = transport.onerror;
    transport.onerror = (error) => {
      transportErrors.push(error);
      clientOnError?.(error);
    };
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2, cutMidEvent: true });

    const seen: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 4 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(textOf(result)).toBe('done 4');
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(only(posts(proxy.requests, 'progress'), 'progress POST').outcome).toBe('cut');
    expect(proxy.requests.filter(isResume)).toHaveLength(1);
    expect(transportErrors).toEqual([]);
    expect(errors).toEqual([]);
  });
});

/**
 * R10: a progress call of `steps` steps (150 ms apart) on a first Client that closes once it has
 * been told two resumption tokens, leaving its session on the server: the session ID and the tokens.
 */
async function interruptedCall(proxy: FaultProxy, steps: number): Promise<{ sessionId: string; tokens: string[] }> {
  const first = await connectThrough(proxy, { terminateOnClose: false });
  const tokens: string[] = [];
  const interrupted = rejection(
    first.client.callTool({ name: 'progress', arguments: { steps, delayMs: 150 } }, undefined, {
      onprogress: () => undefined,
      onresumptiontoken: (token) => tokens.push(token),
    }),
  );
  await until(() => tokens.length >= 2, 'two resumption tokens');
  const sessionId = first.transport.sessionId!;
  await first.client.close();
  await interrupted;
  return { sessionId, tokens };
}

describe('R10: resumption tokens', { timeout: 10_000 }, () => {
  it('R10: onresumptiontoken is told each event id as it arrives, across a cut and the resumed stream, once each', async () => {
    const { proxy, client } = await rig();
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 3, cutMode: 'end' });
    const tokens: string[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 4 } }, undefined, {
      onprogress: () => undefined,
      onresumptiontoken: (token) => tokens.push(token),
    });
    expect(textOf(result)).toBe('done 4');
    const post = only(posts(proxy.requests, 'progress'), 'progress POST');
    const resume = proxy.requests.find(isResume)!;
    expect(tokens).toEqual(idsSent([post, resume]));
    expect(tokens).toHaveLength(6);
  });

  it('R10: a request resumed with send(msg, { resumptionToken }) by a new Client on the same session gets its response over a GET, without a POST', async () => {
    const proxy = await startProxy();
    const { sessionId, tokens } = await interruptedCall(proxy, 4);
    const lastToken = tokens.at(-1)!;

    const second = await connectThrough(proxy, { sessionId, standaloneStream: false });
    const resumedTokens: string[] = [];
    const result = await second.client.request(
      { method: 'tools/call', params: { name: 'progress', arguments: { steps: 4, delayMs: 150 } } },
      CallToolResultSchema,
      { resumptionToken: lastToken, onresumptiontoken: (token) => resumedTokens.push(token) },
    );
    expect(textOf(result)).toBe('done 4');

    const calls = posts(proxy.requests, 'progress');
    expect(calls).toHaveLength(1);
    const resume = proxy.requests.find(isResume)!;
    expect(resume.lastEventId).toBe(lastToken);
    expect(resume.sessionId).toBe(sessionId);
    expect(resumedTokens.length).toBeGreaterThan(0);
    expect(resumedTokens).toEqual(idsSent([resume]));
    expect(resumedTokens).not.toContain(lastToken);
  });

  it('R10: transport.resumeStream(lastEventId, { onresumptiontoken }) re-opens the stream by GET and delivers what it carries', async () => {
    const proxy = await startProxy();
    const { sessionId, tokens } = await interruptedCall(proxy, 3);

    const transport = transportThrough(proxy, { sessionId, standaloneStream: false });
    const delivered: JSONRPCMessage[] = [];
    transport.onmessage = (message) => delivered.push(message);
    await transport.start();
    const resumedTokens: string[] = [];
    await transport.resumeStream(tokens.at(-1)!, { onresumptiontoken: (token) => resumedTokens.push(token) });
    await until(() => responsesTo(delivered, 1).length === 1, 'the response of the interrupted request');

    const resume = proxy.requests.find(isResume)!;
    expect(resume.lastEventId).toBe(tokens.at(-1));
    expect(resumedTokens).toEqual(idsSent([resume]));
    const progress = progressOf(delivered, 1);
    expect(progress).toEqual([2, 3]);
    expect(textOf((responsesTo(delivered, 1)[0] as { result?: unknown }).result)).toBe('done 3');
    expect(posts(proxy.requests, 'progress')).toHaveLength(1);
  });
});
