/**
 * W1 against the SDK's real server: a transport's saved state starts a new transport (a page
 * reload) that continues the session without initialize, resumes the standalone stream with
 * Last-Event-ID so no notification is lost, and re-establishes a session the server forgot (F3)
 * from the saved initialize.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  InvalidOptionsError,
  McpTransportError,
  parseSavedState,
  StreamableHTTPClientTransport,
  type SavedTransportState,
} from '../../src/index.js';
import type { TestServer } from '../support/mcp-server.js';
import { OrderedEventStore } from '../support/event-store.js';
import { Started, textOf, until } from '../support/harness.js';

const started = new Started();
afterEach(async () => {
  await started.closeAll();
});

/** The notes a Client received, in order. */
function notesOf(client: Client): string[] {
  const notes: string[] = [];
  client.fallbackNotificationHandler = (notification) => {
    if (notification.method === 'notifications/message') notes.push(String(notification.params?.data));
    return Promise.resolve();
  };
  return notes;
}

async function note(server: TestServer, text: string): Promise<void> {
  for (const { server: mcp } of server.sessions.values()) await mcp.sendLoggingMessage({ level: 'info', data: text });
}

/**
 * A page that goes away without closing its session: its transport stops (no DELETE, as a reload
 * aborts every request) after handing over what `pagehide` would save.
 */
async function leavePage(transport: StreamableHTTPClientTransport): Promise<SavedTransportState> {
  const state = transport.saveState();
  if (state === undefined) throw new Error('no state to save');
  // JSON, as sessionStorage would keep it.
  const kept = parseSavedState(JSON.parse(JSON.stringify(state)));
  await new Promise<void>((resolve) => {
    transport.actor.on('closed', () => {
      resolve();
    });
    // What a reload does: everything is aborted, nothing is sent.
    transport.actor.send({ type: 'close' });
  });
  return kept;
}

async function firstPage(server: TestServer) {
  const transport = started.transport(server, { terminateOnClose: false });
  const client = started.client();
  const notes = notesOf(client);
  await client.connect(transport);
  await server.waitFor((request) => request.method === 'GET');
  await until(() => transport.actor.getSnapshot().children.standalone?.getSnapshot().matches('listening') === true, 'standalone listening');
  return { transport, client, notes };
}

describe('W1: a saved transport state continues the session in a new transport', () => {
  it('W1: the restored transport sends no initialize; the session and protocol version are the same; the SDK Client calls tools on it', async () => {
    const server = await started.serve();
    const page = await firstPage(server);
    const sessionId = page.transport.sessionId;
    const protocolVersion = page.transport.protocolVersion;
    const state = await leavePage(page.transport);
    expect(state).toMatchObject({ v: 1, endpoint: server.url.href, sessionId, protocolVersion });
    const initializes = server.requests.filter((request) => request.rpc === 'initialize').length;

    const transport = started.transport(server, { restoreState: state });
    const client = started.client();
    await client.connect(transport);
    expect(transport.sessionId).toBe(sessionId);
    const answer = await client.callTool({ name: 'echo', arguments: { text: 'after the reload' } });
    expect(textOf(answer)).toBe('after the reload');
    expect(server.requests.filter((request) => request.rpc === 'initialize')).toHaveLength(initializes);
    const call = server.requests.find((request) => request.rpc === 'tools/call');
    expect(call?.headers['mcp-session-id']).toBe(sessionId);
    expect(call?.headers['mcp-protocol-version']).toBe(protocolVersion);
    // What the Client skipped: it never saw an InitializeResult on this page (docs/ui.md, W1).
    expect(client.getServerCapabilities()).toBeUndefined();
    expect(client.getServerVersion()).toBeUndefined();
  });

  it('W1, G4: notifications sent while the page was away are replayed with Last-Event-ID: every one once, in order', async () => {
    // The SDK's example store cannot replay the standalone stream (test/support/event-store.ts says why).
    const server = await started.serve({ eventStore: () => new OrderedEventStore() });
    const page = await firstPage(server);
    for (const n of [1, 2, 3]) await note(server, `note ${n}`);
    await until(() => page.notes.length === 3, 'three notes on the first page');
    const state = await leavePage(page.transport);
    expect(state.standaloneLastEventId).toBeDefined();
    // The page is gone: these are stored by the server's event store, and sent to nobody.
    for (const n of [4, 5, 6]) await note(server, `note ${n}`);

    const transport = started.transport(server, { restoreState: state });
    const client = started.client();
    const notes = notesOf(client);
    await client.connect(transport);
    const get = await server.waitFor((request) => request.method === 'GET' && request.headers['last-event-id'] !== undefined);
    expect(get.headers['last-event-id']).toBe(state.standaloneLastEventId);
    await until(() => notes.length === 3, 'the three notes sent during the reload');
    for (const n of [7, 8]) await note(server, `note ${n}`);
    await until(() => notes.length === 5, 'two more notes');
    expect([...page.notes, ...notes]).toEqual(['note 1', 'note 2', 'note 3', 'note 4', 'note 5', 'note 6', 'note 7', 'note 8']);
  });

  it('W1, F3: a restored session the server no longer knows is re-established from the saved initialize; the call is answered', async () => {
    const server = await started.serve();
    const page = await firstPage(server);
    const state = await leavePage(page.transport);
    expect(state.initialize).toMatchObject({ method: 'initialize', params: { clientInfo: { name: 'integration-test' } } });
    // The server restarted (or expired the session) while the page was away.
    server.sessions.delete(state.sessionId ?? '');

    const transport = started.transport(server, { restoreState: state });
    const changes: unknown[] = [];
    transport.actor.on('session.changed', (event) => changes.push(event));
    const client = started.client();
    await client.connect(transport);
    const answer = await client.callTool({ name: 'echo', arguments: { text: 'on a new session' } });
    expect(textOf(answer)).toBe('on a new session');
    expect(transport.sessionId).toBeDefined();
    expect(transport.sessionId).not.toBe(state.sessionId);
    const reinitialize = server.requests.filter((request) => request.rpc === 'initialize').at(-1);
    // The saved initialize, as the first page's Client sent it, with no session header (H3).
    expect(reinitialize?.body).toEqual(state.initialize);
    expect(reinitialize?.headers['mcp-session-id']).toBeUndefined();
    expect(changes).toHaveLength(1);
  });

  it('W1: a state saved before any session, or for another endpoint, or malformed, is refused with a clear McpTransportError', async () => {
    const server = await started.serve();
    const transport = started.transport(server);
    expect(transport.saveState()).toBeUndefined();
    const good: SavedTransportState = { v: 1, endpoint: server.url.href, sessionId: 'abc' };
    expect(parseSavedState(good)).toEqual(good);
    expect(() => new StreamableHTTPClientTransport('http://127.0.0.1:1/other', { restoreState: good })).toThrow(McpTransportError);
    expect(() => new StreamableHTTPClientTransport('http://127.0.0.1:1/other', { restoreState: good })).toThrow(
      /refusing to send its session ID elsewhere/,
    );
    for (const bad of [
      null,
      'x',
      { v: 2 },
      { ...good, sessionId: 'bad id' },
      { ...good, standaloneLastEventId: 'é' },
      { ...good, initialize: { jsonrpc: '2.0', method: 'ping' } },
    ]) {
      expect(() => parseSavedState(bad)).toThrow(McpTransportError);
    }
  });
});

describe('N1, N2: the browser entry has no Node HTTP client', () => {
  it('N1, N2: a proxy URL or tls on the browser entry throws InvalidOptionsError naming the option; proxy: false (what fetch does anyway) does not', async () => {
    // The browser entry's own module graph: this project's setup registered the Node entry's sender on the shared one.
    vi.resetModules();
    const web = await import('../../src/index.js');
    const url = new URL('http://127.0.0.1:1/mcp');
    for (const [options, field] of [
      [{ proxy: 'http://127.0.0.1:3128' }, 'proxy'],
      [{ tls: { ca: 'PEM' } }, 'tls'],
    ] as const) {
      let error: unknown;
      try {
        new web.StreamableHTTPClientTransport(url, options);
      } catch (caught) {
        error = caught;
      }
      expect(error, field).toBeInstanceOf(web.InvalidOptionsError);
      expect((error as InvalidOptionsError).field, field).toBe(field);
      expect(String(error), field).toContain("an option of the Node entry's HTTP client");
    }
    expect(() => new web.StreamableHTTPClientTransport(url, { proxy: false })).not.toThrow();
  });
});
