/**
 * The client-transport requirements that the official TypeScript SDK's end-to-end suite names
 * (`client-transport:http:*` in its test/e2e/requirements.ts), each proved against this transport
 * with our own test. Facts carry over, code does not: where this transport's contract
 * (BEHAVIOR.md) differs from the SDK's choice, the test checks the contract and says so.
 *
 * The SDK's real server (test/support/mcp-server.ts) is used wherever it can produce the case;
 * the scripted server (test/support/scripted-server.ts) where it cannot (cut streams, gated
 * responses, chosen `retry:` values, replays). Everything runs over 127.0.0.1.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyActorRef } from 'xstate';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {
  SessionExpiredError,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  nextRetry,
  type FetchLike,
  type JSONRPCMessage,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import { cleanups, runCleanups, scripted, serve } from '../support/cleanups.js';
import { recordWaits } from '../support/waits.js';
import { json, result, sse, sseText, type RecordedRequest, type Reply } from '../support/scripted-server.js';
import {
  causeChain,
  childrenOf,
  closedForGood,
  newClient,
  noCallsInFlight,
  only,
  realFetch,
  recordingFetch,
  rejection,
  signal,
  standaloneIn,
  textOf,
  until,
  within,
} from '../support/harness.js';

afterEach(async () => {
  // Clients and transports first (their DELETE still reaches the server), then the servers.
  await runCleanups();
  vi.restoreAllMocks();
});

/** A transport (closed after the test) with everything it reports through onerror collected. */
function transportFor(url: URL, options: StreamableHTTPClientTransportOptions = {}) {
  const transport = new StreamableHTTPClientTransport(url, options);
  const errors: Error[] = [];
  transport.onerror = (error) => errors.push(error);
  cleanups.push(() => transport.close());
  return { transport, errors };
}

/** An SDK Client connected over a new transport to `url`. */
async function connect(url: URL, options: StreamableHTTPClientTransportOptions = {}, client: Client = newClient()) {
  const { transport, errors } = transportFor(url, options);
  cleanups.push(() => client.close());
  await client.connect(transport);
  return { client, transport, errors };
}

function headerOf(request: { headers: IncomingHttpHeaders }, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The media types of an Accept header, lower-cased, without parameters. */
function acceptTypes(request: { headers: IncomingHttpHeaders }): string[] {
  return (headerOf(request, 'accept') ?? '').split(',').map((type) => type.split(';')[0]!.trim().toLowerCase());
}

/** The `text` argument of a tools/call body. */
function toolText(body: unknown): unknown {
  return (body as { params?: { arguments?: { text?: unknown } } } | undefined)?.params?.arguments?.text;
}

/** A CallToolResult whose one text item is `text`. */
function toolResult(text: string): Record<string, unknown> {
  return { content: [{ type: 'text', text }] };
}

function logMessage(data: string): JSONRPCMessage {
  return { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data } };
}

/** The standalone GET stream's chart, while it runs. */
function standaloneChart(transport: StreamableHTTPClientTransport): { matches(state: string): boolean } | undefined {
  const child = transport.actor.getSnapshot().children.standalone as AnyActorRef | undefined;
  return child?.getSnapshot() as { matches(state: string): boolean } | undefined;
}

/** The send() promises a spy saw, for the message whose JSON contains `needle`. */
function sendFor(send: { mock: { calls: unknown[][]; results: { value: unknown }[] } }, needle: string): Promise<unknown> {
  const index = send.mock.calls.findIndex(([message]) => JSON.stringify(message).includes(needle));
  if (index === -1) throw new Error(`no send() of a message containing ${needle}`);
  return send.mock.results[index]!.value as Promise<unknown>;
}

/** A GET script that answers the n-th GET (from 0) with `replies[n]`, then 405. */
function getSequence(replies: readonly Reply[]): (request: RecordedRequest) => Reply {
  let n = 0;
  return () => replies[n++] ?? { status: 405 };
}

describe('SDK client-transport requirements', { timeout: 15_000 }, () => {
  it('session-stored (H5, U1): the Mcp-Session-Id of the initialize response is stored and sent on every later POST, GET and DELETE', async () => {
    const server = await serve();
    const { client, transport } = await connect(server.url);

    const sessionId = transport.sessionId;
    expect(sessionId).toBeDefined();
    expect(server.sessions.has(sessionId!)).toBe(true);
    await client.ping();
    await client.listTools();
    await server.waitFor((request) => request.method === 'GET');
    await client.close();
    await server.waitFor((request) => request.method === 'DELETE');

    const initIndex = server.requests.findIndex((request) => request.rpc === 'initialize');
    expect(headerOf(server.requests[initIndex]!, 'mcp-session-id')).toBeUndefined();
    const later = server.requests.slice(initIndex + 1);
    expect(new Set(later.map((request) => request.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of later) expect(headerOf(request, 'mcp-session-id')).toBe(sessionId);
  });

  it('protocol-version-stored (H4, U1): protocolVersion is set after connect, and adopted from the InitializeResult even without setProtocolVersion', async () => {
    const server = await serve();
    const { transport } = await connect(server.url);
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);

    // Without the SDK Client (which calls setProtocolVersion), the transport reads the result itself.
    const { transport: bare } = transportFor(server.url, { standaloneStream: false });
    const delivered: JSONRPCMessage[] = [];
    bare.onmessage = (message) => delivered.push(message);
    await bare.start();
    expect(bare.protocolVersion).toBeUndefined();
    await bare.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bare', version: '1.0.0' } },
    });
    await until(() => delivered.length === 1, 'the InitializeResult');
    expect(delivered[0]).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
    expect(bare.protocolVersion).toBe('2025-06-18');
  });

  it('protocol-version-header (H3, H4): a server that negotiates down to 2025-06-18 gets MCP-Protocol-Version: 2025-06-18 on every POST, GET and DELETE after initialize', async () => {
    const olderVersion = '2025-06-18';
    const server = await scripted();
    server.on({ rpc: 'initialize' }, (request) =>
      json(result(request.id, { protocolVersion: olderVersion, capabilities: {}, serverInfo: { name: 'older', version: '1.0.0' } })),
    );
    const { client, transport } = await connect(server.url);
    expect(transport.protocolVersion).toBe(olderVersion);

    await server.waitFor({ http: 'GET' });
    await client.ping();
    await client.ping();
    await client.close();
    await server.waitFor({ http: 'DELETE' });

    const init = server.filter({ rpc: 'initialize' });
    expect(init).toHaveLength(1);
    const initialize = server.only({ rpc: 'initialize' });
    expect(headerOf(initialize, 'mcp-protocol-version')).toBeUndefined();
    expect(headerOf(initialize, 'mcp-session-id')).toBeUndefined();
    const later = server.requests.filter((request) => request.seq > initialize.seq);
    expect(later.map((request) => request.rpc ?? request.method)).toEqual(
      expect.arrayContaining(['notifications/initialized', 'GET', 'ping', 'DELETE']),
    );
    for (const request of later) expect(headerOf(request, 'mcp-protocol-version')).toBe(olderVersion);
  });

  it('accept-header-get (H2, G1, R10): every GET (the standalone stream and a resume) sends Accept: text/event-stream', async () => {
    const server = await serve();
    const { client, transport } = await connect(server.url);
    const standalone = await server.waitFor((request) => request.method === 'GET');
    expect(headerOf(standalone, 'last-event-id')).toBeUndefined();

    const tokens: string[] = [];
    await client.callTool({ name: 'echo', arguments: { text: 'tokens' } }, undefined, {
      onresumptiontoken: (token) => tokens.push(token),
    });
    expect(tokens.length).toBeGreaterThan(0);
    await transport.resumeStream(tokens[0]!);
    await server.waitFor((request) => request.method === 'GET' && headerOf(request, 'last-event-id') === tokens[0]);

    const gets = server.requests.filter((request) => request.method === 'GET');
    expect(gets).toHaveLength(2);
    for (const get of gets) expect(acceptTypes(get)).toEqual(['text/event-stream']);
  });

  it('accept-header-post (H2): every POST sends Accept listing application/json and text/event-stream, and Content-Type: application/json', async () => {
    const server = await serve();
    const { client } = await connect(server.url);
    await client.callTool({ name: 'echo', arguments: { text: 'accept' } });

    const posts = server.requests.filter((request) => request.method === 'POST');
    expect(posts.map((request) => request.rpc)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    for (const post of posts) {
      expect(acceptTypes(post)).toEqual(expect.arrayContaining(['application/json', 'text/event-stream']));
      expect(headerOf(post, 'content-type')).toBe('application/json');
    }
  });

  it('custom-headers (H8): requestInit headers are sent on every POST, GET and DELETE', async () => {
    const server = await serve();
    const { client } = await connect(server.url, {
      requestInit: { headers: { 'X-Custom-Header': 'custom-value', 'X-Another': 'another-value' } },
    });
    await client.ping();
    await server.waitFor((request) => request.method === 'GET');
    await client.close();
    await server.waitFor((request) => request.method === 'DELETE');

    expect(new Set(server.requests.map((request) => request.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of server.requests) {
      expect(headerOf(request, 'x-custom-header')).toBe('custom-value');
      expect(headerOf(request, 'x-another')).toBe('another-value');
    }
  });

  it('custom-fetch (H9): the fetch option carries every request (POST, GET, DELETE); the global fetch is never called', async () => {
    const server = await serve();
    const globalFetch = vi.spyOn(globalThis, 'fetch');
    const recorder = recordingFetch();
    const { client } = await connect(server.url, { fetch: recorder.fetch });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
    await server.waitFor((request) => request.method === 'GET');
    await client.close();
    await server.waitFor((request) => request.method === 'DELETE');

    expect(globalFetch).not.toHaveBeenCalled();
    expect(recorder.calls.map((call) => call.method)).toEqual(server.requests.map((request) => request.method));
    expect(new Set(recorder.calls.map((call) => call.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
  });

  it('json-response-parsed (P2): a tools/call answered 200 application/json is parsed as its one JSON-RPC response', async () => {
    const server = await serve({ sse: false });
    const contentTypes: (string | null)[] = [];
    const fetch: FetchLike = async (url, init) => {
      const response = await realFetch(url, init);
      if (typeof init?.body === 'string' && init.body.includes('"tools/call"')) contentTypes.push(response.headers.get('content-type'));
      return response;
    };
    const { client, errors } = await connect(server.url, { fetch });

    const answer = await client.callTool({ name: 'echo', arguments: { text: 'test' } });
    expect(contentTypes).toHaveLength(1);
    expect(contentTypes[0]).toMatch(/^application\/json\b/i);
    expect(answer.content).toEqual([{ type: 'text', text: 'test' }]);
    expect(errors).toEqual([]);
  });

  it("404-surfaces (P8, F3, F4, P10): with sessionRecovery 'fail' a 404 surfaces as a SessionExpiredError; by default the session is re-initialized and the call succeeds", async () => {
    const server = await serve();
    /** Makes the server forget a session (its fixture then answers 404 to that ID), closing it after the test. */
    const forget = (id: string) => {
      const session = server.sessions.get(id)!;
      server.sessions.delete(id);
      cleanups.push(async () => {
        await session.transport.close();
        await session.server.close();
      });
    };

    // sessionRecovery: 'fail': the caller sees the 404, typed; the transport stays failed.
    {
      // A client whose roots/list answer waits: the 'roots' tool's POST stream stays open meanwhile.
      const client = newClient({ roots: {} });
      const answerRoots = signal();
      let rootsAsked = false;
      client.setRequestHandler(ListRootsRequestSchema, async () => {
        rootsAsked = true;
        await answerRoots.promise;
        return { roots: [] };
      });
      cleanups.push(async () => {
        answerRoots.fire();
        await Promise.resolve();
      });
      const { transport, errors } = await connect(server.url, { sessionRecovery: 'fail' }, client);
      const send = vi.spyOn(transport, 'send');
      const sessionId = transport.sessionId!;
      // The standalone GET is open before the session goes, so the 404 meets the request.
      await until(() => standaloneIn(transport, 'listening'), 'the standalone stream to open');
      const inFlight = client.callTool({ name: 'roots', arguments: {} }).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await until(() => rootsAsked, 'the roots tool to be running');
      forget(sessionId);

      // P10: the call rejects with the typed error its send() rejected with.
      const error = await rejection(client.ping());
      expect(error).toBeInstanceOf(SessionExpiredError);
      const sent = await rejection(sendFor(send, '"ping"'));
      expect(sent).toBe(error);
      const http = causeChain(sent).find((e) => e instanceof StreamableHTTPError);
      expect(http).toMatchObject({ status: 404, sessionMissing: true });
      expect(errors.some((e) => e instanceof SessionExpiredError)).toBe(true);
      expect(transport.actor.getSnapshot().hasTag('failed')).toBe(true);

      // P10: the call whose stream was open on the expired session is answered at once, too.
      const stranded = await within(inFlight, 'the in-flight call to be answered after the session expired', 3_000);
      expect(stranded).toBeInstanceOf(McpError);
      expect((stranded as McpError).data).toMatchObject({ type: 'SessionExpiredError' });

      // F4: failure is sticky: the next call fails at once with the same error, without a request.
      const requestsBefore = server.requests.length;
      send.mockClear();
      await rejection(client.ping());
      expect(await rejection(sendFor(send, '"ping"'))).toBe(sent);
      expect(server.requests.length).toBe(requestsBefore);
      await transport.close();
      // F1: no DELETE for a session the server said is gone.
      expect(server.requests.filter((request) => request.method === 'DELETE')).toEqual([]);
    }

    // Default (sessionRecovery: 'reinitialize'): a new session, and the call that met the 404 succeeds.
    {
      const { client, transport, errors } = await connect(server.url);
      const firstSessionId = transport.sessionId!;
      await until(() => standaloneIn(transport, 'listening'), 'the standalone stream to open');
      const initsBefore = server.requests.filter((request) => request.rpc === 'initialize').length;
      forget(firstSessionId);

      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after 404' } }))).toBe('after 404');
      expect(transport.sessionId).toBeDefined();
      expect(transport.sessionId).not.toBe(firstSessionId);
      const inits = server.requests.filter((request) => request.rpc === 'initialize');
      expect(inits).toHaveLength(initsBefore + 1);
      expect(headerOf(inits.at(-1)!, 'mcp-session-id')).toBeUndefined();
      const calls = server.requests.filter((request) => toolText(request.body) === 'after 404');
      expect(calls.map((request) => headerOf(request, 'mcp-session-id'))).toEqual([firstSessionId, transport.sessionId]);
      expect(errors.filter((e) => e instanceof SessionExpiredError)).toEqual([]);
    }
  });

  it('terminate-405-ok (F1, U1): terminateSession() resolves when the server answers the DELETE with 405; so does close()', async () => {
    const server = await serve();
    server.fault({ method: 'DELETE', status: 405, times: 2 });

    const { transport, errors } = await connect(server.url);
    const sessionId = transport.sessionId;
    await transport.terminateSession();
    const deletes = server.requests.filter((request) => request.method === 'DELETE');
    expect(deletes).toHaveLength(1);
    expect(headerOf(only(deletes, 'DELETE'), 'mcp-session-id')).toBe(sessionId);
    expect(transport.sessionId).toBeUndefined();

    const { transport: other, errors: otherErrors } = await connect(server.url);
    let closes = 0;
    other.onclose = () => closes++;
    await other.close();
    expect(server.requests.filter((request) => request.method === 'DELETE')).toHaveLength(2);
    expect(closes).toBe(1);
    expect([...errors, ...otherErrors]).toEqual([]);
  });

  it('sse-405-tolerated (G2): a standalone GET answered 405 is not retried, reports nothing, and the connection works', async () => {
    const server = await serve();
    server.fault({ method: 'GET', status: 405, times: 100 });
    const { client, transport, errors } = await connect(server.url);

    await server.waitFor((request) => request.method === 'GET');
    await until(() => standaloneChart(transport) === undefined, 'the standalone stream to end');
    expect(transport.actor.getSnapshot().matches({ open: { standalone: 'ended' } })).toBe(true);
    await client.ping();
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'fine' } }))).toBe('fine');
    expect(server.requests.filter((request) => request.method === 'GET')).toHaveLength(1);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(errors).toEqual([]);
  });

  it('no-reconnect-after-close (F2, G4, G6): close() during a pending reconnect of the standalone stream cancels it; no request follows', async () => {
    const delay = 300;
    const server = await scripted();
    const cut = [signal(), signal()];
    server.on(
      { http: 'GET' },
      getSequence(
        cut.map((gate) => ({
          ...sse([]),
          body: [{ data: ': open\n\n' }, { data: ': cut\n\n', until: gate.promise }],
          abort: true,
        })),
      ),
    );
    const { transport } = await connect(server.url, {
      reconnectionOptions: {
        initialReconnectionDelay: delay,
        maxReconnectionDelay: delay,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 10,
        jitter: false,
      },
    });
    const opened = await server.waitFor({ http: 'GET' });

    // The reconnect machinery is live: a cut stream is reopened after the delay.
    cut[0]!.fire();
    await server.waitFor((request) => request.method === 'GET' && request.seq > opened.seq);
    // A second cut leaves a reconnect pending; close() comes before its delay is over.
    cut[1]!.fire();
    await until(() => standaloneIn(transport, 'backoff'), 'the standalone stream to wait for its reconnect');
    await transport.close();
    const requestsAtClose = server.requests.length;
    expect(server.requests.at(-1)?.method).toBe('DELETE');

    // The moment: the chart is closed and holds no child, so no wait is left to reopen the stream.
    await until(() => closedForGood(transport), 'the chart to be closed with nothing left running');
    expect(server.filter({ http: 'GET' })).toHaveLength(2);
    expect(server.requests.length).toBe(requestsAtClose);
    expect(childrenOf(transport)).toEqual([]);
  });

  it('concurrent-streams (P3, P4, F5): three POST SSE streams open at once each deliver their own response, released in reverse order', async () => {
    const server = await scripted();
    const gates = new Map(['first', 'second', 'third'].map((text) => [text, signal()]));
    server.on({ rpc: 'tools/call' }, (request) => {
      const text = String(toolText(request.body));
      return {
        ...sse([]),
        body: [
          { data: sseText([{ data: logMessage(`started ${text}`) }]) },
          { data: sseText([{ data: result(request.id, toolResult(text)) }]), until: gates.get(text)!.promise },
        ],
      };
    });
    const { client, transport } = await connect(server.url);

    const calls = ['first', 'second', 'third'].map((text) => client.callTool({ name: 'echo', arguments: { text } }));
    await until(() => server.filter({ rpc: 'tools/call' }).length === 3, 'three POST streams open at once');
    // In an open session they are data-plane calls: no POST child for a stream without incident.
    expect(childrenOf(transport).filter((id) => id.startsWith('post-'))).toEqual([]);

    gates.get('third')!.fire();
    expect(textOf(await calls[2])).toBe('third');
    gates.get('second')!.fire();
    expect(textOf(await calls[1])).toBe('second');
    gates.get('first')!.fire();
    expect(textOf(await calls[0])).toBe('first');
    await until(() => childrenOf(transport).filter((id) => id.startsWith('post-')).length === 0, 'every POST stream to stop');
  });

  it('no-reconnect-after-response (P4, R1): a POST stream that delivered its response is not resumed, though it carried event ids', async () => {
    const server = await serve();
    const { client, transport } = await connect(server.url, {
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 20, reconnectionDelayGrowFactor: 1, jitter: false },
    });
    await server.waitFor((request) => request.method === 'GET');

    const tokens: string[] = [];
    const answer = await client.callTool({ name: 'echo', arguments: { text: 'delivered' } }, undefined, {
      onresumptiontoken: (token) => tokens.push(token),
    });
    expect(textOf(answer)).toBe('delivered');
    // The server's event store stamped the stream (priming event first): a Last-Event-ID was available.
    expect(tokens.length).toBeGreaterThan(0);

    // The moment: the call is over (no data-plane call, no POST child left that could resume it).
    await noCallsInFlight(transport, 'the answered call');
    const gets = server.requests.filter((request) => request.method === 'GET');
    expect(gets).toHaveLength(1);
    expect(gets.filter((request) => headerOf(request, 'last-event-id') !== undefined)).toEqual([]);
    expect(server.requests.filter((request) => request.rpc === 'tools/call')).toHaveLength(1);
    expect(childrenOf(transport).filter((id) => id.startsWith('post-'))).toEqual([]);
  });

  it('reconnect-retry-value (R4, S3, R1, R5): a stream resumes after its retry: value; without one, backoff grows and stops after the retry budget', async () => {
    // 1. retry: 300 on a POST stream, with a 5 s backoff configured: only the retry value can explain the resume.
    {
      const retryMs = 300;
      const server = await scripted();
      let cutAt = 0;
      let callId: unknown;
      server.on({ rpc: 'tools/call' }, (request) => {
        callId = request.id;
        void request.closed.then(() => {
          cutAt = performance.now();
        });
        return { ...sse([{ id: 'retry-evt-1', retry: retryMs, data: '' }]), abort: true };
      });
      const resumes: { at: number; request: RecordedRequest }[] = [];
      server.on({ http: 'GET' }, (request) => {
        if (headerOf(request, 'last-event-id') === undefined) return { status: 405 };
        resumes.push({ at: performance.now(), request });
        return sse([{ id: 'retry-evt-2', data: result(callId as number, toolResult('after retry')) }]);
      });
      const { client, transport } = await connect(server.url, {
        reconnectionOptions: { initialReconnectionDelay: 5_000, maxReconnectionDelay: 5_000, jitter: false },
      });
      const waits = recordWaits(transport);

      const answer = await client.callTool({ name: 'echo', arguments: { text: 'after retry' } });
      expect(textOf(answer)).toBe('after retry');
      expect(resumes).toHaveLength(1);
      const resume = only(resumes, 'resume');
      expect(headerOf(resume.request, 'last-event-id')).toBe('retry-evt-1');
      const waited = resume.at - cutAt;
      expect(waited).toBeGreaterThanOrEqual(retryMs - 25);
      // The chart chose the stream's retry: value, not the 5 s backoff (W3: its planned wait).
      expect(waits.filter((wait) => wait.stream !== 'standalone').map((wait) => wait.delayMs)).toEqual([retryMs]);
      expect(server.filter({ rpc: 'tools/call' })).toHaveLength(1);
    }

    // 2. No retry: value: 100 ms, then 200 ms (grow factor 2); past maxRetries the attempts stop.
    {
      const server = await scripted();
      let cutAt = 0;
      const gets: number[] = [];
      server.on({ http: 'GET' }, (request) => {
        gets.push(performance.now());
        if (gets.length > 1) return { status: 500 };
        void request.closed.then(() => {
          cutAt = performance.now();
        });
        return { ...sse([]), body: [{ data: ': open\n\n', delayMs: 20 }], abort: true };
      });
      const { client, transport, errors } = await connect(server.url, {
        reconnectionOptions: {
          initialReconnectionDelay: 100,
          maxReconnectionDelay: 10_000,
          reconnectionDelayGrowFactor: 2,
          maxRetries: 2,
          jitter: false,
        },
      });

      await until(() => gets.length === 3, 'the reconnects', 1_200);
      // R5: maxRetries + 1 GETs before giving up (the first, then one per retry); G5: then it waits at the ceiling.
      await until(() => standaloneIn(transport, 'degraded'), 'the retry budget to be spent');
      expect(gets[1]! - cutAt).toBeGreaterThanOrEqual(100 - 25);
      expect(gets[2]! - gets[1]!).toBeGreaterThanOrEqual(200 - 25);
      // By the chart's own clock: the next GET is due only after the ceiling (10 s), not after another backoff step.
      expect(nextRetry(transport.actor.getSnapshot())).toMatchObject({ stream: 'standalone', delayMs: 10_000 });
      expect(gets).toHaveLength(3);
      await client.ping();
      expect(errors.filter((e) => e instanceof SessionExpiredError)).toEqual([]);
    }
  });

  it('reconnect-get (G4, R1, G3): a standalone GET stream that breaks is reopened with Last-Event-ID of its last event', async () => {
    const server = await scripted();
    server.on(
      { http: 'GET' },
      getSequence([
        { ...sse([{ id: 'event-id-1', data: logMessage('before the cut') }]), abort: true },
        { ...sse([{ id: 'event-id-2', data: logMessage('after the cut') }]), keepOpen: true },
      ]),
    );
    const { client, transport } = await connect(server.url, {
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 20, reconnectionDelayGrowFactor: 1, jitter: false },
    });
    const logged: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logged.push(notification.params.data);
    });

    await until(() => logged.length === 2, 'both notifications');
    expect(logged).toEqual(['before the cut', 'after the cut']);
    const gets = server.filter({ http: 'GET' });
    expect(gets).toHaveLength(2);
    // The stream as first opened carries no Last-Event-ID; the reconnect, after it, carries the last id seen.
    const opening = only(gets, 'GET without Last-Event-ID', (request) => headerOf(request, 'last-event-id') === undefined);
    const reconnect = only(gets, 'GET with Last-Event-ID', (request) => headerOf(request, 'last-event-id') !== undefined);
    expect(reconnect.seq).toBeGreaterThan(opening.seq);
    expect(headerOf(reconnect, 'last-event-id')).toBe('event-id-1');
    expect(headerOf(reconnect, 'mcp-session-id')).toBe(transport.sessionId);
    expect(headerOf(reconnect, 'mcp-protocol-version')).toBe(transport.protocolVersion);
    expect(acceptTypes(reconnect)).toEqual(['text/event-stream']);
  });

  it('reconnect-post-priming (R1, R2, P10): a POST stream that breaks is resumed only if it carried an event id (a priming event)', async () => {
    const server = await scripted();
    let primedId: unknown;
    server.on({ rpc: 'tools/call' }, (request) => {
      if (toolText(request.body) === 'without priming') return { ...sse([{ comment: 'no id yet' }]), abort: true };
      primedId = request.id;
      return { ...sse([{ id: 'post-stream-event-1', data: '' }]), abort: true };
    });
    server.on({ http: 'GET' }, (request) => {
      if (headerOf(request, 'last-event-id') !== 'post-stream-event-1') return { status: 405 };
      return sse([{ id: 'post-stream-event-2', data: result(primedId as number, toolResult('with priming')) }]);
    });
    const { client } = await connect(server.url, {
      reconnectionOptions: {
        initialReconnectionDelay: 25,
        maxReconnectionDelay: 25,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 2,
        jitter: false,
      },
    });
    await server.waitFor({ http: 'GET' });

    // No event id on the stream: nothing to resume from; the call fails at once.
    const unprimed = await rejection(client.callTool({ name: 'echo', arguments: { text: 'without priming' } }));
    expect(unprimed).toBeInstanceOf(McpError);
    expect((unprimed as McpError).message).toContain('request ended without a response');
    expect(server.filter({ http: 'GET' })).toHaveLength(1);

    // A priming event id: resumed with GET and Last-Event-ID, and the replayed response answers the call.
    const tokens: string[] = [];
    const primed = await client.callTool({ name: 'echo', arguments: { text: 'with priming' } }, undefined, {
      onresumptiontoken: (token) => tokens.push(token),
    });
    expect(textOf(primed)).toBe('with priming');
    expect(tokens).toEqual(['post-stream-event-1', 'post-stream-event-2']);
    const gets = server.filter({ http: 'GET' });
    expect(gets.map((request) => headerOf(request, 'last-event-id'))).toEqual([undefined, 'post-stream-event-1']);
    // Never re-POSTed.
    expect(server.filter({ rpc: 'tools/call' })).toHaveLength(2);
  });

  it('resume-stream-api (R10, R7, U2): a resumption token kept from one transport lets a new one on the same session receive what it missed', async () => {
    const server = await scripted();
    let callId: unknown;
    server.on({ rpc: 'tools/call' }, (request) => {
      callId = request.id;
      return { ...sse([{ id: 'e1', data: logMessage('step 1') }]), keepOpen: true };
    });
    server.on({ http: 'GET' }, (request) => {
      if (headerOf(request, 'last-event-id') !== 'e1') return { status: 405 };
      return sse([
        { id: 'e2', data: logMessage('step 2') },
        { id: 'e3', data: logMessage('step 3') },
        { id: 'e4', data: result(callId as number, toolResult('done')) },
      ]);
    });

    // The first transport sees event e1, keeps its token, and goes away before the call ends.
    const first = await connect(server.url, { terminateOnClose: false });
    const kept: string[] = [];
    const abandoned = first.client
      .callTool({ name: 'echo', arguments: { text: 'long' } }, undefined, { onresumptiontoken: (token) => kept.push(token) })
      .catch(() => 'abandoned');
    await until(() => kept.length === 1, 'the first resumption token');
    expect(kept).toEqual(['e1']);
    await first.client.close();
    expect(await abandoned).toBe('abandoned');

    // A new transport on the same session resumes from the kept token.
    const { transport } = transportFor(server.url, { sessionId: server.sessionId!, standaloneStream: false });
    const delivered: JSONRPCMessage[] = [];
    transport.onmessage = (message) => delivered.push(message);
    await transport.start();
    const tokens: string[] = [];
    await transport.resumeStream(kept[0]!, { onresumptiontoken: (token) => tokens.push(token) });
    await until(() => delivered.length === 3, 'the missed messages');

    const resume = server.filter((request) => request.method === 'GET' && headerOf(request, 'last-event-id') !== undefined);
    expect(resume).toHaveLength(1);
    expect(headerOf(only(resume, 'resume GET'), 'last-event-id')).toBe('e1');
    expect(headerOf(only(resume, 'resume GET'), 'mcp-session-id')).toBe(server.sessionId);
    expect(delivered).toEqual([logMessage('step 2'), logMessage('step 3'), result(callId as number, toolResult('done'))]);
    expect(tokens).toEqual(['e2', 'e3', 'e4']);
  });

  it('body-stream-error-preserved (F6, R2, P10, F5): an error thrown by a response body while it is read reaches the user as the same instance, in the cause chain of what onerror or send() reports', async () => {
    const server = await serve();
    const originalError = new TypeError('Custom SSE stream TypeError xyz123');
    const encoder = new TextEncoder();
    // An Error instance cannot cross a socket: this one POST's body is made here, the rest is the real server.
    const fetch: FetchLike = async (url, init) => {
      if (typeof init?.body === 'string' && toolText(JSON.parse(init.body)) === 'break') {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode(': working\n\n'));
            setTimeout(() => {
              controller.error(originalError);
            }, 10);
          },
        });
        return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      }
      return realFetch(url, init);
    };
    const { client, transport, errors } = await connect(server.url, { fetch });
    const send = vi.spyOn(transport, 'send');

    // No event id on the stream: it cannot be resumed, so the call fails at once (R2, P10).
    const error = await rejection(client.callTool({ name: 'echo', arguments: { text: 'break' } }));
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toContain('request ended without a response');

    // What the user is told about the broken body: onerror, and send() if it had not resolved yet.
    const sent = await sendFor(send, '"break"').then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    const told = [...errors, ...(sent === undefined ? [] : [sent])];
    expect(told.some((reported) => causeChain(reported).includes(originalError))).toBe(true);
    // Nothing reported about it drops the original (no string-interpolated wrapper without a cause).
    for (const reported of told) {
      if (reported instanceof Error && reported.message.includes('xyz123')) expect(causeChain(reported)).toContain(originalError);
    }
    // F5: the session is fine.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'next' } }))).toBe('next');
  });

  it('reconnection-scheduler (R4, G4, F2): a reconnectionScheduler replaces the backoff timer: called with (reconnect, delay, attempt), its reconnect reopens the stream, its cancel runs on close()', async () => {
    const server = await scripted();
    const cutSecond = signal();
    server.on(
      { http: 'GET' },
      getSequence([
        { ...sse([]), body: [{ data: ': open\n\n', delayMs: 20 }], abort: true },
        { status: 500 },
        {
          ...sse([]),
          body: [
            { data: sseText([{ id: 'scheduler-evt-1', data: logMessage('after reconnect') }]) },
            { data: ': cut\n\n', until: cutSecond.promise },
          ],
          abort: true,
        },
      ]),
    );
    // The SDK v2 type returns `(() => void) | void`; this one always returns its cancel function.
    type Scheduler = (reconnect: () => void, delay: number, attempt: number) => () => void;
    const scheduled: { delay: number; attempt: number }[] = [];
    const reconnects: (() => void)[] = [];
    let cancelled = 0;
    const scheduler: Scheduler = (reconnect, delay, attempt) => {
      scheduled.push({ delay, attempt });
      reconnects.push(reconnect);
      return () => {
        cancelled++;
      };
    };
    // Typed as a variable so this compiles whether or not the option is declared yet.
    const options: StreamableHTTPClientTransportOptions & { reconnectionScheduler: Scheduler } = {
      reconnectionOptions: {
        initialReconnectionDelay: 150,
        maxReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 5,
        jitter: false,
      },
      reconnectionScheduler: scheduler,
    };
    const { client, transport } = await connect(server.url, options);
    const logged: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logged.push(notification.params.data);
    });
    const gets = () => server.filter({ http: 'GET' }).length;

    // The dropped stream asks the scheduler: the first delay, attempt 0.
    await until(() => scheduled.length === 1, 'the scheduler to be asked');
    // attempt is zero-indexed, as the SDK documents it.
    expect.soft(scheduled).toEqual([{ delay: 150, attempt: 0 }]);
    // The scheduler replaces the timer: time alone reconnects nothing. The stream waits in the 'scheduled' wait,
    // which has no timer of its own: only the scheduler's reconnect ('reconnect.due') leaves it.
    expect(standaloneIn(transport, { backoff: 'scheduled' })).toBe(true);
    expect(gets()).toBe(1);

    // Its reconnect opens the GET; a 500 asks again with attempt 1 and the grown delay.
    reconnects[0]!();
    await until(() => scheduled.length === 2, 'the scheduler to be asked again');
    expect(gets()).toBe(2);
    expect.soft(scheduled).toEqual([
      { delay: 150, attempt: 0 },
      { delay: 300, attempt: 1 },
    ]);

    // The re-established stream is live end to end.
    reconnects[1]!();
    await until(() => logged.length === 1, 'the notification on the reopened stream');
    expect(logged).toEqual(['after reconnect']);
    expect(gets()).toBe(3);

    // A drop after progress starts again at attempt 0; close() runs the pending reconnect's cancel.
    cutSecond.fire();
    await until(() => scheduled.length === 3, 'the scheduler to be asked after the second drop');
    expect.soft(scheduled[2]).toEqual({ delay: 150, attempt: 0 });
    // As in the SDK, cancel is for a pending wait only: never called for one whose reconnect already ran.
    expect.soft(cancelled, 'cancel calls before close()').toBe(0);
    const cancelledBeforeClose = cancelled;
    await transport.close();
    expect(cancelled - cancelledBeforeClose, 'cancel calls by close()').toBe(1);
    // A reconnect called after close() does nothing: the chart it would tell is closed, with no stream child left to reopen.
    expect(closedForGood(transport)).toBe(true);
    reconnects[2]!();
    expect(closedForGood(transport)).toBe(true);
    expect(gets()).toBe(3);
  });

  it('error-status-code (P6, P9, P10, L1, U1): a non-OK answer to connect or to a call rejects with the HTTP status on the error (send(): StreamableHTTPError.status; the Client: data.status)', async () => {
    const server = await serve();
    /** Every HTTP status an error carries: `.status` along its cause chain, and an McpError's `data.status`. */
    const statusesIn = (error: unknown): unknown[] =>
      causeChain(error).flatMap((e) => [
        (e as { status?: unknown }).status,
        e instanceof McpError ? (e.data as { status?: unknown } | undefined)?.status : undefined,
      ]);

    // 404 and 401 (no authProvider) to the initialize POST; 404 also with the legacy fallback (L1) tried and failing.
    const cases = [
      { status: 404, options: { legacyFallback: false } },
      { status: 401, options: {} },
      { status: 404, options: {} },
    ] as const;
    for (const { status, options } of cases) {
      server.fault({ method: 'POST', rpc: 'initialize', status, body: status === 404 ? 'Not Found' : 'Unauthorized' });
      const { transport } = transportFor(server.url, options);
      const send = vi.spyOn(transport, 'send');
      const error = await rejection(newClient().connect(transport));
      const sent = await rejection(sendFor(send, '"initialize"'));
      const label = `${status} to initialize${'legacyFallback' in options ? ' without legacy fallback' : ''}`;
      expect.soft(statusesIn(error), `${label}: the Client's rejection`).toContain(status);
      expect.soft(statusesIn(sent), `${label}: send()'s rejection`).toContain(status);
      if (Object.keys(options).length > 0 || status === 401) {
        // Nothing between the answer and the caller: the error is the HTTP error itself.
        expect.soft(sent, label).toBeInstanceOf(StreamableHTTPError);
        expect.soft((sent as StreamableHTTPError).code, label).toBe(status);
      }
      await transport.close();
    }

    // 500 to a tools/call after a successful connect.
    const { client, transport } = await connect(server.url);
    const send = vi.spyOn(transport, 'send');
    server.fault({ method: 'POST', rpc: 'tools/call', status: 500, body: 'Internal Server Error' });
    // P10: the Client rejects with the StreamableHTTPError send() rejected with.
    const error = await rejection(client.callTool({ name: 'echo', arguments: { text: 'boom' } }));
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBe(500);
    const sent = await rejection(sendFor(send, '"boom"'));
    expect(sent).toBe(error);
  });

  it('session-id-property (U2, H5): sessionId is undefined before connect, the server-assigned ID after; a stateless server leaves it undefined', async () => {
    const server = await serve();
    const assigned: (string | null)[] = [];
    const fetch: FetchLike = async (url, init) => {
      const response = await realFetch(url, init);
      if (typeof init?.body === 'string' && init.body.includes('"method":"initialize"'))
        assigned.push(response.headers.get('mcp-session-id'));
      return response;
    };
    const { transport } = transportFor(server.url, { fetch });
    expect(transport.sessionId).toBeUndefined();
    const client = newClient();
    cleanups.push(() => client.close());
    await client.connect(transport);
    expect(assigned).toHaveLength(1);
    expect(assigned[0]).toEqual(expect.any(String));
    expect(transport.sessionId).toBe(assigned[0]);

    const stateless = await serve({ stateful: false });
    const { transport: statelessTransport } = transportFor(stateless.url);
    expect(statelessTransport.sessionId).toBeUndefined();
    const statelessClient = newClient();
    cleanups.push(() => statelessClient.close());
    await statelessClient.connect(statelessTransport);
    expect(statelessTransport.sessionId).toBeUndefined();
  });

  it('session-id-option (U2, H5): a sessionId given to the constructor is sent as Mcp-Session-Id from the first request on; no initialize', async () => {
    const server = await serve();
    const first = await connect(server.url, { standaloneStream: false });
    const sessionId = first.transport.sessionId!;
    const requestsBefore = server.requests.length;

    const { client, transport } = await connect(server.url, { sessionId, terminateOnClose: false });
    expect(transport.sessionId).toBe(sessionId);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'reused session' } }))).toBe('reused session');

    const reused = server.requests.slice(requestsBefore);
    expect(reused.some((request) => request.rpc === 'tools/call')).toBe(true);
    expect(reused.some((request) => request.rpc === 'initialize')).toBe(false);
    for (const request of reused) expect(headerOf(request, 'mcp-session-id')).toBe(sessionId);
  });

  it('reconnect-failure-onerror (G5, R6, F3, F5): reconnects of the standalone stream that keep failing are reported through onerror, never through an unrelated call; 404s on them do not loop', async () => {
    const maxRetries = 2;
    // Budget of 2 with 10 ms steps; past it the stream waits at the 60 s ceiling (G5).
    const reconnectionOptions = {
      initialReconnectionDelay: 10,
      maxReconnectionDelay: 60_000,
      reconnectionDelayGrowFactor: 1,
      maxRetries,
      jitter: false,
    };
    const cutStream: Reply = { ...sse([]), body: [{ data: ': open\n\n', delayMs: 20 }], abort: true };

    // Every reconnect answered 500 (R6: retried under the budget).
    {
      const server = await scripted();
      server.on({ http: 'GET' }, getSequence([cutStream, { status: 500 }, { status: 500 }, { status: 500 }]));
      server.on({ rpc: 'tools/call' }, (request) => json(result(request.id, toolResult(String(toolText(request.body))))));
      const { client, transport, errors } = await connect(server.url, { reconnectionOptions });

      await until(() => server.filter({ http: 'GET' }).length === maxRetries + 1, 'the reconnects');
      await until(() => standaloneIn(transport, 'degraded'), 'the retry budget to be spent');
      const reported500 = () => errors.some((e) => causeChain(e).some((c) => c instanceof StreamableHTTPError && c.status === 500));
      await until(reported500, 'the failed reconnects to be reported').catch(() => undefined);
      expect.soft(reported500(), 'onerror reports the failed reconnects, with the HTTP 500 in the cause chain').toBe(true);

      // The failure stays off the calls: an unrelated call afterwards succeeds, and the session is untouched.
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still works' } }))).toBe('still works');
      expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
      expect(server.filter({ http: 'GET' })).toHaveLength(maxRetries + 1);
    }

    // The SDK suite's own fault for this requirement: every reconnect answered 404. For this transport
    // that is session-missing (R6, F3), so the session is re-established; but a 404 that keeps coming
    // must not drive an endless, undelayed loop of initialize and GET.
    {
      const server = await scripted();
      let gets = 0;
      server.on({ http: 'GET' }, () => (gets++ === 0 ? cutStream : { status: 404, body: 'Not Found' }));
      const { transport } = await connect(server.url, { reconnectionOptions });
      await server.waitFor({ http: 'GET' });
      // The moment: the session was re-established and its first GET met 404 too, so the standalone stream was given up
      // (G2: its chart stopped; only it sends a GET); or a loop ran past the bound.
      const bound = 1 + maxRetries + 1;
      await until(
        () =>
          (server.filter({ rpc: 'initialize' }).length > 1 && !('standalone' in transport.actor.getSnapshot().children)) ||
          server.filter({ rpc: 'initialize' }).length > bound,
        'the 404s to stop or to loop',
      );
      const initializes = server.filter({ rpc: 'initialize' }).length;
      expect(initializes, `${initializes} initialize POSTs before the budget was spent`).toBeLessThanOrEqual(bound);
    }
  });
});
