/**
 * The data plane (DESIGN.md, "Control plane and data plane"): while the chart says the session is
 * open (its `directCalls` tag), the facade POSTs a call itself and delivers a JSON, 202 or SSE answer
 * with no chart event and no actor; everything else is handed to the chart with today's payloads.
 * These tests prove the hand-overs and the races, on the scripted server over real HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import {
  SessionExpiredError,
  StreamableHTTPError,
  StreamableHTTPClientTransport,
  TransportClosedError,
  type JSONRPCMessage,
  type JSONRPCResponse,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import { PROTOCOL_VERSION, json, result, sse, type RecordedRequest, type Reply } from '../support/scripted-server.js';
import { rejection, signal, until } from '../support/harness.js';
import { cleanups, runCleanups, scripted } from '../support/cleanups.js';

afterEach(runCleanups);

function header(request: RecordedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

const isResponse = (message: JSONRPCMessage): message is JSONRPCResponse => 'result' in message || 'error' in message;

/** A transport on a scripted server; what it delivers, and the events its chart receives, are recorded. */
async function connected(options: StreamableHTTPClientTransportOptions = {}, serverOptions: { sessionId?: string | null } = {}) {
  const server = await scripted(serverOptions);
  const chartEvents: string[] = [];
  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.event' && event.actorRef.sessionId === event.rootId && event.sourceRef !== event.actorRef) {
      chartEvents.push(event.event.type);
    }
  };
  const transport = new StreamableHTTPClientTransport(server.url, { ...options, inspect });
  cleanups.push(() => transport.close());
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error);
  await transport.start();
  await transport.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'data-plane-test', version: '1.0.0' } },
  });
  await until(() => messages.some((m) => isResponse(m) && m.id === 0), 'the InitializeResult');
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  transport.setProtocolVersion(PROTOCOL_VERSION);
  await until(() => transport.actor.getSnapshot().hasTag('directCalls'), 'the data plane open');
  // The scripted server has no standalone stream (405): wait for that answer, so the chart is quiet.
  await until(() => transport.actor.getSnapshot().matches({ open: { standalone: 'ended' } }), 'the standalone GET refused');
  messages.length = 0;
  chartEvents.length = 0;
  const responseTo = async (id: number): Promise<JSONRPCResponse> => {
    await until(() => messages.some((m) => isResponse(m) && m.id === id), `the response to ${id}`);
    return messages.find((m): m is JSONRPCResponse => isResponse(m) && m.id === id)!;
  };
  const postChildren = () => Object.keys(transport.actor.getSnapshot().children).filter((id) => id.startsWith('post-'));
  return { server, transport, messages, errors, chartEvents, responseTo, postChildren };
}

const call = (id: number, method = 'tools/call'): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { name: 'echo', arguments: {} },
});

describe('data plane: the happy call', () => {
  it('P2, P3, P1: in an open session JSON, SSE and 202 answers are delivered with no chart event and no POST child', async () => {
    const { server, transport, messages, chartEvents, responseTo, postChildren } = await connected();
    server.on(
      { rpc: 'tools/call' },
      (r) =>
        sse([
          { data: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } } },
          { data: result(r.id, { n: 2 }) },
        ]),
      1,
    );
    await transport.send(call(1, 'tools/list'));
    expect(await responseTo(1)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    await transport.send(call(2));
    expect(await responseTo(2)).toEqual({ jsonrpc: '2.0', id: 2, result: { n: 2 } });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(messages.map((m) => ('id' in m ? m.id : 'method' in m ? m.method : ''))).toEqual([1, 'notifications/message', 2]);
    expect(chartEvents).toEqual([]);
    expect(postChildren()).toEqual([]);
    expect(transport.actor.getSnapshot().hasTag('directCalls')).toBe(true);
  });
});

/** A transport started on a scripted server, with the POST children its chart spawns and the events it hears recorded. */
async function handshake(options: StreamableHTTPClientTransportOptions = {}) {
  const server = await scripted();
  const spawned: string[] = [];
  const chartEvents: string[] = [];
  const inspect = (event: InspectionEvent) => {
    const id = event.type === '@xstate.actor' && 'id' in event.actorRef ? String(event.actorRef.id) : '';
    if (id.startsWith('post-')) spawned.push(id);
    if (event.type === '@xstate.event' && event.actorRef.sessionId === event.rootId && event.sourceRef !== event.actorRef) {
      chartEvents.push(event.event.type);
    }
  };
  const transport = new StreamableHTTPClientTransport(server.url, { ...options, inspect });
  cleanups.push(() => transport.close());
  const messages: JSONRPCMessage[] = [];
  transport.onmessage = (message) => messages.push(message);
  await transport.start();
  return { server, transport, messages, spawned, chartEvents };
}

const initialize: JSONRPCMessage = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'data-plane-test', version: '1.0.0' } },
};

describe('data plane: the handshake', () => {
  it('H3, F3: initialize and notifications/initialized are POSTed by the facade while the chart waits for them (no POST child); the chart hears each answer, adopts the session and keeps the initialize for a recovery', async () => {
    const { server, transport, messages, spawned, chartEvents } = await handshake();
    expect(transport.actor.getSnapshot().hasTag('directInitialize')).toBe(true);
    await transport.send(initialize);
    await until(() => transport.actor.getSnapshot().matches('initializing'), 'the InitializeResult adopted');
    expect(transport.sessionId).toBe(server.sessionId);
    expect(messages).toEqual([
      result(0, { protocolVersion: PROTOCOL_VERSION, capabilities: {}, serverInfo: { name: 'scripted', version: '1.0.0' } }),
    ]);
    expect(transport.actor.getSnapshot().hasTag('directInitializedNotice')).toBe(true);
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await until(() => transport.actor.getSnapshot().hasTag('directCalls'), 'the session open');
    expect(spawned).toEqual([]);
    expect(chartEvents.filter((type) => type === 'post.done')).toHaveLength(2);
    // H3: the initialize carried no session; the notification carried the new one.
    const [init, initialized] = server.filter({ http: 'POST' });
    expect(header(init!, 'mcp-session-id')).toBeUndefined();
    expect(header(initialized!, 'mcp-session-id')).toBe(server.sessionId);
    // F3: what a recovery would repeat, and what saveState() hands on.
    expect(transport.saveState()?.initialize).toEqual(initialize);
  });

  it('R1, H3: an initialize whose SSE answer ends after an event id but before the InitializeResult is resumed by a POST child in the session that answer made, and the session is adopted', async () => {
    const { server, transport, messages, spawned } = await handshake();
    const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'starting' } };
    const initializeResult = result(0, {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      serverInfo: { name: 'scripted', version: '1.0.0' },
    });
    server.on({ rpc: 'initialize' }, sse([{ id: 'e1', data: note, retry: 10 }], { sessionId: 'made-by-initialize' }), 1);
    server.on(
      { http: 'GET' },
      (r) => (header(r, 'last-event-id') === 'e1' ? sse([{ id: 'e2', data: initializeResult }]) : { status: 405 }),
      1,
    );
    await transport.send(initialize);
    const resume = await server.waitFor((r) => r.method === 'GET' && header(r, 'last-event-id') === 'e1');
    expect(header(resume, 'mcp-session-id')).toBe('made-by-initialize');
    await until(() => transport.actor.getSnapshot().matches('initializing'), 'the InitializeResult adopted');
    expect(transport.sessionId).toBe('made-by-initialize');
    expect(messages).toEqual([note, initializeResult]);
    expect(spawned).toEqual(['post-0']);
    await until(() => Object.keys(transport.actor.getSnapshot().children).every((id) => !id.startsWith('post-')), 'the POST child gone');
  });

  it("A1: a 401 to an initialize POSTed by the facade is the chart's: without an auth provider the connect fails with the HTTP error, the session never opened", async () => {
    const { server, transport } = await handshake();
    server.on({ rpc: 'initialize' }, { status: 401, headers: { 'www-authenticate': 'Bearer' } }, 1);
    const error = await rejection(transport.send(initialize));
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect(error).toMatchObject({ status: 401 });
    await until(() => transport.actor.getSnapshot().matches('failed'), 'the chart failed');
  });

  it('R9: with streamIdleTimeout the handshake goes through POST children, since only they watch a stream for idleness', async () => {
    const { transport, spawned } = await handshake({ streamIdleTimeout: 5_000 });
    expect(transport.actor.getSnapshot().hasTag('directInitialize')).toBe(true);
    await transport.send(initialize);
    await until(() => transport.actor.getSnapshot().matches('initializing'), 'the InitializeResult adopted');
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await until(() => transport.actor.getSnapshot().matches('open'), 'the session open');
    expect(spawned).toEqual(['post-0', 'post-0']);
  });
});

describe('data plane: hand-over to the chart', () => {
  it('R1, R7: an SSE answer that ends after an event id but before its response is resumed by a POST child (GET with Last-Event-ID); the child exists only then', async () => {
    const { server, transport, messages, responseTo, postChildren } = await connected();
    const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'before the cut' } };
    server.on({ rpc: 'tools/call' }, sse([{ id: 'e1', data: note, retry: 10 }]), 1);
    server.on({ http: 'GET' }, (r) =>
      header(r, 'last-event-id') === 'e1'
        ? sse([
            { id: 'e1', data: note },
            { id: 'e2', data: result(1, { resumed: true }) },
          ])
        : { status: 405 },
    );
    await transport.send(call(1));
    await server.waitFor((r) => r.method === 'GET' && header(r, 'last-event-id') === 'e1');
    expect(await responseTo(1)).toEqual({ jsonrpc: '2.0', id: 1, result: { resumed: true } });
    // R7: the replayed event e1 is not delivered twice.
    expect(messages.filter((m) => 'method' in m && m.method === 'notifications/message')).toHaveLength(1);
    expect(server.filter({ rpc: 'tools/call' })).toHaveLength(1);
    await until(() => postChildren().length === 0, 'the POST child gone');
  });

  it('R2, P10: an SSE answer that ends with no event id and no response is failed by the chart with a synthetic error; the data plane stays open', async () => {
    const { server, transport, responseTo } = await connected();
    server.on(
      { rpc: 'tools/call' },
      sse([{ data: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } } }]),
      1,
    );
    await transport.send(call(1));
    const response = await responseTo(1);
    expect('error' in response && response.error.message).toContain('request ended without a response');
    expect(transport.actor.getSnapshot().hasTag('directCalls')).toBe(true);
  });

  it('H7: a different session ID on a data-plane answer is handed to the chart: reported once, the call answered, the established ID kept', async () => {
    const { server, transport, errors, responseTo } = await connected();
    server.on({ rpc: 'tools/list' }, (r) => json(result(r.id), { sessionId: 'another-session' }), 2);
    await transport.send(call(1, 'tools/list'));
    await transport.send(call(2, 'tools/list'));
    await responseTo(1);
    await responseTo(2);
    expect(errors.filter((e) => e.message.includes('different session ID'))).toHaveLength(1);
    expect(transport.sessionId).toBe(server.sessionId);
  });
});

describe('data plane: races', () => {
  it('F2: a send that starts just before close() is rejected with TransportClosedError and its POST aborted; close() completes', async () => {
    const { server, transport } = await connected();
    server.on({ rpc: 'tools/call' }, { hang: true }, 1);
    const sent = rejection(transport.send(call(1)));
    const post = await server.waitFor({ rpc: 'tools/call' });
    await transport.close();
    expect(await sent).toBeInstanceOf(TransportClosedError);
    expect(await post.closed).toEqual({ aborted: true });
    expect(transport.actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(server.filter({ http: 'DELETE' })).toHaveLength(1);
  });

  it('F2: a send issued in the same tick as close() is rejected, never left waiting', async () => {
    const { transport } = await connected();
    const sent = rejection(transport.send(call(1)));
    const closed = transport.close();
    expect(await sent).toBeInstanceOf(TransportClosedError);
    await closed;
  });

  it('F3, F5: a 404 while other data-plane calls are in flight: one re-initialize, each call re-sent once on the new session and answered', async () => {
    const { server, transport, responseTo } = await connected({ sessionRecovery: 'reinitialize' });
    const old = server.sessionId!;
    const release = signal();
    let sessions = 0;
    server.on({ http: 'POST' }, (r): Reply => {
      if (r.rpc === 'initialize')
        return json(result(r.id, { protocolVersion: PROTOCOL_VERSION, capabilities: {}, serverInfo: { name: 's', version: '1' } }), {
          sessionId: `new-${++sessions}`,
        });
      const session = header(r, 'mcp-session-id');
      if (session === old) {
        // The first call learns at once that the session is gone; the others only after it.
        return r.id === 1
          ? { status: 404, sessionId: null }
          : { status: 404, sessionId: null, body: [{ data: '', until: release.promise }] };
      }
      if (r.id === undefined) return { status: 202, sessionId: session ?? null };
      return json(result(r.id, { on: session }), { sessionId: session ?? null });
    });
    const sends = [1, 2, 3].map((id) => transport.send(call(id)));
    await until(
      () => server.filter((r) => r.rpc === 'initialize').length === 1 || transport.actor.getSnapshot().hasTag('reconnecting'),
      'the recovery',
    );
    release.fire();
    await Promise.all(sends);
    for (const id of [1, 2, 3]) expect(await responseTo(id)).toEqual({ jsonrpc: '2.0', id, result: { on: 'new-1' } });
    expect(sessions).toBe(1);
    for (const id of [1, 2, 3]) {
      const posts = server.filter((r) => r.rpc === 'tools/call' && r.id === id);
      expect(posts.map((r) => header(r, 'mcp-session-id'))).toEqual([old, 'new-1']);
    }
    expect(transport.sessionId).toBe('new-1');
    await until(() => transport.actor.getSnapshot().hasTag('directCalls'), 'the data plane open again');
  });

  it('F3, F4, P10: with sessionRecovery "fail", a 404 fails the transport; a call still in flight on the data plane is rejected with the SessionExpiredError', async () => {
    const { server, transport, messages } = await connected({ sessionRecovery: 'fail' });
    server.on({ rpc: 'tools/call' }, (r) => (r.id === 1 ? { status: 404 } : { hang: true }), 2);
    const second = rejection(transport.send(call(2)));
    await server.waitFor((r) => r.rpc === 'tools/call' && r.id === 2);
    const first = rejection(transport.send(call(1)));
    expect(await first).toBeInstanceOf(SessionExpiredError);
    expect(await second).toBeInstanceOf(SessionExpiredError);
    // P10: its send() had not resolved, so it is told there, with no synthetic answer besides.
    expect(messages.filter((m) => 'id' in m && m.id === 2)).toEqual([]);
    expect(transport.actor.getSnapshot().hasTag('failed')).toBe(true);
  });

  it('F5: a failure that arrives after the chart left open (a 500 while the session is re-established) fails that call only', async () => {
    const { server, transport, responseTo } = await connected({ sessionRecovery: 'reinitialize' });
    const old = server.sessionId!;
    const initGate = signal();
    const lateGate = signal();
    server.on({ http: 'POST' }, (r): Reply => {
      if (r.rpc === 'initialize') {
        return {
          ...json(result(r.id, { protocolVersion: PROTOCOL_VERSION, capabilities: {}, serverInfo: { name: 's', version: '1' } }), {
            sessionId: 'new-1',
          }),
          body: [
            {
              data: JSON.stringify(
                result(r.id, { protocolVersion: PROTOCOL_VERSION, capabilities: {}, serverInfo: { name: 's', version: '1' } }),
              ),
              until: initGate.promise,
            },
          ],
        };
      }
      const session = header(r, 'mcp-session-id');
      if (r.id === undefined) return { status: 202, sessionId: session ?? null };
      if (r.id === 1 && session === old) return { status: 404, sessionId: null };
      if (r.id === 2 && session === old)
        return {
          status: 500,
          headers: { 'content-type': 'text/plain' },
          sessionId: null,
          body: [{ data: 'late', until: lateGate.promise }],
        };
      return json(result(r.id, { on: session }), { sessionId: session ?? null });
    });
    const second = rejection(transport.send(call(2)));
    await server.waitFor((r) => r.rpc === 'tools/call' && r.id === 2);
    const first = transport.send(call(1));
    await until(() => transport.actor.getSnapshot().hasTag('reconnecting'), 'the chart re-establishing the session');
    lateGate.fire();
    const failure = (await second) as { status?: number };
    expect(failure.status).toBe(500);
    expect(transport.actor.getSnapshot().hasTag('reconnecting')).toBe(true);
    initGate.fire();
    await first;
    expect(await responseTo(1)).toEqual({ jsonrpc: '2.0', id: 1, result: { on: 'new-1' } });
    expect(server.filter((r) => r.rpc === 'tools/call' && r.id === 2)).toHaveLength(1);
  });

  it('R8: cancelling a data-plane call whose stream is still open stops its POST at once', async () => {
    const { server, transport } = await connected();
    server.on(
      { rpc: 'tools/call' },
      { ...sse([{ data: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } } }]), keepOpen: true },
      1,
    );
    await transport.send(call(1));
    const post = await server.waitFor({ rpc: 'tools/call' });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user' } });
    expect(await post.closed).toEqual({ aborted: true });
    expect(server.filter({ rpc: 'notifications/cancelled' })).toHaveLength(1);
  });

  it('R8: cancelling a data-plane call before its answer rejects its send() and aborts its POST', async () => {
    const { server, transport } = await connected();
    server.on({ rpc: 'tools/call' }, { hang: true }, 1);
    const sent = rejection(transport.send(call(1)));
    const post = await server.waitFor({ rpc: 'tools/call' });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    expect(String(await sent)).toContain('request cancelled');
    expect(await post.closed).toEqual({ aborted: true });
  });
});
