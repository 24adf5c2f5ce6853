/**
 * The direct path's gate (machines/connection/direct.ts): the chart itself tells the direct path
 * (the facade's data plane) when plain calls may go straight to the sink: `direct.open` on entry
 * of a state that takes direct calls, `direct.close` on its exit. The chart emits its words to the
 * direct path (issue 44: no `directCalls` actor); the real chart runs here on fake I/O and what it
 * emits to the direct path is recorded.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import type { DirectCallsCommand } from '../../machines/connection/types.js';
import { DIRECT_CALLS } from '../../machines/connection/direct.js';
import { StreamableHTTPError } from '../../machines/errors.js';
import { chartOptions, fakeIo, flush, handshake, initializeResult, machineWith, recordingSink, ticket } from './fakes.js';

/** The connection chart on fake I/O, every word it emits to the direct path (`direct.*`) recorded. */
function gateRecorder(overrides: Parameters<typeof chartOptions>[0] = {}) {
  const io = fakeIo();
  const commands: string[] = [];
  const emitted: DirectCallsCommand[] = [];
  const clock = new SimulatedClock();
  const actor = createActor(machineWith(io), {
    input: { options: chartOptions({ now: () => clock.now(), ...overrides }), sink: recordingSink() },
    clock,
  });
  actor.on('*', (event) => {
    switch (event.type) {
      case 'direct.start':
      case 'direct.open':
      case 'direct.close':
      case 'direct.degraded':
      case 'direct.steady':
      case 'direct.end':
      case 'direct.cancel':
        commands.push(event.type);
        emitted.push(event);
    }
  });
  actor.start();
  return { io, actor, commands, events: () => [...emitted] };
}

const call = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'tools/list' });

describe('the direct path gate', () => {
  it('H3, F3: the gate opens on entry of the open session, closes when a recovery leaves it, stays closed while the re-established session is charted, reopens with its first answer, and closes on close()', async () => {
    const { io, actor, commands } = gateRecorder({ sessionRecovery: 'reinitialize' });
    actor.send({ type: 'start' });
    expect(commands, 'the direct path starts with the connection; no gate while connecting').toEqual(['direct.start']);
    await handshake(io, actor, { sessionId: 'abc', protocolVersion: '2025-11-25' });
    expect(actor.getSnapshot().hasTag(DIRECT_CALLS)).toBe(true);
    expect(commands).toEqual(['direct.start', 'direct.open']);

    // A call through the chart meets a 404: the session is re-established (F3), the gate closes as the open state is left.
    actor.send({ type: 'send', message: call(1), ticket: ticket() });
    await flush();
    io.posts[2]!.reject(new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true }));
    await flush();
    expect(actor.getSnapshot().hasTag('reconnecting')).toBe(true);
    expect(commands).toEqual(['direct.start', 'direct.open', 'direct.close']);

    // The new session is open, but charted until a call is answered on it: the gate stays closed.
    io.posts[3]!.resolve({ kind: 'json', sessionId: 'new', response: initializeResult });
    await flush();
    io.posts[4]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
    expect(actor.getSnapshot().matches({ open: { session: { active: 'charted' } } })).toBe(true);
    expect(actor.getSnapshot().hasTag(DIRECT_CALLS)).toBe(false);
    expect(commands).toEqual(['direct.start', 'direct.open', 'direct.close']);

    // The re-sent call is answered: progress, direct calls again.
    io.posts[5]!.resolve({ kind: 'json', sessionId: 'new', response: { jsonrpc: '2.0', id: 1, result: {} } });
    await flush();
    expect(actor.getSnapshot().hasTag(DIRECT_CALLS)).toBe(true);
    expect(commands).toEqual(['direct.start', 'direct.open', 'direct.close', 'direct.open']);

    // close(): the gate closes as the open state is left, before the direct path is told its calls end.
    actor.send({ type: 'close' });
    await flush();
    expect(commands).toEqual(['direct.start', 'direct.open', 'direct.close', 'direct.open', 'direct.close', 'direct.end']);
  });

  it('R9, H3: with streamIdleTimeout the open session is charted: the gate is never opened', async () => {
    const { io, actor, commands } = gateRecorder({ streamIdleTimeout: 1_000 });
    await handshake(io, actor, { sessionId: 'abc', protocolVersion: '2025-11-25' });
    expect(actor.getSnapshot().matches({ open: { session: { active: 'charted' } } })).toBe(true);
    expect(commands).toEqual(['direct.start']);
    actor.send({ type: 'close' });
    await flush();
    expect(commands).toEqual(['direct.start', 'direct.end']);
  });

  it('W6, R8, F4, P10, F2: the chart tells the direct path of degraded and steady, of a cancelled request, ends its calls on failure (with synthetic answers and the failure) and starts it again with a new start', async () => {
    const { io, actor, events } = gateRecorder();
    await handshake(io, actor, { sessionId: 'abc', protocolVersion: '2025-11-25' });
    expect(events()).toEqual([{ type: 'direct.start' }, { type: 'direct.open' }]);

    // W6: a call fails with a 503: degraded, the direct path told; the next answer ends it.
    actor.send({ type: 'send', message: call(1), ticket: ticket() });
    await flush();
    io.posts[2]!.reject(new StreamableHTTPError('HTTP 503', { status: 503 }));
    await flush();
    expect(actor.getSnapshot().hasTag('degraded')).toBe(true);
    expect(events().slice(2)).toEqual([{ type: 'direct.degraded' }]);
    actor.send({ type: 'send', message: call(2), ticket: ticket() });
    await flush();
    io.posts[3]!.resolve({ kind: 'json', sessionId: 'abc', response: { jsonrpc: '2.0', id: 2, result: {} } });
    await flush();
    expect(actor.getSnapshot().hasTag('degraded')).toBe(false);
    expect(events().slice(2)).toEqual([{ type: 'direct.degraded' }, { type: 'direct.steady' }]);

    // R8: a cancellation: the direct path stops its call for that request, told why.
    actor.send({
      type: 'send',
      message: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'no longer needed' } },
      ticket: ticket(),
    });
    await flush();
    const cancel = events()[4];
    expect(cancel).toMatchObject({ type: 'direct.cancel', requestId: 7 });
    expect(cancel?.type === 'direct.cancel' ? cancel.error.message : undefined).toBe('request cancelled by the client');

    // F4: a lost session with sessionRecovery 'fail' fails the transport: the direct path ends, its
    // calls told the failure with synthetic answers (P10).
    actor.send({ type: 'send', message: call(3), ticket: ticket() });
    await flush();
    io.posts[5]!.reject(new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true }));
    await flush();
    expect(actor.getSnapshot().matches('failed')).toBe(true);
    const end = events().find((event) => event.type === 'direct.end');
    expect(end).toMatchObject({ type: 'direct.end', answer: true });
    expect(end?.type === 'direct.end' ? end.error : undefined).toBe(actor.getSnapshot().context.error);

    // F2: a new start starts the direct path again.
    const before = events().length;
    actor.send({ type: 'start' });
    expect(events().slice(before)).toEqual([{ type: 'direct.start' }]);
  });
});
