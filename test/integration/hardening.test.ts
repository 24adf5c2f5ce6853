/**
 * Issue 10: every answer a broken or hostile server can give is bounded, and the ones real
 * servers give are recovered. Each case runs the SDK `Client` over this transport against a
 * scripted server on 127.0.0.1 (or the SDK's real server, built the old and the new way).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  findTransportError,
  InvalidOptionsError,
  MessageTooLargeError,
  SessionExpiredError,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  TransportFailedError,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import { json, result, sse, type RecordedRequest, type Reply, type ScriptedServer } from '../support/scripted-server.js';
import { buildServer, startServer } from '../support/mcp-server.js';
import { newClient, noCallsInFlight, rejection, restart, textOf, until } from '../support/harness.js';
import { within } from '../support/proxy-rig.js';
import { afterDelays, recordWaits } from '../support/waits.js';
import { cleanups, runCleanups, scripted } from '../support/cleanups.js';

afterEach(runCleanups);

/** G2: a scripted server whose standalone GET opens once with one event, is then answered `refusal`, then 405. */
async function refusedAfterOpen(refusal: Reply): Promise<ScriptedServer> {
  const server = await scripted();
  let gets = 0;
  server.on({ http: 'GET' }, () => {
    gets++;
    if (gets === 1) return sse([{ id: 's1', data: note('first') }]);
    if (gets === 2) return refusal;
    return { status: 405 };
  });
  return server;
}

/** A Client connected over a new transport; its onerror reports are collected. */
async function connect(url: URL | string, options: StreamableHTTPClientTransportOptions = {}) {
  const { transport, client, errors } = unconnected(url, options);
  await client.connect(transport);
  return { transport, client, errors };
}

function unconnected(url: URL | string, options: StreamableHTTPClientTransportOptions = {}) {
  const transport = new StreamableHTTPClientTransport(url, options);
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  const client: Client = newClient();
  cleanups.push(async () => {
    await client.close();
    await transport.close();
  });
  return { transport, client, errors };
}

function header(request: RecordedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) chain.push(e);
  return chain;
}

/** Gaps between successive times, in ms. */
function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] ?? t));
}

const note = (data: string) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data } });
const toolResult = (id: RecordedRequest['id'], text = 'ok') => json(result(id, { content: [{ type: 'text', text }] }));
/** What older SDK example servers (and server-everything) answer for an unknown session. */
const noValidSession = { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null };

describe('R4: no reconnect storm, whatever retry: said', { timeout: 15_000 }, () => {
  it('R4: after retry: 0 on the standalone stream, failed reopens (503) back off, and the ceiling wait is at least maxReconnectionDelay', async () => {
    const server = await scripted();
    const times: number[] = [];
    let gets = 0;
    server.on({ http: 'GET' }, () => {
      times.push(performance.now());
      return gets++ === 0 ? sse([{ id: 'a1', retry: 0, data: note('one') }]) : { status: 503, body: 'busy' };
    });
    const reconnectionOptions = {
      initialReconnectionDelay: 200,
      reconnectionDelayGrowFactor: 1,
      maxReconnectionDelay: 400,
      maxRetries: 2,
      jitter: false,
    };
    const { errors } = await connect(server.url, { reconnectionOptions });
    // The moment: the budget is spent (the degraded warning) and the first wait at the ceiling is over (the fifth GET).
    await until(() => errors.some((error) => /reconnects without progress/.test(error.message)), 'the degraded warning', 1_200);
    await server.waitFor((request) => request.method === 'GET' && server.filter({ http: 'GET' }).length >= 5);
    // Before the fix: a GET per millisecond or so (300–600 a second) for as long as the session lived.
    expect(times.length).toBeGreaterThanOrEqual(4);
    expect(times.length).toBeLessThanOrEqual(9);
    const [afterEnd, ...afterFailures] = gaps(times);
    // After the stream ended: its retry: 0, raised to the 100 ms floor.
    expect(afterEnd).toBeGreaterThanOrEqual(95);
    // After each failed reopen: the backoff (200 ms), then the ceiling (400 ms), never the retry value.
    expect(afterFailures.slice(0, 2).every((gap) => gap >= 190)).toBe(true);
    expect(afterFailures.slice(2).every((gap) => gap >= 390)).toBe(true);
    const degraded = errors.find((error) => /reconnects without progress/.test(error.message));
    expect(degraded?.message).toContain('retrying every 400 ms');
  });

  it('R4: a server whose every stream delivers an event and ends with retry: 0 is reopened at most about 10 times a second (the floor)', async () => {
    const server = await scripted();
    const times: number[] = [];
    server.on({ http: 'GET' }, () => {
      times.push(performance.now());
      return sse([{ id: `e${times.length}`, retry: 0, data: note(`n${times.length}`) }]);
    });
    await connect(server.url, { reconnectionOptions: { initialReconnectionDelay: 0, jitter: false } });
    // The moment: four streams opened (three waits between them); a storm shows as gaps under the floor.
    await server.waitFor((request) => request.method === 'GET' && server.filter({ http: 'GET' }).length >= 4);
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times.length).toBeLessThanOrEqual(11);
    expect(Math.min(...gaps(times))).toBeGreaterThanOrEqual(95);
  });

  it('R4: a POST stream told retry: 0 whose resumes fail (503) backs off between them; the budget ends the call', async () => {
    const server = await scripted();
    server.on({ rpc: 'tools/call' }, { ...sse([{ id: 'p1', retry: 0, data: '' }]), abort: true }, 1);
    const times: number[] = [];
    server.on({ http: 'GET' }, (request) => {
      if (header(request, 'last-event-id') === undefined) return { status: 405 };
      times.push(performance.now());
      return { status: 503, body: 'busy' };
    });
    const reconnectionOptions = {
      initialReconnectionDelay: 200,
      reconnectionDelayGrowFactor: 1,
      maxReconnectionDelay: 200,
      maxRetries: 2,
      jitter: false,
    };
    const { client } = await connect(server.url, { reconnectionOptions });
    const error = await within(rejection(client.callTool({ name: 'x', arguments: {} })), 'the call to fail');
    expect(String(error)).toMatch(/resum|503/);
    expect(times).toHaveLength(3);
    expect(gaps(times).every((gap) => gap >= 190)).toBe(true);
  });
});

describe('G2: a 404 to the optional GET', { timeout: 10_000 }, () => {
  it('G2: a 404 to the first GET of a session ("Cannot GET /mcp") means no standalone stream: one warning, no retry, the session kept', async () => {
    const server = await scripted();
    server.on({ http: 'GET' }, { status: 404, headers: { 'content-type': 'text/html' }, body: 'Cannot GET /mcp' });
    server.on({ rpc: 'tools/call' }, (r) => toolResult(r.id, 'still here'));
    const { client, transport, errors } = await connect(server.url);
    await until(() => errors.length > 0, 'the warning');
    // The moment: the standalone stream's chart reached its final state ('unsupported') and stopped; only it sends a GET.
    await until(() => !('standalone' in transport.actor.getSnapshot().children), 'the standalone stream to be given up');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/404/);
    expect(errors[0]?.message).toContain('Cannot GET /mcp');
    expect(server.filter({ http: 'GET' })).toHaveLength(1);
    expect(server.filter({ rpc: 'initialize' })).toHaveLength(1);
    expect(textOf(await client.callTool({ name: 'x', arguments: {} }))).toBe('still here');
    expect(transport.sessionId).toBe(server.sessionId);
    // The session is kept, and closed properly: one DELETE for it.
    await transport.close();
    expect(server.filter({ http: 'DELETE' })).toHaveLength(1);
  });

  it('G2, F3: a 404 to a GET after the stream was open in this session means the session is gone: it is re-established', async () => {
    const server = await refusedAfterOpen({ status: 404, body: 'Session not found' });
    server.on({ rpc: 'tools/call' }, (r) => toolResult(r.id, 'on the new session'));
    const { client } = await connect(server.url, { reconnectionOptions: { initialReconnectionDelay: 100, jitter: false } });
    await until(() => server.filter({ rpc: 'initialize' }).length === 2, 'a second initialize', 800);
    expect(textOf(await client.callTool({ name: 'x', arguments: {} }))).toBe('on the new session');
  });
});

describe('P11: servers that answer 400 for an unknown session', { timeout: 10_000 }, () => {
  it('P11: a POST answered 400 "No valid session ID provided" is session-missing: re-initialized and re-sent once, with one warning naming the non-compliance', async () => {
    const server = await scripted();
    server.on({ rpc: 'tools/call' }, (r) => toolResult(r.id, 'answered'));
    server.on({ rpc: 'tools/call' }, json(noValidSession, { status: 400 }), 1);
    const { client, errors } = await connect(server.url);
    expect(textOf(await client.callTool({ name: 'x', arguments: {} }))).toBe('answered');
    expect(server.filter({ rpc: 'initialize' })).toHaveLength(2);
    expect(server.filter({ rpc: 'tools/call' })).toHaveLength(2);
    // Again later: recovered again, but warned once only.
    server.on({ rpc: 'tools/call' }, json(noValidSession, { status: 400 }), 1);
    await client.ping();
    expect(textOf(await client.callTool({ name: 'x', arguments: {} }))).toBe('answered');
    expect(server.filter({ rpc: 'initialize' })).toHaveLength(3);
    const warnings = errors.filter((error) => /HTTP 400/.test(error.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/No valid session ID provided.*404/);
  });

  it("P11: with sessionRecovery 'fail' the 400 gives a SessionExpiredError caused by it", async () => {
    const server = await scripted();
    server.on({ rpc: 'tools/call' }, json(noValidSession, { status: 400 }), 1);
    const { client } = await connect(server.url, { sessionRecovery: 'fail' });
    const error = await rejection(client.callTool({ name: 'x', arguments: {} }));
    expect(error).toBeInstanceOf(SessionExpiredError);
    expect(causeChain(error).find((e) => e instanceof StreamableHTTPError)).toMatchObject({ status: 400, sessionMissing: true });
    expect(server.filter({ rpc: 'initialize' })).toHaveLength(1);
  });

  it('P11, P9: a 400 whose error does not speak of the session stays a plain 400 for that call; no re-initialize', async () => {
    const server = await scripted();
    server.on(
      { rpc: 'tools/call' },
      json({ jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params' }, id: null }, { status: 400 }),
      1,
    );
    const { client, transport } = await connect(server.url);
    const error = await rejection(client.callTool({ name: 'x', arguments: {} }));
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect(error).toMatchObject({ status: 400, sessionMissing: false });
    expect(server.filter({ rpc: 'initialize' })).toHaveLength(1);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it('P11, G2: a GET answered 400 "No valid session ID provided" after the stream was open re-establishes the session', async () => {
    const server = await refusedAfterOpen(json(noValidSession, { status: 400 }));
    await connect(server.url, { reconnectionOptions: { initialReconnectionDelay: 100, jitter: false } });
    await until(() => server.filter({ rpc: 'initialize' }).length === 2, 'a second initialize', 800);
  });
});

describe('P12: bounded bodies', { timeout: 15_000 }, () => {
  it('P12, P6: an endless 500 body fails the call at once with the status and a cut excerpt; the body is cancelled after 64 KiB', async () => {
    const server = await scripted();
    const chunk = 'x'.repeat(16 * 1024);
    server.on(
      { rpc: 'tools/call' },
      {
        status: 500,
        headers: { 'content-type': 'text/plain' },
        body: Array.from({ length: 100_000 }, () => ({ data: chunk, delayMs: 1 })),
      },
      1,
    );
    const { client, transport } = await connect(server.url);
    // The body would stream for 100 s if it were read to its end; the bound is the test's patience.
    const error = await within(rejection(client.callTool({ name: 'x', arguments: {} })), 'the call to fail', 10_000);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBe(500);
    expect((error as StreamableHTTPError).body.length).toBeLessThan(1_200);
    const post = await server.waitFor({ rpc: 'tools/call' });
    expect(await within(post.closed, 'the server to see the body cancelled')).toEqual({ aborted: true });
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });

  it('P12: a JSON answer larger than maxMessageBytes fails that call fast with MessageTooLargeError and is cancelled; the session lives on', async () => {
    const server = await scripted();
    const big = JSON.stringify(result(0, { content: [{ type: 'text', text: 'y'.repeat(4 * 1024 * 1024) }] }));
    const pieces = Array.from({ length: 64 }, (_, i) => ({
      data: big.slice((i * big.length) / 64, ((i + 1) * big.length) / 64),
      delayMs: 5,
    }));
    server.on({ rpc: 'tools/call' }, { status: 200, headers: { 'content-type': 'application/json' }, body: pieces }, 1);
    server.on({ rpc: 'tools/list' }, (r) => json(result(r.id, { tools: [] })));
    const { client } = await connect(server.url, { maxMessageBytes: 256 * 1024 });
    const error = await within(rejection(client.callTool({ name: 'x', arguments: {} })), 'the call to fail');
    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect((error as Error).message).toContain('maxMessageBytes (262144 bytes)');
    const post = await server.waitFor({ rpc: 'tools/call' });
    expect(await within(post.closed, 'the server to see the body cancelled')).toEqual({ aborted: true });
    expect(await client.listTools()).toEqual({ tools: [] });
  });

  it('P12: the limit counts bytes after decompression: a small gzip body inflating past maxMessageBytes is refused', async () => {
    const server = await scripted();
    server.on(
      { rpc: 'tools/call' },
      (r) => ({
        status: 200,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify(result(r.id, { content: [{ type: 'text', text: 'z'.repeat(8 * 1024 * 1024) }] }))),
      }),
      1,
    );
    server.on(
      { rpc: 'tools/call' },
      (r) => ({
        status: 200,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify(result(r.id, { content: [{ type: 'text', text: 'small' }] }))),
      }),
      1,
    );
    const { client } = await connect(server.url, { maxMessageBytes: 1024 * 1024 });
    // Under the limit, a gzip body is read as usual.
    expect(textOf(await client.callTool({ name: 'x', arguments: {} }))).toBe('small');
    expect(await rejection(client.callTool({ name: 'x', arguments: {} }))).toBeInstanceOf(MessageTooLargeError);
  });
});

describe('F7: nothing waits without a bound', { timeout: 10_000 }, () => {
  it('F7, L1: a legacy fallback whose GET never names an endpoint fails connect after legacyEndpointTimeout with a typed error', async () => {
    const server = await scripted({ sessionId: null });
    server.on({ rpc: 'initialize' }, { status: 404, body: 'Not Found' });
    server.on({ http: 'GET' }, { status: 200, headers: { 'content-type': 'text/event-stream' }, body: ': waiting\n\n', keepOpen: true });
    const { client, transport } = unconnected(server.url, { legacyEndpointTimeout: 300 });
    const started = performance.now();
    const error = await within(rejection(client.connect(transport)), 'connect to fail');
    expect(error).toBeInstanceOf(StreamableHTTPError);
    // The bound the transport chose is the one it names; the wall clock says only it was not sooner.
    expect((error as Error).message).toMatch(/no endpoint event within 300 ms/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300 - 3);
    expect((error as StreamableHTTPError).status).toBe(404);
  });

  it('F7: terminateSession() is bounded by deleteTimeout when the DELETE is never answered', async () => {
    const server = await scripted();
    server.on({ http: 'DELETE' }, { hang: true });
    const { transport } = await connect(server.url, { deleteTimeout: 300 });
    const started = performance.now();
    const terminating = rejection(transport.terminateSession());
    await server.waitFor({ http: 'DELETE' });
    // What the chart chose: the DELETE is bounded by deleteTimeout.
    expect(afterDelays(transport)).toEqual([300]);
    const error = await within(terminating, 'terminateSession() to settle');
    expect(performance.now() - started).toBeGreaterThanOrEqual(300 - 3);
    expect(causeChain(error).some((e) => e instanceof Error && /within deleteTimeout \(300 ms\)/.test(e.message))).toBe(true);
  });
});

describe('R11: event ids that cannot be sent back', { timeout: 10_000 }, () => {
  it('R11: a POST stream whose last event id is not visible ASCII is not resumable: a drop fails the call at once, no GET is tried', async () => {
    const server = await scripted();
    server.on({ rpc: 'tools/call' }, { ...sse([{ id: 'évènement-1', data: note('partial') }]), abort: true }, 1);
    const { client, transport } = await connect(server.url, { reconnectionOptions: { initialReconnectionDelay: 100, jitter: false } });
    const waits = recordWaits(transport);
    const error = await within(rejection(client.callTool({ name: 'x', arguments: {} })), 'the call to fail');
    // At once: the chart planned no reconnect wait for the stream.
    expect(waits.filter((wait) => wait.stream !== 'standalone')).toEqual([]);
    expect((error as Error).message).toMatch(/cannot be resumed.*Last-Event-ID/);
    // The moment: no call is in flight, so no POST child is left that could resume one.
    await noCallsInFlight(transport, 'the failed call');
    expect(server.filter((r) => r.method === 'GET' && header(r, 'last-event-id') !== undefined)).toEqual([]);
  });
});

describe('H7: id hygiene without collateral damage', { timeout: 10_000 }, () => {
  it('H7: an invalid session ID on a later response is ignored with one warning; the calls are answered and the session ID kept', async () => {
    const server = await scripted();
    server.on({ rpc: 'tools/call' }, (r) => ({ ...toolResult(r.id, 'answered'), sessionId: 'has space' }));
    const { client, transport, errors } = await connect(server.url);
    expect(textOf(await client.callTool({ name: 'x', arguments: {} }))).toBe('answered');
    expect(textOf(await client.callTool({ name: 'x', arguments: {} }))).toBe('answered');
    expect(transport.sessionId).toBe(server.sessionId);
    const warnings = errors.filter((error) => /invalid session ID/.test(error.message));
    expect(warnings).toHaveLength(1);
    // X1: the warning does not repeat the ID.
    expect(warnings[0]?.message).not.toContain('has space');
    const last = server.filter({ rpc: 'tools/call' }).at(-1);
    expect(last && header(last, 'mcp-session-id')).toBe(server.sessionId);
  });
});

/** A raw TCP server that answers every request with `respond` (a broken HTTP server). */
async function rawServer(respond: (socket: Socket) => void): Promise<URL> {
  const server = createNetServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => {
      respond(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  );
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
}

describe('F6, P10: errors that say what happened', { timeout: 10_000 }, () => {
  // H11: the root cause in the words of the client in use (vitest.config.ts sets HTTP_CLIENT).
  const node = process.env.HTTP_CLIENT === 'node';
  it.each([
    [node ? 'socket hang up' : 'other side closed', (socket: Socket) => socket.end()],
    [
      node ? 'Header overflow' : 'Headers Overflow',
      (socket: Socket) => socket.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`),
    ],
  ])(
    'F4, F6: connect to a server that answers with "%s" rejects with the TransportFailedError onerror hears, naming it, the StreamableHTTPError and the cause chain kept',
    async (root, respond) => {
      const url = await rawServer(respond);
      const { client, transport } = unconnected(url);
      const heard: Error[] = [];
      transport.onerror = (e) => heard.push(e);
      const error = await within(rejection(client.connect(transport)), 'connect to fail');
      expect(error).toBeInstanceOf(TransportFailedError);
      expect(heard).toContain(error);
      expect(findTransportError(error, StreamableHTTPError)?.status).toBeUndefined();
      expect((error as Error).message).toContain(root);
      expect((error as Error).message).not.toMatch(/^fetch failed/);
      expect(causeChain(error).some((e) => e instanceof Error && e.message.includes(root))).toBe(true);
    },
  );

  it('U9: a URL of another scheme than http or https is refused by the constructor with InvalidOptionsError, not at the first send()', () => {
    const refused = (url: string) => {
      try {
        new StreamableHTTPClientTransport(url);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const ftp = refused('ftp://user:secret@127.0.0.1:1/mcp');
    expect(ftp).toBeInstanceOf(InvalidOptionsError);
    expect((ftp as InvalidOptionsError).field).toBe('url');
    expect((ftp as Error).message).toBe('invalid endpoint: url: expected an absolute http: or https: URL, got a ftp: URL');
    expect((ftp as Error).message).not.toContain('secret');
    expect(refused('not a url')).toBeInstanceOf(InvalidOptionsError);
    expect(refused('https://127.0.0.1:1/mcp')).toBeUndefined();
  });

  it('U1: start() on a started transport says that client.connect() calls start() itself', async () => {
    const server = await scripted();
    const { transport } = unconnected(server.url);
    await transport.start();
    const error = await rejection(transport.start());
    expect((error as Error).message).toMatch(/client\.connect\(transport\) calls start\(\) itself/);
  });
});

/**
 * The SDK's real server built the way its older examples did: one StreamableHTTPServerTransport
 * per session in a map, and 400 "No valid session ID provided" for an unknown session, on POST,
 * GET and DELETE alike (as server-everything does). No Express: node:http.
 */
async function startOldStyleServer(port = 0): Promise<{ url: URL; port: number; initializes: () => number; close: () => Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let initializes = 0;
  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    const known = sessionId === undefined ? undefined : transports.get(sessionId);
    if (known) {
      await known.handleRequest(req, res, body);
      return;
    }
    const isInitialize = typeof body === 'object' && body !== null && 'method' in body && body.method === 'initialize';
    if (sessionId === undefined && isInitialize) {
      initializes++;
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
      };
      await buildServer().connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify(noValidSession));
  };
  const server: Server = createHttpServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: new URL(`http://127.0.0.1:${actual}/mcp`),
    port: actual,
    initializes: () => initializes,
    close: async () => {
      for (const transport of transports.values()) await transport.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}

describe('P11, F3: a real SDK server restarted on the same port', { timeout: 20_000 }, () => {
  it('P11, F3: built the old way (400 "No valid session ID provided" for unknown sessions), the client recovers after a restart', async () => {
    let server = await startOldStyleServer();
    cleanups.push(() => server.close());
    const { client, transport, errors } = await connect(server.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('before');
    const before = transport.sessionId;
    server = await restart(server, transport, startOldStyleServer);
    expect(textOf(await within(client.callTool({ name: 'echo', arguments: { text: 'after' } }), 'the call after the restart'))).toBe(
      'after',
    );
    expect(server.initializes()).toBe(1);
    expect(transport.sessionId).not.toBe(before);
    expect(errors.filter((error) => /HTTP 400/.test(error.message))).toHaveLength(1);
  });

  it('F3: built the new way (404 for unknown sessions), the client recovers after a restart the same way', async () => {
    let server = await startServer();
    cleanups.push(() => server.close());
    const { client, transport } = await connect(server.url);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('before');
    const before = transport.sessionId;
    server = await restart(server, transport, (port) => startServer({ port }));
    expect(textOf(await within(client.callTool({ name: 'echo', arguments: { text: 'after' } }), 'the call after the restart'))).toBe(
      'after',
    );
    expect(server.requests.filter((r) => r.rpc === 'initialize')).toHaveLength(1);
    expect(transport.sessionId).not.toBe(before);
  });
});
