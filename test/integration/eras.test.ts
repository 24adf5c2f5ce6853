/**
 * Protocol eras (E1-E10) against the v2 SDK's real server (`createMcpHandler` over node:http on
 * 127.0.0.1), with the v2 SDK Client (`@modelcontextprotocol/client`) over this transport, and
 * the 1.x Client where the era is one it cannot speak (E9).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connectionEra,
  connectionStatus,
  ModernOnlyServerError,
  parseSavedState,
  StreamableHTTPClientTransport,
  type FetchLike,
  type JSONRPCMessage,
} from '../../src/index.js';
import { startV2Server, type V2LoggedRequest, type V2ServerOptions, type V2TestServer } from '../support/v2-server.js';
import { startServer } from '../support/mcp-server.js';
import { startTmcpServer } from '../support/tmcp-server.js';
import { only, rejection, until, within } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';
import { recordWaits } from '../support/waits.js';

afterEach(runCleanups);

type Mode = 'auto' | 'legacy' | { pin: string };

async function v2Server(options: V2ServerOptions = {}): Promise<V2TestServer> {
  const server = await startV2Server(options);
  cleanups.push(() => server.close());
  return server;
}

function v2Client(mode: Mode): Client {
  return new Client({ name: 'eras-test', version: '1.0.0' }, { versionNegotiation: { mode } });
}

/** A v2 Client connected over this transport; both are closed after the test. */
async function connect(server: V2TestServer, mode: Mode, transport = new StreamableHTTPClientTransport(server.url)) {
  const client = v2Client(mode);
  const warnings: Error[] = [];
  await client.connect(transport);
  const previous = transport.onerror;
  transport.onerror = (error) => {
    warnings.push(error);
    previous?.(error);
  };
  cleanups.push(() => client.close());
  return { client, transport, warnings };
}

function headerOf(request: V2LoggedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

const toolCalls = (server: V2TestServer) => server.requests.filter((r) => r.rpc === 'tools/call');

/** The tool a `tools/call` body names, and its request id: what an intercepting test server answers by. */
function toolCallOf(body: unknown): { name: string | undefined; id: number } {
  const call = (typeof body === 'object' && body !== null ? body : {}) as { id?: number; params?: { name?: string } };
  return { name: call.params?.name, id: call.id ?? 0 };
}

/** A fetch that notes when each SSE comment line (a keep-alive) of a response body reaches the client. */
function commentTimes(times: number[]): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) return response;
    const decoder = new TextDecoder();
    const noted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          for (const _comment of decoder.decode(chunk, { stream: true }).matchAll(/^:/gm)) times.push(performance.now());
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(noted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

describe('E1, E2: the v2 SDK Client over this transport, in each negotiation mode', () => {
  it("E1, E2: 'auto' against a modern-only server speaks 2026-07-28; the era is chart state and a tag", async () => {
    const server = await v2Server({ legacy: 'reject' });
    const { client, transport } = await connect(server, 'auto');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const snapshot = transport.actor.getSnapshot();
    expect(snapshot.matches('modern')).toBe(true);
    expect(snapshot.hasTag('modern')).toBe(true);
    expect(snapshot.hasTag('connected')).toBe(true);
    expect(connectionEra(snapshot)).toBe('modern');
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(server.requests.map((r) => `${r.method} ${r.rpc ?? ''}`)).toEqual(['POST server/discover', 'POST tools/call']);
  });

  it("E1, E2: 'auto' against a server with the legacy fallback still chooses 2026-07-28", async () => {
    const server = await v2Server();
    const { client, transport } = await connect(server, 'auto');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(connectionEra(transport.actor.getSnapshot())).toBe('modern');
  });

  it("E1, E2: 'legacy' mode against the fallback server speaks 2025-11-25 with a session region", async () => {
    const server = await v2Server();
    const { client, transport } = await connect(server, 'legacy');
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    const snapshot = transport.actor.getSnapshot();
    expect(snapshot.matches('open')).toBe(true);
    expect(connectionEra(snapshot)).toBe('streamable');
    const result = await client.callTool({ name: 'echo', arguments: { text: 'old' } });
    expect(result.content).toEqual([{ type: 'text', text: 'old' }]);
    expect(server.requests.some((r) => r.rpc === 'server/discover')).toBe(false);
  });

  it("E1, E2: { pin: '2026-07-28' } connects to a modern-only server", async () => {
    const server = await v2Server({ legacy: 'reject' });
    const { client, transport } = await connect(server, { pin: '2026-07-28' });
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
  });

  it('E2: hasPerRequestStream is true and setSupportedProtocolVersions keeps what the Client offers', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const { transport } = await connect(server, 'auto');
    expect(transport.hasPerRequestStream).toBe(true);
    expect(transport.supportedProtocolVersions).toContain('2025-11-25');
  });
});

describe('E2: the v2 SDK option names', () => {
  it('E2: protocolVersion (with sessionId) is sent from the first request of a continued session', async () => {
    const server = await startServer();
    cleanups.push(() => server.close());
    const first = new StreamableHTTPClientTransport(server.url, { terminateOnClose: false });
    const client = new ClientV1({ name: 'e2', version: '1.0.0' });
    await client.connect(first);
    const sessionId = first.sessionId;
    await client.close();
    const continued = new StreamableHTTPClientTransport(server.url, { sessionId, protocolVersion: '2025-06-18', standaloneStream: false });
    const answered: JSONRPCMessage[] = [];
    continued.onmessage = (message) => answered.push(message);
    await continued.start();
    await continued.send({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });
    await until(() => answered.length > 0, 'the list was answered');
    const list = server.requests.filter((r) => r.rpc === 'tools/list').at(-1);
    expect(list?.headers['mcp-protocol-version']).toBe('2025-06-18');
    expect(continued.protocolVersion).toBe('2025-06-18');
    await continued.close();
  });
});

describe('E3, E4: modern requests', () => {
  it('E3: every modern POST carries MCP-Protocol-Version, Mcp-Method and Mcp-Name from its body', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const { client } = await connect(server, 'auto');
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await client.listTools();
    const probe = server.requests.find((r) => r.rpc === 'server/discover');
    const call = only(toolCalls(server), 'tools/call');
    const list = server.requests.find((r) => r.rpc === 'tools/list');
    if (probe === undefined || list === undefined) throw new Error('requests missing');
    expect(headerOf(probe, 'mcp-protocol-version')).toBe('2026-07-28');
    expect(headerOf(probe, 'mcp-method')).toBe('server/discover');
    expect(headerOf(call, 'mcp-method')).toBe('tools/call');
    expect(headerOf(call, 'mcp-name')).toBe('echo');
    expect(headerOf(list, 'mcp-method')).toBe('tools/list');
    expect(headerOf(list, 'mcp-name')).toBeUndefined();
  });

  it('E3: a name that is not a plain ASCII header value is sent in the base64 sentinel; reserved per-request headers cannot override, others pass', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const { transport } = await connect(server, 'auto');
    const received: JSONRPCMessage[] = [];
    transport.onmessage = (message) => received.push(message);
    const name = 'héllo wörld ';
    await transport.send(
      {
        jsonrpc: '2.0',
        id: 900,
        method: 'tools/call',
        params: { name, arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      },
      { headers: { 'Mcp-Method': 'evil', 'MCP-Protocol-Version': '1999-01-01', 'Mcp-Param-Region': 'eu', 'Mcp-Session-Id': 'x' } },
    );
    const call = await server.waitFor((r) => r.rpc === 'tools/call');
    expect(headerOf(call, 'mcp-name')).toBe(`=?base64?${Buffer.from(name, 'utf8').toString('base64')}?=`);
    expect(headerOf(call, 'mcp-method')).toBe('tools/call');
    expect(headerOf(call, 'mcp-protocol-version')).toBe('2026-07-28');
    expect(headerOf(call, 'mcp-param-region')).toBe('eu');
    expect(headerOf(call, 'mcp-session-id')).toBeUndefined();
    await until(() => received.some((m) => 'id' in m && m.id === 900), 'the call was answered');
  });

  it('E4: no session header, no GET stream, no DELETE on close; terminateSession() sends nothing', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const { client, transport } = await connect(server, 'auto');
    await client.callTool({ name: 'echo', arguments: { text: 'a' } });
    await transport.terminateSession();
    await client.close();
    expect(server.requests.every((r) => r.method === 'POST')).toBe(true);
    expect(server.requests.every((r) => headerOf(r, 'mcp-session-id') === undefined)).toBe(true);
    expect(transport.sessionId).toBeUndefined();
    expect(transport.actor.getSnapshot().matches('closed')).toBe(true);
  });

  it('E4: a session ID from a modern server is ignored, with one warning, and never sent back', async () => {
    const server = await v2Server({
      legacy: 'reject',
      intercept: (req, res, body) => {
        const { name, id } = toolCallOf(body);
        if (name !== 'sneaky') return false;
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sneaky-session' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 's' }], resultType: 'complete' } }));
        return true;
      },
    });
    const { client, transport, warnings } = await connect(server, 'auto');
    await client.callTool({ name: 'sneaky', arguments: {} });
    await client.callTool({ name: 'sneaky', arguments: {} });
    await client.callTool({ name: 'echo', arguments: { text: 'b' } });
    expect(transport.sessionId).toBeUndefined();
    expect(warnings.filter((w) => /no sessions/.test(w.message))).toHaveLength(1);
    expect(toolCalls(server).every((r) => headerOf(r, 'mcp-session-id') === undefined)).toBe(true);
  });
});

describe('E12: modern notifications carry the SEP-2243 headers', () => {
  it('E12: closing a listen() subscription against tmcp (strict about Mcp-Method) POSTs notifications/cancelled with both headers, answered 202', async () => {
    const server = await startTmcpServer();
    cleanups.push(() => server.close());
    const client = v2Client('auto');
    const transport = new StreamableHTTPClientTransport(server.url);
    await client.connect(transport);
    cleanups.push(() => client.close());
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
    const subscription = await within(client.listen({ toolsListChanged: true }), 'the listen ack');
    await subscription.close();
    const cancellation = await server.waitFor((r) => r.rpc === 'notifications/cancelled');
    expect(cancellation.headers['mcp-method']).toBe('notifications/cancelled');
    expect(cancellation.headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(await within(cancellation.status, 'the answer to the cancellation')).toBe(202);
  });

  it("E12: a modern notification without an envelope of its own takes the connection's version; a 2025-era notification gets no Mcp-Method", async () => {
    const modern = await v2Server();
    const { transport } = await connect(modern, 'auto');
    await transport.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    const notification = await modern.waitFor((r) => r.rpc === 'notifications/roots/list_changed');
    expect(headerOf(notification, 'mcp-method')).toBe('notifications/roots/list_changed');
    expect(headerOf(notification, 'mcp-protocol-version')).toBe('2026-07-28');
    const old = await v2Server();
    await connect(old, 'legacy');
    const initialized = await old.waitFor((r) => r.rpc === 'notifications/initialized');
    expect(headerOf(initialized, 'mcp-method')).toBeUndefined();
  });
});

describe('E5, E6: broken streams and cancellation', () => {
  it('E5: a response stream cut before its response fails that call at once; no resume GET; other calls go on', async () => {
    const server = await v2Server({
      legacy: 'reject',
      intercept: (req, res, body) => {
        if (toolCallOf(body).name !== 'slow') return false;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: ev-1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n');
        setTimeout(() => res.destroy(), 50);
        return true;
      },
    });
    const { client, transport } = await connect(server, 'auto');
    const waits = recordWaits(transport);
    const error = await within(rejection(client.callTool({ name: 'slow', arguments: { ms: 10 } })), 'the cut call fails');
    // At once: the chart planned no reconnect wait for it.
    expect(waits).toEqual([]);
    expect(String(error)).toMatch(/ended before its response/);
    expect(server.requests.some((r) => r.method === 'GET')).toBe(false);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'still' } })).content).toEqual([{ type: 'text', text: 'still' }]);
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
  });

  it("E5: with reissue: 'reads', a read-only request cut before its answer goes once more under a new id; the caller gets its answer under its own id; a call is not re-issued", async () => {
    let cut = 0;
    const server = await v2Server({
      legacy: 'reject',
      intercept: (req, res, body) => {
        const method = typeof body === 'object' && body !== null && 'method' in body ? body.method : undefined;
        const { name } = toolCallOf(body);
        const cutThis = (method === 'tools/list' && cut === 0) || name === 'slow';
        if (!cutThis) return false;
        cut++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: ev-1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n');
        setTimeout(() => res.destroy(), 30);
        return true;
      },
    });
    const transport = new StreamableHTTPClientTransport(server.url, { reissue: 'reads' });
    const { client } = await connect(server, 'auto', transport);
    const { tools } = await within(client.listTools(), 'the re-issued list');
    expect(tools.map((tool) => tool.name)).toContain('echo');
    const lists = server.requests.filter((r) => r.rpc === 'tools/list');
    expect(lists).toHaveLength(2);
    const [first, second] = lists.map((r) => (r.body as { id: unknown }).id);
    expect(second).toBe(`${String(first)}:reissued`);
    // A call is not a read: it fails at once, and is sent once.
    await within(rejection(client.callTool({ name: 'slow', arguments: { ms: 1 } })), 'the cut call fails');
    expect(toolCalls(server)).toHaveLength(1);
  });

  it('E6: aborting a request closes its POST (the server sees it), POSTs nothing for it, and touches nothing else', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const { client, transport, warnings } = await connect(server, 'auto');
    const controller = new AbortController();
    const slow = client.callTool({ name: 'slow', arguments: { ms: 30_000 } }, { signal: controller.signal });
    const request = await server.waitFor((r) => r.rpc === 'tools/call');
    controller.abort();
    await rejection(slow);
    await within(request.ended, 'the server saw the request close', 2_000);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'after' } })).content).toEqual([{ type: 'text', text: 'after' }]);
    expect(server.requests.some((r) => r.rpc === 'notifications/cancelled')).toBe(false);
    expect(warnings).toEqual([]);
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
  });
});

describe('E7: subscriptions/listen', () => {
  it('E7: a listen stream is a child while open, kept alive by comments, and delivers change notifications', async () => {
    const server = await v2Server({ legacy: 'reject', keepAliveMs: 50 });
    // When each keep-alive comment reached the client: the moment to look is marked by them, not by a sleep.
    const comments: number[] = [];
    const transport = new StreamableHTTPClientTransport(server.url, { streamIdleTimeout: 300, fetch: commentTimes(comments) });
    const { client } = await connect(server, 'auto', transport);
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    const subscription = await within(client.listen({ toolsListChanged: true }), 'the listen ack');
    expect(Object.keys(transport.actor.getSnapshot().children)).toContain('listen-0');
    // Kept alive past three idle timeouts by the server's keep-alive comments alone: the moment is the first
    // comment read more than three idle timeouts after the listen stream was acknowledged.
    const acknowledged = performance.now();
    await until(() => comments.some((at) => at - acknowledged > 3 * 300), 'keep-alive comments over three idle timeouts', 1_500);
    expect(Object.keys(transport.actor.getSnapshot().children)).toContain('listen-0');
    server.handler.notify.toolsChanged();
    await until(() => changed === 1, 'the change notification');
    await subscription.close();
    await until(() => !('listen-0' in transport.actor.getSnapshot().children), 'the listen child stopped');
  });

  it('E7: a listen stream the server ends gracefully (its result) is told apart from a drop', async () => {
    const server = await v2Server({ legacy: 'reject', keepAliveMs: 0 });
    const { client, transport, warnings } = await connect(server, 'auto');
    const subscription = await within(client.listen({ toolsListChanged: true }), 'the listen ack');
    // The handler's close() ends its open listen streams with their result.
    await server.handler.close();
    const cause = await within(subscription.closed, 'the subscription learned of the graceful end');
    expect(cause).toBe('graceful');
    await until(() => !('listen-0' in transport.actor.getSnapshot().children), 'the listen child stopped');
    expect(warnings).toEqual([]);
  });

  it('E7: a dropped listen stream reaches the caller at once, told apart from a graceful end', async () => {
    const server = await v2Server({ legacy: 'reject', keepAliveMs: 0 });
    const { client, transport } = await connect(server, 'auto');
    const subscription = await within(client.listen({ toolsListChanged: true }), 'the listen ack');
    const listen = await server.waitFor((r) => r.rpc === 'subscriptions/listen');
    expect(listen).toBeDefined();
    // Drop every connection: the listen stream breaks without a result.
    await server.close();
    const cause = await within(subscription.closed, 'the subscription learned of the drop');
    expect(cause).toBe('remote');
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
  });
});

describe('W6, E7: the status through an outage of a 2026-07-28 server, for an app that only listens', () => {
  it('W6, E7: a listen refused with 503 makes the status degraded; the listen stream open again makes it connected, with no call answered', async () => {
    let down = false;
    const server = await v2Server({
      legacy: 'reject',
      keepAliveMs: 0,
      intercept: (_req, res) => {
        if (!down) return false;
        res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
        return true;
      },
    });
    const { client, transport } = await connect(server, 'auto');
    down = true;
    await expect(client.listen({ toolsListChanged: true })).rejects.toThrow(/503/);
    await until(() => connectionStatus(transport.actor.getSnapshot()) === 'degraded', 'degraded after the refusal');
    down = false;
    const sent = server.requests.length;
    const subscription = await within(client.listen({ toolsListChanged: true }), 'the listen ack');
    await until(() => connectionStatus(transport.actor.getSnapshot()) === 'connected', 'connected once the listen stream is open');
    expect(server.requests.slice(sent).map((r) => r.rpc)).toEqual(['subscriptions/listen']);
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    server.handler.notify.toolsChanged();
    await until(() => changed === 1, 'the change notification on the listen stream open again');
    await subscription.close();
  });
});

describe('E13: a listen stream the server ends with notifications/cancelled', () => {
  /**
   * A v2 server whose front answers subscriptions/listen itself, as the spec allows a server to
   * end one: the acknowledgement, then (`cancel`) notifications/cancelled for the listen request,
   * then the end of the stream.
   */
  async function listenEndingServer(cancel: boolean): Promise<V2TestServer> {
    return v2Server({
      legacy: 'reject',
      intercept: (_req, res, body) => {
        const listen = body as { method?: string; id?: string | number };
        if (listen.method !== 'subscriptions/listen' || listen.id === undefined) return false;
        const meta = { 'io.modelcontextprotocol/subscriptionId': listen.id };
        const event = (message: object) => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          event({ method: 'notifications/subscriptions/acknowledged', params: { _meta: meta, notifications: { toolsListChanged: true } } }),
        );
        setTimeout(() => {
          if (cancel)
            res.write(event({ method: 'notifications/cancelled', params: { requestId: listen.id, reason: 'server shutting down' } }));
          res.end();
        }, 50);
        return true;
      },
    });
  }

  it('E13: under the v2 Client the cancellation closes the subscription with no warning, and the connection goes on', async () => {
    const server = await listenEndingServer(true);
    const { client, transport, warnings } = await connect(server, 'auto');
    const subscription = await within(client.listen({ toolsListChanged: true }), 'the listen ack');
    // The v2 Client reads a server's cancellation as a remote close (and aborts the request); nothing is a drop.
    expect(await within(subscription.closed, 'the subscription learned of the end')).toBe('remote');
    await until(() => !('listen-0' in transport.actor.getSnapshot().children), 'the listen child stopped');
    expect(warnings).toEqual([]);
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    expect(result.content).toEqual([{ type: 'text', text: 'still here' }]);
  });

  /** A listen request sent straight to the transport (no Client aborting it): how its child ends, what onerror and the stream-end hook heard. */
  async function rawListen(cancel: boolean) {
    const server = await listenEndingServer(cancel);
    const { transport, warnings } = await connect(server, 'auto');
    const delivered: JSONRPCMessage[] = [];
    const previous = transport.onmessage;
    transport.onmessage = (message) => {
      delivered.push(message);
      previous?.(message);
    };
    const ends: string[] = [];
    let streamEnds = 0;
    const request = {
      jsonrpc: '2.0' as const,
      id: 'raw-listen',
      method: 'subscriptions/listen',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }, notifications: { toolsListChanged: true } },
    };
    await transport.send(request, { onRequestStreamEnd: () => streamEnds++ });
    const child = transport.actor.getSnapshot().children['listen-0'];
    if (child === undefined) throw new Error('no listen child');
    const watch = child.subscribe((snapshot) => {
      if (snapshot.status === 'done') ends.push(JSON.stringify(snapshot.value).replaceAll('"', ''));
    });
    await until(() => !('listen-0' in transport.actor.getSnapshot().children), 'the listen child stopped');
    watch.unsubscribe();
    return { ends, warnings, streamEnds, delivered };
  }

  it('E13: ended with the cancellation, the listen child ends done: no warning, no failure answer, the stream-end hook once', async () => {
    const { ends, warnings, streamEnds, delivered } = await rawListen(true);
    expect(ends).toEqual(['done']);
    expect(warnings).toEqual([]);
    expect(streamEnds).toBe(1);
    const methods = delivered.map((m) => ('method' in m ? m.method : `response ${String('id' in m ? m.id : '')}`));
    expect(methods).toEqual(['notifications/subscriptions/acknowledged', 'notifications/cancelled']);
  });

  it('E13: ended without the cancellation (nor a result), the same stream is a drop: the child fails, onerror hears it', async () => {
    const { ends, warnings, streamEnds, delivered } = await rawListen(false);
    expect(ends).toEqual(['failed']);
    expect(warnings.map((w) => w.name)).toEqual(['StreamEndedError']);
    expect(streamEnds).toBe(1);
    expect(delivered.map((m) => ('method' in m ? m.method : 'a response'))).toEqual(['notifications/subscriptions/acknowledged']);
  });
});

describe('E8: modern answers keep their meaning', () => {
  it('E8: a 404 with a -32601 body is method-not-found for that call; nothing else changes', async () => {
    const server = await v2Server({
      legacy: 'reject',
      intercept: (req, res, body) => {
        const { name, id } = toolCallOf(body);
        if (name !== 'gone') return false;
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
        return true;
      },
    });
    const { client, transport } = await connect(server, 'auto');
    const error = await rejection(client.callTool({ name: 'gone', arguments: {} }));
    expect(String(error)).toMatch(/Method not found/);
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'ok' } })).content).toEqual([{ type: 'text', text: 'ok' }]);
  });
});

describe('E9: the wrong SDK for the server', () => {
  it('E9: the 1.x Client against a modern-only server fails at once with a typed error naming the fix', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const transport = new StreamableHTTPClientTransport(server.url);
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const client = new ClientV1({ name: 'old', version: '1.0.0' });
    // At once: not after the SDK's 60 s request timeout (the bound is the test's patience).
    const error = await within(rejection(client.connect(transport)), 'connect to fail', 10_000);
    expect(String(error)).toMatch(/speaks only MCP 2026-07-28/);
    expect(String(error)).toMatch(/versionNegotiation: \{ mode: 'auto' \}/);
    expect(errors.some((e) => e instanceof ModernOnlyServerError)).toBe(true);
  });
});

describe('E10: the era verdict is kept', () => {
  it('E10: saveState() keeps the modern verdict without a session; a restored transport does not probe again', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const first = await connect(server, 'auto');
    const saved = first.transport.saveState();
    expect(saved?.era).toBe('modern');
    expect(saved?.sessionId).toBeUndefined();
    await first.client.close();
    const probes = server.requests.filter((r) => r.rpc === 'server/discover').length;
    const restored = new StreamableHTTPClientTransport(server.url, { restoreState: parseSavedState(JSON.parse(JSON.stringify(saved))) });
    const second = await connect(server, 'auto', restored);
    expect(second.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(server.requests.filter((r) => r.rpc === 'server/discover')).toHaveLength(probes);
    expect((await second.client.callTool({ name: 'echo', arguments: { text: 'again' } })).content).toEqual([
      { type: 'text', text: 'again' },
    ]);
  });

  it('E10: a restart of the same transport (close, connect) does not probe again either', async () => {
    const server = await v2Server({ legacy: 'reject' });
    const transport = new StreamableHTTPClientTransport(server.url);
    const first = await connect(server, 'auto', transport);
    await first.client.close();
    const second = await connect(server, 'auto', transport);
    expect(second.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(server.requests.filter((r) => r.rpc === 'server/discover')).toHaveLength(1);
  });
});
