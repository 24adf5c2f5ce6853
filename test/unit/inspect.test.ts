import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { createJsonlRecorder, type JsonlRecord } from '../../src/devtools/recorder.js';
import { redactingObserver } from '../../src/redaction.js';
import { fingerprint } from '../../machines/connection/index.js';
import { chartOptions, fakeIo, flush, handshake, machineWith, recordingSink } from './fakes.js';

const secretSession = 'session-SECRET-0123456789';

async function recordedRun(level: 'lifecycle' | 'messages') {
  const lines: string[] = [];
  const io = fakeIo();
  const actor = createActor(machineWith(io), {
    input: { options: chartOptions(), sink: recordingSink() },
    inspect: createJsonlRecorder((line) => lines.push(line), { level, now: () => 0 }),
  }).start();
  await handshake(io, actor, { sessionId: secretSession, protocolVersion: undefined });
  actor.send({ type: 'close' });
  io.deletes[0]!.resolve({ status: 200 });
  await flush();
  // The standalone GET, still opening at close, is let finish (F1): here the server refuses it.
  io.gets[0]!.resolve({ kind: 'unsupported', status: 405, warning: undefined });
  await flush();
  return lines;
}

describe('JSONL recorder', () => {
  it('U4: records the lifecycle as JSON lines that an offline viewer can replay', async () => {
    const lines = await recordedRun('lifecycle');
    const records = lines.map((line) => JSON.parse(line) as JsonlRecord);
    const root = records.find((r) => r.kind === 'actor')?.actor;
    const values = records.filter((r) => r.kind === 'snapshot' && r.actor === root).map((r) => JSON.stringify(r.value));
    expect(values).toContain('"connecting"');
    expect(values).toContain('"initializing"');
    expect(values).toContain(
      JSON.stringify({ open: { session: { active: 'direct' }, standalone: 'active', network: 'online', health: 'steady' } }),
    );
    expect(values.at(-1)).toBe('"closed"');
    expect(records.some((r) => r.kind === 'event' && r.event === 'post.done')).toBe(true);
  });

  it('X1: session IDs never appear in the recording, at either level; a fingerprint stands in', async () => {
    for (const level of ['lifecycle', 'messages'] as const) {
      const text = (await recordedRun(level)).join('\n');
      expect(text).not.toContain(secretSession);
      expect(text).toMatch(/"session":"#[0-9a-f]{8}"/);
    }
  });

  it('X1, X3: a recorder behind the redaction (as every observer of a transport is) names the session by the same fingerprint', async () => {
    const lines: string[] = [];
    const io = fakeIo();
    const recorder = createJsonlRecorder((line) => lines.push(line), { now: () => 0 });
    const actor = createActor(machineWith(io), {
      input: { options: chartOptions(), sink: recordingSink() },
      inspect: redactingObserver(recorder),
    }).start();
    await handshake(io, actor, { sessionId: secretSession, protocolVersion: undefined });
    const text = lines.join('\n');
    expect(text).not.toContain(secretSession);
    expect(text).toContain(`"session":"${fingerprint(secretSession)}"`);
    actor.stop();
  });

  it('X1: at the lifecycle level a message is only its method and id', async () => {
    const text = (await recordedRun('lifecycle')).join('\n');
    expect(text).toContain('"method":"initialize"');
    expect(text).not.toContain('clientInfo');
    const verbose = (await recordedRun('messages')).join('\n');
    expect(verbose).toContain('clientInfo');
  });
});
