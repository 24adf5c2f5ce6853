import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import {
  chartOptions,
  fakeIo,
  flush,
  handshake,
  initialized,
  initializeRequest,
  initializeResult,
  machineWith,
  openStream,
  recordingSink,
  startConnection,
  streamEnd,
  ticket,
  type ConnectionActor,
  type FakeIo,
} from './fakes.js';
import {
  SessionExpiredError,
  StreamableHTTPError,
  StreamEndedError,
  TransportClosedError,
  TransportFailedError,
  TransportWaitingError,
} from '../../machines/errors.js';
import { MAX_RESENDS } from '../../machines/connection/recovery.js';
import { defaultReconnection } from '../../machines/backoff.js';

/** Drives the chart from idle to open: initialize answered with session 'abc', initialized accepted. */
async function connect(io: FakeIo, actor: ConnectionActor) {
  await handshake(io, actor, { sessionId: 'abc', protocolVersion: '2025-11-25' });
}

const call = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'tools/list' });

/** Starts the chart and sends initialize, whose POST fails with `error`: its ticket. */
async function initializeRejected(io: FakeIo, actor: ConnectionActor, error: Error) {
  actor.send({ type: 'start' });
  const initTicket = ticket();
  actor.send({ type: 'send', message: initializeRequest, ticket: initTicket });
  await flush();
  io.posts[0]!.reject(error);
  await flush();
  return initTicket;
}

/** Opens the session and sends call 1, whose POST fails with `error`: the call's ticket. */
async function callRejected(io: FakeIo, actor: ConnectionActor, error: Error) {
  await connect(io, actor);
  const callTicket = ticket();
  actor.send({ type: 'send', message: call(1), ticket: callTicket });
  await flush();
  io.posts[2]!.reject(error);
  await flush();
  return callTicket;
}

describe('connection chart', () => {
  it('U3: tags follow the lifecycle: connecting, connected, closing, closed', async () => {
    const { io, actor, clock } = startConnection();
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send({ type: 'start' });
    expect(actor.getSnapshot().hasTag('connecting')).toBe(true);
    actor.send({ type: 'send', message: initializeRequest, ticket: ticket() });
    await flush();
    io.posts[0]!.resolve({ kind: 'json', sessionId: 'abc', response: initializeResult });
    await flush();
    expect(actor.getSnapshot().value).toBe('initializing');
    actor.send({ type: 'send', message: initialized, ticket: ticket() });
    await flush();
    io.posts[1]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    actor.send({ type: 'close' });
    expect(actor.getSnapshot().hasTag('closing')).toBe(true);
    io.deletes[0]!.resolve({ status: 200 });
    await flush();
    // The standalone GET still opening is let finish for up to drainTimeout after the DELETE (F1).
    clock.increment(100);
    expect(actor.getSnapshot().hasTag('closed')).toBe(true);
  });

  it('H3, H5: initialize carries no session or version, even when stale ones are cached; the ID comes from its response', async () => {
    const { io, actor, clock } = startConnection();
    await connect(io, actor);
    expect(io.posts[0]!.input.sessionId).toBeUndefined();
    expect(io.posts[0]!.input.protocolVersion).toBeUndefined();
    expect(actor.getSnapshot().context.sessionId).toBe('abc');
    // A second initialize on the same chart (the SDK Client re-connecting) must not carry the old values.
    actor.send({ type: 'close' });
    io.deletes[0]!.resolve({ status: 200 });
    await flush();
    // The standalone GET still opening is let finish for up to drainTimeout after the DELETE (F1).
    clock.increment(100);
    actor.send({ type: 'start' });
    actor.send({ type: 'send', message: initializeRequest, ticket: ticket() });
    await flush();
    const again = io.posts.at(-1)!;
    expect(again.input.sessionId).toBeUndefined();
    expect(again.input.protocolVersion).toBeUndefined();
  });

  it('H4, H5: after the InitializeResult every POST and the standalone GET carry the session and version', async () => {
    const { io, actor } = startConnection();
    await connect(io, actor);
    expect(io.posts[1]!.input).toMatchObject({ sessionId: 'abc', protocolVersion: '2025-11-25' });
    actor.send({ type: 'send', message: call(1), ticket: ticket() });
    await flush();
    expect(io.posts[2]!.input).toMatchObject({ sessionId: 'abc', protocolVersion: '2025-11-25' });
    expect(io.gets[0]!.input).toMatchObject({ sessionId: 'abc', protocolVersion: '2025-11-25', lastEventId: undefined });
  });

  it('H5: a session ID on a response other than the initialize response is never adopted', async () => {
    const { io, actor } = startConnection();
    actor.send({ type: 'start' });
    actor.send({ type: 'send', message: initializeRequest, ticket: ticket() });
    await flush();
    io.posts[0]!.resolve({ kind: 'json', sessionId: undefined, response: initializeResult });
    await flush();
    actor.send({ type: 'send', message: initialized, ticket: ticket() });
    await flush();
    io.posts[1]!.resolve({ kind: 'accepted', sessionId: 'late' });
    await flush();
    expect(actor.getSnapshot().context.sessionId).toBeUndefined();
  });

  it('G1: the standalone stream opens only after notifications/initialized is accepted', async () => {
    const { io, actor } = startConnection();
    actor.send({ type: 'start' });
    actor.send({ type: 'send', message: initializeRequest, ticket: ticket() });
    await flush();
    io.posts[0]!.resolve({ kind: 'json', sessionId: 'abc', response: initializeResult });
    await flush();
    actor.send({ type: 'send', message: initialized, ticket: ticket() });
    await flush();
    expect(io.gets).toHaveLength(0);
    io.posts[1]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
    expect(io.gets).toHaveLength(1);
  });

  it('G1: standaloneStream: false opens no GET', async () => {
    const { io, actor } = startConnection({ standaloneStream: false });
    await connect(io, actor);
    expect(io.gets).toHaveLength(0);
    expect(actor.getSnapshot().matches({ open: { standalone: 'off' } })).toBe(true);
  });

  it('G2: a standalone stream the server does not offer ends quietly; the session stays open', async () => {
    const { io, actor, sink } = startConnection();
    await connect(io, actor);
    io.gets[0]!.resolve({ kind: 'unsupported', status: 405, warning: undefined });
    await flush();
    expect(actor.getSnapshot().matches({ open: { standalone: 'ended' } })).toBe(true);
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(sink.warnings).toHaveLength(0);
    expect(io.gets).toHaveLength(1);
  });

  it('P4, P10: a response is delivered by the chart and the POST child stops; a call failed before its send() resolved is told through send() alone', async () => {
    const { io, actor, sink } = startConnection();
    await connect(io, actor);
    const ok = ticket();
    const bad = ticket();
    actor.send({ type: 'send', message: call(1), ticket: ok });
    actor.send({ type: 'send', message: call(2), ticket: bad });
    await flush();
    io.posts[2]!.resolve({ kind: 'json', sessionId: 'abc', response: { jsonrpc: '2.0', id: 1, result: {} } });
    io.posts[3]!.reject(new StreamableHTTPError('POST: HTTP 503', { status: 503 }));
    await flush();
    expect(ok.outcome).toBe('accepted');
    expect(bad.outcome).toBeInstanceOf(StreamableHTTPError);
    expect(sink.delivered).toContainEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(sink.delivered.filter((m) => 'id' in m && m.id === 2)).toEqual([]);
    const posts = Object.keys(actor.getSnapshot().children).filter((id) => id.startsWith('post-'));
    expect(posts).toEqual([]);
  });

  it('X2: POST children take ids from a bounded set (the lowest free), so the event types the chart sees stay bounded over many calls', async () => {
    const io = fakeIo();
    const spawned = new Set<string>();
    const eventTypes = new Set<string>();
    const actor = createActor(machineWith(io), {
      input: { options: chartOptions({ standaloneStream: false }), sink: recordingSink() },
      inspect: (event) => {
        const id = event.type === '@xstate.actor' && 'id' in event.actorRef ? String(event.actorRef.id) : '';
        if (id.startsWith('post-')) spawned.add(id);
        if (event.type === '@xstate.event' && event.actorRef.sessionId === event.rootId) eventTypes.add(event.event.type);
      },
    }).start();
    await connect(io, actor);
    const typesAfterConnect = eventTypes.size;
    for (let round = 0; round < 50; round++) {
      // Three calls in flight at once, answered out of order.
      const first = io.posts.length;
      for (let i = 0; i < 3; i++) actor.send({ type: 'send', message: call(100 + round * 3 + i), ticket: ticket() });
      await flush();
      for (const i of [2, 0, 1])
        io.posts[first + i]!.resolve({ kind: 'json', sessionId: 'abc', response: { jsonrpc: '2.0', id: 100 + round * 3 + i, result: {} } });
      await flush();
    }
    expect(io.posts).toHaveLength(2 + 150);
    expect([...spawned].sort()).toEqual(['post-0', 'post-1', 'post-2']);
    // Only the done events of those three ids are new types: 150 calls added no more.
    expect(eventTypes.size - typesAfterConnect).toBeLessThanOrEqual(3);
    expect(Object.keys(actor.getSnapshot().children).filter((id) => id.startsWith('post-'))).toEqual([]);
  });

  it('P10: a call whose send() had resolved and whose stream then ended without its response gets a synthetic answer', async () => {
    const { io, actor, sink } = startConnection({ standaloneStream: false });
    await connect(io, actor);
    const streaming = ticket();
    actor.send({ type: 'send', message: call(1), ticket: streaming });
    await flush();
    io.posts.at(-1)!.resolve({ kind: 'sse', sessionId: 'abc', stream: openStream() });
    await flush();
    expect(streaming.outcome).toBe('accepted');
    io.readers.at(-1)!.send({ type: 'stream.ended', end: streamEnd() });
    await flush();
    const answer = sink.delivered.find((m) => 'id' in m && m.id === 1);
    expect(answer).toMatchObject({ id: 1, error: { code: -32000, message: 'request ended without a response' } });
  });

  it('F5: an error scoped to one call leaves the session and other calls alone', async () => {
    const { io, actor } = startConnection();
    await connect(io, actor);
    actor.send({ type: 'send', message: call(1), ticket: ticket() });
    actor.send({ type: 'send', message: call(2), ticket: ticket() });
    await flush();
    io.posts[2]!.reject(new StreamableHTTPError('HTTP 429', { status: 429 }));
    await flush();
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    const second = ticket();
    io.posts[3]!.resolve({ kind: 'json', sessionId: 'abc', response: { jsonrpc: '2.0', id: 2, result: {} } });
    actor.send({ type: 'send', message: call(3), ticket: second });
    await flush();
    io.posts[4]!.resolve({ kind: 'json', sessionId: 'abc', response: { jsonrpc: '2.0', id: 3, result: {} } });
    await flush();
    expect(second.outcome).toBe('accepted');
  });

  it('H7: a different session ID on a later response is ignored and reported once', async () => {
    const { io, actor, emitted } = startConnection();
    await connect(io, actor);
    for (const id of [1, 2]) {
      actor.send({ type: 'send', message: call(id), ticket: ticket() });
      await flush();
      io.posts.at(-1)!.resolve({ kind: 'json', sessionId: 'other', response: { jsonrpc: '2.0', id, result: {} } });
      await flush();
    }
    expect(actor.getSnapshot().context.sessionId).toBe('abc');
    expect(emitted.filter((type) => type === 'warning')).toHaveLength(1);
  });

  it('P8, F4: a 404 to a request with a session means the session is gone; the failure is sticky and typed', async () => {
    const { io, actor } = startConnection({ sessionRecovery: 'fail' });
    await connect(io, actor);
    actor.send({ type: 'send', message: call(1), ticket: ticket() });
    await flush();
    io.posts[2]!.reject(new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true }));
    await flush();
    expect(actor.getSnapshot().hasTag('failed')).toBe(true);
    const first = ticket();
    const second = ticket();
    const postsBefore = io.posts.length;
    actor.send({ type: 'send', message: call(2), ticket: first });
    actor.send({ type: 'send', message: call(3), ticket: second });
    expect(first.outcome).toBeInstanceOf(SessionExpiredError);
    expect(second.outcome).toBe(first.outcome);
    expect(io.posts).toHaveLength(postsBefore);
    // No DELETE for a session the server no longer knows.
    actor.send({ type: 'close' });
    await flush();
    expect(io.deletes).toHaveLength(0);
    expect(actor.getSnapshot().hasTag('closed')).toBe(true);
  });

  it('F4: closed, failed and session-expired are told apart by type', async () => {
    const { io, actor } = startConnection();
    actor.send({ type: 'start' });
    actor.send({ type: 'send', message: initializeRequest, ticket: ticket() });
    await flush();
    io.posts[0]!.reject(new StreamableHTTPError('HTTP 500', { status: 500 }));
    await flush();
    const whileFailed = ticket();
    actor.send({ type: 'send', message: call(1), ticket: whileFailed });
    expect(whileFailed.outcome).toBeInstanceOf(TransportFailedError);
    expect((whileFailed.outcome as Error).cause).toBeInstanceOf(StreamableHTTPError);
    actor.send({ type: 'close' });
    await flush();
    const whileClosed = ticket();
    actor.send({ type: 'send', message: call(2), ticket: whileClosed });
    expect(whileClosed.outcome).toBeInstanceOf(TransportClosedError);
  });

  it('F1: close sends DELETE with session and version, and is bounded by deleteTimeout', async () => {
    const { io, actor, clock, emitted } = startConnection({ deleteTimeout: 5_000 });
    await connect(io, actor);
    actor.send({ type: 'close' });
    await flush();
    expect(io.deletes[0]!.input).toEqual({ sessionId: 'abc', protocolVersion: '2025-11-25' });
    // Closing an open session DELETEs while the standalone stream drains (F1: DELETE, then stop).
    expect(actor.getSnapshot().matches({ open: { session: 'closing' } })).toBe(true);
    expect(actor.getSnapshot().hasTag('closing')).toBe(true);
    expect(actor.getSnapshot().hasTag('connected')).toBe(false);
    clock.increment(4_999);
    expect(actor.getSnapshot().hasTag('closed')).toBe(false);
    clock.increment(1);
    expect(actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(io.deletes[0]!.signal.aborted).toBe(true);
    expect(emitted.filter((type) => type === 'closed')).toHaveLength(1);
  });

  it('F1: no DELETE without a session, or with terminateOnClose: false', async () => {
    const off = startConnection({ terminateOnClose: false });
    await connect(off.io, off.actor);
    off.actor.send({ type: 'close' });
    await flush();
    expect(off.io.deletes).toHaveLength(0);
    expect(off.actor.getSnapshot().hasTag('closed')).toBe(true);

    const sessionless = startConnection();
    sessionless.actor.send({ type: 'start' });
    sessionless.actor.send({ type: 'send', message: initializeRequest, ticket: ticket() });
    await flush();
    sessionless.io.posts[0]!.resolve({ kind: 'json', sessionId: undefined, response: initializeResult });
    await flush();
    sessionless.actor.send({ type: 'close' });
    await flush();
    expect(sessionless.io.deletes).toHaveLength(0);
  });

  it('F1, F2: a DELETE answered 405 still closes; close stops every child and rejects waiting sends', async () => {
    const { io, actor, clock } = startConnection();
    await connect(io, actor);
    const waiting = ticket();
    actor.send({ type: 'send', message: call(1), ticket: waiting });
    await flush();
    expect(Object.keys(actor.getSnapshot().children).length).toBeGreaterThan(0);
    actor.send({ type: 'close' });
    expect(waiting.outcome).toBeInstanceOf(TransportClosedError);
    expect(io.posts[2]!.signal.aborted).toBe(true);
    io.deletes[0]!.resolve({ status: 405 });
    await flush();
    // The standalone GET still opening is let finish (bounded by drainTimeout): see below.
    clock.increment(100);
    expect(actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(Object.keys(actor.getSnapshot().children)).toEqual([]);
  });

  it('F1, G6: a standalone GET still opening at close is let finish, not aborted (its connection is reused), then drained until the server ends it', async () => {
    const { io, actor } = startConnection();
    await connect(io, actor);
    actor.send({ type: 'close' });
    await flush();
    expect(io.deletes).toHaveLength(1);
    expect(io.gets[0]!.signal.aborted).toBe(false);
    io.deletes[0]!.resolve({ status: 200 });
    await flush();
    expect(actor.getSnapshot().matches({ open: { session: 'draining' } })).toBe(true);
    // The GET answers with its stream: it is read (drained), not reconnected, and its end closes.
    io.gets[0]!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    expect(io.readers).toHaveLength(1);
    io.readers[0]!.send({ type: 'stream.ended', end: streamEnd() });
    await flush();
    expect(actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(io.gets).toHaveLength(1);
    expect(io.gets[0]!.signal.aborted).toBe(false);
  });

  it('F1, F7: a standalone GET that stays unanswered at close is aborted once drainTimeout after the DELETE has passed', async () => {
    const { io, actor, clock } = startConnection();
    await connect(io, actor);
    actor.send({ type: 'close' });
    io.deletes[0]!.resolve({ status: 200 });
    await flush();
    clock.increment(99);
    expect(actor.getSnapshot().hasTag('closed')).toBe(false);
    clock.increment(1);
    expect(actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(io.gets[0]!.signal.aborted).toBe(true);
  });

  it('F2: start after close begins a fresh session', async () => {
    const { io, actor, clock } = startConnection();
    await connect(io, actor);
    actor.send({ type: 'close' });
    io.deletes[0]!.resolve({ status: 200 });
    await flush();
    // The standalone GET still opening is let finish for up to drainTimeout after the DELETE (F1).
    clock.increment(100);
    actor.send({ type: 'start' });
    expect(actor.getSnapshot().value).toBe('connecting');
    expect(actor.getSnapshot().context).toMatchObject({ sessionId: undefined, protocolVersion: undefined, error: undefined });
  });

  it('G6, F1: the standalone stream lives as long as the session: on close it drains during the DELETE, then stops', async () => {
    const { io, actor } = startConnection();
    await connect(io, actor);
    io.gets[0]!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    const reader = io.readers[0]!;
    expect(reader.stopped).toBe(false);
    actor.send({ type: 'close' });
    await flush();
    // The DELETE goes out while the stream is still read, so the server can end it cleanly.
    expect(io.deletes).toHaveLength(1);
    expect(reader.stopped).toBe(false);
    // The server ends the stream: no reconnect while closing.
    reader.send({ type: 'stream.ended', end: streamEnd({ lastEventId: 'x', progressed: true }) });
    await flush();
    expect(io.gets).toHaveLength(1);
    io.deletes[0]!.resolve({ status: 200 });
    await flush();
    expect(actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(reader.stopped).toBe(true);
    expect(io.gets).toHaveLength(1);
  });

  it('G6, F1: without a DELETE to wait for, close stops the standalone reader at once', async () => {
    const { io, actor } = startConnection({ terminateOnClose: false });
    await connect(io, actor);
    io.gets[0]!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    actor.send({ type: 'close' });
    expect(io.readers[0]!.stopped).toBe(true);
  });

  it('G4: when the standalone stream ends it reconnects with Last-Event-ID after the server retry', async () => {
    const { io, actor, clock } = startConnection();
    await connect(io, actor);
    io.gets[0]!.resolve({ kind: 'sse', stream: openStream() });
    await flush();
    io.readers[0]!.send({ type: 'stream.ended', end: streamEnd({ lastEventId: 'e7', progressed: true, retryMs: 250 }) });
    await flush();
    expect(io.gets).toHaveLength(1);
    clock.increment(250);
    await flush();
    expect(io.gets).toHaveLength(2);
    expect(io.gets[1]!.input.lastEventId).toBe('e7');
  });

  it('U2: a preset session ID skips initialize and opens directly', async () => {
    const { io, actor } = startConnection({ sessionId: 'given' });
    actor.send({ type: 'start' });
    await flush();
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    actor.send({ type: 'send', message: call(1), ticket: ticket() });
    await flush();
    expect(io.posts[0]!.input.sessionId).toBe('given');
  });

  it('U1: terminateSession DELETEs and forgets the session; 405 is fine', async () => {
    const { io, actor } = startConnection();
    await connect(io, actor);
    const done = ticket();
    actor.send({ type: 'session.terminate', ticket: done });
    await flush();
    io.deletes[0]!.resolve({ status: 405 });
    await flush();
    expect(done.outcome).toBe('accepted');
    expect(actor.getSnapshot().context.sessionId).toBeUndefined();
    expect(actor.getSnapshot().value).toBe('connecting');
  });
});

describe('N3: the end of a session', () => {
  const gone = () => new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true });
  const ended = (emitted: string[]) => emitted.filter((type) => type === 'session.ended').length;

  it('N3: the chart emits session.ended when the session is terminated, forgotten by the server (before the new one), or closed', async () => {
    const terminated = startConnection();
    await connect(terminated.io, terminated.actor);
    expect(ended(terminated.emitted)).toBe(0);
    terminated.actor.send({ type: 'session.terminate', ticket: ticket() });
    await flush();
    expect(ended(terminated.emitted)).toBe(0);
    terminated.io.deletes[0]!.resolve({ status: 200 });
    await flush();
    expect(ended(terminated.emitted)).toBe(1);

    const forgotten = startConnection({ sessionRecovery: 'reinitialize' });
    await connect(forgotten.io, forgotten.actor);
    forgotten.io.gets[0]!.reject(gone());
    await flush();
    // Said while the new initialize is still unanswered: what the old session kept is gone before the new one begins.
    expect(forgotten.actor.getSnapshot().hasTag('reconnecting')).toBe(true);
    expect(ended(forgotten.emitted)).toBe(1);

    const closed = startConnection();
    await connect(closed.io, closed.actor);
    closed.actor.send({ type: 'close' });
    closed.io.deletes[0]!.resolve({ status: 200 });
    await flush();
    closed.clock.increment(100);
    expect(closed.actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(closed.emitted.slice(-2)).toEqual(['session.ended', 'closed']);
  });
});

describe('session recovery (F3)', () => {
  const ok = (id: number) => ({ jsonrpc: '2.0' as const, id, result: {} });
  const gone = () => new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true });

  it('F3, P8: a 404 re-initializes with the cached request, confirms it, then re-sends the call once on the new session', async () => {
    const { io, actor, sink, emitted } = startConnection({ sessionRecovery: 'reinitialize' });
    const callTicket = await callRejected(io, actor, gone());
    expect(actor.getSnapshot().hasTag('reconnecting')).toBe(true);
    // Re-initialize: the cached request, without session or version (H3).
    expect(io.posts[3]!.input).toMatchObject({ message: initializeRequest, sessionId: undefined, protocolVersion: undefined });
    // Sends meanwhile wait.
    const queued = ticket();
    actor.send({ type: 'send', message: call(2), ticket: queued });
    await flush();
    expect(io.posts).toHaveLength(4);
    io.posts[3]!.resolve({ kind: 'json', sessionId: 'new', response: initializeResult });
    await flush();
    expect(io.posts[4]!.input).toMatchObject({ message: initialized, sessionId: 'new' });
    io.posts[4]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    // The call that met the 404 goes first, then the queued one, both on the new session.
    expect(io.posts[5]!.input).toMatchObject({ message: call(1), sessionId: 'new' });
    expect(io.posts[6]!.input).toMatchObject({ message: call(2), sessionId: 'new' });
    io.posts[5]!.resolve({ kind: 'json', sessionId: 'new', response: ok(1) });
    io.posts[6]!.resolve({ kind: 'json', sessionId: 'new', response: ok(2) });
    await flush();
    expect(callTicket.outcome).toBe('accepted');
    expect(queued.outcome).toBe('accepted');
    // The client sees only its own responses: no second InitializeResult.
    expect(sink.delivered).toEqual([initializeResult, ok(1), ok(2)]);
    expect(emitted).toContain('session.changed');
    // The standalone stream reopened with the new session.
    expect(io.gets.at(-1)!.input.sessionId).toBe('new');
  });

  it('F3: session.changed carries fingerprints, never the session IDs (X1)', async () => {
    const { io, actor } = startConnection({ sessionRecovery: 'reinitialize' });
    const changes: unknown[] = [];
    actor.on('session.changed', (event) => changes.push(event));
    await connect(io, actor);
    io.gets[0]!.reject(gone());
    await flush();
    io.posts[2]!.resolve({ kind: 'json', sessionId: 'new', response: initializeResult });
    await flush();
    io.posts[3]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
    expect(changes).toHaveLength(1);
    expect(JSON.stringify(changes)).not.toMatch(/abc|new/);
    const change = changes[0] as { previous: string; current: string };
    expect(change.previous).toMatch(/^#[0-9a-f]{8}$/);
    expect(change.current).toMatch(/^#[0-9a-f]{8}$/);
    expect(change.previous).not.toBe(change.current);
  });

  /** Answers the re-initialize at `index` (new session `sessionId`) and its notifications/initialized. */
  async function reestablish(io: FakeIo, index: number, sessionId: string) {
    io.posts[index]!.resolve({ kind: 'json', sessionId, response: initializeResult });
    await flush();
    io.posts[index + 1]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
  }

  it('F3: a re-sent request that meets a second 404 recovers again and is answered on the third session', async () => {
    const { io, actor, sink } = startConnection({ sessionRecovery: 'reinitialize' });
    const resent = await callRejected(io, actor, gone());
    await reestablish(io, 3, 'second');
    expect(io.posts[5]!.input).toMatchObject({ message: call(1), sessionId: 'second' });
    io.posts[5]!.reject(gone());
    await flush();
    expect(actor.getSnapshot().hasTag('reconnecting')).toBe(true);
    expect(io.posts[6]!.input).toMatchObject({ message: initializeRequest, sessionId: undefined });
    await reestablish(io, 6, 'third');
    expect(io.posts[8]!.input).toMatchObject({ message: call(1), sessionId: 'third' });
    io.posts[8]!.resolve({ kind: 'json', sessionId: 'third', response: ok(1) });
    await flush();
    expect(resent.outcome).toBe('accepted');
    expect(sink.delivered.filter((m) => 'id' in m && m.id === 1)).toEqual([ok(1)]);
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it('F3, F5: a request re-sent MAX_RESENDS times that meets yet another 404 fails alone (typed); the session is made again for the others', async () => {
    const { io, actor, sink } = startConnection({ sessionRecovery: 'reinitialize' });
    const resent = await callRejected(io, actor, gone());
    // Each loss: re-initialize, initialized, the call again (three POSTs).
    for (let round = 0; round < MAX_RESENDS; round++) {
      const init = 3 + round * 3;
      await reestablish(io, init, `s${round}`);
      expect(io.posts[init + 2]!.input).toMatchObject({ message: call(1), sessionId: `s${round}` });
      io.posts[init + 2]!.reject(gone());
      await flush();
    }
    expect(resent.outcome).toBeInstanceOf(SessionExpiredError);
    expect((resent.outcome as Error).message).toMatch(/re-sent 3 times/);
    expect(sink.delivered.filter((m) => 'id' in m && m.id === 1)).toEqual([]);
    // Not failed: the session is re-established, and the next call is answered.
    expect(actor.getSnapshot().hasTag('failed')).toBe(false);
    const last = 3 + MAX_RESENDS * 3;
    expect(io.posts[last]!.input).toMatchObject({ message: initializeRequest });
    await reestablish(io, last, 'fresh');
    const next = ticket();
    actor.send({ type: 'send', message: call(2), ticket: next });
    await flush();
    io.posts.at(-1)!.resolve({ kind: 'json', sessionId: 'fresh', response: ok(2) });
    await flush();
    expect(next.outcome).toBe('accepted');
    expect(sink.delivered.at(-1)).toEqual(ok(2));
  });

  it('F3, R4, W3: a re-initialize that fails (503, then cut) is tried again after the planned backoff; the third is answered and the call too', async () => {
    const { io, actor, sink, clock } = startConnection({ sessionRecovery: 'reinitialize' });
    const waiting = await callRejected(io, actor, gone());
    io.posts[3]!.reject(new StreamableHTTPError('HTTP 503', { status: 503 }));
    await flush();
    const snapshot = actor.getSnapshot();
    expect(snapshot.matches({ reconnecting: 'backoff' })).toBe(true);
    expect(snapshot.hasTag('reconnecting')).toBe(true);
    // W3: the chart's own wait, planned once: attempt 1 after the initial delay (no jitter here).
    expect(snapshot.context.recoveryWait).toMatchObject({ attempt: 1, delayMs: 1_000, dueAt: clock.now() + 1_000 });
    clock.increment(999);
    expect(io.posts).toHaveLength(4);
    clock.increment(1);
    await flush();
    expect(io.posts[4]!.input).toMatchObject({ message: initializeRequest, sessionId: undefined });
    io.posts[4]!.reject(new StreamEndedError('stream ended before the response', { cause: new Error('socket hang up') }));
    await flush();
    expect(actor.getSnapshot().context.recoveryWait).toMatchObject({ attempt: 2, delayMs: 1_500 });
    clock.increment(1_500);
    await flush();
    await reestablish(io, 5, 'new');
    expect(io.posts[7]!.input).toMatchObject({ message: call(1), sessionId: 'new' });
    io.posts[7]!.resolve({ kind: 'json', sessionId: 'new', response: ok(1) });
    await flush();
    expect(waiting.outcome).toBe('accepted');
    expect(sink.delivered.at(-1)).toEqual(ok(1));
    expect(actor.getSnapshot().context.recoveryAttempts).toBe(0);
  });

  it('F4, W3: past its budget the chart waits: calls fail at once, typed, naming the cause and the next attempt; the timer, then a call, try again; the server back, it is connected', async () => {
    const { io, actor, sink, clock, emitted } = startConnection({
      sessionRecovery: 'reinitialize',
      reconnection: { ...defaultReconnection, jitter: false, maxRetries: 1 },
    });
    const held = await callRejected(io, actor, gone());
    const refused = () => new StreamableHTTPError('POST failed before any response: ECONNREFUSED', { status: undefined });
    io.posts[3]!.reject(refused());
    await flush();
    clock.increment(1_000);
    await flush();
    io.posts[4]!.reject(refused());
    await flush();
    const snapshot = actor.getSnapshot();
    expect(snapshot.value).toBe('waiting');
    expect(snapshot.hasTag('waiting')).toBe(true);
    expect(emitted).not.toContain('failed');
    expect(snapshot.context.recoveryWait).toMatchObject({ attempt: 2, delayMs: 1_500, dueAt: clock.now() + 1_500 });
    // The call held through the budget fails now, typed, with the cause and the next attempt.
    expect(held.outcome).toBeInstanceOf(TransportWaitingError);
    expect(held.outcome).toMatchObject({ attempt: 2, nextAttemptAt: clock.now() + 1_500 });
    expect((held.outcome as Error).message).toMatch(/ECONNREFUSED/);
    // The timer: an attempt when due, refused again: waiting, the next wait longer.
    clock.increment(1_500);
    await flush();
    expect(io.posts[5]!.input).toMatchObject({ message: initializeRequest });
    io.posts[5]!.reject(refused());
    await flush();
    expect(actor.getSnapshot().context.recoveryWait).toMatchObject({ attempt: 3, delayMs: 2_250 });
    // A call: an attempt at once (no wait for the timer); refused: the call fails typed.
    const early = ticket();
    actor.send({ type: 'send', message: call(2), ticket: early });
    await flush();
    expect(io.posts[6]!.input).toMatchObject({ message: initializeRequest });
    io.posts[6]!.reject(refused());
    await flush();
    expect(early.outcome).toBeInstanceOf(TransportWaitingError);
    expect(actor.getSnapshot().value).toBe('waiting');
    // The server is back: the next call's attempt makes a session, and the call is answered on it.
    const back = ticket();
    actor.send({ type: 'send', message: call(3), ticket: back });
    await flush();
    await reestablish(io, 7, 'back');
    expect(io.posts[9]!.input).toMatchObject({ message: call(3), sessionId: 'back' });
    io.posts[9]!.resolve({ kind: 'json', sessionId: 'back', response: ok(3) });
    await flush();
    expect(back.outcome).toBe('accepted');
    expect(sink.delivered.at(-1)).toEqual(ok(3));
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(actor.getSnapshot().context.recoveryWait).toBeUndefined();
  });

  it('F3: with sessionRecovery "fail" a 404 ends in failed with SessionExpiredError for that call too', async () => {
    const { io, actor, sink } = startConnection({ sessionRecovery: 'fail' });
    const waiting = await callRejected(io, actor, gone());
    expect(waiting.outcome).toBeInstanceOf(SessionExpiredError);
    expect(sink.delivered.filter((m) => 'id' in m && m.id === 1)).toEqual([]);
  });
});

describe('authorization (A1, A2)', () => {
  const unauthorized = (challenge = { scope: 'read' }) =>
    new StreamableHTTPError('HTTP 401', { status: 401, challenge: { resourceMetadataUrl: 'http://127.0.0.1/prm', ...challenge } });

  it('A1: a 401 on initialize authorizes with the challenge, then initialize goes again and the chart carries on', async () => {
    const { io, actor, sink } = startConnection({ authorization: true });
    const initTicket = await initializeRejected(io, actor, unauthorized());
    expect(actor.getSnapshot().hasTag('authorizing')).toBe(true);
    expect(io.authorizations[0]!.input.challenge).toEqual({ resourceMetadataUrl: 'http://127.0.0.1/prm', scope: 'read' });
    // A send meanwhile waits for authorization.
    const waiting = ticket();
    actor.send({ type: 'send', message: call(5), ticket: waiting });
    await flush();
    expect(io.posts).toHaveLength(1);
    io.authorizations[0]!.resolve('AUTHORIZED');
    await flush();
    expect(actor.getSnapshot().value).toBe('connecting');
    expect(io.posts[1]!.input.message).toEqual(initializeRequest);
    expect(io.posts[2]!.input.message).toEqual(call(5));
    io.posts[1]!.resolve({ kind: 'json', sessionId: 'abc', response: initializeResult });
    await flush();
    expect(actor.getSnapshot().value).toBe('initializing');
    expect(initTicket.outcome).toBe('accepted');
    expect(sink.delivered).toEqual([initializeResult]);
  });

  it('A1: a second 401 after a successful flow fails the call without another flow', async () => {
    const { io, actor } = startConnection({ authorization: true });
    const t = await callRejected(io, actor, unauthorized());
    io.authorizations[0]!.resolve('AUTHORIZED');
    await flush();
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    io.posts.at(-1)!.reject(unauthorized());
    await flush();
    expect(io.authorizations).toHaveLength(1);
    expect(t.outcome).toBeInstanceOf(StreamableHTTPError);
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it("A1: a flow that needs the user (the SDK's UnauthorizedError) fails the waiting calls with that very error, and no synthetic answer", async () => {
    const { io, actor, sink } = startConnection({ authorization: true });
    const initTicket = await initializeRejected(io, actor, unauthorized());
    class UnauthorizedError extends Error {}
    const redirect = new UnauthorizedError('redirect needed');
    io.authorizations[0]!.reject(redirect);
    await flush();
    expect(initTicket.outcome).toBe(redirect);
    expect(sink.delivered).toEqual([]);
    expect(actor.getSnapshot().hasTag('failed')).toBe(true);
    // F2: start again after finishAuth works from failed.
    actor.send({ type: 'start' });
    expect(actor.getSnapshot().value).toBe('connecting');
  });

  it('A2: 403 insufficient_scope steps up with the challenged scope, at most maxStepUpRetries times', async () => {
    const { io, actor } = startConnection({ authorization: true, maxStepUpRetries: 1 });
    const insufficient = () =>
      new StreamableHTTPError('HTTP 403', { status: 403, challenge: { error: 'insufficient_scope', scope: 'tools:write' } });
    const t = await callRejected(io, actor, insufficient());
    expect(io.authorizations[0]!.input.challenge).toMatchObject({ scope: 'tools:write' });
    io.authorizations[0]!.resolve('AUTHORIZED');
    await flush();
    io.posts.at(-1)!.reject(insufficient());
    await flush();
    expect(io.authorizations).toHaveLength(1);
    expect(t.outcome).toBeInstanceOf(StreamableHTTPError);
  });

  it('A1: a 401 on the standalone GET authorizes, then the stream opens again', async () => {
    const { io, actor } = startConnection({ authorization: true });
    await connect(io, actor);
    io.gets[0]!.reject(unauthorized());
    await flush();
    expect(actor.getSnapshot().hasTag('authorizing')).toBe(true);
    io.authorizations[0]!.resolve('AUTHORIZED');
    await flush();
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(io.gets).toHaveLength(2);
  });

  it('A1: without an authProvider a 401 is an ordinary failed call', async () => {
    const { io, actor } = startConnection({ authorization: false });
    const t = await callRejected(io, actor, unauthorized());
    expect(io.authorizations).toHaveLength(0);
    expect(t.outcome).toBeInstanceOf(StreamableHTTPError);
  });
});

describe('authorization mid-session (A2, F5)', () => {
  it('A2, F5: a step-up that needs the user fails only the call that met the 403; the session and other sends go on', async () => {
    const { io, actor } = startConnection({ authorization: true });
    const admin = await callRejected(
      io,
      actor,
      new StreamableHTTPError('HTTP 403', { status: 403, challenge: { error: 'insufficient_scope', scope: 'admin' } }),
    );
    const other = ticket();
    actor.send({ type: 'send', message: call(2), ticket: other });
    class UnauthorizedError extends Error {}
    const redirect = new UnauthorizedError('needs the user');
    io.authorizations[0]!.reject(redirect);
    await flush();
    expect(admin.outcome).toBe(redirect);
    expect(actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(io.posts.at(-1)!.input.message).toEqual(call(2));
    io.posts.at(-1)!.resolve({ kind: 'json', sessionId: 'abc', response: { jsonrpc: '2.0', id: 2, result: {} } });
    await flush();
    expect(other.outcome).toBe('accepted');
  });
});
