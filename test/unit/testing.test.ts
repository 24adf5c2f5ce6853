/**
 * W4: the testing entry puts a real transport into each state of the chart without a network,
 * and the example page's badge is tested in every one of them (the way an app tests its own UI).
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import { testRequest, transportIn, type TestState, type TestTransport } from '../../src/testing.js';
import { connectionStatus, degradedReason, nextRetry, OfflineError, SessionExpiredError, StreamableHTTPError } from '../../src/index.js';
import { Badge } from '../../examples/react-status/badge.js';

let current: TestTransport | undefined;
afterEach(async () => {
  await current?.transport.close();
  current = undefined;
});

async function inState(state: TestState, options?: Parameters<typeof transportIn>[1]): Promise<TestTransport> {
  current = await transportIn(state, options);
  return current;
}

/** The page's badge, rendered the way React renders it. */
function badge(test: TestTransport): string {
  return renderToStaticMarkup(createElement(Badge, { transport: test.transport }));
}

describe('W4: transportIn puts a real transport into each state, without a network', () => {
  const states = ['idle', 'connecting', 'connected', 'degraded', 'offline', 'reconnecting', 'authorizing', 'failed', 'closed'] as const;
  for (const state of states) {
    it(`W4: ${state}: the chart is there, and the page's badge says so`, async () => {
      const test = await inState(state);
      expect(connectionStatus(test.transport.actor.getSnapshot())).toBe(state);
      expect(badge(test)).toBe(`<span class="badge" role="status" aria-label="Connection" data-status="${state}">${state}</span>`);
    });
  }

  it('W4: connected is a real session: the in-memory server answers calls', async () => {
    const test = await inState('connected');
    const answers: unknown[] = [];
    test.transport.onmessage = (message) => answers.push(message);
    await test.transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await expect.poll(() => answers).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(test.transport.sessionId).toBe('in-memory-1');
  });

  it('W4, W2: offline refuses a send at once with OfflineError; online connects again', async () => {
    const test = await inState('offline');
    await expect(test.transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toBeInstanceOf(OfflineError);
    test.network.setOnline(true);
    expect(connectionStatus(test.transport.actor.getSnapshot())).toBe('connected');
  });

  it('W4: failed with a given HTTP status: the error says it', async () => {
    const test = await inState('failed', { failure: 503 });
    // F4: the sticky failure keeps the HTTP error as its cause.
    const error = test.transport.actor.getSnapshot().context.error?.cause;
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBe(503);
    await expect(test.transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(/503/);
  });

  it('W4: failed with a given network error: it is the cause', async () => {
    const cause = new TypeError('fetch failed: ECONNREFUSED');
    const test = await inState('failed', { failure: cause });
    expect(test.transport.actor.getSnapshot().context.error?.cause).toBeInstanceOf(StreamableHTTPError);
    expect((test.transport.actor.getSnapshot().context.error?.cause as Error).cause).toBe(cause);
  });

  it('W4: failed with an expired session: SessionExpiredError', async () => {
    const test = await inState('failed', { failure: 'session-expired' });
    expect(test.transport.actor.getSnapshot().context.error).toBeInstanceOf(SessionExpiredError);
  });

  it("W3: nextRetry finds the standalone stream's wait from the root snapshot: which attempt, and when", async () => {
    const test = await inState('connected', { transport: { reconnectionOptions: { initialReconnectionDelay: 5_000, jitter: false } } });
    expect(nextRetry(test.transport.actor.getSnapshot())).toBeUndefined();
    const before = Date.now();
    test.server.endStreams();
    await expect.poll(() => nextRetry(test.transport.actor.getSnapshot())).toBeDefined();
    const retry = nextRetry(test.transport.actor.getSnapshot(), before + 1_000)!;
    expect(retry).toMatchObject({ stream: 'standalone', attempt: 1, delayMs: 5_000 });
    expect(retry.dueAt).toBeGreaterThanOrEqual(before + 5_000);
    expect(retry.inMs).toBe(retry.dueAt - before - 1_000);
    // W2: offline, the wait pauses: nothing is due until the network is back.
    test.network.setOnline(false);
    expect(nextRetry(test.transport.actor.getSnapshot())).toBeUndefined();
    test.network.setOnline(true);
    await expect.poll(() => test.server.requests.filter((request) => request.method === 'GET').length).toBe(2);
  });

  it('W4: reconnecting is F3 recovery, held at its re-initialize', async () => {
    const test = await inState('reconnecting');
    expect(test.transport.actor.getSnapshot().matches({ reconnecting: 'reinitializing' })).toBe(true);
    expect(test.server.requests.filter((request) => request.rpc === 'initialize')).toHaveLength(2);
  });
});

describe('W6: degraded, from the chart', () => {
  for (const era of ['streamable', 'modern'] as const) {
    it(`W6: ${era}: calls failing with 503 make the status degraded with the reason; the next answered call makes it connected`, async () => {
      const test = await inState('connected', { era });
      const answers: unknown[] = [];
      test.transport.onmessage = (message) => answers.push(message);
      test.server.outage(503);
      await expect(test.transport.send(testRequest(era, 1, 'tools/list'))).rejects.toThrow(/HTTP 503/);
      await expect.poll(() => connectionStatus(test.transport.actor.getSnapshot())).toBe('degraded');
      expect(degradedReason(test.transport.actor.getSnapshot())).toMatch(/HTTP 503/);
      expect(badge(test)).toBe('<span class="badge" role="status" aria-label="Connection" data-status="degraded">degraded</span>');
      test.server.restore();
      await test.transport.send(testRequest(era, 2, 'tools/list'));
      await expect.poll(() => connectionStatus(test.transport.actor.getSnapshot())).toBe('connected');
      expect(degradedReason(test.transport.actor.getSnapshot())).toBeUndefined();
      // The answer that ended it reached the caller, once.
      expect(answers.filter((message) => (message as { id?: unknown }).id === 2)).toHaveLength(1);
    });
  }

  it('W6, W3: a network outage: the standalone stream waits to reconnect, the reason and the next retry are there; its return reconnects it and ends degraded', async () => {
    const test = await inState('connected', { transport: { reconnectionOptions: { initialReconnectionDelay: 50, jitter: false } } });
    test.server.outage(new TypeError('fetch failed: ECONNREFUSED'));
    await expect.poll(() => connectionStatus(test.transport.actor.getSnapshot())).toBe('degraded');
    await expect.poll(() => degradedReason(test.transport.actor.getSnapshot())).toMatch(/ECONNREFUSED|outage/);
    await expect.poll(() => nextRetry(test.transport.actor.getSnapshot())?.stream).toBe('standalone');
    test.server.restore();
    await expect.poll(() => connectionStatus(test.transport.actor.getSnapshot()), { timeout: 3_000 }).toBe('connected');
    expect(test.transport.actor.getSnapshot().children.standalone?.getSnapshot().matches('listening')).toBe(true);
  });

  it("W6: a 4xx refusal of a call is the call's own business: still connected", async () => {
    const test = await inState('connected', { era: 'modern' });
    test.server.outage(400);
    await expect(test.transport.send(testRequest('modern', 1, 'tools/list'))).rejects.toThrow(/HTTP 400/);
    expect(connectionStatus(test.transport.actor.getSnapshot())).toBe('connected');
  });

  it('W6: offline wins over degraded on the badge (the network, not the server, is gone)', async () => {
    const test = await inState('degraded');
    test.network.setOnline(false);
    expect(connectionStatus(test.transport.actor.getSnapshot())).toBe('offline');
  });
});
