/**
 * Session lifecycle end to end: a server restarted on the same port while an SDK Client is in
 * use (F3, F4), close() against a DELETE that is never answered (F1), a process that must exit by
 * itself after close() (F2), terminateSession() (F1), and the session-ID rules H5 and H6 against
 * a scripted server where the SDK's own server cannot misbehave. H7, F5 and F6 are proved in
 * responses.test.ts, client.test.ts and sdk-requirements.test.ts and are not repeated here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import {
  McpTransportError,
  ProtocolError,
  SessionExpiredError,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  TransportFailedError,
  type ConnectionEmitted,
  type FetchLike,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import { fingerprint } from '../../machines/connection/index.js';
import { afterDelays } from '../support/waits.js';
import { startServer, type LoggedRequest, type ServerOptions, type TestServer } from '../support/mcp-server.js';
import { json, result, rpcError, startScriptedServer, type RecordedRequest, type ScriptedServer } from '../support/scripted-server.js';
import {
  causeChain,
  childrenOf,
  header,
  newClient,
  only,
  realFetch,
  recordingFetch,
  rejection,
  restart,
  signal,
  standaloneListening,
  textOf,
  until,
  within,
} from '../support/harness.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const childScript = fileURLToPath(new URL('../support/lifecycle-child.ts', import.meta.url));

let servers: { close(): Promise<void> }[] = [];
let clients: Client[] = [];
let transports: StreamableHTTPClientTransport[] = [];
let children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  }
  for (const client of clients) await client.close();
  for (const transport of transports) await transport.close();
  for (const server of servers) await server.close();
  servers = [];
  clients = [];
  transports = [];
  children = [];
  vi.restoreAllMocks();
});

async function serve(options: ServerOptions = {}): Promise<TestServer> {
  const server = await startServer(options);
  servers.push(server);
  return server;
}

async function scripted(options: Parameters<typeof startScriptedServer>[0] = {}): Promise<ScriptedServer> {
  const server = await startScriptedServer(options);
  servers.push(server);
  return server;
}

/** `restart` (test/support/harness.ts) of a server of this file: the new one, on the same port, replaces it in `servers`. */
function restartServed(server: TestServer, options: ServerOptions, transport: StreamableHTTPClientTransport): Promise<TestServer> {
  return restart(server, transport, (port) => {
    servers = servers.filter((s) => s !== server);
    return serve({ ...options, port });
  });
}

/** A transport for `url` with its onerror reports collected, a Client connected over it, and a spy on send(). */
async function connectClient(url: URL, options: StreamableHTTPClientTransportOptions = {}) {
  const transport = new StreamableHTTPClientTransport(url, options);
  transports.push(transport);
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  const client = newClient();
  clients.push(client);
  const send = vi.spyOn(transport, 'send');
  await client.connect(transport);
  return { client, transport, errors, send };
}

/** 'resolved' or 'rejected' if `promise` settles before any I/O callback could run; 'pending' otherwise. */
function settlesAtOnce(promise: Promise<unknown>): Promise<'resolved' | 'rejected' | 'pending'> {
  return Promise.race([
    promise.then(
      () => 'resolved' as const,
      () => 'rejected' as const,
    ),
    new Promise<'pending'>((resolve) => {
      setImmediate(() => {
        resolve('pending');
      });
    }),
  ]);
}

/** The promise send() returned for the message whose JSON contains `fragment`. */
function sendFor(send: { mock: { calls: unknown[][]; results: { value: unknown }[] } }, fragment: string): Promise<unknown> {
  const index = send.mock.calls.findIndex(([message]) => JSON.stringify(message).includes(fragment));
  expect(index, `a send() of ${fragment}`).toBeGreaterThanOrEqual(0);
  return send.mock.results[index]?.value as Promise<unknown>;
}

/** The `text` argument of a tools/call body. */
function toolText(body: unknown): string | undefined {
  const text = (body as { params?: { arguments?: { text?: unknown } } } | undefined)?.params?.arguments?.text;
  return typeof text === 'string' ? text : undefined;
}

const isRpc = (rpc: string) => (request: LoggedRequest) => request.rpc === rpc;
const isGet = (request: LoggedRequest) => request.method === 'GET';
const sessionOf = (request: LoggedRequest) => header(request, 'mcp-session-id');

const modes = [
  { mode: 'SSE', sse: true },
  { mode: 'JSON', sse: false },
] as const;

describe.each(modes)('server restarted on the same port ($mode responses)', { timeout: 10_000 }, ({ sse }) => {
  it('F3, session-404-reinitialize: the next callTool succeeds with no action by the app; one new initialize and initialized, one session.changed, the standalone GET reopens with the new session ID', async () => {
    const first = await serve({ sse });
    const { client, transport, errors } = await connectClient(first.url);
    const changes: ConnectionEmitted[] = [];
    transport.actor.on('session.changed', (event) => changes.push(event));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('before');
    await until(() => standaloneListening(transport), 'the standalone GET to open');
    const oldSession = transport.sessionId!;
    expect(oldSession).toBeDefined();

    const second = await restartServed(first, { sse }, transport);
    expect(second.url.href).toBe(first.url.href);
    expect(second.sessions.size).toBe(0);

    // The app does nothing but call.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after restart' } }))).toBe('after restart');

    const newSession = transport.sessionId;
    expect(newSession).toBeDefined();
    expect(newSession).not.toBe(oldSession);
    expect([...second.sessions.keys()]).toEqual([newSession]);

    // The standalone GET reopened on the new server with the new session (and version).
    const get = await second.waitFor((request) => isGet(request) && sessionOf(request) === newSession);
    expect(header(get, 'mcp-protocol-version')).toBe(LATEST_PROTOCOL_VERSION);
    expect(second.requests.filter((request) => isGet(request) && sessionOf(request) !== newSession)).toEqual([]);

    // Exactly one new initialize (the cached one, without session or version: H3) and one initialized.
    const inits = second.requests.filter(isRpc('initialize'));
    expect(inits).toHaveLength(1);
    const init = only(inits, 'initialize');
    expect(sessionOf(init)).toBeUndefined();
    expect(header(init, 'mcp-protocol-version')).toBeUndefined();
    const initialized = second.requests.filter(isRpc('notifications/initialized'));
    expect(initialized).toHaveLength(1);
    const initializedNote = only(initialized, 'notifications/initialized');
    expect(sessionOf(initializedNote)).toBe(newSession);

    // The call met the 404 once with the old session, then went once more on the new one, after initialized.
    const calls = second.requests.filter((request) => toolText(request.body) === 'after restart');
    expect(calls.map(sessionOf)).toEqual([oldSession, newSession]);
    const order = (request: LoggedRequest) => second.requests.indexOf(request);
    const metThe404 = only(calls, 'call on the old session', (request) => sessionOf(request) === oldSession);
    const resent = only(calls, 'call on the new session', (request) => sessionOf(request) === newSession);
    expect(order(metThe404)).toBeLessThan(order(init));
    expect(order(init)).toBeLessThan(order(initializedNote));
    expect(order(initializedNote)).toBeLessThan(order(resent));

    // One session.changed, with fingerprints, never the IDs (X1).
    expect(changes).toEqual([{ type: 'session.changed', previous: fingerprint(oldSession), current: fingerprint(newSession) }]);
    expect(JSON.stringify(changes)).not.toContain(oldSession);
    expect(JSON.stringify(changes)).not.toContain(newSession);

    // The session keeps working, and nothing was reported as an error.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'later' } }))).toBe('later');
    expect(second.requests.filter(isRpc('initialize'))).toHaveLength(1);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(errors).toEqual([]);
  });

  it("F3, F4: with sessionRecovery 'fail' the same run gives a SessionExpiredError", async () => {
    const first = await serve({ sse });
    const recorder = recordingFetch();
    const { client, transport, errors, send } = await connectClient(first.url, { sessionRecovery: 'fail', fetch: recorder.fetch });
    await until(() => standaloneListening(transport), 'the standalone GET to open');
    const changes: ConnectionEmitted[] = [];
    transport.actor.on('session.changed', (event) => changes.push(event));

    const second = await restartServed(first, { sse }, transport);

    // The call rejects at once (not after the SDK's 60 s timeout), and says why.
    const error = await within(rejection(client.callTool({ name: 'echo', arguments: { text: 'after restart' } })), 'callTool to reject');
    // P10: the call rejects with the typed error send() rejected with, caused by the 404.
    expect(error).toBeInstanceOf(SessionExpiredError);
    expect((error as Error).message).toMatch(/session/i);
    const sent = await rejection(sendFor(send, '"after restart"'));
    expect(sent).toBe(error);
    expect(causeChain(sent).find((e) => e instanceof StreamableHTTPError)).toMatchObject({ status: 404, sessionMissing: true });
    expect(errors).toContain(sent);
    expect(transport.actor.getSnapshot().hasTag('failed')).toBe(true);

    // No re-initialize was tried, and no session was made.
    expect(second.requests.filter(isRpc('initialize'))).toEqual([]);
    expect(second.sessions.size).toBe(0);
    expect(changes).toEqual([]);

    // F4: a later send() rejects at once with the same SessionExpiredError, without network I/O.
    const calls = recorder.calls.length;
    const requests = second.requests.length;
    const later = transport.send({ jsonrpc: '2.0', id: 'later', method: 'ping' });
    expect(await settlesAtOnce(later)).toBe('rejected');
    const laterError = await rejection(later);
    expect(laterError).toBeInstanceOf(SessionExpiredError);
    expect(laterError).toBe(sent);
    expect(recorder.calls.length).toBe(calls);
    expect(second.requests.length).toBe(requests);

    // F1: no DELETE for a session the server said is gone.
    await client.close();
    expect(second.requests.filter((request) => request.method === 'DELETE')).toEqual([]);
  });
});

describe('recovery queue', { timeout: 10_000 }, () => {
  it('F3: messages sent during recovery wait and go out in order', async () => {
    const first = await serve({ sse: true });
    // Every POST leaving the transport, in the order fetch was called; the re-initialize is held at a gate.
    const outgoing: { rpc: string | undefined; text: string | undefined; session: string | null }[] = [];
    const reinitializing = signal();
    const gate = signal();
    let initializes = 0;
    const fetch: FetchLike = async (url, init) => {
      if (init?.method === 'POST' && typeof init.body === 'string') {
        const body = JSON.parse(init.body) as { method?: string };
        outgoing.push({ rpc: body.method, text: toolText(body), session: new Headers(init.headers).get('mcp-session-id') });
        if (body.method === 'initialize' && ++initializes === 2) {
          reinitializing.fire();
          await gate.promise;
        }
      }
      return realFetch(url, init);
    };
    const { client, transport, errors, send } = await connectClient(first.url, { fetch });
    const oldSession = transport.sessionId!;
    await until(() => standaloneListening(transport), 'the standalone GET to open');
    const second = await restartServed(first, { sse: true }, transport);

    const before = outgoing.length;
    const firstCall = client.callTool({ name: 'echo', arguments: { text: 'A' } });
    await within(reinitializing.promise, 'the re-initialize to start');
    expect(transport.actor.getSnapshot().hasTag('reconnecting')).toBe(true);

    const texts = ['B', 'C', 'D', 'E'];
    const later = texts.map((text) => client.callTool({ name: 'echo', arguments: { text } }));
    // They wait: none leaves while the new session is being made. The moment: all four are in the chart's queue,
    // which it empties only once the new session is made (and the re-initialize is held at the gate).
    const queued = () => transport.actor.getSnapshot().context.queue.map((entry) => toolText(entry.message));
    await until(() => texts.every((text) => queued().includes(text)), 'the later calls to be queued');
    expect(outgoing.slice(before).map((post) => post.text ?? post.rpc)).toEqual(['A', 'initialize']);
    expect(transport.actor.getSnapshot().hasTag('reconnecting')).toBe(true);

    gate.fire();
    const results = await within(Promise.all([firstCall, ...later]), 'every call to complete');
    expect(results.map(textOf)).toEqual(['A', ...texts]);

    // Out in order: initialize, initialized, the call that met the 404, then the queued ones as sent.
    const sentOrder = send.mock.calls.map(([message]) => toolText(message)).filter((text) => text !== undefined);
    expect(sentOrder).toEqual(['A', ...texts]);
    const newSession = transport.sessionId!;
    expect(outgoing.slice(before)).toEqual([
      { rpc: 'tools/call', text: 'A', session: oldSession },
      { rpc: 'initialize', text: undefined, session: null },
      { rpc: 'notifications/initialized', text: undefined, session: newSession },
      ...['A', ...texts].map((text) => ({ rpc: 'tools/call', text, session: newSession })),
    ]);

    // The server got each of them once, on the new session, after the new initialized.
    const initialized = second.requests.findIndex(isRpc('notifications/initialized'));
    expect(second.requests.filter(isRpc('initialize'))).toHaveLength(1);
    const onNewSession = second.requests.filter((request) => request.rpc === 'tools/call' && sessionOf(request) === newSession);
    expect(onNewSession.map((request) => toolText(request.body)).sort()).toEqual(['A', ...texts]);
    for (const request of onNewSession) expect(second.requests.indexOf(request)).toBeGreaterThan(initialized);
    expect(errors).toEqual([]);
  });

  it('F3: several concurrent calls right after the restart all succeed on one new session: one initialize, each call re-sent once', async () => {
    const first = await serve({ sse: true });
    const { client, transport, errors } = await connectClient(first.url);
    const oldSession = transport.sessionId!;
    const changes: ConnectionEmitted[] = [];
    transport.actor.on('session.changed', (event) => changes.push(event));
    await until(() => standaloneListening(transport), 'the standalone GET to open');
    const second = await restartServed(first, { sse: true }, transport);

    // All sent at once on the old session; each meets the 404.
    const texts = ['A', 'B', 'C', 'D', 'E'];
    const results = await within(
      Promise.all(texts.map((text) => client.callTool({ name: 'echo', arguments: { text } }))),
      'every call to complete',
    );
    expect(results.map(textOf)).toEqual(texts);

    const newSession = transport.sessionId!;
    expect(second.requests.filter(isRpc('initialize'))).toHaveLength(1);
    expect(second.requests.filter(isRpc('notifications/initialized'))).toHaveLength(1);
    expect(changes).toHaveLength(1);
    const initialized = second.requests.findIndex(isRpc('notifications/initialized'));
    for (const text of texts) {
      const sends = second.requests.filter((request) => toolText(request.body) === text);
      expect(sends.map(sessionOf), text).toEqual([oldSession, newSession]);
      const resent = only(sends, `${text} on the new session`, (request) => sessionOf(request) === newSession);
      expect(second.requests.indexOf(resent), text).toBeGreaterThan(initialized);
    }
    expect(errors).toEqual([]);
  });

  it('F3: a 404 for a request sent on the old session that arrives once the new session is up re-sends it on that session; no second initialize', async () => {
    const first = await serve({ sse: true });
    // The 404 to the call 'slow' is held back until the test lets it through.
    const release = signal();
    const held = signal();
    const fetch: FetchLike = async (url, init) => {
      const response = await realFetch(url, init);
      if (response.status === 404 && typeof init?.body === 'string' && toolText(JSON.parse(init.body)) === 'slow') {
        held.fire();
        await release.promise;
      }
      return response;
    };
    const { client, transport, errors } = await connectClient(first.url, { fetch });
    const oldSession = transport.sessionId!;
    const changes: ConnectionEmitted[] = [];
    transport.actor.on('session.changed', (event) => changes.push(event));
    await until(() => standaloneListening(transport), 'the standalone GET to open');
    const second = await restartServed(first, { sse: true }, transport);

    const slow = client.callTool({ name: 'echo', arguments: { text: 'slow' } });
    await within(held.promise, "the 404 to 'slow'");
    // Another call meets its own 404 and the session is re-established; it succeeds.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'fast' } }))).toBe('fast');
    const newSession = transport.sessionId!;
    expect(changes).toHaveLength(1);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);

    // Now the late 404 (for the old session) arrives: the call goes again on the current session.
    release.fire();
    expect(textOf(await within(slow, "the call 'slow' to complete"))).toBe('slow');
    // Not a second recovery: the late 404 is about a session already replaced.
    expect(second.requests.filter(isRpc('initialize'))).toHaveLength(1);
    expect(changes).toHaveLength(1);
    expect(second.requests.filter((request) => toolText(request.body) === 'slow').map(sessionOf)).toEqual([oldSession, newSession]);
    expect(transport.sessionId).toBe(newSession);
    expect([...second.sessions.keys()]).toEqual([newSession]);
    expect(errors).toEqual([]);
  });
});

describe('close()', { timeout: 15_000 }, () => {
  /** A Client connected over a transport to a scripted server whose DELETE is accepted and never answered. */
  async function hangingDelete(options: StreamableHTTPClientTransportOptions = {}) {
    const server = await scripted();
    server.on({ http: 'DELETE' }, { hang: true });
    const { transport } = await connectClient(server.url, options);
    let closes = 0;
    transport.onclose = () => {
      closes++;
    };
    return { server, transport, closes: () => closes };
  }

  /**
   * close() against that DELETE: the chart bounds it by `delay` (the `after` it scheduled once the
   * DELETE went out), and close() returns no sooner (the wall clock gives only this lower bound).
   */
  async function closeBoundedBy(server: ScriptedServer, transport: StreamableHTTPClientTransport, delay: number) {
    const started = performance.now();
    const closing = transport.close();
    await server.waitFor({ http: 'DELETE' });
    expect(afterDelays(transport)).toEqual([delay]);
    await closing;
    expect(performance.now() - started).toBeGreaterThanOrEqual(delay - 3);
  }

  it('F1, U13: close() against a server that never answers DELETE returns after the default deleteTimeout (1 s), which aborts the DELETE', async () => {
    const { server, transport, closes } = await hangingDelete();
    // U13: the default the chart waits with (was 5 s).
    expect(transport.actor.getSnapshot().context.options.deleteTimeout).toBe(1_000);
    await closeBoundedBy(server, transport, 1_000);

    const deletes = server.filter({ http: 'DELETE' });
    expect(deletes).toHaveLength(1);
    const deleted = only(deletes, 'DELETE');
    expect(deleted.headers['mcp-session-id']).toBe(server.sessionId);
    // The abandoned DELETE was aborted by the client, not left open.
    expect(await within(deleted.closed, 'the DELETE to be aborted', 1_000)).toEqual({ aborted: true });
    expect(closes()).toBe(1);
    expect(transport.actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(childrenOf(transport)).toEqual([]);
  });

  it('F1: close() with deleteTimeout: 200 against a DELETE never answered returns once those 200 ms have passed', async () => {
    const { server, transport, closes } = await hangingDelete({ deleteTimeout: 200 });
    await closeBoundedBy(server, transport, 200);
    expect(server.filter({ http: 'DELETE' })).toHaveLength(1);
    expect(await within(server.only({ http: 'DELETE' }).closed, 'the DELETE to be aborted', 1_000)).toEqual({ aborted: true });
    expect(closes()).toBe(1);
    expect(childrenOf(transport)).toEqual([]);
  });

  it('F1, G2: a first standalone GET still opening at close() and answered 404 once the DELETE has ended the session is no warning: onerror hears nothing', async () => {
    const server = await scripted({ standalone: true });
    // The GET the session opens is held; the DELETE (answered at once) overtakes it, as it does
    // when the GET's socket is slower than the pooled one the DELETE goes out on.
    server.on({ http: 'GET' }, { hang: true }, 1);
    const { transport, errors } = await connectClient(server.url);
    const get = await server.waitFor({ http: 'GET' });
    const closing = transport.close();
    await server.waitFor({ http: 'DELETE' });
    server.answer(get, { status: 404, body: '{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}' });
    await closing;
    await until(() => get.state === 'done', 'the GET answered');

    expect(transport.actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(childrenOf(transport)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('F2: a child process that connects, calls and closes exits by itself', async () => {
    const server = await serve({ sse: true });
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, server.url.href], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    let closedAt: number | undefined;
    const closedSeen = signal();
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (closedAt === undefined && /^closed$/m.test(stdout)) {
        closedAt = performance.now();
        closedSeen.fire();
      }
    });
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
      child.once('exit', (code, exitSignal) => {
        resolve({ code, signal: exitSignal, at: performance.now() });
      });
    });
    try {
      // Starting node with tsx takes a moment; the bound here is generous and not the behaviour.
      await within(Promise.race([closedSeen.promise, exited]), 'the child to report close()', 10_000);
      expect(closedAt, `stdout: ${stdout}\nstderr: ${stderr}`).toBeDefined();
      // The behaviour: after close() the child has nothing left that keeps it alive, so it exits
      // with code 0 without being killed (a handle left open would keep it running past the bound,
      // which is the test's patience, not a timing claim).
      const exit = await within(exited, `the child to exit by itself (stderr: ${stderr})`, 10_000);
      expect(exit, `stderr: ${stderr}`).toMatchObject({ code: 0, signal: null });
      expect(exit.at, `stderr: ${stderr}`).toBeGreaterThanOrEqual(closedAt!);
    } finally {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    }
    expect(stdout.split('\n').filter(Boolean)).toEqual([
      'connected',
      'called [{"type":"text","text":"from the child"}]',
      'standalone listening',
      'closed',
    ]);
    // The child's session was used and ended: its calls and the GET reached this server, then a DELETE.
    const sessionId = sessionOf(server.requests.find(isRpc('notifications/initialized'))!);
    expect(sessionId).toBeDefined();
    expect(server.requests.filter(isGet).map(sessionOf)).toEqual([sessionId]);
    expect(server.requests.filter((request) => request.method === 'DELETE').map(sessionOf)).toEqual([sessionId]);
    expect(server.closedSessions).toEqual([sessionId]);
  });
});

describe('terminateSession()', { timeout: 5_000 }, () => {
  it('F1: terminateSession() as in the SDK: DELETE with session and version, the server ends the session, sessionId is undefined afterwards', async () => {
    const server = await serve({ sse: true });
    const { transport, errors } = await connectClient(server.url);
    const get = await server.waitFor(isGet);
    const sessionId = transport.sessionId!;

    await transport.terminateSession();

    const deletes = server.requests.filter((request) => request.method === 'DELETE');
    expect(deletes).toHaveLength(1);
    const deleted = only(deletes, 'DELETE');
    expect(sessionOf(deleted)).toBe(sessionId);
    expect(header(deleted, 'mcp-protocol-version')).toBe(LATEST_PROTOCOL_VERSION);
    expect(server.closedSessions).toEqual([sessionId]);
    expect(transport.sessionId).toBeUndefined();
    // The session's standalone stream ended with it.
    await within(get.ended, 'the standalone GET to end', 2_000);
    expect(errors).toEqual([]);
  });

  it('F1: terminateSession() answered 405 (the server does not allow it) resolves; sessionId is undefined afterwards', async () => {
    const server = await serve({ sse: true });
    server.fault({ method: 'DELETE', status: 405 });
    const { transport, errors } = await connectClient(server.url);
    const sessionId = transport.sessionId!;

    await transport.terminateSession();

    expect(server.requests.filter((request) => request.method === 'DELETE').map(sessionOf)).toEqual([sessionId]);
    expect(transport.sessionId).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('F1: terminateSession() answered 500 rejects with a StreamableHTTPError carrying the status, as the SDK does; the session stays', async () => {
    const server = await serve({ sse: true });
    server.fault({ method: 'DELETE', status: 500, body: 'boom' });
    const { client, transport } = await connectClient(server.url);
    const sessionId = transport.sessionId!;

    const error = await rejection(transport.terminateSession());
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBe(500);
    expect((error as StreamableHTTPError).code).toBe(500);
    expect(transport.sessionId).toBe(sessionId);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
  });
});

describe('session IDs against a scripted server', { timeout: 5_000 }, () => {
  const requestsWithSession = (server: ScriptedServer) => server.requests.filter((r) => r.headers['mcp-session-id'] !== undefined);

  it('H5: a session ID that first appears on a later response (none on initialize) is never adopted: never sent, no DELETE on close', async () => {
    const server = await scripted({ sessionId: null });
    server.on({ rpc: 'tools/list' }, (r) => ({ ...json(result(r.id, { tools: [] })), sessionId: 'late-session-id' }));
    const { client, transport, errors } = await connectClient(server.url);
    await client.listTools();
    await client.ping();
    await client.listTools();
    expect(transport.sessionId).toBeUndefined();
    await client.close();

    expect(server.filter({ rpc: 'tools/list' })).toHaveLength(2);
    expect(requestsWithSession(server)).toEqual([]);
    expect(server.filter({ http: 'DELETE' })).toEqual([]);
    expect(errors).toEqual([]);
  });

  it.each([
    ['200 with a JSON-RPC error', (r: RecordedRequest) => json(rpcError(r.id, -32602, 'unsupported'))],
    ['400 with a JSON-RPC error', (r: RecordedRequest) => json(rpcError(r.id, -32602, 'unsupported'), { status: 400 })],
    ['403', () => ({ status: 403, body: 'forbidden' })],
  ])('H5: an initialize answered %s, with a session ID header, adopts no session: none sent later, no DELETE', async (_label, reply) => {
    const server = await scripted();
    server.on({ rpc: 'initialize' }, reply);
    const transport = new StreamableHTTPClientTransport(server.url);
    transports.push(transport);
    const client = newClient();
    clients.push(client);
    await rejection(client.connect(transport));
    expect(transport.sessionId).toBeUndefined();
    await transport.close();

    expect(server.filter({ rpc: 'initialize' })).toHaveLength(1);
    expect(requestsWithSession(server)).toEqual([]);
    expect(server.filter({ http: 'DELETE' })).toEqual([]);
  });

  it('H5, H6: a 1,024-byte session ID of every visible ASCII character is accepted and sent back byte for byte on POST, GET and DELETE', async () => {
    const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    const sessionId = visible.repeat(11).slice(0, 1024);
    expect(sessionId).toHaveLength(1024);
    const server = await scripted({ sessionId });
    const { client, transport, errors } = await connectClient(server.url);
    expect(transport.sessionId).toBe(sessionId);
    await client.ping();
    await server.waitFor({ http: 'GET' });
    await client.close();

    const later = server.requests.filter((r) => r.rpc !== 'initialize');
    expect(later.map((r) => `${r.method} ${r.rpc ?? ''}`).sort()).toEqual([
      'DELETE ',
      'GET ',
      'POST notifications/initialized',
      'POST ping',
    ]);
    for (const request of later) expect(request.headers['mcp-session-id'], request.method).toBe(sessionId);
    expect(errors).toEqual([]);
  });

  it('H6, H7: an invalid session ID on a later response is refused with a ProtocolError (without the ID), never sent, never crashes; the established ID stays', async () => {
    const server = await scripted();
    const bad = 'bad id\twith space';
    server.on({ rpc: 'tools/list' }, (r) => ({ ...json(result(r.id, { tools: [] })), sessionId: bad }), 1);
    const { client, transport, errors, send } = await connectClient(server.url);

    const outcome = await client.listTools().then(
      () => undefined,
      (error: unknown) => error,
    );
    // Whether that one call fails or not, the refusal is a clear ProtocolError, reported once, without the ID.
    const reported = [...errors, ...(outcome === undefined ? [] : [await rejection(sendFor(send, '"tools/list"'))])];
    const refusals = reported.filter((e) => e instanceof ProtocolError);
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(McpTransportError);
      expect(refusal.message).toMatch(/session ID/);
      expect(refusal.message).not.toContain(bad);
    }

    // The session lives on with the established ID; the bad one is never sent.
    expect(transport.sessionId).toBe(server.sessionId);
    await client.ping();
    expect(server.filter({ rpc: 'ping' }).map((r) => r.headers['mcp-session-id'])).toEqual([server.sessionId]);
    expect(server.requests.some((r) => r.headers['mcp-session-id'] === bad)).toBe(false);
    expect(server.scriptErrors).toEqual([]);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });
});

describe('F4. A fault inside the chart itself', () => {
  it('F4, F6: a fault inside the chart (an event it cannot handle) fails the transport once: onerror hears a TransportFailedError with the fault as cause, onclose once, and send() then rejects', async () => {
    const transport = new StreamableHTTPClientTransport('http://127.0.0.1:1/mcp');
    transports.push(transport);
    const heard: unknown[] = [];
    transport.onerror = (error) => heard.push(error);
    transport.onclose = () => heard.push('close');
    // A `send` without its message or ticket: no caller can make one; it makes an action throw.
    transport.actor.send({ type: 'send' } as never);
    expect(transport.actor.getSnapshot().status).toBe('error');
    expect(heard).toHaveLength(2);
    expect(heard[0]).toBeInstanceOf(TransportFailedError);
    expect((heard[0] as Error).message).toBe('internal error in the transport chart');
    expect((heard[0] as Error).cause).toBeInstanceOf(Error);
    expect(heard[1]).toBe('close');
    await expect(transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })).rejects.toBeInstanceOf(TransportFailedError);
  });
});
