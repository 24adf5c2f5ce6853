/**
 * The standalone GET stream through the fault proxy: it reconnects whenever it ends or breaks,
 * with Last-Event-ID once it has seen an id, after `retry` or backoff (G4); past its retry budget
 * it keeps trying at the ceiling in a `degraded` state a UI can show, and the session never
 * fails because of it (G5, R5).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { StreamableHTTPClientTransport } from '../../src/index.js';
import type { FaultProxy, ProxiedRequest } from '../support/fault-proxy.js';
import { newClient, textOf, until } from '../support/harness.js';
import { closeRigs, connectThrough, isResume, startProxy, within } from '../support/proxy-rig.js';
import { delaysOf, recordWaits, waitRecorder } from '../support/waits.js';

afterEach(closeRigs);

/** Timers never fire early; this covers rounding between clocks. The delays themselves are asserted as the chart planned them (W3). */
const early = 3;

const isStandaloneGet = (request: ProxiedRequest) => request.method === 'GET';

/** A Client counting notifications/tools/list_changed. */
function countingClient(): { client: Client; count: () => number; next: (n: number) => Promise<void> } {
  const client = newClient();
  let count = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count++;
    for (const waiter of [...waiters]) {
      if (count >= waiter.n) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  return {
    client,
    count: () => count,
    next: (n) =>
      count >= n ? Promise.resolve() : within(new Promise<void>((resolve) => waiters.push({ n, resolve })), `notification ${String(n)}`),
  };
}

/** A counting Client connected through `proxy`, once its standalone GET stream (`first`) is open. */
async function listening(proxy: FaultProxy) {
  const counting = countingClient();
  const { transport, client } = await connectThrough(proxy, {}, {}, counting.client);
  const first = await proxy.waitFor(isStandaloneGet);
  await until(() => first.status === 200, 'the GET stream open');
  return { counting, transport, client, first };
}

/** Sends notifications/tools/list_changed from the server session: it can only travel on the GET stream. */
function notify(proxy: FaultProxy, transport: StreamableHTTPClientTransport): void {
  proxy.backend.sessions.get(transport.sessionId!)!.server.sendToolListChanged();
}

/** The top-level state of the standalone stream chart ('opening', 'listening', 'backoff', 'degraded', …). */
function standaloneState(transport: StreamableHTTPClientTransport): string | undefined {
  const child = transport.actor.getSnapshot().children.standalone as { getSnapshot(): { value: unknown } } | undefined;
  const value = child?.getSnapshot().value;
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : Object.keys(value as object)[0];
}

describe('G4: the standalone stream reconnects', { timeout: 10_000 }, () => {
  it.each(['destroy', 'end'] as const)(
    'G4: cut (%s) after an event, it reconnects after backoff with Last-Event-ID; later notifications arrive, none twice',
    async (cutMode) => {
      const proxy = await startProxy();
      proxy.rule({ method: 'GET', resume: false, cutAfter: 1, cutMode });
      const { counting, transport, client, first } = await listening(proxy);
      const waits = recordWaits(transport);

      notify(proxy, transport);
      await counting.next(1);
      const resume = await proxy.waitFor(isResume);
      expect(first.outcome).toBe('cut');
      expect(resume.lastEventId).toBe(first.events[0]!.id);
      expect(resume.headers['mcp-session-id']).toBe(transport.sessionId);
      const delay = resume.at - first.cutAt!;
      expect(delaysOf(waits, 'standalone')).toEqual([100]);
      expect(delay).toBeGreaterThanOrEqual(100 - early);

      await until(() => resume.status === 200, 'the resumed GET stream open');
      notify(proxy, transport);
      await counting.next(2);
      expect(counting.count()).toBe(2);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'ok' } }))).toBe('ok');
      expect(proxy.requests.filter(isStandaloneGet)).toHaveLength(2);
    },
  );

  it('G4: cut before any event, it reconnects after backoff without Last-Event-ID', async () => {
    const proxy = await startProxy();
    proxy.rule({ method: 'GET', cutAfter: 0 });
    const counting = countingClient();
    const { transport } = await connectThrough(proxy, {}, {}, counting.client);
    await until(() => proxy.requests.filter(isStandaloneGet).length >= 2, 'a second GET');
    const [first, second] = proxy.requests.filter(isStandaloneGet) as [ProxiedRequest, ProxiedRequest];

    expect(first.outcome).toBe('cut');
    expect(second.lastEventId).toBeUndefined();
    expect(second.at - first.cutAt!).toBeGreaterThanOrEqual(50 - early);
    await until(() => second.status === 200, 'the second GET stream open');
    notify(proxy, transport);
    await counting.next(1);
  });

  it('G4, S3: with retry: 300 on its events, it reconnects 300 ms after the cut, with Last-Event-ID', async () => {
    const proxy = await startProxy();
    proxy.rule({ method: 'GET', resume: false, cutAfter: 1, retry: 300 });
    const { counting, transport, first } = await listening(proxy);
    const waits = recordWaits(transport);
    notify(proxy, transport);
    await counting.next(1);
    const resume = await proxy.waitFor(isResume);

    const delay = resume.at - first.cutAt!;
    console.log(`G4 standalone reconnect with retry: 300 → ${delay.toFixed(0)} ms`);
    expect(resume.lastEventId).toBe(first.events[0]!.id);
    expect(delaysOf(waits, 'standalone')).toEqual([300]);
    expect(delay).toBeGreaterThanOrEqual(300 - early);
  });

  it('G4: a notification sent while the stream is down is replayed on reconnect, once', async () => {
    const proxy = await startProxy();
    proxy.rule({ method: 'GET', resume: false, cutAfter: 1 });
    // The reconnect is held until the test lets it go.
    proxy.rule({ method: 'GET', resume: true, stallHeaders: 'release' });
    const { counting, transport } = await listening(proxy);
    notify(proxy, transport);
    await counting.next(1);
    await proxy.waitFor(isResume);
    notify(proxy, transport);
    proxy.release();
    await counting.next(2);
    expect(counting.count()).toBe(2);
  });
});

describe('G5, R5: past the budget the standalone stream degrades, never the session', { timeout: 10_000 }, () => {
  it('G5: GETs refused (503) past maxRetries: it keeps trying at maxReconnectionDelay in state degraded; the session stays connected; once the server answers, it listens again', async () => {
    const proxy = await startProxy();
    const refuse = proxy.rule({ method: 'GET', times: Infinity, respond: { status: 503, body: 'busy' } });
    const counting = countingClient();
    const reconnectionOptions = {
      initialReconnectionDelay: 100,
      reconnectionDelayGrowFactor: 2,
      maxReconnectionDelay: 300,
      maxRetries: 2,
      jitter: false,
    };
    const recorder = waitRecorder();
    const { transport, client, errors } = await connectThrough(
      proxy,
      { reconnectionOptions, inspect: recorder.inspect },
      {},
      counting.client,
    );

    const states = new Set<string | undefined>();
    const watch = setInterval(() => states.add(standaloneState(transport)), 5);
    try {
      await until(
        () => proxy.requests.filter(isStandaloneGet).length >= 6 && standaloneState(transport) === 'degraded',
        'six GETs, and waiting at the ceiling',
        400,
      );
      expect(states).toContain('degraded');
    } finally {
      clearInterval(watch);
    }
    const gets = proxy.requests.filter(isStandaloneGet);
    const observed = gets.slice(1).map((get, i) => get.at - gets[i]!.at);
    console.log(`G5 standalone GET gaps (ms), expected 100/200 then 300 at the ceiling: ${observed.map((g) => g.toFixed(0)).join(', ')}`);
    expect(delaysOf(recorder.waits, 'standalone').slice(0, 5)).toEqual([100, 200, 300, 300, 300]);
    [100, 200, 300, 300, 300].forEach((delay, i) => {
      expect(observed[i]).toBeGreaterThanOrEqual(delay - early);
    });
    // The session is untouched: connected, calls work, nothing failed.
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(transport.actor.getSnapshot().hasTag('failed')).toBe(false);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    // At most one warning that the stream is degraded; not one per round at the ceiling, and never a failure.
    expect(errors.length).toBeLessThanOrEqual(1);
    for (const error of errors) expect(error.message).toMatch(/standalone/i);

    proxy.drop(refuse);
    const before = proxy.requests.length;
    const open = await proxy.waitFor((r) => r.seq > before && isStandaloneGet(r), 2_000);
    await until(() => open.status === 200 && standaloneState(transport) !== 'opening', 'the GET stream open');
    expect(standaloneState(transport)).toBe('listening');
    notify(proxy, transport);
    await counting.next(1);
  });

  it('G5, R5: streams that open and end without an event spend the budget the same way: degraded after maxRetries + 1 GETs', async () => {
    const proxy = await startProxy();
    proxy.rule({ method: 'GET', times: Infinity, cutAfter: 0, cutMode: 'end' });
    const reconnectionOptions = {
      initialReconnectionDelay: 20,
      reconnectionDelayGrowFactor: 1,
      maxReconnectionDelay: 300,
      maxRetries: 3,
      jitter: false,
    };
    const { transport } = await connectThrough(proxy, { reconnectionOptions });

    await until(() => standaloneState(transport) === 'degraded', 'the degraded state');
    expect(proxy.requests.filter(isStandaloneGet)).toHaveLength(reconnectionOptions.maxRetries + 1);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });
});
