/**
 * POST and stream responses the official SDK server never produces on its own, scripted byte for
 * byte on a real `node:http` server (test/support/scripted-server.ts) and driven through the
 * transport's public API (and, for P10, the SDK Client).
 */
import { getEventListeners } from 'node:events';
import { STATUS_CODES } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from 'xstate';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  McpTransportError,
  ProtocolError,
  SessionExpiredError,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  type JSONRPCMessage,
  type JSONRPCResponse,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import {
  PROTOCOL_VERSION,
  json,
  result,
  rpcError,
  sse,
  sseText,
  type RecordedRequest,
  type ScriptedServer,
  type ScriptedServerOptions,
} from '../support/scripted-server.js';
import { streamGrace } from '../../src/sse/reader.js';
import { noCallsInFlight, within } from '../support/harness.js';
import { cleanups, runCleanups, scripted } from '../support/cleanups.js';

type Settled = { ok: true } | { ok: false; error: unknown };

interface Outcome {
  id: number;
  sent: Settled;
  /** The response delivered for it: none when send() rejected (P10: the caller learned there). */
  response: JSONRPCResponse | undefined;
}

afterEach(runCleanups);

function settle(promise: Promise<unknown>): Promise<Settled> {
  return promise.then(
    (): Settled => ({ ok: true }),
    (error: unknown): Settled => ({ ok: false, error }),
  );
}

/** The error a settled send() rejected with; fails the test when it resolved. */
function rejection(sent: Settled): unknown {
  if (sent.ok) throw new Error('expected send() to reject, but it resolved');
  return sent.error;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCResponse {
  return 'result' in message || 'error' in message;
}

/** The `error` member of a JSON-RPC error response; fails the test for a result. */
function errorOf(response: JSONRPCResponse | undefined): { code: number; message: string; data?: unknown } {
  if (response === undefined) throw new Error('expected an error response, got none');
  if (!('error' in response)) throw new Error(`expected an error response, got ${JSON.stringify(response)}`);
  return response.error;
}

function postChildren(transport: StreamableHTTPClientTransport): string[] {
  return Object.keys(transport.actor.getSnapshot().children).filter((id) => id.startsWith('post-'));
}

/** The StreamableHTTPError in `error`'s cause chain (itself included), if any. */
function httpErrorIn(error: unknown): StreamableHTTPError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof StreamableHTTPError) return current;
    current = current.cause;
  }
  return undefined;
}

function header(request: RecordedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A transport on a scripted server, with everything it delivers recorded. */
class Harness {
  readonly transport: StreamableHTTPClientTransport;
  /** Messages delivered through onmessage (after initialize() returns: those since then). */
  messages: JSONRPCMessage[] = [];
  readonly errors: Error[] = [];
  private readonly listeners = new Set<() => void>();
  private nextId = 1;

  constructor(
    readonly server: ScriptedServer,
    options: StreamableHTTPClientTransportOptions = {},
  ) {
    this.transport = new StreamableHTTPClientTransport(server.url, options);
    this.transport.onmessage = (message) => {
      this.messages.push(message);
      this.changed();
    };
    this.transport.onerror = (error) => {
      this.errors.push(error);
      this.changed();
    };
    cleanups.push(() => this.transport.close());
  }

  /** Resolves with the first defined value of `probe`, re-checked on every delivery; bounded. */
  until<T>(probe: () => T | undefined, what: string, timeoutMs = 5_000): Promise<T> {
    const now = probe();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value === undefined) return;
        stop();
        resolve(value);
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const stop = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
    });
  }

  response(id: string | number): Promise<JSONRPCResponse> {
    return this.until(() => this.messages.find((m): m is JSONRPCResponse => isResponse(m) && m.id === id), `the response to ${String(id)}`);
  }

  responsesTo(id: string | number): JSONRPCResponse[] {
    return this.messages.filter((m): m is JSONRPCResponse => isResponse(m) && m.id === id);
  }

  /** start(), initialize, notifications/initialized; then forgets the messages so far. */
  async initialize(): Promise<void> {
    await this.transport.start();
    await this.transport.send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'responses-test', version: '1.0.0' } },
    });
    const response = await this.response(0);
    expect(response).toMatchObject({ result: { protocolVersion: PROTOCOL_VERSION } });
    await this.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(this.transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(this.errors).toEqual([]);
    this.messages = [];
  }

  /** One request: how send() settled, and the response (real or synthetic) delivered for it. */
  async request(method: string, params: Record<string, unknown> = {}): Promise<Outcome> {
    const id = this.nextId++;
    const sent = await settle(this.transport.send({ jsonrpc: '2.0', id, method, params }));
    if (!sent.ok) {
      // P10: a call that failed before its send() resolved is answered by send() alone. The moment a
      // (wrong) synthetic answer would have shown up by: the call is out of flight (the chart answers a
      // failed call as it ends it).
      await noCallsInFlight(this.transport, `the failed call ${String(id)}`);
      return { id, sent, response: this.responsesTo(id)[0] };
    }
    const response = await this.response(id);
    return { id, sent, response };
  }

  notify(method: string, params: Record<string, unknown> = {}): Promise<Settled> {
    return settle(this.transport.send({ jsonrpc: '2.0', method, params }));
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

async function connected(options: StreamableHTTPClientTransportOptions = {}, serverOptions: ScriptedServerOptions = {}) {
  const server = await scripted(serverOptions);
  const h = new Harness(server, options);
  await h.initialize();
  return { server, h };
}

/** The session still works: a further call gets its (default, empty) result. */
async function expectSessionAlive(h: Harness): Promise<void> {
  const next = await h.request('ping');
  expect(next.sent).toEqual({ ok: true });
  expect(next.response).toEqual({ jsonrpc: '2.0', id: next.id, result: {} });
  expect(h.transport.actor.getSnapshot().hasTag('connected')).toBe(true);
}

const fiveKB = 'z'.repeat(5 * 1024);

/** At most 1,024 of the server's characters are kept (plus, at most, a short ellipsis marker). */
function expectCutTo1KB(text: string): void {
  const kept = (text.match(/z/g) ?? []).length;
  expect(kept).toBeGreaterThan(0);
  expect(kept).toBeLessThanOrEqual(1024);
}

describe('P. POST responses', () => {
  it('P1: 202 and 204 to a notification (and 202 to a response) resolve send(); bodies are discarded', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'notifications/roots/list_changed' }, { status: 202, body: 'accepted, ignore me' }, 1);
    expect(await h.notify('notifications/roots/list_changed')).toEqual({ ok: true });
    server.on({ rpc: 'notifications/roots/list_changed' }, { status: 204 }, 1);
    expect(await h.notify('notifications/roots/list_changed')).toEqual({ ok: true });
    // The client's answer to a server request is a response: 202 accepts it too.
    server.on({ http: 'POST' }, { status: 202 }, 1);
    expect(await settle(h.transport.send({ jsonrpc: '2.0', id: 'server-1', result: {} }))).toEqual({ ok: true });
    expect(server.filter({ rpc: 'notifications/roots/list_changed' })).toHaveLength(2);
    expect(h.messages).toEqual([]);
    expect(h.errors).toEqual([]);
  });

  it('P1: 200 with a JSON body to a notification resolves send() (lenient); the body is not delivered', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'notifications/roots/list_changed' }, json({ jsonrpc: '2.0', method: 'notifications/message', params: {} }), 1);
    expect(await h.notify('notifications/roots/list_changed')).toEqual({ ok: true });
    expect(h.messages).toEqual([]);
    expect(h.errors).toEqual([]);
    await expectSessionAlive(h);
  });

  it('P1: 200 with a JSON body to a notification rejects send() with strict: true', async () => {
    const { server, h } = await connected({ strict: true });
    server.on({ rpc: 'notifications/roots/list_changed' }, json({ jsonrpc: '2.0', method: 'notifications/message', params: {} }), 1);
    const sent = await h.notify('notifications/roots/list_changed');
    expect(rejection(sent)).toBeInstanceOf(ProtocolError);
    expect(h.messages).toEqual([]);
  });

  it('P2: 200 application/json with one message delivers it as the response', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/list' }, (r) => json(result(r.id, { tools: [] })), 1);
    const outcome = await h.request('tools/list');
    expect(outcome.sent).toEqual({ ok: true });
    expect(h.messages).toEqual([{ jsonrpc: '2.0', id: outcome.id, result: { tools: [] } }]);
  });

  it('P2: a JSON body that is one message with the call\'s id but no valid JSON-RPC (jsonrpc "1.0") fails that call with a ProtocolError and delivers nothing', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/list' }, (r) => json({ jsonrpc: '1.0', id: r.id, result: { tools: [] } }), 1);
    const outcome = await h.request('tools/list');
    const error = rejection(outcome.sent);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(/invalid JSON-RPC message in response body/);
    expect(outcome.response).toBeUndefined();
    expect(h.messages).toEqual([]);
    await expectSessionAlive(h);
  });

  it('P2: 200 application/json with an array [notification, response] delivers both, in order', async () => {
    const { server, h } = await connected();
    const notification = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'before' } };
    server.on({ rpc: 'tools/list' }, (r) => json([notification, result(r.id, { tools: [] })]), 1);
    const outcome = await h.request('tools/list');
    expect(outcome.sent).toEqual({ ok: true });
    expect(h.messages).toEqual([notification, { jsonrpc: '2.0', id: outcome.id, result: { tools: [] } }]);
    expect(h.errors).toEqual([]);
  });

  it('P2: content types match case-insensitively with parameters (Application/JSON; charset=utf-8, Text/Event-Stream; charset=utf-8)', async () => {
    const { server, h } = await connected();
    server.on(
      { rpc: 'tools/list' },
      (r) => json(result(r.id, { via: 'json' }), { headers: { 'content-type': 'Application/JSON; charset=utf-8' } }),
      1,
    );
    const first = await h.request('tools/list');
    expect(first.sent).toEqual({ ok: true });
    expect(first.response).toEqual({ jsonrpc: '2.0', id: first.id, result: { via: 'json' } });

    server.on(
      { rpc: 'tools/list' },
      (r) => sse([{ data: result(r.id, { via: 'sse' }) }], { headers: { 'content-type': 'Text/Event-Stream; charset=utf-8' } }),
      1,
    );
    const second = await h.request('tools/list');
    expect(second.sent).toEqual({ ok: true });
    expect(second.response).toEqual({ jsonrpc: '2.0', id: second.id, result: { via: 'sse' } });
    expect(h.errors).toEqual([]);
  });

  it('P3: an SSE response delivers a server request and notifications before the response, in order', async () => {
    const { server, h } = await connected();
    const serverRequest = { jsonrpc: '2.0', id: 'srv-1', method: 'roots/list', params: {} };
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1, total: 2 } };
    const log = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } };
    server.on(
      { rpc: 'tools/call' },
      (r) => sse([{ data: serverRequest }, { data: progress }, { data: log }, { data: result(r.id, { content: [] }) }]),
      1,
    );
    const outcome = await h.request('tools/call', { name: 'anything', arguments: {} });
    expect(outcome.sent).toEqual({ ok: true });
    expect(h.messages).toEqual([serverRequest, progress, log, { jsonrpc: '2.0', id: outcome.id, result: { content: [] } }]);
    expect(h.errors).toEqual([]);
  });

  it('P4, P10: once the response arrives on an SSE stream the server never ends, the call is answered at once and the POST child stops; the stream is cut after its grace', async () => {
    const { server, h } = await connected();
    server.on(
      { rpc: 'tools/call' },
      (r) => ({
        ...sse([
          { data: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } } },
          { data: result(r.id) },
        ]),
        keepOpen: true,
      }),
      1,
    );
    const outcome = await h.request('tools/call', { name: 'anything', arguments: {} });
    const answeredAt = performance.now();
    expect(outcome.response).toEqual({ jsonrpc: '2.0', id: outcome.id, result: {} });
    const post = await server.waitFor({ rpc: 'tools/call' });
    let closedAt: number | undefined;
    void post.closed.then(() => (closedAt = performance.now()));
    // The call was answered while the stream was still open.
    expect(closedAt).toBeUndefined();
    await waitFor(h.transport.actor, () => postChildren(h.transport).length === 0, { timeout: 5_000 });
    expect(postChildren(h.transport)).toEqual([]);
    // The server never ends this response: the client cuts it once its grace (1 s) is over, not before.
    expect(await within(post.closed, 'the server seeing the response closed')).toEqual({ aborted: true });
    expect((closedAt ?? 0) - answeredAt).toBeGreaterThanOrEqual(streamGrace.ms - 100);
    await expectSessionAlive(h);
  });

  it('P4, F2: close() during the grace cuts the still-open stream at once', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/call' }, (r) => ({ ...sse([{ data: result(r.id) }]), keepOpen: true }), 1);
    const outcome = await h.request('tools/call', { name: 'anything', arguments: {} });
    expect(outcome.response).toEqual({ jsonrpc: '2.0', id: outcome.id, result: {} });
    const post = await server.waitFor({ rpc: 'tools/call' });
    await h.transport.close();
    // Well inside the grace: closing does not wait for it.
    expect(await within(post.closed, 'the server seeing the response closed', streamGrace.ms / 2)).toEqual({ aborted: true });
  });

  it('P5: a request answered 202 fails with an error naming the (missing) content type; the session lives on', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/list' }, { status: 202 }, 1);
    const outcome = await h.request('tools/list');
    const error = rejection(outcome.sent);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(/202/);
    expect((error as Error).message).toMatch(/content type/);
    expect(outcome.response).toBeUndefined();
    await expectSessionAlive(h);
  });

  it('P5: a request answered 200 text/plain fails with an error naming text/plain; the session lives on', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/list' }, { status: 200, headers: { 'content-type': 'text/plain' }, body: 'hello' }, 1);
    const outcome = await h.request('tools/list');
    const error = rejection(outcome.sent);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toContain('text/plain');
    expect(outcome.response).toBeUndefined();
    await expectSessionAlive(h);
  });

  it.each([429, 500])('P6: %i to a call fails that call with an error carrying the status; other calls are fine', async (status) => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/call' }, { status, headers: { 'content-type': 'text/plain' }, body: 'not now' }, 1);
    const [failed, fine] = await Promise.all([h.request('tools/call', { name: 'x', arguments: {} }), h.request('tools/list')]);
    const error = rejection(failed.sent);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBe(status);
    expect(fine.sent).toEqual({ ok: true });
    expect(fine.response).toEqual({ jsonrpc: '2.0', id: fine.id, result: {} });
    await expectSessionAlive(h);
  });

  it('P6: a network error before headers fails that call with the error as cause; other calls are fine', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/call' }, { destroy: true }, 1);
    const [failed, fine] = await Promise.all([h.request('tools/call', { name: 'x', arguments: {} }), h.request('tools/list')]);
    const error = rejection(failed.sent);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBeUndefined();
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(fine.response).toEqual({ jsonrpc: '2.0', id: fine.id, result: {} });
    await expectSessionAlive(h);
  });

  it("P7: a 400 whose body is a JSON-RPC error with the request's id is delivered as the call's response; the session lives on", async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/call' }, (r) => json(rpcError(r.id, -32602, 'Unknown tool: x'), { status: 400 }), 1);
    const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
    expect(outcome.response).toEqual({ jsonrpc: '2.0', id: outcome.id, error: { code: -32602, message: 'Unknown tool: x' } });
    expect(h.responsesTo(outcome.id)).toHaveLength(1);
    await expectSessionAlive(h);
  });

  it.each([
    ['an empty body', { status: 404 }],
    ['a plain-text body', { status: 404, headers: { 'content-type': 'text/plain' }, body: 'Not Found' }],
    ['a JSON-RPC error with id null', json(rpcError(null, -32001, 'Session not found'), { status: 404 })],
  ])(
    'P8: 404 with %s to a request carrying a session ID means the session is missing: SessionExpiredError, no DELETE on close',
    async (_label, reply) => {
      // sessionRecovery 'fail': the outcome F3 prescribes when no recovery is attempted.
      const { server, h } = await connected({ sessionRecovery: 'fail' });
      server.on({ rpc: 'tools/call' }, reply, 1);
      const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
      const post = await server.waitFor({ rpc: 'tools/call' });
      expect(header(post, 'mcp-session-id')).toBe(server.sessionId);

      // The call fails (P10) through send(), with the session-expired error caused by the 404; no synthetic answer.
      const error = rejection(outcome.sent);
      expect(error).toBeInstanceOf(SessionExpiredError);
      const notFound = httpErrorIn(error);
      expect(notFound?.status).toBe(404);
      expect(notFound?.sessionMissing).toBe(true);
      expect(h.responsesTo(outcome.id)).toEqual([]);

      // The transport treats the session as missing: a typed SessionExpiredError caused by the 404.
      const expired = await h.until(() => h.errors.find((e) => e instanceof SessionExpiredError), 'a SessionExpiredError');
      expect(httpErrorIn(expired)).toBe(notFound);
      expect(h.transport.actor.getSnapshot().hasTag('failed')).toBe(true);

      // Failed is sticky (F4): the next call rejects with the same typed error, without I/O.
      const before = server.requests.length;
      await expect(h.transport.send({ jsonrpc: '2.0', id: 99, method: 'ping' })).rejects.toBeInstanceOf(SessionExpiredError);
      expect(server.requests.length).toBe(before);

      await h.transport.close();
      expect(server.filter({ http: 'DELETE' })).toEqual([]);
    },
  );

  it.each([400, 403, 405, 406, 415])(
    'P9: %i to a call fails it with a typed StreamableHTTPError (status, statusText, body cut to 1 KB); the session lives on',
    async (status) => {
      const { server, h } = await connected();
      server.on({ rpc: 'tools/call' }, { status, headers: { 'content-type': 'text/plain' }, body: fiveKB }, 1);
      const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
      const error = rejection(outcome.sent);
      expect(error).toBeInstanceOf(StreamableHTTPError);
      const httpError = error as StreamableHTTPError;
      expect(httpError.status).toBe(status);
      expect(httpError.statusText).toBe(STATUS_CODES[status]);
      expect(httpError.body.startsWith('z'.repeat(1000))).toBe(true);
      expectCutTo1KB(httpError.body);
      expect(httpError.body.length).toBeLessThanOrEqual(1024 + 64);
      expect(httpError.message.length).toBeLessThan(2048);
      await expectSessionAlive(h);
    },
  );

  it.each([429, 500, 403])(
    'P10: a call failed with %i before its send() resolved: send() rejects with the typed error (status, body); no synthetic answer',
    async (status) => {
      const { server, h } = await connected();
      server.on({ rpc: 'tools/call' }, { status, body: 'nope' }, 1);
      const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
      const error = rejection(outcome.sent);
      expect(error).toBeInstanceOf(StreamableHTTPError);
      expect(error).toMatchObject({ status, body: 'nope' });
      expect(h.responsesTo(outcome.id)).toEqual([]);
    },
  );

  it("P10: a call failed by a session-missing 404 (sessionRecovery 'fail'): send() rejects with SessionExpiredError caused by the 404; no synthetic answer", async () => {
    const { server, h } = await connected({ sessionRecovery: 'fail' });
    server.on({ rpc: 'tools/call' }, { status: 404 }, 1);
    const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
    const error = rejection(outcome.sent);
    expect(error).toBeInstanceOf(SessionExpiredError);
    expect(httpErrorIn(error)?.status).toBe(404);
    expect(h.responsesTo(outcome.id)).toEqual([]);
  });

  it('P10: calls failed without a usable status (wrong content type, network error) reject send() with a typed error; no synthetic answer', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/list' }, { status: 200, headers: { 'content-type': 'text/html' }, body: '<p>hi</p>' }, 1);
    // Twice: a request whose kept-alive connection is closed under it is sent again once on a new one (N7).
    server.on({ rpc: 'tools/call' }, { destroy: true }, 2);
    for (const method of ['tools/list', 'tools/call']) {
      const outcome = await h.request(method);
      expect(rejection(outcome.sent)).toBeInstanceOf(McpTransportError);
      expect(h.responsesTo(outcome.id)).toEqual([]);
    }
  });

  it('P10: with the SDK Client, a 500 to tools/call makes callTool reject with the StreamableHTTPError itself (status, body), at once', async () => {
    const server = await scripted();
    server.on({ rpc: 'tools/call' }, { status: 500, body: 'boom' });
    const transport = new StreamableHTTPClientTransport(server.url);
    const client = new Client({ name: 'responses-test', version: '1.0.0' });
    cleanups.push(() => client.close());
    await client.connect(transport);
    const error = await client.callTool({ name: 'anything', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect(error).toMatchObject({ status: 500, body: 'boom' });
    // The session is untouched: the next request works.
    await expect(client.ping()).resolves.toEqual({});
  });
});

describe('R. Streams that end early', () => {
  it('R2: an SSE response that ends before the response, with no event id, fails the call at once: "request ended without a response"', async () => {
    const { server, h } = await connected();
    const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'partial' } };
    server.on({ rpc: 'tools/call' }, sse([{ data: note }]), 1);
    const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
    expect(h.messages[0]).toEqual(note);
    const error = errorOf(outcome.response);
    expect(error.code).toBe(-32000);
    expect(error.message).toContain('request ended without a response');
    // Nothing to resume from: no GET with Last-Event-ID, and the request is never re-POSTed.
    expect(server.filter((r) => r.method === 'GET' && header(r, 'last-event-id') !== undefined)).toEqual([]);
    expect(server.filter({ rpc: 'tools/call' })).toHaveLength(1);
    await expectSessionAlive(h);
  });
});

describe('H. Session ID checks', () => {
  it.each([
    ['a space', 'abc def'],
    ['a control character', 'abc\tdef'],
    ['1,025 characters', 's'.repeat(1025)],
  ])(
    'H6: a session ID with %s on the initialize response fails initialize with a ProtocolError and is never sent back',
    async (_label, badId) => {
      const server = await scripted({ sessionId: badId });
      const h = new Harness(server);
      await h.transport.start();
      const sent = await settle(
        h.transport.send({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'responses-test', version: '1.0.0' } },
        }),
      );
      expect(rejection(sent)).toBeInstanceOf(ProtocolError);
      expect(h.transport.sessionId).toBeUndefined();
      // Nothing crashed: the transport refuses further sends cleanly and closes.
      await expect(h.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })).rejects.toBeInstanceOf(McpTransportError);
      await h.transport.close();
      expect(server.scriptErrors).toEqual([]);
      for (const request of server.requests) expect(request.headers['mcp-session-id']).toBeUndefined();
      expect(server.filter({ http: 'DELETE' })).toEqual([]);
    },
  );

  it('H7: a different session ID on a later response is ignored, reported once through onerror, and the original ID is still sent', async () => {
    const { server, h } = await connected();
    server.on({ rpc: 'tools/list' }, (r) => ({ ...json(result(r.id, { tools: [] })), sessionId: 'another-session' }), 2);
    const first = await h.request('tools/list');
    const second = await h.request('tools/list');
    expect(first.response).toEqual({ jsonrpc: '2.0', id: first.id, result: { tools: [] } });
    expect(second.response).toEqual({ jsonrpc: '2.0', id: second.id, result: { tools: [] } });
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]).toBeInstanceOf(McpTransportError);
    expect(h.errors[0]?.message).toMatch(/session ID/);
    expect(h.errors[0]?.message).not.toContain('another-session');
    expect(h.transport.sessionId).toBe(server.sessionId);
    await expectSessionAlive(h);
    const pings = server.filter({ rpc: 'ping' });
    expect(pings.map((r) => header(r, 'mcp-session-id'))).toEqual([server.sessionId]);
    expect(h.errors).toHaveLength(1);
  });
});

describe('S. Server-sent events through HTTP', () => {
  it('S4: an event with invalid JSON and one that is JSON but not JSON-RPC are reported with the raw text cut to 1 KB; the stream continues', async () => {
    const { server, h } = await connected();
    // One channel for warnings: the chart emits each one, so an inspector sees what onerror sees.
    const emitted: Error[] = [];
    h.transport.actor.on('warning', ({ error }) => emitted.push(error));
    const invalidJson = `{"broken": ${fiveKB}`;
    const notJsonRpc = { hello: 'world' };
    const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'still here' } };
    server.on(
      { rpc: 'tools/call' },
      (r) => sse([{ data: invalidJson }, { data: notJsonRpc }, { data: note }, { data: result(r.id, { ok: true }) }]),
      1,
    );
    const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
    expect(outcome.response).toEqual({ jsonrpc: '2.0', id: outcome.id, result: { ok: true } });
    expect(h.messages).toEqual([note, outcome.response]);
    expect(h.errors).toHaveLength(2);
    const [bad, notRpc] = h.errors as [Error, Error];
    expect(bad.message).toContain('{"broken": zzz');
    expectCutTo1KB(bad.message);
    expect(notRpc.message).toContain(JSON.stringify(notJsonRpc));
    expect(emitted).toEqual(h.errors);
  });

  it('S6: a multi-byte UTF-8 character split across two TCP writes arrives intact', async () => {
    const { server, h } = await connected();
    const text = 'price: 5 € 🎉 done';
    server.on(
      { rpc: 'tools/call' },
      (r) => {
        const bytes = Buffer.from(sseText([{ data: result(r.id, { content: [{ type: 'text', text }] }) }]), 'utf8');
        const euro = bytes.indexOf(Buffer.from('€', 'utf8'));
        const emoji = bytes.indexOf(Buffer.from('🎉', 'utf8'));
        return {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: [
            { data: bytes.subarray(0, euro + 1) },
            { data: bytes.subarray(euro + 1, emoji + 2), delayMs: 30 },
            { data: bytes.subarray(emoji + 2), delayMs: 30 },
          ],
        };
      },
      1,
    );
    const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
    expect(outcome.response).toEqual({ jsonrpc: '2.0', id: outcome.id, result: { content: [{ type: 'text', text }] } });
    expect(h.errors).toEqual([]);
  });

  it('S2: a priming event (id, empty data) and an event named other than "message" are not delivered', async () => {
    const { server, h } = await connected();
    const hidden = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hidden' } };
    const shown = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'shown' } };
    server.on(
      { rpc: 'tools/call' },
      (r) =>
        sse([
          { id: 'prime-1', data: '' },
          { id: 'e-2', event: 'custom', data: hidden },
          { id: 'e-3', event: 'message', data: shown },
          { id: 'e-4', data: result(r.id) },
        ]),
      1,
    );
    const outcome = await h.request('tools/call', { name: 'x', arguments: {} });
    expect(h.messages).toEqual([shown, { jsonrpc: '2.0', id: outcome.id, result: {} }]);
    expect(h.errors).toEqual([]);
  });
});

describe('G. Standalone GET stream refusals', () => {
  it.each([
    ['200 application/json', json({ jsonrpc: '2.0', method: 'notifications/message', params: {} })],
    ['403', { status: 403, headers: { 'content-type': 'text/plain' }, body: 'forbidden' }],
  ])('G2: GET answered %s gives one warning through onerror, no retry, and the session works', async (_label, reply) => {
    const server = await scripted();
    server.on({ http: 'GET' }, reply);
    const h = new Harness(server);
    await h.initialize();
    await server.waitFor({ http: 'GET' });
    await waitFor(h.transport.actor, (s) => s.matches({ open: { standalone: 'ended' } }), { timeout: 5_000 });
    await h.until(() => (h.errors.length > 0 ? h.errors : undefined), 'the warning');
    await expectSessionAlive(h);
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]).toBeInstanceOf(McpTransportError);
    expect(server.filter({ http: 'GET' })).toHaveLength(1);
    expect(h.transport.actor.getSnapshot().matches({ open: { standalone: 'ended' } })).toBe(true);
  });
});

describe('H10. No listener pile-up', () => {
  it("H10: aborting the caller's requestInit signal aborts every request in flight at once, with the caller's reason, and leaves no listener on it", async () => {
    const caller = new AbortController();
    const { server, h } = await connected({ requestInit: { signal: caller.signal } });
    server.on({ rpc: 'tools/call' }, { hang: true });
    const calls = [h.request('tools/call', { name: 'a' }), h.request('tools/call', { name: 'b' })];
    await vi.waitFor(() => {
      expect(server.filter({ rpc: 'tools/call' })).toHaveLength(2);
    });
    const reason = new Error('the caller stopped');
    caller.abort(reason);
    const outcomes = await Promise.all(calls);
    for (const outcome of outcomes) {
      // send() had not resolved (no response yet): it rejects, naming the caller's reason.
      expect(outcome.sent.ok).toBe(false);
      const error = outcome.sent.ok ? undefined : outcome.sent.error;
      expect(httpErrorIn(error)?.cause).toBe(reason);
    }
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it("H10: after 50 sequential calls the caller's requestInit signal has no piled-up listeners and no MaxListenersExceededWarning is emitted", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const caller = new AbortController();
      const signal = caller.signal;
      const { server, h } = await connected({ requestInit: { signal } });
      // Half the calls answered with JSON, half with an SSE stream.
      server.on({ rpc: 'tools/call' }, (r) =>
        typeof r.id === 'number' && r.id % 2 === 0 ? sse([{ data: result(r.id) }]) : json(result(r.id)),
      );
      const before = getEventListeners(signal, 'abort').length;
      // One listener for the transport's whole lifetime, none per request.
      expect(before).toBe(1);
      for (let i = 0; i < 50; i++) {
        const outcome = await h.request('tools/call', { name: 'x', arguments: { i } });
        expect(outcome.response).toEqual({ jsonrpc: '2.0', id: outcome.id, result: {} });
      }
      expect(server.filter({ rpc: 'tools/call' })).toHaveLength(50);
      expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(before);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
