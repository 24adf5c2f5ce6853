/**
 * W1 and W2 in the connection chart, with fake I/O: a restored session opens as it was saved, and
 * the host's network signal shows as the `offline` tag, pausing the streams' waits.
 */
import { describe, expect, it } from 'vitest';
import { flush, handshake, initializeRequest, startConnection, ticket, type ConnectionActor, type FakeIo } from './fakes.js';
import { StreamableHTTPError } from '../../machines/errors.js';

/** Drives the chart from idle to open: initialize answered with session 'abc', initialized accepted. */
async function connect(io: FakeIo, actor: ConnectionActor) {
  await handshake(io, actor, { sessionId: 'abc', protocolVersion: undefined });
}

type Child = { getSnapshot(): { value: unknown; context: { attempt: number } } } | undefined;
const standalone = (actor: ConnectionActor) => actor.getSnapshot().children.standalone as Child;

describe('W2: the network signal in the connection chart', () => {
  it('W2: offline is a state with the tag offline beside connected; online goes back', async () => {
    const { io, actor } = startConnection();
    await connect(io, actor);
    expect(actor.getSnapshot().matches({ open: { network: 'online' } })).toBe(true);
    io.setOnline(false);
    expect(actor.getSnapshot().matches({ open: { network: 'offline' } })).toBe(true);
    expect(actor.getSnapshot().hasTag('offline')).toBe(true);
    // The session lives on: still connected underneath.
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    io.setOnline(true);
    expect(actor.getSnapshot().hasTag('offline')).toBe(false);
  });

  it('W2: the standalone stream told offline waits paused (no timer, no attempt spent); online reopens it at once', async () => {
    const { io, clock, actor } = startConnection();
    await connect(io, actor);
    io.setOnline(false);
    io.gets[0]!.reject(new TypeError('network error'));
    await flush();
    expect(standalone(actor)?.getSnapshot().value).toEqual({ backoff: 'paused' });
    clock.increment(600_000);
    await flush();
    expect(io.gets).toHaveLength(1);
    expect(standalone(actor)?.getSnapshot().context.attempt).toBe(1);
    io.setOnline(true);
    await flush();
    expect(io.gets).toHaveLength(2);
  });

  it('W2: a host without a network signal (Node) runs no networkStatus actor; a host with one has it while open', async () => {
    const unwatched = startConnection({ watchNetwork: false });
    await connect(unwatched.io, unwatched.actor);
    expect(unwatched.actor.getSnapshot().matches({ open: { network: 'online' } })).toBe(true);
    expect(unwatched.actor.getSnapshot().children.network).toBeUndefined();
    unwatched.io.setOnline(false);
    expect(unwatched.actor.getSnapshot().hasTag('offline')).toBe(false);

    const watched = startConnection();
    expect(watched.actor.getSnapshot().children.network).toBeUndefined();
    await connect(watched.io, watched.actor);
    expect(watched.actor.getSnapshot().children.network).toBeDefined();
  });

  it('W2: a session opened while the host is offline shows offline at once', async () => {
    const { io, actor } = startConnection({ sessionId: 'abc' });
    io.setOnline(false);
    actor.send({ type: 'start' });
    await flush();
    expect(actor.getSnapshot().hasTag('offline')).toBe(true);
  });

  it('W2: a POST stream waiting to resume is told too', async () => {
    const { io, clock, actor } = startConnection();
    await connect(io, actor);
    actor.send({ type: 'send', message: { jsonrpc: '2.0', id: 5, method: 'tools/list' }, ticket: ticket() });
    await flush();
    const post = io.posts[2]!;
    const body = new ReadableStream<Uint8Array>();
    post.resolve({ kind: 'sse', sessionId: 'abc', stream: { body, release: () => undefined } });
    await flush();
    io.readers.at(-1)!.send({ type: 'stream.ended', end: { lastEventId: '1', progressed: true, retryMs: undefined, error: undefined } });
    await flush();
    io.setOnline(false);
    const child = Object.entries(actor.getSnapshot().children).find(([id]) => id.startsWith('post-'))?.[1] as Child;
    expect(child?.getSnapshot().value).toEqual({ backoff: 'paused' });
    clock.increment(600_000);
    await flush();
    expect(io.resumes).toHaveLength(0);
    io.setOnline(true);
    await flush();
    expect(io.resumes).toHaveLength(1);
  });

  it('W2: a data-plane stream handed to the chart while offline waits paused, not on a timer (found by the stream model)', async () => {
    const { io, clock, actor } = startConnection();
    await connect(io, actor);
    io.setOnline(false);
    actor.send({
      type: 'post.interrupted',
      message: { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      ticket: ticket(),
      sessionId: 'abc',
      protocolVersion: undefined,
      interrupted: { end: { lastEventId: 'e1', progressed: true, retryMs: undefined, error: undefined }, seenIds: new Set(['e1']) },
    });
    await flush();
    const child = Object.entries(actor.getSnapshot().children).find(([id]) => id.startsWith('post-'))?.[1] as Child;
    expect(child?.getSnapshot().value).toEqual({ backoff: 'paused' });
    clock.increment(600_000);
    await flush();
    expect(io.resumes).toHaveLength(0);
    expect(child?.getSnapshot().context.attempt).toBe(1);
    io.setOnline(true);
    await flush();
    expect(io.resumes).toHaveLength(1);
  });
});

describe('W1: a restored session in the connection chart', () => {
  const restored = {
    protocolVersion: '2025-06-18',
    standaloneLastEventId: 'ev-7',
    initializeRequest: { ...initializeRequest, id: 'saved' },
  };

  it('W1: start opens the saved session with its version; the standalone GET resumes from the saved event id', async () => {
    const { io, actor } = startConnection({ sessionId: 'saved-session', restored });
    actor.send({ type: 'start' });
    await flush();
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(io.posts).toHaveLength(0);
    expect(io.gets[0]!.input).toEqual({
      sessionId: 'saved-session',
      protocolVersion: '2025-06-18',
      lastEventId: 'ev-7',
      established: true,
    });
    expect(actor.getSnapshot().context.initializeRequest).toEqual(restored.initializeRequest);
  });

  it('W1, F3: a 404 on the restored session re-initializes with the saved initialize request', async () => {
    const { io, actor } = startConnection({ sessionId: 'saved-session', restored, sessionRecovery: 'reinitialize' });
    actor.send({ type: 'start' });
    actor.send({ type: 'send', message: { jsonrpc: '2.0', id: 5, method: 'tools/list' }, ticket: ticket() });
    await flush();
    io.posts[0]!.reject(new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true }));
    await flush();
    expect(actor.getSnapshot().hasTag('reconnecting')).toBe(true);
    expect(io.posts[1]!.input.message).toEqual(restored.initializeRequest);
    expect(io.posts[1]!.input.sessionId).toBeUndefined();
  });

  it('W1: the saved event id is spent once: a stream reopened after the session is left starts without it', async () => {
    const { io, actor } = startConnection({ sessionId: 'saved-session', restored, sessionRecovery: 'reinitialize' });
    actor.send({ type: 'start' });
    await flush();
    io.gets[0]!.reject(new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true }));
    await flush();
    expect(actor.getSnapshot().context.standaloneResumeFrom).toBeUndefined();
  });
});
