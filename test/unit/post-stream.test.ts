import { describe, expect, it } from 'vitest';
import { createActor, createMachine, SimulatedClock } from 'xstate';
import { postStreamMachine, type PostStreamInput, type PostStreamReport } from '../../machines/post-stream.js';
import { NO_ATTEMPTS } from '../../machines/connection/messages.js';
import { EmptyResumesError, StreamableHTTPError, StreamEndedError } from '../../machines/errors.js';
import type { ChartOptions, StreamEnd } from '../../machines/types.js';
import { defaultReconnection } from '../../machines/backoff.js';
import { chartOptions, fakeIo, flush, openStream, streamEnd, ticket, type FakeIo } from './fakes.js';

const request = { jsonrpc: '2.0' as const, id: 7, method: 'tools/call', params: { name: 'echo' } };
const response = { jsonrpc: '2.0' as const, id: 7, result: { content: [] } };

/** Runs one POST child under a parent that records what the child reports. */
function setUp(overrides: Partial<ChartOptions> = {}, message: PostStreamInput['message'] = request, extra: Partial<PostStreamInput> = {}) {
  const io = fakeIo();
  const clock = new SimulatedClock();
  const reports: PostStreamReport[] = [];
  const sendTicket = ticket();
  const child = postStreamMachine.provide({
    actors: { postMessage: io.actors.postMessage, resumeStream: io.actors.resumeStream, readStream: io.actors.readStream },
  });
  const parent = createMachine({
    invoke: {
      id: 'post-1',
      src: child,
      input: {
        message,
        ticket: sendTicket,
        origin: 'caller' as const,
        attempts: NO_ATTEMPTS,
        sessionId: 's',
        protocolVersion: 'v',
        options: chartOptions({ now: () => clock.now(), ...overrides }),
        ...extra,
      },
    },
    on: { '*': { actions: ({ event }) => reports.push(event as PostStreamReport) } },
  });
  const actor = createActor(parent, { clock }).start();
  const post = (): unknown => actor.getSnapshot().children['post-1'];
  return { io, clock, reports, sendTicket, actor, post };
}

function stateOf(child: unknown): unknown {
  return (child as { getSnapshot(): { value: unknown } } | undefined)?.getSnapshot().value;
}

/** The POST is answered with an event stream, which then ends as `end` says. */
async function streamEnded(io: FakeIo, end: Partial<StreamEnd>) {
  await flush();
  io.posts[0]!.resolve({ kind: 'sse', sessionId: 's', stream: openStream() });
  await flush();
  io.readers[0]!.send({ type: 'stream.ended', end: streamEnd(end) });
  await flush();
}

/** R1, R4: waiting in backoff, the child resumes exactly `ms` later with a GET from `lastEventId`; that GET's stream is opened. */
async function resumesAt({ io, clock, post }: Pick<ReturnType<typeof setUp>, 'io' | 'clock' | 'post'>, ms: number, lastEventId: string) {
  expect(stateOf(post())).toEqual({ backoff: 'timed' });
  clock.increment(ms - 1);
  await flush();
  expect(io.resumes).toHaveLength(0);
  clock.increment(1);
  await flush();
  expect(io.resumes[0]!.input).toEqual({ requestIds: [request.id], sessionId: 's', protocolVersion: 'v', lastEventId });
  io.resumes[0]!.resolve({ kind: 'sse', stream: openStream() });
  await flush();
}

describe('POST stream chart', () => {
  it('P1: a notification accepted with 202 ends done and resolves send', async () => {
    const { io, reports, sendTicket } = setUp({}, { jsonrpc: '2.0', method: 'notifications/initialized' });
    await flush();
    expect(io.posts[0]!.input.requestIds).toEqual([]);
    io.posts[0]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
    expect(sendTicket.outcome).toBe('accepted');
    expect(reports[0]).toMatchObject({ type: 'post.done', postId: 'post-1', response: undefined });
  });

  it('P2: a JSON response is reported to the parent, which delivers it', async () => {
    const { io, reports } = setUp();
    await flush();
    io.posts[0]!.resolve({ kind: 'json', sessionId: 's', response });
    await flush();
    expect(reports[0]).toMatchObject({ type: 'post.done', response, sessionId: 's' });
  });

  it('P3, P4: an SSE response is read until its response arrives; then the reader is stopped (its body then has its grace to end)', async () => {
    const { io, reports, post } = setUp();
    await flush();
    io.posts[0]!.resolve({ kind: 'sse', sessionId: 's', stream: openStream() });
    await flush();
    expect(stateOf(post())).toEqual({ streaming: 'unwatched' });
    expect(io.readers[0]!.input.requestIds).toEqual([7]);
    io.readers[0]!.send({ type: 'stream.response', response, end: streamEnd({ lastEventId: '1', progressed: true }) });
    await flush();
    expect(io.readers[0]!.stopped).toBe(true);
    expect(reports[0]).toMatchObject({ type: 'post.done', response });
  });

  it('R2: a stream that ends before its response with no event id fails at once', async () => {
    const { io, reports, clock } = setUp();
    await streamEnded(io, { progressed: true });
    clock.increment(60_000);
    expect(io.resumes).toHaveLength(0);
    expect(reports[0]).toMatchObject({ type: 'post.failed' });
    const failure = reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>;
    expect(failure.error).toBeInstanceOf(StreamEndedError);
    expect(failure.error.message).toBe('request ended without a response');
  });

  it('E13: a listen stream the server ended with notifications/cancelled is done; a call it cancelled fails at once, never resumed', async () => {
    const listen = { jsonrpc: '2.0' as const, id: 'listen:0', method: 'subscriptions/listen', params: { notifications: {} } };
    const graceful = setUp({}, listen, { modern: true });
    await streamEnded(graceful.io, { progressed: true, cancelled: true });
    // W6: its stream's beginning is reported first (a listen stream only: the call below reports nothing before it fails).
    expect(graceful.reports.map((report) => report.type).slice(0, 2)).toEqual(['post.listening', 'post.done']);
    expect(graceful.reports[1]).toMatchObject({ type: 'post.done', response: undefined });
    // A call the server cancelled, on a stream that could otherwise be resumed (an event id, 2025 era).
    const call = setUp();
    await streamEnded(call.io, { lastEventId: 'ev-1', progressed: true, cancelled: true });
    call.clock.increment(60_000);
    await flush();
    expect(call.io.resumes).toHaveLength(0);
    const failure = call.reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>;
    expect(failure.type).toBe('post.failed');
    expect(failure.error.message).toBe('the server cancelled the request (notifications/cancelled)');
  });

  it('R1, S3: a stream cut after an event id resumes with GET and Last-Event-ID after the server retry, never re-POSTing', async () => {
    const { io, clock, post } = setUp();
    await streamEnded(io, { lastEventId: 'ev-3', progressed: true, retryMs: 500 });
    await resumesAt({ io, clock, post }, 500, 'ev-3');
    expect(io.readers[1]!.input.lastEventId).toBe('ev-3');
    expect(io.posts).toHaveLength(1);
  });

  it('P10: a POST that fails reports the error and leaves settling the ticket to the parent', async () => {
    const { io, reports, sendTicket } = setUp();
    await flush();
    io.posts[0]!.reject(new Error('boom'));
    await flush();
    expect(reports[0]).toMatchObject({ type: 'post.failed', postId: 'post-1' });
    expect(sendTicket.outcome).toBe('pending');
  });
});

describe('POST stream chart: a stream handed over by the data plane', () => {
  it('R1, R7: a data-plane stream cut after an event id is resumed from that id after the server retry, with its seen ids; never POSTed', async () => {
    const seenIds = new Set(['ev-1', 'ev-2']);
    const { io, clock, post, sendTicket } = setUp({}, request, {
      interrupted: { end: streamEnd({ lastEventId: 'ev-2', progressed: true, retryMs: 300 }), seenIds },
    });
    await flush();
    await resumesAt({ io, clock, post }, 300, 'ev-2');
    expect(io.readers[0]!.input.seenIds).toBe(seenIds);
    expect(io.readers[0]!.input.lastEventId).toBe('ev-2');
    expect(io.posts).toHaveLength(0);
    // The data plane accepted the call already; the hand-over does not settle it again.
    expect(sendTicket.outcome).toBe('pending');
  });

  it('R2: a data-plane stream that ended with no event id fails the call at once: "request ended without a response"', async () => {
    const { io, reports, clock } = setUp({}, request, { interrupted: { end: streamEnd({ progressed: true }), seenIds: new Set() } });
    await flush();
    clock.increment(60_000);
    expect(io.posts).toHaveLength(0);
    expect(io.resumes).toHaveLength(0);
    expect(reports[0]).toMatchObject({ type: 'post.failed', postId: 'post-1' });
    expect((reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>).error.message).toBe('request ended without a response');
  });
});

describe('POST stream chart: idle streams and resumption tokens', () => {
  it('R9: with streamIdleTimeout the chart asks the reader every period whether anything arrived', async () => {
    const { io, clock } = setUp({ streamIdleTimeout: 1_000 });
    await flush();
    io.posts[0]!.resolve({ kind: 'sse', sessionId: 's', stream: openStream() });
    await flush();
    clock.increment(999);
    expect(io.readers[0]!.commands).toEqual([]);
    clock.increment(1);
    clock.increment(1_000);
    expect(io.readers[0]!.commands).toEqual(['idle.check', 'idle.check']);
  });

  it('R9: an idle drop after an event id resumes like any other drop', async () => {
    const { io, clock } = setUp({ streamIdleTimeout: 1_000 });
    await streamEnded(io, { lastEventId: '9', progressed: true, error: new Error('idle') });
    clock.increment(1_000);
    await flush();
    expect(io.resumes[0]!.input.lastEventId).toBe('9');
  });

  it('R10: a send with a resumption token resumes with GET from that token and never POSTs', async () => {
    const io = fakeIo();
    const clock = new SimulatedClock();
    const tokens: string[] = [];
    const sendTicket = ticket();
    const child = postStreamMachine.provide({
      actors: { postMessage: io.actors.postMessage, resumeStream: io.actors.resumeStream, readStream: io.actors.readStream },
    });
    createActor(child, {
      clock,
      input: {
        message: request,
        ticket: sendTicket,
        origin: 'caller',
        attempts: NO_ATTEMPTS,
        sessionId: 's',
        protocolVersion: 'v',
        options: chartOptions(),
        resumptionToken: 'tok-4',
        onResumptionToken: (token) => tokens.push(token),
      },
    }).start();
    await flush();
    expect(io.posts).toHaveLength(0);
    expect(sendTicket.outcome).toBe('accepted');
    expect(io.resumes[0]!.input.lastEventId).toBe('tok-4');
    io.resumes[0]!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    expect(io.readers[0]!.input).toMatchObject({ lastEventId: 'tok-4', replay: true });
    io.readers[0]!.input.onEventId?.('tok-5');
    expect(tokens).toEqual(['tok-5']);
  });

  it('R5: more than maxRetries reconnects without progress end the stream: exactly maxRetries + 1 GETs', async () => {
    const { io, clock, reports } = setUp({
      reconnection: {
        initialReconnectionDelay: 10,
        reconnectionDelayGrowFactor: 1,
        maxReconnectionDelay: 10,
        maxRetries: 3,
        jitter: false,
      },
    });
    await streamEnded(io, { lastEventId: '1', progressed: true });
    for (let i = 0; i < 10 && reports.length === 0; i++) {
      // R4: 10 ms asked, the 100 ms floor waited.
      clock.increment(100);
      await flush();
      io.resumes.at(-1)?.reject(new Error('connection refused'));
      await flush();
    }
    expect(io.resumes).toHaveLength(4);
    expect(reports[0]).toMatchObject({ type: 'post.failed' });
  });
});

describe('POST stream chart: reconnectionScheduler', () => {
  it('R4: a reconnectionScheduler receives the computed delay and attempt, and decides when the resume starts', async () => {
    const calls: { delay: number; attempt: number; reconnect: () => void }[] = [];
    let cancelled = 0;
    const { io } = setUp({
      reconnectionScheduler: (reconnect, delay, attempt) => {
        calls.push({ reconnect, delay, attempt });
        return () => {
          cancelled++;
        };
      },
    });
    await streamEnded(io, { lastEventId: '2', progressed: true });
    // attempt is zero-based, as the SDK passes it.
    expect(calls.map(({ delay, attempt }) => ({ delay, attempt }))).toEqual([{ delay: 1_000, attempt: 0 }]);
    expect(io.resumes).toHaveLength(0);
    calls[0]!.reconnect();
    await flush();
    expect(io.resumes).toHaveLength(1);
    // A wait that already fired is not cancelled.
    expect(cancelled).toBe(0);
  });

  it('R8: a scheduled wait still pending is cancelled when the stream stops', async () => {
    let cancelled = 0;
    const { io, actor } = setUp({
      reconnectionScheduler: () => () => {
        cancelled++;
      },
    });
    await streamEnded(io, { lastEventId: '2', progressed: true });
    actor.stop();
    expect(cancelled).toBe(1);
  });
});

describe('POST stream chart: empty resumes (R12)', () => {
  /** The failure's error, which must be the typed EmptyResumesError. */
  function emptyResumesErrorOf(failure: Extract<PostStreamReport, { type: 'post.failed' }>): EmptyResumesError {
    if (!(failure.error instanceof EmptyResumesError)) throw new Error(`expected EmptyResumesError, got ${String(failure.error)}`);
    return failure.error;
  }

  /** The POST child's context, as the chart keeps it. */
  function contextOf(child: unknown): { wait: { delayMs: number; dueAt: number } | undefined; emptyResumes: number } {
    return (
      child as { getSnapshot(): { context: { wait: { delayMs: number; dueAt: number } | undefined; emptyResumes: number } } }
    ).getSnapshot().context;
  }

  /** Every resume is answered 200 with a stream that ends at once with nothing in it; the chart's planned waits, in order. */
  async function emptyResumes(setup: ReturnType<typeof setUp>): Promise<number[]> {
    const { io, clock, reports, post } = setup;
    await streamEnded(io, { lastEventId: '1', progressed: true });
    const planned: number[] = [];
    for (let i = 0; i < 20 && reports.length === 0; i++) {
      const wait = contextOf(post()).wait;
      expect(stateOf(post())).toEqual({ backoff: 'timed' });
      planned.push(wait!.delayMs);
      clock.increment(wait!.delayMs);
      await flush();
      io.resumes.at(-1)!.resolve({ kind: 'sse', stream: openStream() });
      await flush();
      io.readers.at(-1)!.send({ type: 'stream.ended', end: streamEnd({ progressed: false }) });
      await flush();
    }
    return planned;
  }

  it('R12, R4: resumes answered 200 and empty, with the longest jitter: the call fails typed within 15 s of the first end, every wait inside it', async () => {
    // The defaults (1 s, ×1.5, 5 retries) with full jitter at its longest: unbounded, the six waits sum to ~41 s.
    const setup = setUp({ reconnection: { ...defaultReconnection, jitter: true }, random: () => 0.999 });
    const planned = await emptyResumes(setup);
    const failure = setup.reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>;
    expect(failure.type).toBe('post.failed');
    expect(failure.error).toBeInstanceOf(EmptyResumesError);
    expect(failure.error).toBeInstanceOf(StreamEndedError);
    expect(failure.error.message).toMatch(/resumes answered with an empty stream/);
    const error = emptyResumesErrorOf(failure);
    expect(error.emptyResumes).toBe(planned.length);
    // What the chart chose: its planned waits (on the driven clock) end inside the window, leaving the last GET its second.
    const sum = planned.reduce((a, b) => a + b, 0);
    // wall-clock guard: driven clock (the planned waits, on the test's simulated clock)
    expect(sum).toBeLessThanOrEqual(14_000);
    expect(setup.clock.now()).toBeLessThanOrEqual(15_000);
    expect(error.sinceFirstEndMs).toBe(setup.clock.now());
    // R4 still holds before the first empty resume: the first wait is the full jittered backoff.
    expect(planned[0]).toBe(1_999);
    expect(planned.length).toBeGreaterThanOrEqual(3);
  });

  it('R12, R5: with short waits the budget ends it first: maxRetries + 1 empty resumes, the same typed error', async () => {
    const setup = setUp({
      reconnection: {
        initialReconnectionDelay: 100,
        reconnectionDelayGrowFactor: 1,
        maxReconnectionDelay: 100,
        maxRetries: 3,
        jitter: false,
      },
    });
    const planned = await emptyResumes(setup);
    expect(planned).toEqual([100, 100, 100, 100]);
    const failure = setup.reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>;
    expect(failure.error).toBeInstanceOf(EmptyResumesError);
    expect(emptyResumesErrorOf(failure).emptyResumes).toBe(4);
  });

  it('R12, R6: a resume GET that fails (network) after empty resumes, with no room left in the window, fails the call typed, the network error its cause', async () => {
    const { io, clock, reports, post } = setUp({ reconnection: { ...defaultReconnection, jitter: false, maxRetries: 50 } });
    await streamEnded(io, { lastEventId: '1', progressed: true });
    // One empty resume, then the clock runs on past the window while the next GET is under way.
    clock.increment(contextOf(post()).wait!.delayMs);
    await flush();
    io.resumes.at(-1)!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    io.readers.at(-1)!.send({ type: 'stream.ended', end: streamEnd({ progressed: false }) });
    await flush();
    clock.increment(contextOf(post()).wait!.delayMs);
    await flush();
    expect(io.resumes).toHaveLength(2);
    clock.increment(14_000);
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:1');
    io.resumes.at(-1)!.reject(refused);
    await flush();
    const failure = reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>;
    expect(failure.error).toBeInstanceOf(EmptyResumesError);
    expect(emptyResumesErrorOf(failure).emptyResumes).toBe(1);
    expect(failure.error.cause).toBe(refused);
    expect(io.resumes).toHaveLength(2);
  });

  it('R12, F3: a resume GET answered 404 (session missing) after the window is reported as itself, for session recovery, not as empty resumes', async () => {
    const { io, clock, reports, post } = setUp({ reconnection: { ...defaultReconnection, jitter: false, maxRetries: 50 } });
    await streamEnded(io, { lastEventId: '1', progressed: true });
    clock.increment(contextOf(post()).wait!.delayMs);
    await flush();
    io.resumes.at(-1)!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    io.readers.at(-1)!.send({ type: 'stream.ended', end: streamEnd({ progressed: false }) });
    await flush();
    clock.increment(contextOf(post()).wait!.delayMs);
    await flush();
    clock.increment(14_000);
    const missing = new StreamableHTTPError('session not found', { status: 404, sessionMissing: true });
    io.resumes.at(-1)!.reject(missing);
    await flush();
    const failure = reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>;
    expect(failure.error).toBe(missing);
  });

  it('R12, R5: a resume that delivers an event is progress: the window and the count start again', async () => {
    const { io, clock, reports, post } = setUp({ reconnection: { ...defaultReconnection, jitter: false } });
    await streamEnded(io, { lastEventId: '1', progressed: true });
    // Two empty resumes, then one that delivers (progress), ~4.8 s after the first end.
    for (let i = 0; i < 3; i++) {
      clock.increment(contextOf(post()).wait!.delayMs);
      await flush();
      io.resumes.at(-1)!.resolve({ kind: 'sse', stream: openStream() });
      await flush();
      io.readers.at(-1)!.send({ type: 'stream.ended', end: streamEnd({ progressed: i === 2, lastEventId: i === 2 ? '2' : undefined }) });
      await flush();
    }
    expect(contextOf(post()).emptyResumes).toBe(0);
    const restart = clock.now();
    // Empty from here on: the window counts from the end after the progress.
    for (let i = 0; i < 20 && reports.length === 0; i++) {
      clock.increment(contextOf(post()).wait!.delayMs);
      await flush();
      io.resumes.at(-1)!.resolve({ kind: 'sse', stream: openStream() });
      await flush();
      io.readers.at(-1)!.send({ type: 'stream.ended', end: streamEnd({ progressed: false }) });
      await flush();
    }
    const failure = reports[0] as Extract<PostStreamReport, { type: 'post.failed' }>;
    expect(failure.error).toBeInstanceOf(EmptyResumesError);
    expect(emptyResumesErrorOf(failure).sinceFirstEndMs).toBe(clock.now() - restart);
    expect(io.resumes.at(-1)!.input.lastEventId).toBe('2');
  });
});
