/**
 * The standalone GET stream against the SDK's real server: when it opens and what it carries
 * (G1, H4), server requests and notifications on it (G3), a server without one (G2), and its end
 * with the session (G6).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LATEST_PROTOCOL_VERSION, ListRootsRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Fault, LoggedRequest, ServerOptions } from '../support/mcp-server.js';
import {
  childrenOf,
  header,
  newClient,
  recordingFetch,
  signal,
  Started,
  statefulModes,
  textOf,
  type FetchEvent,
  until,
} from '../support/harness.js';

const started = new Started();
const serve = (options: ServerOptions) => started.serve(options);
const connectClient = started.connectClient.bind(started);

const isGet = (request: LoggedRequest) => request.method === 'GET';
const getAnswered = (event: FetchEvent) => event.phase === 'response' && event.call.method === 'GET';

afterEach(async () => {
  await started.closeAll();
});

describe.each(statefulModes)('$mode', { timeout: 5_000 }, ({ sse }) => {
  it('G1, H4: the GET opens once notifications/initialized was accepted, with Accept: text/event-stream, session and version headers, no Last-Event-ID', async () => {
    const server = await serve({ sse });
    const recorder = recordingFetch();
    const { transport } = await connectClient(server, { fetch: recorder.fetch });
    const get = await server.waitFor(isGet);
    await recorder.when(getAnswered);

    expect(header(get, 'accept')).toBe('text/event-stream');
    expect(header(get, 'mcp-session-id')).toBe(transport.sessionId);
    expect(transport.sessionId).toBeDefined();
    expect(header(get, 'mcp-protocol-version')).toBe(LATEST_PROTOCOL_VERSION);
    expect(header(get, 'last-event-id')).toBeUndefined();

    // The order, as the client saw it: initialized answered, then the GET sent, once.
    const initializedAnswered = recorder.timeline.findIndex(
      (event) => event.phase === 'response' && event.call.rpc === 'notifications/initialized',
    );
    const getSent = recorder.timeline.findIndex((event) => event.phase === 'request' && event.call.method === 'GET');
    expect(initializedAnswered).toBeGreaterThanOrEqual(0);
    expect(getSent).toBeGreaterThan(initializedAnswered);
    expect(recorder.calls.filter((call) => call.method === 'GET')).toHaveLength(1);
  });

  it('G1, G3: notifications/tools/list_changed sent by the server on the GET stream reaches the client handler', async () => {
    const server = await serve({ sse });
    const recorder = recordingFetch();
    const client = newClient();
    const notified = signal();
    let count = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      count++;
      notified.fire();
    });
    const { transport, errors } = await connectClient(server, { fetch: recorder.fetch }, client);
    await recorder.when(getAnswered);
    const postsBefore = server.requests.filter((request) => request.method === 'POST').length;

    // Outside any request: the SDK server can only send it on the standalone stream.
    server.sessions.get(transport.sessionId!)!.server.sendToolListChanged();
    await notified.promise;

    expect(count).toBe(1);
    expect(server.requests.filter((request) => request.method === 'POST')).toHaveLength(postsBefore);
    expect(errors).toEqual([]);
  });

  it('G3: a roots/list request from the server on the GET stream is answered and the answer reaches the server', async () => {
    const server = await serve({ sse });
    const recorder = recordingFetch();
    const client = newClient({ roots: {} });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///home/project', name: 'project' }] }));
    const { transport, errors } = await connectClient(server, { fetch: recorder.fetch }, client);
    await recorder.when(getAnswered);

    // Called from the test, outside any request, so the request travels on the GET stream.
    const roots = await server.sessions.get(transport.sessionId!)!.server.server.listRoots();
    expect(roots.roots).toEqual([{ uri: 'file:///home/project', name: 'project' }]);

    const answer = server.requests.find(
      (request) => request.method === 'POST' && typeof request.body === 'object' && request.body !== null && 'result' in request.body,
    );
    expect(answer).toBeDefined();
    expect(header(answer!, 'mcp-session-id')).toBe(transport.sessionId);
    expect(header(answer!, 'mcp-protocol-version')).toBe(LATEST_PROTOCOL_VERSION);
    expect(errors).toEqual([]);
  });

  it('G1: standaloneStream: false opens no GET', async () => {
    const server = await serve({ sse });
    const recorder = recordingFetch();
    const { client, transport } = await connectClient(server, { fetch: recorder.fetch, standaloneStream: false });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe('x');
    expect(childrenOf(transport)).not.toContain('standalone');
    await client.close();

    expect(server.requests.filter(isGet)).toEqual([]);
    expect(recorder.calls.filter((call) => call.method === 'GET')).toEqual([]);
  });

  /** G2: the GET refused as `fault` says: the stream ends, is not retried, and the session is fine. Gives what onerror was told. */
  async function refusedGet(fault: Omit<Fault, 'method'>): Promise<Error[]> {
    const server = await serve({ sse });
    server.fault({ method: 'GET', ...fault });
    const { client, transport, errors } = await connectClient(server);
    await server.waitFor(isGet);
    await until(() => !childrenOf(transport).includes('standalone'), 'the standalone stream ended');

    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still fine' } }))).toBe('still fine');
    expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
    expect(server.requests.filter(isGet)).toHaveLength(1);
    return errors;
  }

  it('G2: a GET refused with 405: no retry, no error, the session is fine', async () => {
    expect(await refusedGet({ status: 405 })).toEqual([]);
  });

  it('G2: a GET refused with 403: one warning through onerror, no retry, the session is fine', async () => {
    const errors = await refusedGet({ status: 403, body: 'no stream for you' });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain('403');
  });

  it('G6: closing the transport ends the standalone GET (seen by the server) and leaves no child running', async () => {
    const server = await serve({ sse });
    const recorder = recordingFetch();
    // No DELETE: the server must not be the one ending the stream.
    const { client, transport } = await connectClient(server, { fetch: recorder.fetch, terminateOnClose: false });
    const get = await server.waitFor(isGet);
    await recorder.when(getAnswered);
    expect(childrenOf(transport)).toContain('standalone');

    await client.close();
    // Settles only when the server saw the GET's connection close.
    await get.ended;

    expect(childrenOf(transport)).toEqual([]);
    expect(server.requests.filter((request) => request.method === 'DELETE')).toEqual([]);
    expect(server.requests.filter(isGet)).toHaveLength(1);
  });

  it('G6: the standalone stream stopped from outside (its chart stopped, no exit action run) still ends its GET (seen by the server)', async () => {
    const server = await serve({ sse });
    const { transport } = await connectClient(server, { terminateOnClose: false });
    const get = await server.waitFor(isGet);
    await until(
      () => transport.actor.getSnapshot().children.standalone?.getSnapshot().matches('listening') === true,
      'the standalone stream listening',
    );
    expect(childrenOf(transport)).toContain('standalone');

    // The reader is an action pair of the stream's chart (issue 44): the host stops it with the actor.
    transport.actor.stop();
    // Settles only when the server saw the GET's connection close.
    await get.ended;
  });

  it('R9: a standalone stream silent for streamIdleTimeout is a drop: its reader, asked by the chart, ends it and the GET opens again', async () => {
    const server = await serve({ sse });
    await connectClient(server, { streamIdleTimeout: 200, terminateOnClose: false });
    const first = await server.waitFor(isGet);
    // Settles only when the server saw the silent GET's connection close; then a second GET comes.
    await first.ended;
    await until(() => server.requests.filter(isGet).length >= 2, 'a second GET');
  });
});
