/**
 * The SDK's Client over this transport against the SDK's real server (McpServer +
 * StreamableHTTPServerTransport), in every server mode: JSON or SSE responses to POSTs,
 * stateful or stateless. Calls, progress, server requests on the POST stream, and calls that fail.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { findTransportError, StreamableHTTPClientTransport, StreamableHTTPError, TransportFailedError } from '../../src/index.js';
import type { LoggedRequest, ServerOptions } from '../support/mcp-server.js';
import { closedPort, header, newClient, recordingFetch, rejection, signal, Started, textOf } from '../support/harness.js';

const modes = [
  { mode: 'JSON, stateful', sse: false, stateful: true },
  { mode: 'SSE, stateful', sse: true, stateful: true },
  { mode: 'JSON, stateless', sse: false, stateful: false },
  { mode: 'SSE, stateless', sse: true, stateful: false },
] as const;

const started = new Started();
const serve = (options: ServerOptions) => started.serve(options);
const connectClient = started.connectClient.bind(started);

/** The `text` argument of a logged tools/call. */
function toolText(request: LoggedRequest): unknown {
  const body = request.body as { params?: { arguments?: { text?: unknown } } } | undefined;
  return body?.params?.arguments?.text;
}

/** The promise send() returned for the tools/call whose text is `text`. */
function sendResultFor(send: { mock: { calls: unknown[][]; results: { value: unknown }[] } }, text: string): Promise<unknown> {
  const index = send.mock.calls.findIndex(([message]) => JSON.stringify(message).includes(`"text":"${text}"`));
  expect(index).toBeGreaterThanOrEqual(0);
  return send.mock.results[index]?.value as Promise<unknown>;
}

afterEach(async () => {
  await started.closeAll();
  vi.restoreAllMocks();
});

describe.each(modes)('$mode', { timeout: 5_000 }, ({ sse, stateful }) => {
  it('U1, H1, P2, P3: initialize, tools/list and tools/call (echo) through the SDK Client', async () => {
    const server = await serve({ sse, stateful });
    const { client, transport, errors } = await connectClient(server);

    expect(client.getServerVersion()).toEqual({ name: 'fixture', version: '1.0.0' });
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(['echo', 'progress', 'roots']);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'héllo wörld ✓' } });
    expect(textOf(result)).toBe('héllo wörld ✓');

    // H1: every message was its own POST whose body is one JSON object.
    const posts = server.requests.filter((request) => request.method === 'POST');
    expect(posts.map((request) => request.rpc)).toEqual(['initialize', 'notifications/initialized', 'tools/list', 'tools/call']);
    for (const post of posts) {
      expect(typeof post.body === 'object' && post.body !== null && !Array.isArray(post.body)).toBe(true);
    }
    expect(transport.sessionId === undefined).toBe(!stateful);
    expect(errors).toEqual([]);
  });

  it('P6, P10, F5: a 503 fails that one call at once; a concurrent and a following call succeed, the session stays', async () => {
    const server = await serve({ sse, stateful });
    const { client, transport, errors, send } = await connectClient(server);
    const sessionId = transport.sessionId;
    server.fault({ method: 'POST', rpc: 'tools/call', status: 503, match: (request) => toolText(request) === 'fail' });

    const concurrent = client.callTool({ name: 'echo', arguments: { text: 'concurrent' } });
    const failing = client.callTool({ name: 'echo', arguments: { text: 'fail' } });

    // P10: the call rejects with the typed HTTP error that send() rejected with (not an McpError).
    const error = await rejection(failing);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBe(503);
    expect((error as Error).message).toContain('503');
    const sent = await rejection(sendResultFor(send, 'fail'));
    expect(sent).toBe(error);

    expect(textOf(await concurrent)).toBe('concurrent');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');

    // Not retried; the session is the same one and still open.
    expect(server.requests.filter((request) => toolText(request) === 'fail')).toHaveLength(1);
    expect(transport.sessionId).toBe(sessionId);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(server.closedSessions).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('P6, P10, F5, F6: a network error fails that one call at once with the network error as cause; others succeed', async () => {
    const server = await serve({ sse, stateful });
    const dead = new URL(`http://127.0.0.1:${await closedPort()}/mcp`);
    const recorder = recordingFetch({
      route: (call) => (typeof call.init.body === 'string' && call.init.body.includes('"fail-net"') ? dead : undefined),
    });
    const { client, transport, send } = await connectClient(server, { fetch: recorder.fetch });
    const sessionId = transport.sessionId;

    const concurrent = client.callTool({ name: 'echo', arguments: { text: 'concurrent' } });
    const failing = client.callTool({ name: 'echo', arguments: { text: 'fail-net' } });

    const error = await rejection(failing);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    // F6: the message names the root cause, not a bare "fetch failed".
    expect((error as Error).message).toMatch(/ECONNREFUSED 127\.0\.0\.1:\d+/);
    const sent = await rejection(sendResultFor(send, 'fail-net'));
    expect(sent).toBe(error);
    expect((sent as StreamableHTTPError).status).toBeUndefined();
    // F6: the original network error is kept as the cause.
    const cause = (sent as Error).cause;
    expect(cause).toBeInstanceOf(Error);
    expect(recorder.timeline.some((event) => event.phase === 'error' && event.error === cause)).toBe(true);

    expect(textOf(await concurrent)).toBe('concurrent');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
    expect(transport.sessionId).toBe(sessionId);
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });
});

describe.each(modes.filter((m) => m.sse))('$mode', { timeout: 5_000 }, ({ sse, stateful }) => {
  it('P3: every progress notification on the POST stream arrives once, in order, before the result', async () => {
    const server = await serve({ sse, stateful });
    const client = newClient();
    const clientErrors: Error[] = [];
    client.onerror = (error) => clientErrors.push(error);
    const { errors } = await connectClient(server, {}, client);
    const steps = 25;
    const seen: { progress: number; total: number | undefined }[] = [];
    let resolved = false;

    const result = await client.callTool({ name: 'progress', arguments: { steps } }, undefined, {
      onprogress: (progress) => {
        expect(resolved).toBe(false);
        seen.push({ progress: progress.progress, total: progress.total });
      },
    });
    resolved = true;

    expect(textOf(result)).toBe(`done ${steps}`);
    expect(seen).toEqual(Array.from({ length: steps }, (_, i) => ({ progress: i + 1, total: steps })));
    // No progress notification came late (the SDK reports those as for "an unknown token").
    expect(clientErrors).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('SSE, stateful', { timeout: 5_000 }, () => {
  it('P3, G3: a roots/list request from the server on the POST stream is answered and the call completes', async () => {
    const server = await serve({ sse: true, stateful: true });
    const client = newClient({ roots: {} });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work/a', name: 'a' }] }));
    const { transport, errors } = await connectClient(server, {}, client);

    const result = await client.callTool({ name: 'roots' });
    expect(JSON.parse(textOf(result) ?? 'null')).toEqual([{ uri: 'file:///work/a', name: 'a' }]);

    // The answer went back as its own POST, carrying the session.
    const answer = server.requests.find(
      (request) => request.method === 'POST' && typeof request.body === 'object' && request.body !== null && 'result' in request.body,
    );
    expect(answer).toBeDefined();
    expect(header(answer!, 'mcp-session-id')).toBe(transport.sessionId);
    expect((answer!.body as { result: unknown }).result).toEqual({ roots: [{ uri: 'file:///work/a', name: 'a' }] });
    expect(errors).toEqual([]);
  });

  it('P10, F5: a failed call does not wait for, nor poison, a call still in flight on its own stream', async () => {
    const server = await serve({ sse: true, stateful: true });
    const client = newClient({ roots: {} });
    const gate = signal();
    const inHandler = signal();
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      inHandler.fire();
      await gate.promise;
      return { roots: [] };
    });
    const { transport } = await connectClient(server, {}, client);
    server.fault({ method: 'POST', rpc: 'tools/call', status: 503, match: (request) => toolText(request) === 'fail' });

    // The roots tool is held open by the client's own handler until the gate opens.
    const inFlight = client.callTool({ name: 'roots' });
    await inHandler.promise;
    const error = await rejection(client.callTool({ name: 'echo', arguments: { text: 'fail' } }));
    expect(error).toMatchObject({ status: 503 });

    gate.fire();
    expect(textOf(await inFlight)).toBe('[]');
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
  });
});

describe('a server that is not there', { timeout: 5_000 }, () => {
  it('P6, P10, F4, F6: connect fails at once; one fault, one error: send() rejects with the TransportFailedError onerror hears, its cause the network error', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${await closedPort()}/mcp`));
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const send = vi.spyOn(transport, 'send');
    const client = newClient();
    started.client(client);

    // P10, F6: connect() rejects with the typed error send() rejected with, naming the root cause.
    const error = await rejection(client.connect(transport));
    expect(error).toBeInstanceOf(TransportFailedError);
    expect((error as Error).message).toMatch(/ECONNREFUSED 127\.0\.0\.1:\d+/);

    const sent = await rejection(send.mock.results[0]?.value as Promise<unknown>);
    // F4: the same error, of the same type, reaches send() and onerror.
    expect(sent).toBe(error);
    expect(errors).toEqual([sent]);
    // F6: below it the network error, no HTTP status, and below that the root cause.
    const network = findTransportError(sent, StreamableHTTPError);
    expect(network).toBeInstanceOf(StreamableHTTPError);
    expect(network?.status).toBeUndefined();
    expect(network?.cause).toBeInstanceOf(Error);
    expect(send.mock.calls[0]?.[0]).toMatchObject({ method: 'initialize' });
  });
});
