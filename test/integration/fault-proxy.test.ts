/**
 * The test fixtures themselves: the fault proxy counts events and applies its rules as the
 * resumption tests assume, and the ordered event store replays what the SDK's example store
 * gets wrong (same-millisecond order, the standalone stream).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { OrderedEventStore } from '../support/event-store.js';
import { textOf } from '../support/harness.js';
import { closeRigs, rejection, rig, sleep } from '../support/proxy-rig.js';

afterEach(closeRigs);

describe('fault proxy', { timeout: 10_000 }, () => {
  it('counts events at blank lines; comment-only blocks (keep-alives) are passed on but not counted', async () => {
    const { proxy, client } = await rig({ server: { keepAliveMs: 20 } });
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 3, cutMode: 'end' });
    expect(
      textOf(await client.callTool({ name: 'progress', arguments: { steps: 3, delayMs: 60 } }, undefined, { onprogress: () => undefined })),
    ).toBe('done 3');
    const post = proxy.requests.find((r) => r.tool === 'progress')!;
    expect(
      post.events.map((e) => (e.data === '' ? 'priming' : (JSON.parse(e.data) as { params?: { progress?: number } }).params?.progress)),
    ).toEqual(['priming', 1, 2]);
    // Keep-alives went through as well: more bytes than the three events.
    expect(post.bytesOut).toBeGreaterThan(post.events.reduce((sum, e) => sum + Buffer.byteLength(e.raw), 0));
  });

  it('answers a chosen status to the Nth request of a method (skip), POST and DELETE alike', async () => {
    const { proxy, client } = await rig();
    proxy.rule({ method: 'POST', tool: 'echo', skip: 1, respond: { status: 500, body: 'second one fails' } });
    proxy.rule({ method: 'DELETE', respond: { status: 500 } });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'one' } }))).toBe('one');
    expect((await rejection(client.callTool({ name: 'echo', arguments: { text: 'two' } }))).message).toContain('500');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'three' } }))).toBe('three');
    await client.close();
    expect(proxy.requests.filter((r) => r.tool === 'echo').map((r) => r.status)).toEqual([200, 500, 200]);
    expect(proxy.requests.filter((r) => r.method === 'DELETE').map((r) => r.status)).toEqual([500]);
  });

  it('holds headers until release(), strips ids, and logs arrival times in order', async () => {
    const { proxy, client } = await rig();
    proxy.rule({ method: 'POST', tool: 'echo', stallHeaders: 'release', stripIds: true });
    const call = client.callTool({ name: 'echo', arguments: { text: 'held' } });
    const post = await proxy.waitFor((r) => r.tool === 'echo');
    await sleep(50);
    expect(post.status).toBeUndefined();
    proxy.release();
    expect(textOf(await call)).toBe('held');
    expect(post.events.every((e) => e.id === undefined && e.serverId !== undefined && !e.raw.includes('id:'))).toBe(true);
    const times = proxy.requests.map((r) => r.at);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});

describe('ordered event store', () => {
  const note = (n: number): JSONRPCMessage => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 1, progress: n },
  });
  const progressOf = (message: JSONRPCMessage) => (message as { params?: { progress?: unknown } }).params?.progress;

  it('replays only the asked stream, in the order stored (within one millisecond too); the standalone stream as well; an unknown id is refused', async () => {
    const store = new OrderedEventStore();
    const postIds: string[] = [];
    const getIds: string[] = [];
    for (let n = 0; n < 50; n++) {
      postIds.push(await store.storeEvent('post-stream', note(n)));
      await store.storeEvent('other-stream', note(1_000 + n));
      getIds.push(await store.storeEvent('_GET_stream', note(2_000 + n)));
    }

    const replayed: unknown[] = [];
    const send = (_id: string, message: JSONRPCMessage) => {
      replayed.push(progressOf(message));
      return Promise.resolve();
    };
    expect(await store.replayEventsAfter(postIds[9]!, { send })).toBe('post-stream');
    expect(replayed).toEqual(Array.from({ length: 40 }, (_, i) => i + 10));

    replayed.length = 0;
    expect(await store.replayEventsAfter(getIds[47]!, { send })).toBe('_GET_stream');
    expect(replayed).toEqual([2_048, 2_049]);

    await expect(store.replayEventsAfter('no-such-event', { send })).rejects.toThrow('unknown Last-Event-ID');
  });
});
