/**
 * The browser entry without the chart engine (issue 44, docs/benchmark.md "The page"): a page
 * downloads xstate and the charts on the first start(), not with its first paint. Each test gets
 * a module graph of its own (`vi.resetModules()`), in which nothing has registered the engine, as
 * on a page that imports only `mcp-xstate-transport`; the Node entry, which registers it, is the
 * reference for what the transport does before start().
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { newClient, textOf } from '../support/harness.js';
import { startServer, type TestServer } from '../support/mcp-server.js';
import { StreamableHTTPClientTransport as NodeEntryTransport } from '../../src/node.js';

type Root = typeof import('../../src/index.js');

let server: TestServer;
let root: Root;
const opened: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  server = await startServer();
  vi.resetModules();
  root = await import('../../src/index.js');
});

afterEach(async () => {
  vi.doUnmock('../../src/engine.js');
  for (const item of opened.splice(0)) await item.close();
  await server.close();
});

function lazyTransport(options: ConstructorParameters<Root['StreamableHTTPClientTransport']>[1] = {}) {
  const transport = new root.StreamableHTTPClientTransport(server.url, options);
  opened.push(transport);
  return transport;
}

describe('the browser entry loads the chart engine on start()', () => {
  it('U1, U5: before start() the actor is not made and says why; a Client connects (start() loads the engine) and calls a tool', async () => {
    const transport = lazyTransport();
    expect(() => transport.actor).toThrow(root.McpTransportError);
    expect(() => transport.actor).toThrow(/loadEngine\(\)/);
    expect(transport.sessionId).toBeUndefined();
    expect(transport.saveState()).toBeUndefined();
    const client = newClient();
    opened.push(client);
    await client.connect(transport);
    expect(transport.actor.getSnapshot().matches('open')).toBe(true);
    expect(transport.sessionId).toBe([...server.sessions.keys()][0]);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'lazy' } }))).toBe('lazy');
  });

  it('U1: loadEngine() makes the actor available before start(); an inspector given as an option sees the chart start', async () => {
    const seen: InspectionEvent[] = [];
    const transport = lazyTransport({ inspect: (event: InspectionEvent) => seen.push(event) });
    await root.loadEngine();
    expect(transport.actor.getSnapshot().value).toBe('idle');
    expect(seen.some((event) => event.type === '@xstate.actor')).toBe(true);
    const client = newClient();
    opened.push(client);
    await client.connect(transport);
    expect(seen.some((event) => event.type === '@xstate.event' && event.event.type === 'start')).toBe(true);
  });

  it('U1: a version set before the engine loaded is read back, and the chart holds it once made', async () => {
    const transport = lazyTransport();
    transport.setProtocolVersion('2025-06-18');
    expect(transport.protocolVersion).toBe('2025-06-18');
    await root.loadEngine();
    expect(transport.actor.getSnapshot().context.protocolVersion).toBe('2025-06-18');
    expect(transport.protocolVersion).toBe('2025-06-18');
  });

  it('U1, F1: send(), terminateSession() and close() before start() answer as on the Node entry, where the chart is there from the constructor', async () => {
    const outcomes = async (transport: NodeEntryTransport) => {
      let closes = 0;
      transport.onclose = () => {
        closes += 1;
      };
      const sent = await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }).then(
        () => 'sent',
        (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
      );
      const terminated = await transport.terminateSession().then(
        () => 'terminated',
        (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
      );
      await transport.close();
      await transport.close();
      return { sent, terminated, closes, state: transport.actor.getSnapshot().value };
    };
    const node = new NodeEntryTransport(server.url);
    opened.push(node);
    const expected = await outcomes(node);
    expect(expected.sent).not.toBe('sent');
    expect(expected.closes).toBe(1);
    expect(await outcomes(lazyTransport())).toEqual(expected);
  });

  it('U1, F2: start() and close() called together before the engine loaded run in their order: started, then closed, onclose once; start() again connects', async () => {
    const transport = lazyTransport();
    let closes = 0;
    transport.onclose = () => {
      closes += 1;
    };
    const started = transport.start();
    const closed = transport.close();
    await started;
    await closed;
    expect(transport.actor.getSnapshot().value).toBe('closed');
    expect(closes).toBe(1);
    const client = newClient();
    opened.push(client);
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'again' } }))).toBe('again');
  });

  it('U5, F1: an engine chunk that fails to load rejects start() with an McpTransportError and sends nothing; close() still closes (onclose once); the next start() loads it', async () => {
    vi.doMock('../../src/engine.js', () => {
      throw new Error('chunk load failed (planted)');
    });
    vi.resetModules();
    root = await import('../../src/index.js');
    const transport = lazyTransport();
    let closes = 0;
    transport.onclose = () => {
      closes += 1;
    };
    const failure = await transport.start().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(root.McpTransportError);
    expect((failure as Error).message).toMatch(/chart engine/);
    expect(server.requests).toHaveLength(0);
    await expect(transport.close()).resolves.toBeUndefined();
    expect(closes).toBe(1);
    vi.doUnmock('../../src/engine.js');
    const client = newClient();
    opened.push(client);
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'loaded' } }))).toBe('loaded');
  });
});
