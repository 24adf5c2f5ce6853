/**
 * The direct path's gate (machines/connection/direct.ts): the chart itself tells its `directCalls`
 * child when plain calls may go straight to the sink: `gate.open` on entry of a state that takes
 * direct calls, `gate.close` on its exit. The real chart runs here on fake I/O with a `directCalls`
 * actor that only records what it is told.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, SimulatedClock } from 'xstate';
import type { DirectCallsCommand } from '../../machines/connection/types.js';
import { DIRECT_CALLS } from '../../machines/connection/direct.js';
import { StreamableHTTPError } from '../../machines/errors.js';
import { chartOptions, fakeIo, flush, handshake, initializeResult, machineWith, recordingSink, ticket } from './fakes.js';

/** The connection chart on fake I/O whose `directCalls` child records every command the chart sends it. */
function gateRecorder(overrides: Parameters<typeof chartOptions>[0] = {}) {
  const io = fakeIo();
  const commands: DirectCallsCommand['type'][] = [];
  const machine = machineWith(io).provide({
    actors: {
      directCalls: fromCallback<DirectCallsCommand, Record<string, never>>(({ receive }) => {
        receive((command) => commands.push(command.type));
      }),
    },
  });
  const clock = new SimulatedClock();
  const actor = createActor(machine, {
    input: { options: chartOptions({ now: () => clock.now(), ...overrides }), sink: recordingSink() },
    clock,
  });
  actor.start();
  return { io, actor, commands };
}

const call = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'tools/list' });

describe('the direct path gate', () => {
  it('H3, F3: the gate opens on entry of the open session, closes when a recovery leaves it, stays closed while the re-established session is charted, reopens with its first answer, and closes on close()', async () => {
    const { io, actor, commands } = gateRecorder({ sessionRecovery: 'reinitialize' });
    actor.send({ type: 'start' });
    expect(commands, 'no gate while connecting').toEqual([]);
    await handshake(io, actor, { sessionId: 'abc', protocolVersion: '2025-11-25' });
    expect(actor.getSnapshot().hasTag(DIRECT_CALLS)).toBe(true);
    expect(commands).toEqual(['gate.open']);

    // A call through the chart meets a 404: the session is re-established (F3), the gate closes as the open state is left.
    actor.send({ type: 'send', message: call(1), ticket: ticket() });
    await flush();
    io.posts[2]!.reject(new StreamableHTTPError('HTTP 404', { status: 404, sessionMissing: true }));
    await flush();
    expect(actor.getSnapshot().hasTag('reconnecting')).toBe(true);
    expect(commands).toEqual(['gate.open', 'gate.close']);

    // The new session is open, but charted until a call is answered on it: the gate stays closed.
    io.posts[3]!.resolve({ kind: 'json', sessionId: 'new', response: initializeResult });
    await flush();
    io.posts[4]!.resolve({ kind: 'accepted', sessionId: undefined });
    await flush();
    expect(actor.getSnapshot().matches({ open: { session: { active: 'charted' } } })).toBe(true);
    expect(actor.getSnapshot().hasTag(DIRECT_CALLS)).toBe(false);
    expect(commands).toEqual(['gate.open', 'gate.close']);

    // The re-sent call is answered: progress, direct calls again.
    io.posts[5]!.resolve({ kind: 'json', sessionId: 'new', response: { jsonrpc: '2.0', id: 1, result: {} } });
    await flush();
    expect(actor.getSnapshot().hasTag(DIRECT_CALLS)).toBe(true);
    expect(commands).toEqual(['gate.open', 'gate.close', 'gate.open']);

    // close(): the gate closes as the open state is left, before the child is told its calls end.
    actor.send({ type: 'close' });
    await flush();
    expect(commands).toEqual(['gate.open', 'gate.close', 'gate.open', 'gate.close', 'calls.end']);
  });

  it('R9, H3: with streamIdleTimeout the open session is charted: the gate is never opened', async () => {
    const { io, actor, commands } = gateRecorder({ streamIdleTimeout: 1_000 });
    await handshake(io, actor, { sessionId: 'abc', protocolVersion: '2025-11-25' });
    expect(actor.getSnapshot().matches({ open: { session: { active: 'charted' } } })).toBe(true);
    expect(commands).toEqual([]);
    actor.send({ type: 'close' });
    await flush();
    expect(commands).toEqual(['calls.end']);
  });
});
