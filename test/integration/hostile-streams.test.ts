/**
 * Event streams no well-behaved server sends, written into real responses of the SDK server by
 * the fault proxy: an oversized event (S5), malformed SSE, invalid UTF-8, a flood of comments,
 * absurd `retry:` values (X2), and multi-byte characters split across chunks (S6). None may crash,
 * hang or grow memory, and the transport keeps working afterwards.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { StreamableHTTPClientTransport } from '../../src/index.js';
import { textOf, trackTimers, until } from '../support/harness.js';
import { closeRigs, connectThrough, isResume, rejection, rig, startProxy, within } from '../support/proxy-rig.js';
import { recordWaits } from '../support/waits.js';

afterEach(closeRigs);

const MiB = 1024 * 1024;

interface ChildView {
  value: unknown;
  matches(state: string): boolean;
  context: { requestIds?: unknown; retryMs?: unknown };
}

/** The snapshot of the POST child carrying request `id`, if it is running. */
function postChildFor(transport: StreamableHTTPClientTransport, id: number): ChildView | undefined {
  for (const [name, child] of Object.entries(transport.actor.getSnapshot().children)) {
    if (!name.startsWith('post-')) continue;
    const snapshot = (child as { getSnapshot(): ChildView } | undefined)?.getSnapshot();
    if (Array.isArray(snapshot?.context.requestIds) && snapshot.context.requestIds.includes(id)) return snapshot;
  }
  return undefined;
}

describe('S5: one event larger than maxMessageBytes', { timeout: 20_000 }, () => {
  it('S5: an oversized event ends that call with a clear error; the client stops reading long before the event ends; memory does not balloon; the next call works', async () => {
    const maxMessageBytes = 256 * 1024;
    const { proxy, client, transport } = await rig({ transport: { maxMessageBytes } });
    // 64 MiB of one event's data, written as fast as the client reads it.
    proxy.rule({
      method: 'POST',
      tool: 'echo',
      flood: { head: 'event: message\ndata: "', chunk: 'x'.repeat(16 * 1024), bytes: 64 * MiB, tail: '"\n\n' },
    });
    const heapBefore = process.memoryUsage().heapUsed;

    const error = await within(rejection(client.callTool({ name: 'echo', arguments: { text: 'big' } })), 'the call to fail', 15_000);

    expect(error).toBeInstanceOf(McpError);
    expect(error.message).toContain('maxMessageBytes');
    const post = proxy.requests.find((r) => r.tool === 'echo')!;
    await within(post.ended, 'the client to let go of the response');
    expect(post.outcome).toBe('closed');
    // What was written before the client hung up: its limit plus what socket buffers hold.
    console.log(`S5: the proxy wrote ${(post.bytesOut / MiB).toFixed(2)} MiB of a 64 MiB event before the client let go`);
    expect(post.bytesOut).toBeLessThan(16 * MiB);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(48 * MiB);
    // Not resumed: the same event would come again.
    expect(proxy.requests.filter(isResume)).toEqual([]);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'small' } }))).toBe('small');
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });
});

describe('X2: hostile input never crashes or hangs the transport', { timeout: 20_000 }, () => {
  it('X2, S1, S4: malformed SSE before the real events (fields without colons, unknown fields, bad JSON, bare CRs, NULs) is survived; the call gets its result', async () => {
    const { proxy, client, errors } = await rig();
    const garbage = [
      'data\n\n',
      'id\nfoo: bar\nnonsense\n:\n\n',
      'data: {not json\n\n',
      'event: \ndata: [1,2\n\n',
      'event: message\ndata: {"jsonrpc":"2.0","id":"x"}\n\n',
      'retry: abc\nretry: -1\nretry:\nretry: 1.5\n\n',
      'id: with\u0000nul\ndata: \n\n',
      '\r\r\r\n\r\n',
      'data: first line\rdata: second line\r\r',
      `data: ${'{'.repeat(5_000)}\n\n`,
      ': a comment with "quotes" and \\ backslashes\n\n',
    ].join('');
    proxy.rule({ method: 'POST', tool: 'echo', prefix: garbage });

    expect(textOf(await within(client.callTool({ name: 'echo', arguments: { text: 'survived' } }), 'the call'))).toBe('survived');
    // S4: bad payloads were reported, cut to 1 KB each.
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) expect(error.message.length).toBeLessThan(1_300);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'next' } }))).toBe('next');
  });

  it('X2: invalid UTF-8 bytes in data, ids and comments are decoded with replacement characters; the call gets its result', async () => {
    const { proxy, client } = await rig();
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));
    proxy.rule({
      method: 'POST',
      tool: 'echo',
      prefix: bytes(
        ': ',
        [0xff, 0xfe, 0xfd],
        '\n\n',
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"',
        [0xc3, 0x28, 0xa0, 0xa1, 0xed, 0xa0, 0x80, 0xf0, 0x28, 0x8c, 0xbc],
        '"}}\n\n',
        'data: ',
        [0xc0, 0x80, 0xff],
        '\n\n',
        'id: ',
        [0xe2, 0x82],
        '\ndata: \n\n',
      ),
    });

    expect(textOf(await within(client.callTool({ name: 'echo', arguments: { text: 'ok' } }), 'the call'))).toBe('ok');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'next' } }))).toBe('next');
  });

  it('X2, S5: a long run of comments (4 MiB of them, maxMessageBytes 64 KiB) is not one oversized event: the call gets its result', async () => {
    const { proxy, client, errors } = await rig({ transport: { maxMessageBytes: 64 * 1024 } });
    proxy.rule({ method: 'POST', tool: 'echo', flood: { chunk: `: ${'k'.repeat(1_000)}\n\n`, bytes: 4 * MiB } });

    const outcome = await within(
      client.callTool({ name: 'echo', arguments: { text: 'after the comments' } }).then(
        (result) => ({ ok: true as const, text: textOf(result) }),
        (error: unknown) => ({ ok: false as const, error: String(error) }),
      ),
      'the call',
      15_000,
    );
    expect(outcome).toEqual({ ok: true, text: 'after the comments' });
    expect(errors).toEqual([]);
  });

  it('X2: an endless comment stream on the standalone GET (8 MiB of keep-alives, maxMessageBytes 64 KiB) neither ends the stream with an error nor stops calls', async () => {
    const proxy = await startProxy();
    proxy.rule({ method: 'GET', resume: false, flood: { chunk: ': keepalive\n\n'.repeat(1_000), bytes: 8 * MiB } });
    const { client, transport, errors } = await connectThrough(proxy, { maxMessageBytes: 64 * 1024 });
    const get = await proxy.waitFor((r) => r.method === 'GET');
    // Calls keep working while the flood runs.
    for (let i = 0; i < 5; i++) {
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `call ${String(i)}` } }))).toBe(`call ${String(i)}`);
    }
    await until(() => get.bytesOut >= 8 * MiB || get.outcome !== 'pending', 'the whole flood written, or the stream ended', 1_500);
    // The stream is still the first one, open, and nothing was reported.
    expect(get.outcome).toBe('pending');
    expect(get.bytesOut).toBeGreaterThanOrEqual(8 * MiB);
    expect(proxy.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
    expect(errors).toEqual([]);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it('X2: an absurd retry (10^20 ms) is clamped to one hour: no timer overflow, the stream waits in backoff, other calls work, close() leaves no timer', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const timers = trackTimers();
    try {
      const { proxy, client, transport } = await rig();
      proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2, retry: '100000000000000000000' });
      const call = rejection(client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined }));

      await until(() => postChildFor(transport, 1)?.matches('backoff') === true, 'the stream waiting in backoff');
      expect(postChildFor(transport, 1)?.context.retryMs).toBe(3_600_000);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'meanwhile' } }))).toBe('meanwhile');
      expect(proxy.requests.filter(isResume)).toEqual([]);

      await client.close();
      await call;
      await until(() => timers.pending().every((timer) => !timer.startsWith('3600000 ms')), 'the hour-long timer cleared');
      expect(timers.pending().filter((timer) => timer.startsWith('3600000'))).toEqual([]);
      expect(warnings.filter((warning) => warning.includes('TimeoutOverflow'))).toEqual([]);
    } finally {
      timers.stop();
      process.off('warning', onWarning);
    }
  });

  it.each(['-5', 'abc', '1e3', ' 400'])(
    'X2: retry: %s is not a retry value and is ignored: backoff decides, the call gets its result',
    async (value) => {
      const { proxy, client, transport } = await rig();
      proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2, retry: value });
      const seen: number[] = [];
      const call = client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p.progress) });
      await until(() => postChildFor(transport, 1)?.matches('backoff') === true || proxy.requests.some(isResume), 'a reconnect');
      const child = postChildFor(transport, 1);
      if (child?.matches('backoff') === true) expect(child.context.retryMs).toBeUndefined();
      expect(textOf(await call)).toBe('done 3');
      expect(seen).toEqual([1, 2, 3]);
    },
  );

  it('X2, S3: retry: 0 reconnects at once (after the 100 ms floor, not the 5 s backoff)', async () => {
    const { proxy, client, transport } = await rig({
      transport: { reconnectionOptions: { initialReconnectionDelay: 5_000, jitter: false } },
    });
    const waits = recordWaits(transport);
    proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2, retry: 0 });
    expect(
      textOf(
        await within(
          client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined }),
          'the call',
        ),
      ),
    ).toBe('done 3');
    const post = proxy.requests.find((r) => r.tool === 'progress')!;
    const resume = proxy.requests.find(isResume)!;
    // What the chart chose: the floor (R4: 100 ms), not the 5 s backoff.
    expect(waits.filter((wait) => wait.stream !== 'standalone').map((wait) => wait.delayMs)).toEqual([100]);
    expect(resume.at - post.cutAt!).toBeGreaterThanOrEqual(100 - 3);
  });
});

describe('S6: multi-byte characters split across chunks', { timeout: 10_000 }, () => {
  const text = 'héllo wörld – 日本語 – 🌍🚀 – ÆØÅ';

  it('S6: a multi-byte character split by the proxy between two writes of a POST stream arrives intact', async () => {
    const { proxy, client } = await rig();
    proxy.rule({ method: 'POST', tool: 'echo', splitUtf8: true });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text } }))).toBe(text);
    const post = proxy.requests.find((r) => r.tool === 'echo')!;
    expect(post.events.at(-1)?.raw).toContain(text);
  });

  it('S6: … and on a resumed GET stream', async () => {
    const { proxy, client } = await rig();
    proxy.rule({ method: 'POST', tool: 'echo', cutAfter: 1 });
    proxy.rule({ method: 'GET', resume: true, splitUtf8: true });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text } }))).toBe(text);
    expect(proxy.requests.find(isResume)?.events.at(-1)?.raw).toContain(text);
  });
});
