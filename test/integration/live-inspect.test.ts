/**
 * U8: live inspection from Node through `@statelyai/inspect`'s own server bridge. A WebSocket
 * receiver on 127.0.0.1 (what the inspector page gets) sees the chart's actors and transitions,
 * redacted (X3). No internet: the bridge, the inspector and the receiver all run here.
 */
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebSocketReceiver } from '@statelyai/inspect';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { inspectLive, InspectorPortError } from '../../src/devtools/index.js';
import { startServer } from '../support/mcp-server.js';
import { textOf, until } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

afterEach(runCleanups);

/** A port free on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

describe('U8: live inspection', () => {
  it('U8, X3: inspectLive() bridges the chart to a WebSocket receiver on 127.0.0.1: actors and transitions arrive, redacted', async () => {
    const port = await freePort();
    const live = await inspectLive({ port });
    cleanups.push(() => {
      live.stop();
      return Promise.resolve();
    });
    expect(live.url).toBe(`http://127.0.0.1:${port}/`);
    const received: { type?: string; name?: string; event?: { type?: string } }[] = [];
    const raw: string[] = [];
    const receiver = createWebSocketReceiver({ server: `ws://127.0.0.1:${port}` });
    receiver.subscribe((event: unknown) => {
      received.push(event as (typeof received)[number]);
      raw.push(JSON.stringify(event));
    });

    const server = await startServer();
    cleanups.push(() => server.close());
    const token = 'live-bearer-token-0123456789';
    const transport = new StreamableHTTPClientTransport(server.url, {
      inspect: live.inspect,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'u8', version: '1.0.0' });
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'live' } }))).toBe('live');
    await client.close();

    await until(
      () => received.some((e) => e.type === '@xstate.snapshot' && e.event?.type === 'close'),
      'the close transition reached the receiver',
      400,
    );
    expect(received.some((e) => e.type === '@xstate.actor' && e.name === 'connection')).toBe(true);
    expect(received.filter((e) => e.type === '@xstate.snapshot').length).toBeGreaterThan(5);
    const sessionIds = [...new Set(server.requests.map((r) => r.headers['mcp-session-id']).filter((id) => typeof id === 'string'))];
    expect(sessionIds).toHaveLength(1);
    for (const secret of [token, ...sessionIds]) expect(raw.filter((line) => line.includes(secret))).toEqual([]);
  });

  it('U8: the bridge is loaded only when asked for, with a clear error when the optional peer is missing', async () => {
    // The import is lazy: the devtools door itself loads without touching @statelyai/inspect.
    const source = (await import('node:fs')).readFileSync(new URL('../../src/devtools/live.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^import .*@statelyai\/inspect/m);
    expect(source).toMatch(/new MissingPeerError\('@statelyai\/inspect'/);
  });
});

/** A server holding a port on 127.0.0.1, as another program does. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  );
  return { port: (server.address() as { port: number }).port, server };
}

describe('U10: live inspection that cannot crash its host', () => {
  it('U10: on a port in use inspectLive rejects with InspectorPortError naming the port and the fix, and the process lives on', async () => {
    const { port } = await holdPort();
    const crashes: unknown[] = [];
    const onCrash = (error: unknown) => crashes.push(error);
    process.on('uncaughtException', onCrash);
    cleanups.push(() => {
      process.off('uncaughtException', onCrash);
      return Promise.resolve();
    });
    const rejected = await inspectLive({ port }).then(
      (live) => {
        live.stop();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(rejected).toBeInstanceOf(InspectorPortError);
    const error = rejected as InspectorPortError;
    expect(error.port).toBe(port);
    expect(error.code).toBe('EADDRINUSE');
    expect(error.message).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(error.message).toContain('port 0 to pick a free one');
    // An unhandled 'error' event would surface here within a few turns of the loop.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(crashes).toEqual([]);
  });

  it('U10: port 0 picks a free port, the bridge listens on 127.0.0.1 only, and the page links the local chart view', async () => {
    const live = await inspectLive({ port: 0, chartViewUrl: 'http://127.0.0.1:4321/' });
    cleanups.push(() => {
      live.stop();
      return Promise.resolve();
    });
    expect(live.port).toBeGreaterThan(0);
    expect(live.url).toBe(`http://127.0.0.1:${live.port}/`);
    const page = await fetch(live.url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('cannot be reached');
    expect(html).toContain('href="http://127.0.0.1:4321/"');
    // Another address of this host does not reach it (the bridge is not on every interface).
    const other = Object.values(networkInterfaces())
      .flat()
      .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal);
    if (other !== undefined) {
      await expect(fetch(`http://${other.address}:${live.port}/`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
    }
  });
});
