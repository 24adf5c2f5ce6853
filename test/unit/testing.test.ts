/**
 * W4: the testing entry puts a real transport into each state of the chart without a network,
 * and the example page's badge is tested in every one of them (the way an app tests its own UI).
 * W7: in the 2026-07-28 era too. W8: along the chart's generated paths.
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import {
  activeStateIds,
  chartPaths,
  chartStateIds,
  describePath,
  listenRequest,
  modernTestStates,
  PathDivergedError,
  testRequest,
  transportIn,
  walkPath,
  type TestState,
  type TestTransport,
} from '../../src/testing.js';
import type { JSONRPCMessage } from '../../machines/types.js';
import {
  connectionEra,
  connectionStatus,
  degradedReason,
  nextRetry,
  OfflineError,
  SessionExpiredError,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  TransportWaitingError,
  waitingReason,
} from '../../src/index.js';
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
  const states = [
    'idle',
    'connecting',
    'connected',
    'degraded',
    'offline',
    'reconnecting',
    'waiting',
    'authorizing',
    'failed',
    'closed',
  ] as const;
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

  it('E1, W1: a restored 2025 session says its era, though no initialize went out this time', async () => {
    const test = await inState('connected');
    const saved = test.transport.saveState();
    expect(saved?.sessionId).toBe('in-memory-1');
    const restored = new StreamableHTTPClientTransport(test.server.url, { fetch: test.server.fetch, restoreState: saved });
    try {
      await restored.start();
      expect(connectionStatus(restored.actor.getSnapshot())).toBe('connected');
      expect(connectionEra(restored.actor.getSnapshot())).toBe('streamable');
      expect(test.server.requests.filter((request) => request.rpc === 'initialize')).toHaveLength(1);
    } finally {
      await restored.close();
    }
  });

  for (const era of ['streamable', 'modern'] as const) {
    it(`F4, W3, W4: ${era}: waiting: a call fails at once, typed, naming the cause and the next attempt; the status and nextRetry say when; the server back, the next call is answered`, async () => {
      const test = await inState('waiting', { era });
      const snapshot = test.transport.actor.getSnapshot();
      expect(connectionStatus(snapshot)).toBe('waiting');
      expect(waitingReason(snapshot)).toMatch(era === 'modern' ? /ECONNREFUSED/ : /503/);
      const retry = nextRetry(snapshot);
      expect(retry).toMatchObject({ stream: 'connection', attempt: 1 });
      expect(retry!.dueAt).toBe(snapshot.context.recoveryWait!.dueAt);
      const answers: unknown[] = [];
      test.transport.onmessage = (message) => answers.push(message);
      const error = await test.transport.send(testRequest(era, 1, 'ping')).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TransportWaitingError);
      expect((error as TransportWaitingError).attempt).toBe(2);
      test.server.restore();
      await test.transport.send(testRequest(era, 2, 'ping'));
      await expect.poll(() => answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ jsonrpc: '2.0', id: 2, result: {} });
      expect(connectionStatus(test.transport.actor.getSnapshot())).toBe('connected');
    });
  }

  it('W4: reconnecting is F3 recovery, held at its re-initialize', async () => {
    const test = await inState('reconnecting');
    expect(test.transport.actor.getSnapshot().matches({ reconnecting: 'reinitializing' })).toBe(true);
    expect(test.server.requests.filter((request) => request.rpc === 'initialize')).toHaveLength(2);
  });
});

describe('W6: degraded, from the chart', () => {
  for (const era of ['streamable', 'modern'] as const) {
    for (const [failure, named] of [
      [503, /HTTP 503/],
      [502, /HTTP 502/],
      [new TypeError('fetch failed: ECONNREFUSED'), /ECONNREFUSED/],
    ] as const) {
      // F4: in 2026-07-28 a call with no response at all is `waiting`, not degraded (test/integration/heal.test.ts).
      if (era === 'modern' && failure instanceof Error) continue;
      it(`W4, W6: ${era}: transportIn('degraded', { failure: ${failure instanceof Error ? failure.message : failure} }) names that failure in the reason from the start`, async () => {
        const test = await inState('degraded', { era, failure });
        // Read at once: no call sent since, no wait for a later reason to replace an earlier one.
        const reason = degradedReason(test.transport.actor.getSnapshot());
        expect(reason).toMatch(named);
      });
    }
  }

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

  it('W6, E7: modern: a listen stream open again ends degraded with no call answered, as the standalone stream does in the 2025 era', async () => {
    const test = await inState('connected', { era: 'modern' });
    const heard: JSONRPCMessage[] = [];
    test.transport.onmessage = (message) => heard.push(message);
    test.server.outage(503);
    await expect(test.transport.send(listenRequest('before'))).rejects.toThrow(/HTTP 503/);
    await expect.poll(() => connectionStatus(test.transport.actor.getSnapshot())).toBe('degraded');
    test.server.restore();
    const sent = test.server.requests.length;
    await test.transport.send(listenRequest('again'));
    await expect.poll(() => connectionStatus(test.transport.actor.getSnapshot())).toBe('connected');
    expect(degradedReason(test.transport.actor.getSnapshot())).toBeUndefined();
    // Nothing but the listen went out meanwhile: its stream opening is the success that ended it.
    expect(test.server.requests.slice(sent).map((request) => request.rpc)).toEqual(['subscriptions/listen']);
    expect(heard.map((message) => ('method' in message ? message.method : undefined))).toContain(
      'notifications/subscriptions/acknowledged',
    );
  });

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

  it('W6, G4: a clean end of the standalone stream is routine: still connected while it waits; a reopen that fails makes it degraded', async () => {
    const test = await inState('connected', { transport: { reconnectionOptions: { initialReconnectionDelay: 200, jitter: false } } });
    const statuses: string[] = [];
    test.transport.actor.subscribe((snapshot) => statuses.push(connectionStatus(snapshot)));
    test.server.endStreams();
    await expect.poll(() => nextRetry(test.transport.actor.getSnapshot())?.stream).toBe('standalone');
    expect(connectionStatus(test.transport.actor.getSnapshot())).toBe('connected');
    await expect.poll(() => test.server.requests.filter((request) => request.method === 'GET').length).toBe(2);
    await expect.poll(() => test.transport.actor.getSnapshot().children.standalone?.getSnapshot().matches('listening')).toBe(true);
    expect(statuses.filter((status) => status !== 'connected')).toEqual([]);
    // The same wait after an error is trouble.
    test.server.outage(new TypeError('fetch failed: ECONNRESET'));
    await expect.poll(() => connectionStatus(test.transport.actor.getSnapshot())).toBe('degraded');
  });

  it("W6: a 4xx refusal of a call is the call's own business: still connected", async () => {
    const test = await inState('connected', { era: 'modern' });
    test.server.outage(400);
    await expect(test.transport.send(testRequest('modern', 1, 'tools/list'))).rejects.toThrow(/HTTP 400/);
    expect(connectionStatus(test.transport.actor.getSnapshot())).toBe('connected');
  });

  it('W6: offline wins over degraded on the badge (the network, not the server, is gone)', async () => {
    const test = await inState('degraded');
    expect(degradedReason(test.transport.actor.getSnapshot())).toMatch(/HTTP 503|outage/);
    test.network.setOnline(false);
    expect(connectionStatus(test.transport.actor.getSnapshot())).toBe('offline');
    // The reason line belongs to the degraded word only (the W8 path test found it under offline and closing).
    expect(degradedReason(test.transport.actor.getSnapshot())).toBeUndefined();
  });
});

describe('W7: the testing door in the 2026-07-28 era', () => {
  it("W7: transportIn reaches every state of the real chart's modern branch (its state ids enumerated from the machine)", async () => {
    const branch = ['modern', ...chartStateIds('modern')];
    // calls.open, network.online/offline, health.steady/degraded and their regions, today.
    expect(branch.length).toBeGreaterThanOrEqual(9);
    const reached = new Set<string>();
    for (const state of modernTestStates) {
      const test = await inState(state, { era: 'modern' });
      const snapshot = test.transport.actor.getSnapshot();
      expect(connectionStatus(snapshot)).toBe(state);
      // The era is decided by the probe's answer (E1): from connected on, the chart says it.
      if (state === 'connected' || state === 'degraded' || state === 'offline') expect(connectionEra(snapshot)).toBe('modern');
      for (const id of activeStateIds(snapshot.value)) reached.add(id);
      // No 2025 session in this era: no initialize and no session ID went over the wire.
      expect(test.server.requests.filter((request) => request.rpc === 'initialize')).toEqual([]);
      expect(test.transport.sessionId).toBeUndefined();
      await test.transport.close();
    }
    expect(branch.filter((id) => !reached.has(id))).toEqual([]);
  });

  it('W7: server/discover and the envelope are answered: the probe result, then a sessionless call with its modern result', async () => {
    const test = await inState('connected', { era: 'modern' });
    expect(test.server.requests.map((request) => request.rpc)).toEqual(['server/discover']);
    const answers: JSONRPCMessage[] = [];
    test.transport.onmessage = (message) => answers.push(message);
    await test.transport.send(testRequest('modern', 7, 'tools/list'));
    await expect
      .poll(() => answers)
      .toEqual([{ jsonrpc: '2.0', id: 7, result: { tools: [], resultType: 'complete', ttlMs: 0, cacheScope: 'private' } }]);
    // Without the envelope the same request is a 2025 one: no session, so refused.
    await expect(test.transport.send({ jsonrpc: '2.0', id: 8, method: 'tools/list' })).rejects.toThrow(/40[04]/);
  });

  it('W7: a subscriptions/listen stream is acknowledged, and toolsChanged() reaches it as list_changed naming its subscription', async () => {
    const test = await inState('connected', { era: 'modern' });
    const heard: JSONRPCMessage[] = [];
    test.transport.onmessage = (message) => heard.push(message);
    await test.transport.send(listenRequest('tools-listen'));
    const methods = () => heard.map((message) => ('method' in message ? message.method : undefined));
    await expect.poll(methods).toEqual(['notifications/subscriptions/acknowledged']);
    test.server.toolsChanged();
    await expect.poll(methods).toEqual(['notifications/subscriptions/acknowledged', 'notifications/tools/list_changed']);
    expect(heard[1]).toMatchObject({ params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'tools-listen' } } });
    // The listen stream is a child of the chart while it is open (E7).
    expect(Object.keys(test.transport.actor.getSnapshot().children).some((id) => id.startsWith('listen-'))).toBe(true);
  });
});

describe('W8: the chart paths of the testing door', () => {
  for (const era of ['streamable', 'modern'] as const) {
    it(`W8: ${era}: chartPaths come from the real chart, bounded, with readable steps and the chart's own state ids`, async () => {
      const all = chartStateIds();
      const paths = await chartPaths({ era });
      expect(paths.length).toBeGreaterThan(5);
      expect(paths.length).toBeLessThanOrEqual(60);
      for (const path of paths) {
        expect(path.era).toBe(era);
        expect(path.steps.length).toBeGreaterThan(0);
        expect(path.steps[0]!.name).toMatch(/^(connect|refuse|authorize)$/);
        for (const step of path.steps) {
          expect(step.says.length).toBeGreaterThan(10);
          expect(step.states.filter((id) => !all.includes(id))).toEqual([]);
        }
        expect(path.visited.filter((id) => !all.includes(id))).toEqual([]);
      }
      expect((await chartPaths({ era, max: 3 })).length).toBeLessThanOrEqual(3);
      expect(paths.map(describePath)).toContain('connect → outage → restore');
    });

    it(`W8: ${era}: walkPath drives a real transport along every path; the chart settles where each step says`, async () => {
      const paths = await chartPaths({ era });
      const visited = new Set<string>();
      let settled = 0;
      for (const path of paths) {
        const walked = await walkPath(path, {
          onStep: (step, snapshot) => {
            expect(connectionStatus(snapshot)).toBe(step.status);
            settled++;
          },
        });
        for (const id of walked.visited) visited.add(id);
        await walked.transport.close();
      }
      expect(settled).toBe(paths.reduce((sum, path) => sum + path.steps.length, 0));
      const wanted =
        era === 'modern'
          ? chartStateIds('modern')
          : ['open.health.degraded', 'open.network.offline', 'reconnecting', 'failed', 'authorizing', 'closed', 'open.session.closing'];
      expect(wanted.filter((id) => !visited.has(id))).toEqual([]);
    });
  }

  it('W8: a path the chart no longer follows is refused, naming the step (PathDivergedError)', async () => {
    const [path] = (await chartPaths({ era: 'streamable' })).filter(
      (candidate) => describePath(candidate) === 'connect → outage → restore',
    );
    const tampered = { ...path!, steps: path!.steps.map((step, i) => (i === 1 ? { ...step, status: 'connected' as const } : step)) };
    await expect(walkPath(tampered)).rejects.toThrow(PathDivergedError);
    await expect(walkPath(tampered)).rejects.toThrow(/after 'outage' .*\(degraded\); the path says .*\(connected\)/);
  });
});
