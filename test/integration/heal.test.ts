/**
 * F3, F4 revised: a transport that heals. Real SDK servers on 127.0.0.1 (the 1.x McpServer behind
 * the fault proxy; the v2 createMcpHandler), a TCP front that refuses connections while "down"
 * (test/support/outage-front.ts), the 1.x Client and the v2 Client. No fault that passes leaves the
 * transport dead: recovery is retried, the chart waits (status `waiting`) while the server cannot
 * be reached, and the same transport and Client carry on when it is back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connectionEra,
  connectionStatus,
  nextRetry,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  TransportWaitingError,
  waitingReason,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import { startProxy, fastReconnect } from '../support/proxy-rig.js';
import { startOutageFront, type OutageFront } from '../support/outage-front.js';
import { startV2Server } from '../support/v2-server.js';
import { causeChain, newClient, rejection, sleep, textOf, until } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';
import type { FaultProxy } from '../support/fault-proxy.js';

afterEach(runCleanups);

/** Small backoff: 100, 200, then 400 ms at most; two quick re-initializes, then `waiting`. */
const healing = { ...fastReconnect, maxRetries: 2, maxReconnectionDelay: 400 } as const;

async function front(target: URL): Promise<OutageFront> {
  const outage = await startOutageFront(target);
  cleanups.push(() => outage.close());
  return outage;
}

/** A 1.x Client over this transport at `url`; the standalone stream off, so that each test's calls meet the faults. */
async function connect1x(url: URL, options: StreamableHTTPClientTransportOptions = {}) {
  const transport = new StreamableHTTPClientTransport(url, { reconnectionOptions: healing, standaloneStream: false, ...options });
  const client = newClient();
  cleanups.push(() => client.close());
  await client.connect(transport);
  return { transport, client };
}

const echo = (client: Client | ClientV2, text: string) => client.callTool({ name: 'echo', arguments: { text } });
const initializes = (proxy: FaultProxy) => proxy.requests.filter((r) => r.rpc === 'initialize');
const waitingErrorIn = (error: unknown) => causeChain(error).find((e): e is TransportWaitingError => e instanceof TransportWaitingError);

describe('F3 revised: recovery is retried', { timeout: 15_000 }, () => {
  it('F3: a re-sent request that meets a second 404 recovers again and is answered', async () => {
    const proxy = await startProxy();
    const { transport, client } = await connect1x(proxy.url);
    await proxy.restartBackend();
    // The call meets the new server's 404; its re-send meets another (a second loss during recovery).
    proxy.rule({ rpc: 'tools/call', skip: 1, times: 1, respond: { status: 404, body: 'Session not found' } });
    const result = await echo(client, 'twice lost');
    expect(textOf(result)).toBe('twice lost');
    const calls = proxy.requests.filter((r) => r.rpc === 'tools/call');
    expect(calls.map((r) => r.status)).toEqual([404, 404, 200]);
    // Three different sessions: the one lost at restart, and a new one after each 404.
    expect(new Set(calls.map((r) => r.sessionId)).size).toBe(3);
    expect(initializes(proxy)).toHaveLength(3);
    expect(connectionStatus(transport.actor.getSnapshot())).toBe('connected');
  });

  it('F3: a re-initialize whose answer is cut, then one that is answered: recovered, and the call answered', async () => {
    const proxy = await startProxy();
    const { transport, client } = await connect1x(proxy.url);
    await proxy.restartBackend();
    proxy.rule({ rpc: 'initialize', times: 1, cutAfter: 0 });
    const result = await echo(client, 'after a cut');
    expect(textOf(result)).toBe('after a cut');
    const reinits = initializes(proxy).slice(1);
    expect(reinits.map((r) => r.outcome)).toEqual(['cut', 'complete']);
    // R4: the second waited the planned backoff (100 ms, no jitter) after the first was cut.
    expect(reinits[1]!.at - reinits[0]!.cutAt!).toBeGreaterThanOrEqual(90);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it('F3, F4, F5: a server that keeps refusing the re-initialize: that call fails typed; the next call, the server back, is answered on the same transport', async () => {
    const proxy = await startProxy();
    const { transport, client } = await connect1x(proxy.url);
    await proxy.restartBackend();
    const refusing = proxy.rule({ rpc: 'initialize', times: Infinity, respond: { status: 503, body: 'restarting' } });
    const error = await rejection(echo(client, 'refused'));
    const waiting = waitingErrorIn(error);
    expect(waiting).toBeInstanceOf(TransportWaitingError);
    expect(waiting?.cause).toBeInstanceOf(StreamableHTTPError);
    expect((waiting?.cause as StreamableHTTPError).status).toBe(503);
    expect(waiting?.message).toMatch(/waiting to reconnect \(attempt 3 in 400 ms/);
    // The budget: the first re-initialize and two retries, then the chart waits (not failed).
    expect(
      initializes(proxy)
        .slice(1)
        .map((r) => r.status),
    ).toEqual([503, 503, 503]);
    const snapshot = transport.actor.getSnapshot();
    expect(connectionStatus(snapshot)).toBe('waiting');
    expect(snapshot.hasTag('failed')).toBe(false);
    proxy.drop(refusing);
    const result = await echo(client, 'back');
    expect(textOf(result)).toBe('back');
    expect(connectionStatus(transport.actor.getSnapshot())).toBe('connected');
  });
});

describe('F4 revised: a server down for a while is waited for, not failed for good', { timeout: 60_000 }, () => {
  /** The outage: 20 s (issue 41), long against the backoff (400 ms at most: each wait passes about 50 times). */
  const outageMs = 20_000;

  it('F4, W3: 2025-11-25, 1.x Client: the server restarts and is down (connection refused) as the session is re-made; calls meanwhile fail typed, the status says waiting with the next attempt; back, the first call is answered, same Client', async () => {
    const proxy = await startProxy();
    const outage = await front(proxy.url);
    const { transport, client } = await connect1x(outage.url);
    expect(textOf(await echo(client, 'before'))).toBe('before');
    // The server restarts (its sessions lost) and goes down just as the transport makes a new session.
    await proxy.restartBackend();
    proxy.rule({
      rpc: 'initialize',
      times: 1,
      decide: () => {
        void outage.down();
        return { reset: true };
      },
    });
    const first = await rejection(echo(client, 'during'));
    expect(waitingErrorIn(first)).toBeInstanceOf(TransportWaitingError);
    expect(outage.isUp).toBe(false);

    const snapshot = transport.actor.getSnapshot();
    expect(connectionStatus(snapshot)).toBe('waiting');
    expect(waitingReason(snapshot)).toMatch(/ECONNREFUSED|fetch failed|before any response/);
    // W3: the chart says when its next attempt is due, as the backoff planned it (R4: 100, 200, 400 capped).
    const retry = nextRetry(snapshot);
    expect(retry).toMatchObject({ stream: 'connection', attempt: 3, delayMs: 400 });
    expect(retry!.dueAt).toBe(snapshot.context.recoveryWait!.dueAt);

    // Calls during the outage: each settles, failed typed with the cause and the next attempt.
    const during: unknown[] = [];
    const started = performance.now();
    for (let i = 0; i < 8 && performance.now() - started < outageMs; i++) {
      during.push(await rejection(echo(client, `during ${i}`)));
      await sleep(outageMs / 8);
    }
    expect(during.length).toBeGreaterThanOrEqual(4);
    for (const error of during) {
      const typed = waitingErrorIn(error);
      expect(typed).toBeInstanceOf(TransportWaitingError);
      expect(typed!.nextAttemptAt).toBeGreaterThan(0);
    }
    // The timer kept trying meanwhile, each wait at the cap.
    const waited = transport.actor.getSnapshot().context.recoveryWait!;
    expect(waited.attempt).toBeGreaterThan(3);
    expect(waited.delayMs).toBe(400);

    await outage.up();
    const back = await echo(client, 'after');
    expect(textOf(back)).toBe('after');
    expect(connectionStatus(transport.actor.getSnapshot())).toBe('connected');
    expect(transport.actor.getSnapshot().context.recoveryWait).toBeUndefined();
    // The same Client (and transport) throughout; the next call takes the ordinary path again.
    expect(textOf(await echo(client, 'later'))).toBe('later');
  });

  it('F4, W3, E1: 2026-07-28, v2 Client: the server down (connection refused), then back: calls meanwhile fail typed, the status says waiting with the next attempt; the first call after is answered, same Client', async () => {
    const server = await startV2Server();
    cleanups.push(() => server.close());
    const outage = await front(server.url);
    const transport = new StreamableHTTPClientTransport(outage.url, { reconnectionOptions: healing });
    const client = new ClientV2({ name: 'heal-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    cleanups.push(() => client.close());
    await client.connect(transport);
    expect(connectionEra(transport.actor.getSnapshot())).toBe('modern');
    expect(textOf(await echo(client, 'before'))).toBe('before');

    await outage.down();
    // The first call meets the refusal itself (its own typed network error); the chart then waits.
    const first = await rejection(echo(client, 'down'));
    expect(causeChain(first).some((e) => e instanceof StreamableHTTPError && e.status === undefined)).toBe(true);
    await until(() => connectionStatus(transport.actor.getSnapshot()) === 'waiting', 'the status to say waiting');
    const snapshot = transport.actor.getSnapshot();
    expect(waitingReason(snapshot)).toMatch(/ECONNREFUSED|fetch failed|before any response/);
    expect(nextRetry(snapshot)).toMatchObject({ stream: 'connection', attempt: 1, delayMs: 100 });

    const during: unknown[] = [];
    const started = performance.now();
    for (let i = 0; i < 8 && performance.now() - started < outageMs; i++) {
      during.push(await rejection(echo(client, `during ${i}`)));
      await sleep(outageMs / 8);
    }
    expect(during.length).toBeGreaterThanOrEqual(4);
    for (const error of during) expect(waitingErrorIn(error)).toBeInstanceOf(TransportWaitingError);
    // Each attempt is the era probe again; none got through while down.
    expect(transport.actor.getSnapshot().context.recoveryWait!.delayMs).toBe(400);

    await outage.up();
    const back = await echo(client, 'after');
    expect(textOf(back)).toBe('after');
    const after = transport.actor.getSnapshot();
    expect(connectionStatus(after)).toBe('connected');
    expect(after.matches('modern')).toBe(true);
    expect(textOf(await echo(client, 'later'))).toBe('later');
  });
});
