/**
 * Session lifecycle and headers, seen from the SDK's real server: what each request carries
 * (H2–H5, H8, H9), the session ID (U2, H5), close and restart (F1, F2), and a failed transport (F4).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  TransportClosedError,
  TransportFailedError,
  type JSONRPCMessage,
} from '../../src/index.js';
import { startServer, type LoggedRequest, type ServerOptions } from '../support/mcp-server.js';
import {
  activeResources,
  childrenOf,
  header,
  leftoversOver,
  newClient,
  only,
  rejection,
  Started,
  recordingFetch,
  statefulModes,
  textOf,
  trackTimers,
} from '../support/harness.js';

const started = new Started();
const serve = (options: ServerOptions) => started.serve(options);
const transportFor = started.transport.bind(started);

async function connectOver(transport: StreamableHTTPClientTransport): Promise<Client> {
  const client = started.client();
  await client.connect(transport);
  return client;
}

const byMethod = (method: string) => (request: LoggedRequest) => request.method === method;

afterEach(async () => {
  await started.closeAll();
  vi.restoreAllMocks();
});

describe.each(statefulModes)('$mode', { timeout: 5_000 }, ({ sse }) => {
  it('H3, H4, H5: initialize carries no session or version header; every later POST, GET and DELETE carries both, byte for byte', async () => {
    const server = await serve({ sse });
    const transport = transportFor(server);
    const client = await connectOver(transport);
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await server.waitFor(byMethod('GET'));
    await client.close();

    const [sessionId] = server.closedSessions;
    expect(sessionId).toBeDefined();
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);

    const [initialize, ...later] = server.requests;
    expect(initialize?.rpc).toBe('initialize');
    expect(header(initialize!, 'mcp-session-id')).toBeUndefined();
    expect(header(initialize!, 'mcp-protocol-version')).toBeUndefined();

    expect(later.map((request) => request.method).sort()).toEqual(['DELETE', 'GET', 'POST', 'POST', 'POST']);
    for (const request of later) {
      expect(header(request, 'mcp-session-id'), `${request.method} ${request.rpc ?? ''}`).toBe(sessionId);
      expect(header(request, 'mcp-protocol-version'), `${request.method} ${request.rpc ?? ''}`).toBe(LATEST_PROTOCOL_VERSION);
    }
  });

  it('F2, H3: start() after close() begins a fresh session: a new initialize without the stale headers, a new session ID', async () => {
    const server = await serve({ sse });
    const transport = transportFor(server);
    const first = await connectOver(transport);
    await first.callTool({ name: 'echo', arguments: { text: 'one' } });
    const firstSession = transport.sessionId;
    await first.close();
    const before = server.requests.length;

    // A new Client over the same transport (the old Client's handlers are dropped first).
    transport.onclose = undefined;
    transport.onerror = undefined;
    transport.onmessage = undefined;
    const second = await connectOver(transport);
    expect(textOf(await second.callTool({ name: 'echo', arguments: { text: 'two' } }))).toBe('two');

    const restarted = server.requests.slice(before);
    const init = only(restarted, 'initialize', (request) => request.rpc === 'initialize');
    expect(restarted.indexOf(init), 'initialize goes first').toBe(0);
    expect(header(init, 'mcp-session-id')).toBeUndefined();
    expect(header(init, 'mcp-protocol-version')).toBeUndefined();
    expect(transport.sessionId).toBeDefined();
    expect(transport.sessionId).not.toBe(firstSession);
    expect(server.sessions.has(transport.sessionId!)).toBe(true);
    for (const request of restarted.slice(1)) expect(header(request, 'mcp-session-id')).toBe(transport.sessionId);
    expect(server.closedSessions).toEqual([firstSession]);
  });

  it('F1, F2: close() sends DELETE with session and version headers, the server ends the session, onclose fires once; close() again is fine', async () => {
    const server = await serve({ sse });
    const recorder = recordingFetch();
    const transport = transportFor(server, { fetch: recorder.fetch });
    let transportCloses = 0;
    transport.onclose = () => {
      transportCloses++;
    };
    const client = await connectOver(transport);
    let clientCloses = 0;
    client.onclose = () => {
      clientCloses++;
    };
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await server.waitFor(byMethod('GET'));
    const sessionId = transport.sessionId;
    expect(sessionId).toBeDefined();

    await Promise.all([transport.close(), transport.close()]);
    await transport.close();
    await client.close();

    const deletes = server.requests.filter(byMethod('DELETE'));
    expect(deletes).toHaveLength(1);
    const deleted = only(deletes, 'DELETE');
    expect(header(deleted, 'mcp-session-id')).toBe(sessionId);
    expect(header(deleted, 'mcp-protocol-version')).toBe(LATEST_PROTOCOL_VERSION);
    expect(server.closedSessions).toEqual([sessionId]);
    expect(server.sessions.has(sessionId!)).toBe(false);
    expect(transportCloses).toBe(1);
    expect(clientCloses).toBe(1);
    expect(transport.actor.getSnapshot().hasTag('closed')).toBe(true);
    expect(childrenOf(transport)).toEqual([]);

    // F2, F4: after close, send() is refused as closed, and no request leaves.
    const requests = server.requests.length;
    const calls = recorder.calls.length;
    const refused = await rejection(transport.send({ jsonrpc: '2.0', id: 99, method: 'tools/list' }));
    expect(refused).toBeInstanceOf(TransportClosedError);
    expect(server.requests.length).toBe(requests);
    expect(recorder.calls.length).toBe(calls);
  });

  it('F1: terminateOnClose: false closes without a DELETE; the server keeps the session', async () => {
    const server = await serve({ sse });
    const transport = transportFor(server, { terminateOnClose: false });
    let closes = 0;
    transport.onclose = () => {
      closes++;
    };
    const client = await connectOver(transport);
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    const sessionId = transport.sessionId;
    await client.close();

    expect(server.requests.filter(byMethod('DELETE'))).toEqual([]);
    expect(server.closedSessions).toEqual([]);
    expect(server.sessions.has(sessionId!)).toBe(true);
    expect(closes).toBe(1);
    expect(childrenOf(transport)).toEqual([]);
  });

  it('U2: sessionId is undefined before connect and the server-assigned ID after', async () => {
    const server = await serve({ sse });
    const transport = transportFor(server);
    expect(transport.sessionId).toBeUndefined();
    await connectOver(transport);
    expect(transport.sessionId).toBeDefined();
    expect([...server.sessions.keys()]).toEqual([transport.sessionId]);
  });

  it('U2, H5: a preset sessionId makes the SDK Client skip initialize; calls use that session', async () => {
    const server = await serve({ sse });
    // A first connection creates the session (without a GET, so the second one can have it).
    const owner = transportFor(server, { standaloneStream: false });
    await connectOver(owner);
    const sessionId = owner.sessionId!;

    const recorder = recordingFetch();
    const resumed = transportFor(server, { sessionId, fetch: recorder.fetch });
    const client = await connectOver(resumed);
    expect(resumed.sessionId).toBe(sessionId);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'resumed' } }))).toBe('resumed');

    expect(recorder.calls.some((call) => call.rpc === 'initialize' || call.rpc === 'notifications/initialized')).toBe(false);
    expect(server.requests.filter((request) => request.rpc === 'initialize')).toHaveLength(1);
    for (const call of recorder.calls) expect(call.headers.get('mcp-session-id')).toBe(sessionId);
  });
});

describe.each([
  { mode: 'JSON, stateless', sse: false },
  { mode: 'SSE, stateless', sse: true },
])('$mode', { timeout: 5_000 }, ({ sse }) => {
  it('H5, F1: no session ID from the server: no session header on any request, and no DELETE on close', async () => {
    const server = await serve({ sse, stateful: false });
    const transport = transportFor(server);
    let closes = 0;
    transport.onclose = () => {
      closes++;
    };
    const client = await connectOver(transport);
    await client.listTools();
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe('x');
    await client.close();

    expect(transport.sessionId).toBeUndefined();
    expect(server.requests.length).toBeGreaterThanOrEqual(4);
    for (const request of server.requests) expect(header(request, 'mcp-session-id')).toBeUndefined();
    expect(server.requests.filter(byMethod('DELETE'))).toEqual([]);
    expect(closes).toBe(1);
  });
});

describe('headers and fetch', { timeout: 5_000 }, () => {
  it('H2: every POST sends Accept: application/json, text/event-stream and Content-Type: application/json', async () => {
    const server = await serve({ sse: true });
    const client = await connectOver(transportFor(server));
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });

    const posts = server.requests.filter(byMethod('POST'));
    expect(posts.length).toBe(3);
    for (const post of posts) {
      expect(header(post, 'accept')).toBe('application/json, text/event-stream');
      expect(header(post, 'content-type')).toBe('application/json');
    }
  });

  it('H2, H8: a custom header, an extra Accept type and requestInit fields reach POST, GET and DELETE; transport-owned headers cannot be overridden', async () => {
    const server = await serve({ sse: true });
    const recorder = recordingFetch();
    const transport = transportFor(server, {
      fetch: recorder.fetch,
      requestInit: {
        credentials: 'include',
        headers: {
          'X-Custom': 'custom value',
          Accept: 'application/x-extra',
          'Content-Type': 'text/plain',
          'Mcp-Session-Id': 'not-the-session',
          'MCP-Protocol-Version': '1999-01-01',
          'Last-Event-ID': 'not-an-event',
        },
      },
    });
    const client = await connectOver(transport);
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await server.waitFor(byMethod('GET'));
    const sessionId = transport.sessionId;
    await client.close();

    expect(new Set(server.requests.map((request) => request.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of server.requests) {
      const what = `${request.method} ${request.rpc ?? ''}`;
      expect(header(request, 'x-custom'), what).toBe('custom value');
      expect(header(request, 'last-event-id'), what).toBeUndefined();
      expect(header(request, 'mcp-protocol-version'), what).not.toBe('1999-01-01');
      if (request.rpc === 'initialize') expect(header(request, 'mcp-session-id'), what).toBeUndefined();
      else expect(header(request, 'mcp-session-id'), what).toBe(sessionId);
      if (request.method === 'POST') {
        expect(header(request, 'accept'), what).toBe('application/json, text/event-stream, application/x-extra');
        expect(header(request, 'content-type'), what).toBe('application/json');
      }
      if (request.method === 'GET') {
        const accept = header(request, 'accept') ?? '';
        expect(accept.split(',').map((type) => type.trim())).toEqual(['text/event-stream', 'application/x-extra']);
      }
    }
    // Other requestInit fields reach every request too.
    expect(recorder.calls.length).toBe(server.requests.length);
    for (const call of recorder.calls) expect(call.init.credentials, call.method).toBe('include');
  });

  it('H9: the custom fetch is used for every request and the global fetch never', async () => {
    const server = await serve({ sse: true });
    const recorder = recordingFetch();
    const globalFetch = vi.spyOn(globalThis, 'fetch');
    const transport = transportFor(server, { fetch: recorder.fetch });
    const client = await connectOver(transport);
    await client.listTools();
    await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined });
    await recorder.when((event) => event.phase === 'response' && event.call.method === 'GET');
    await client.close();

    const seenByServer = server.requests.map((request) => `${request.method} ${request.rpc ?? ''}`).sort();
    const sentByFetch = recorder.calls.map((call) => `${call.method} ${call.rpc ?? ''}`).sort();
    expect(sentByFetch).toEqual(seenByServer);
    expect(sentByFetch).toContain('DELETE ');
    expect(sentByFetch).toContain('GET ');
    expect(globalFetch).not.toHaveBeenCalled();
  });
});

describe('failure', { timeout: 5_000 }, () => {
  const initialize: JSONRPCMessage = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };

  it('F4: after a failed initialize, send() rejects at once with the same typed error each time, without a request', async () => {
    const server = await serve({ sse: true });
    // 403 rather than 400: a 400/404/405 to initialize may start the legacy fallback (L1).
    server.fault({ method: 'POST', rpc: 'initialize', status: 403, body: 'forbidden' });
    const recorder = recordingFetch();
    const transport = transportFor(server, { fetch: recorder.fetch });
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const delivered: JSONRPCMessage[] = [];
    transport.onmessage = (message) => delivered.push(message);
    await transport.start();

    const initError = await rejection(transport.send(initialize));
    expect(initError).toBeInstanceOf(StreamableHTTPError);
    expect((initError as StreamableHTTPError).status).toBe(403);
    // P10: the initialize was answered through send() alone: no synthetic answer.
    expect(delivered).toEqual([]);
    expect(transport.actor.getSnapshot().hasTag('failed')).toBe(true);

    const requests = server.requests.length;
    const calls = recorder.calls.length;
    const first = await rejection(transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    const second = await rejection(transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(first).toBeInstanceOf(TransportFailedError);
    expect(second).toBe(first);
    expect((first as Error).cause).toBe(initError);
    expect(errors).toContain(first);
    expect(server.requests.length).toBe(requests);
    expect(recorder.calls.length).toBe(calls);
  });

  it('F2: after close() the actor has no children and no socket or timer is left behind', async () => {
    const baseline = activeResources();
    const timers = trackTimers();
    try {
      const server = await startServer({ sse: true });
      const transport = new StreamableHTTPClientTransport(server.url);
      const client = newClient();
      try {
        await client.connect(transport);
        await client.listTools();
        await client.callTool({ name: 'progress', arguments: { steps: 5 } }, undefined, { onprogress: () => undefined });
        await server.waitFor(byMethod('GET'));
        await client.close();
        expect(childrenOf(transport)).toEqual([]);
      } finally {
        // The server's own handles go first; what remains beyond the baseline is the client's.
        await server.close();
      }
      const { surplus, pending } = await leftoversOver(baseline, timers);
      expect(surplus).toEqual({});
      expect(pending).toEqual([]);
    } finally {
      timers.stop();
    }
  });
});
