/**
 * H11, P4, N7: the keep-alive pool of plain-http requests (src/http/pool.ts, kept by src/http/h1.ts),
 * through the Node client (`nodeSend`), against a `node:http` server on 127.0.0.1 that counts its connections: one
 * connection carries sequential requests; the server's `Keep-Alive: timeout=` bounds how long an
 * idle one is kept (1 s or less: not kept); an idle one past its time is not handed out, and the
 * sweep closes it; one the server closed or reset while idle is dropped without an uncaught
 * error. The clock is driven (`Date`, `setInterval`), never waited on.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nodeSend } from '../../src/http/node.js';
import { idleSocketCount as idleCount } from '../../src/http/h1.js';
import type { HttpSend } from '../../src/http/client.js';
import { until } from '../support/harness.js';

let server: http.Server | undefined;
let sockets: Socket[] = [];

afterEach(async () => {
  vi.useRealTimers();
  const s = server;
  server = undefined;
  for (const socket of sockets) socket.destroy();
  sockets = [];
  if (s !== undefined) await new Promise((resolve) => s.close(resolve));
});

/**
 * A server answering each POST with its body's length; `keepAliveSeconds` is what its `Keep-Alive:
 * timeout=` says. It keeps idle connections a minute itself: only the client closes them here.
 */
async function counting(keepAliveSeconds: number) {
  server = http.createServer((req, res) => {
    let length = 0;
    req.on('data', (chunk: Buffer) => (length += chunk.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'keep-alive': `timeout=${keepAliveSeconds}` });
      res.end(JSON.stringify({ length }));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, url: new URL(`http://127.0.0.1:${address.port}/mcp`), connections: () => sockets.length };
}

const viaFetch: HttpSend = () => Promise.reject(new Error('fetch was not to be used'));
const send = nodeSend(
  {
    endpoint: new URL('http://127.0.0.1/'),
    fetch: undefined,
    init: {},
    redirectPolicy: 'same-origin',
    proxy: false,
    tls: undefined,
    cookies: false,
  },
  viaFetch,
);

async function post(url: URL, body = '{"jsonrpc":"2.0","id":1,"method":"ping"}'): Promise<string> {
  const response = await send(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } }, undefined);
  return response.text();
}

describe('the keep-alive pool (plain http)', () => {
  it('P4, H11: 20 sequential requests to one origin go over one connection, kept idle between them', async () => {
    const { url, port, connections } = await counting(5);
    for (let i = 0; i < 20; i++) expect(await post(url, 'x'.repeat(i + 1))).toBe(`{"length":${i + 1}}`);
    expect(connections()).toBe(1);
    await until(() => idleCount('127.0.0.1', port) === 1, 'idle connections: 1');
  });

  it("H11: a server whose Keep-Alive says timeout=1 gets each connection closed once its answer ended, as Node's agent does", async () => {
    const { url, port, connections } = await counting(1);
    for (let i = 0; i < 3; i++) await post(url);
    expect(connections()).toBe(3);
    expect(idleCount('127.0.0.1', port)).toBe(0);
  });

  it('H11: an idle connection past its time (the server said timeout=3: kept 2 s) is not handed out; the sweep closes it', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const { url, port, connections } = await counting(3);
    await post(url);
    await until(() => idleCount('127.0.0.1', port) === 1, 'idle connections: 1');
    vi.advanceTimersByTime(1_500);
    await post(url);
    expect(connections()).toBe(1);
    await until(() => idleCount('127.0.0.1', port) === 1, 'idle connections: 1');
    // 2.5 s later: past the 2 s the hint allowed; the next request gets a new connection.
    vi.setSystemTime(Date.now() + 2_500);
    await post(url);
    expect(connections()).toBe(2);
    await until(() => idleCount('127.0.0.1', port) === 1, 'idle connections: 1');
    // The sweep (every second while any is idle) closes the one left past its time.
    vi.setSystemTime(Date.now() + 2_500);
    vi.advanceTimersByTime(1_000);
    await until(() => idleCount('127.0.0.1', port) === 0, 'idle connections: 0');
  });

  it('H11, N7: a connection the server resets while idle is dropped (no uncaught error); the next request gets a new one', async () => {
    const { url, port, connections } = await counting(5);
    await post(url);
    await until(() => idleCount('127.0.0.1', port) === 1, 'idle connections: 1');
    sockets[0]?.resetAndDestroy();
    await until(() => idleCount('127.0.0.1', port) === 0, 'idle connections: 0');
    expect(await post(url)).toBe('{"length":40}');
    expect(connections()).toBe(2);
  });
});
