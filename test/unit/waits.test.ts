/**
 * W2 and W3 on the stream charts: a wait says which attempt comes next and when it is due, and
 * offline pauses a wait (no timer, no attempt spent) until `online` reconnects at once.
 */
import { describe, expect, it } from 'vitest';
import { createActor, createMachine, SimulatedClock, type AnyActorRef } from 'xstate';
import { postStreamMachine } from '../../machines/post-stream.js';
import { NO_ATTEMPTS } from '../../machines/connection/messages.js';
import { standaloneStreamMachine } from '../../machines/standalone-stream.js';
import type { PlannedWait } from '../../machines/backoff.js';
import type { ChartOptions } from '../../machines/types.js';
import { chartOptions, fakeIo, flush, openStream, streamEnd, ticket } from './fakes.js';

const request = { jsonrpc: '2.0' as const, id: 7, method: 'tools/call', params: { name: 'echo' } };

interface Waiting {
  getSnapshot(): {
    value: unknown;
    hasTag(tag: string): boolean;
    context: { wait: PlannedWait | undefined; attempt: number; offline: boolean };
  };
}

/** One stream chart under a parent, on a simulated clock that is also the chart's `now`. */
function run(kind: 'standalone' | 'post', overrides: Partial<ChartOptions> = {}, extra: Record<string, unknown> = {}) {
  const io = fakeIo();
  const clock = new SimulatedClock();
  const options = chartOptions({ now: () => clock.now(), ...overrides });
  const src =
    kind === 'standalone'
      ? standaloneStreamMachine.provide({ actors: { openStandalone: io.actors.openStandalone }, actions: io.standaloneReaderActions })
      : postStreamMachine.provide({
          actors: { postMessage: io.actors.postMessage, resumeStream: io.actors.resumeStream, readStream: io.actors.readStream },
        });
  const input =
    kind === 'standalone'
      ? { sessionId: 's', protocolVersion: 'v', options, ...extra }
      : {
          message: request,
          ticket: ticket(),
          origin: 'caller' as const,
          attempts: NO_ATTEMPTS,
          sessionId: 's',
          protocolVersion: 'v',
          options,
          ...extra,
        };
  const parent = createMachine({ invoke: { id: 'stream', src, input } });
  const actor = createActor(parent, { clock }).start();
  const stream = () => actor.getSnapshot().children.stream as unknown as Waiting & AnyActorRef;
  return { io, clock, stream };
}

const slow = { initialReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 2, maxReconnectionDelay: 8_000, maxRetries: 3, jitter: false };

describe('W3: a wait says which attempt comes next and when it is due', () => {
  it('W3: the standalone stream in backoff carries the tag waiting, the attempt and the due time; each failure moves both on', async () => {
    const { io, clock, stream } = run('standalone', { reconnection: slow });
    await flush();
    clock.set(10_000);
    io.gets[0]!.reject(new Error('connection refused'));
    await flush();
    expect(stream().getSnapshot().hasTag('waiting')).toBe(true);
    expect(stream().getSnapshot().context.wait).toEqual({ attempt: 1, delayMs: 1_000, dueAt: 11_000 });
    clock.increment(999);
    expect(io.gets).toHaveLength(1);
    clock.increment(1);
    await flush();
    // The attempt the wait announced is the GET that runs now.
    expect(io.gets).toHaveLength(2);
    expect(stream().getSnapshot().hasTag('waiting')).toBe(false);
    io.gets[1]!.reject(new Error('connection refused'));
    await flush();
    expect(stream().getSnapshot().context.wait).toEqual({ attempt: 2, delayMs: 2_000, dueAt: 13_000 });
  });

  it('W3, G5: past the budget the standalone stream waits at the ceiling, and says so', async () => {
    const { io, clock, stream } = run('standalone', { reconnection: { ...slow, maxRetries: 0 } });
    await flush();
    io.gets[0]!.reject(new Error('connection refused'));
    await flush();
    expect(stream().getSnapshot().value).toEqual({ degraded: 'timed' });
    expect(stream().getSnapshot().context.wait).toEqual({ attempt: 1, delayMs: 8_000, dueAt: clock.now() + 8_000 });
  });

  it('W3: with jitter, the delay is drawn once: the timer waits exactly the delay the snapshot announced', async () => {
    let draws = 0;
    const { io, clock, stream } = run('standalone', {
      reconnection: { ...slow, jitter: true },
      random: () => {
        draws++;
        return 0.5;
      },
    });
    await flush();
    io.gets[0]!.reject(new Error('connection refused'));
    await flush();
    const wait = stream().getSnapshot().context.wait!;
    expect(wait.delayMs).toBe(1_500);
    expect(draws).toBe(1);
    clock.increment(1_499);
    expect(io.gets).toHaveLength(1);
    clock.increment(1);
    await flush();
    expect(io.gets).toHaveLength(2);
  });

  it('W3: a POST stream waiting to resume says which attempt and when, the server retry included', async () => {
    const { io, clock, stream } = run('post', { reconnection: slow });
    await flush();
    io.posts[0]!.resolve({ kind: 'sse', sessionId: 's', stream: openStream() });
    await flush();
    clock.set(5_000);
    io.readers[0]!.send({ type: 'stream.ended', end: streamEnd({ lastEventId: '3', progressed: true, retryMs: 250 }) });
    await flush();
    expect(stream().getSnapshot().hasTag('waiting')).toBe(true);
    expect(stream().getSnapshot().context.wait).toEqual({ attempt: 1, delayMs: 250, dueAt: 5_250 });
  });

  it('W3: a reconnectionScheduler receives the announced delay', async () => {
    const delays: number[] = [];
    const { io, stream } = run('standalone', {
      reconnection: { ...slow, jitter: true },
      random: () => 0.25,
      reconnectionScheduler: (_reconnect, delay) => {
        delays.push(delay);
      },
    });
    await flush();
    io.gets[0]!.reject(new Error('connection refused'));
    await flush();
    expect(stream().getSnapshot().hasTag('waiting')).toBe(true);
    expect(delays).toEqual([stream().getSnapshot().context.wait!.delayMs]);
  });
});

describe('W2: offline pauses a wait; online reconnects at once', () => {
  it('W2: offline during a backoff pauses it: no timer fires and no attempt is spent, however long it lasts', async () => {
    const { io, clock, stream } = run('standalone', { reconnection: slow });
    await flush();
    io.gets[0]!.reject(new Error('connection refused'));
    await flush();
    stream().send({ type: 'network.offline' });
    expect(stream().getSnapshot().value).toEqual({ backoff: 'paused' });
    expect(stream().getSnapshot().hasTag('offline')).toBe(true);
    expect(stream().getSnapshot().hasTag('waiting')).toBe(false);
    clock.increment(3_600_000);
    await flush();
    expect(io.gets).toHaveLength(1);
    expect(stream().getSnapshot().context.attempt).toBe(1);
    // online: the GET goes at once, with the attempt it was going to be.
    stream().send({ type: 'network.online' });
    await flush();
    expect(io.gets).toHaveLength(2);
    expect(stream().getSnapshot().value).toEqual({ opening: 'requesting' });
  });

  it('W2: a stream that breaks while offline waits paused, not on a timer; online resumes it with Last-Event-ID', async () => {
    const { io, clock, stream } = run('standalone', { reconnection: slow });
    await flush();
    io.gets[0]!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    stream().send({ type: 'network.offline' });
    // Listening goes on (a browser may still deliver what is buffered); the flag is noted.
    expect(stream().getSnapshot().value).toMatchObject({ listening: {} });
    io.readers[0]!.send({
      type: 'stream.ended',
      end: streamEnd({ lastEventId: '9', progressed: true, error: new TypeError('network error') }),
    });
    await flush();
    expect(stream().getSnapshot().value).toEqual({ backoff: 'paused' });
    clock.increment(60_000);
    expect(io.gets).toHaveLength(1);
    stream().send({ type: 'network.online' });
    await flush();
    expect(io.gets[1]!.input.lastEventId).toBe('9');
  });

  it('W2: a POST stream resume fails while offline without spending its budget; online resumes at once', async () => {
    const { io, clock, stream } = run('post', { reconnection: { ...slow, maxRetries: 1 } });
    await flush();
    io.posts[0]!.resolve({ kind: 'sse', sessionId: 's', stream: openStream() });
    await flush();
    io.readers[0]!.send({ type: 'stream.ended', end: streamEnd({ lastEventId: '3', progressed: true }) });
    await flush();
    clock.increment(1_000);
    await flush();
    expect(io.resumes).toHaveLength(1);
    stream().send({ type: 'network.offline' });
    // Past the budget of 1, but offline: the failure is the network's; the stream waits paused.
    io.resumes[0]!.reject(new Error('network error'));
    await flush();
    expect(stream().getSnapshot().value).toEqual({ backoff: 'paused' });
    stream().send({ type: 'network.online' });
    await flush();
    expect(io.resumes).toHaveLength(2);
    expect(io.resumes[1]!.input.lastEventId).toBe('3');
  });

  it('W2: a stream started while offline (input) pauses at its first wait', async () => {
    const { io, stream } = run('standalone', { reconnection: slow }, { offline: true });
    await flush();
    io.gets[0]!.reject(new Error('network error'));
    await flush();
    expect(stream().getSnapshot().value).toEqual({ backoff: 'paused' });
  });

  it('W1: a restored standalone stream opens with the saved Last-Event-ID', async () => {
    const { io } = run('standalone', {}, { lastEventId: 'saved-42' });
    await flush();
    expect(io.gets[0]!.input.lastEventId).toBe('saved-42');
  });
});
