/**
 * The scripted server itself (test/support/scripted-server.ts): what the demo and any test that
 * needs a small, well-behaved MCP server get from it, with the SDK Client over this transport.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { cleanups, runCleanups, scripted } from '../support/cleanups.js';
import { newClient, standaloneIn, textOf, until, within } from '../support/harness.js';
import { fieldOf } from '../support/http.js';
import { json, result, sse, type RecordedRequest } from '../support/scripted-server.js';

afterEach(runCleanups);

/** The `params` of a JSON-RPC request body. */
function paramsOf(request: RecordedRequest): Record<string, unknown> {
  const params = fieldOf(request.body, 'params');
  return typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {};
}

async function connected(url: URL) {
  const transport = new StreamableHTTPClientTransport(url);
  const client = newClient();
  cleanups.push(async () => {
    await client.close();
    await transport.close();
  });
  await client.connect(transport);
  return { transport, client };
}

describe('the scripted server', { timeout: 10_000 }, () => {
  it('serves a demo: a session per client, a tool answered as JSON and one with progress as SSE, a standalone stream notify() writes to, DELETE ends the session', async () => {
    let sessions = 0;
    const server = await scripted({
      sessionId: () => `demo-session-${++sessions}`,
      standalone: true,
      serverInfo: { name: 'demo', version: '1.0.0' },
      capabilities: { tools: { listChanged: true } },
    });
    const tools = [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'progress', inputSchema: { type: 'object' } },
    ];
    server.on({ rpc: 'tools/list' }, (request) => json(result(request.id, { tools })));
    server.on({ rpc: 'tools/call' }, (request) => {
      const params = paramsOf(request);
      const args = (params.arguments ?? {}) as { text?: string; steps?: number };
      if (params.name === 'echo') return json(result(request.id, { content: [{ type: 'text', text: args.text ?? '' }] }));
      const token = (params._meta as { progressToken?: string | number } | undefined)?.progressToken;
      const steps = args.steps ?? 0;
      return sse([
        ...Array.from({ length: steps }, (_, i) => ({
          data: { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i + 1, total: steps } },
        })),
        { data: result(request.id, { content: [{ type: 'text', text: `done ${steps}` }] }) },
      ]);
    });

    const { transport, client } = await connected(server.url);
    expect(client.getServerVersion()).toEqual({ name: 'demo', version: '1.0.0' });
    expect(transport.sessionId).toBe('demo-session-1');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'progress']);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello' } }))).toBe('hello');
    const progress: number[] = [];
    const done = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(textOf(done)).toBe('done 3');
    expect(progress).toEqual([1, 2, 3]);

    // The server speaks first, on the standalone stream of this session only.
    await until(() => standaloneIn(transport, 'listening'), 'the standalone stream to open');
    const other = await connected(server.url);
    expect(other.transport.sessionId).toBe('demo-session-2');
    await until(() => standaloneIn(other.transport, 'listening'), 'the second standalone stream to open');
    const heard: string[] = [];
    const received = new Promise<void>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
        heard.push(`first: ${notification.method}`);
        resolve();
      });
    });
    other.client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
      heard.push(`second: ${notification.method}`);
    });
    server.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }, 'demo-session-1');
    await within(received, 'the notification on the standalone stream');
    expect(heard).toEqual(['first: notifications/tools/list_changed']);

    await client.close();
    expect(server.closedSessions).toEqual(['demo-session-1']);
    expect(server.sessions).toEqual(['demo-session-2']);
    // A session the server ended (or never handed out) is answered 404.
    const stale = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'demo-session-1' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(stale.status).toBe(404);
    await stale.body?.cancel();
  });

  it("'park' holds every request until the test answers it, and records what became of each", async () => {
    const server = await scripted({ defaults: 'park' });
    const sent = fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    const request = await server.waitFor({ rpc: 'tools/list', id: 7 });
    expect(request.state).toBe('parked');
    expect(server.held()).toEqual([request]);
    server.answer(request, { ...sse([{ data: result(7, { tools: [] }) }]), keepOpen: true });
    expect(request.state).toBe('streaming');
    const response = await sent;
    server.endStream(request);
    expect(await response.text()).toContain('"id":7');
    expect(request.state).toBe('done');
    expect(server.held()).toEqual([]);
    expect(server.only({ path: '/mcp' })).toBe(request);
    // OAuth discovery is answered at once; anything else off the endpoint is 404.
    const metadata = await fetch(server.resourceMetadataUrl);
    expect(await metadata.json()).toMatchObject({ resource: server.url.href });
    expect((await fetch(new URL('/elsewhere', server.url))).status).toBe(404);
  });
});
