/**
 * U8: live inspection from Node through `@statelyai/inspect`'s own server bridge. A WebSocket
 * receiver on 127.0.0.1 (what the inspector page gets) sees the chart's actors and transitions,
 * redacted (X3). No internet: the bridge, the inspector and the receiver all run here.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebSocketReceiver } from '@statelyai/inspect';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { inspectLive } from '../../src/devtools/index.js';
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
    expect(live.url).toBe(`http://localhost:${port}`);
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
    expect(source).toMatch(/needs the optional peer dependency @statelyai\/inspect/);
  });
});
