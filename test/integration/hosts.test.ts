/**
 * U12: the transport under the hosts people build on, not only the SDK `Client`, against the
 * SDKs' real servers on 127.0.0.1 (test/support/host-servers.ts): the Vercel AI SDK
 * (`createMCPClient({ transport })` from `@ai-sdk/mcp`, its `tools()` run by `generateText` with a
 * scripted mock model) in both eras, and LangChain (`loadMcpTools` from `@langchain/mcp-adapters`
 * over the 1.x SDK `Client`). docs/hosts.md shows the same swaps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMCPClient, type MCPClient, type MCPTransport } from '@ai-sdk/mcp';
import { generateText, isStepCount } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { loadMcpTools } from '@langchain/mcp-adapters';
import { StreamableHTTPClientTransport, type JSONRPCMessage } from '../../src/index.js';
import { startHostServerV1, startHostServerV2, type HostServer } from '../support/host-servers.js';
import { startServer } from '../support/mcp-server.js';
import { only, rejection, sleep, until, within } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

afterEach(runCleanups);

async function host(start: () => Promise<HostServer>): Promise<HostServer> {
  const server = await start();
  cleanups.push(() => server.close());
  return server;
}

/** What the mock model's doGenerate resolves with (the provider's LanguageModelV3GenerateResult). */
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A scripted model: first it calls `tool` with `input`, then it answers with the text of the tool's result. */
function scriptedModel(tool: string, input: Record<string, unknown>): MockLanguageModelV3 {
  const steps: GenerateResult[] = [
    {
      content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: tool, input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage,
      warnings: [],
    },
  ];
  return new MockLanguageModelV3({
    doGenerate: (options) => {
      const step = steps.shift();
      if (step !== undefined) return Promise.resolve(step);
      // The second step: the model "reads" the tool result the AI SDK put into the prompt.
      const last = options.prompt.at(-1);
      const text = last?.role === 'tool' ? JSON.stringify(last.content) : 'no tool result';
      return Promise.resolve({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] });
    },
  });
}

/**
 * The AI SDK declares its handlers as `onclose?: () => void` (no `| undefined`), so under
 * `exactOptionalPropertyTypes` TypeScript refuses any transport typed as the SDK types them
 * (`(() => void) | undefined`, as this one does); at run time they are the same (docs/hosts.md).
 */
const forAiSdk = (transport: StreamableHTTPClientTransport): MCPTransport => transport as MCPTransport;

/** The AI SDK's client over this transport; what its `onUncaughtError` hears is kept. */
async function aiClient(url: URL): Promise<{ client: MCPClient; transport: StreamableHTTPClientTransport; uncaught: unknown[] }> {
  const transport = new StreamableHTTPClientTransport(url);
  const uncaught: unknown[] = [];
  const client = await createMCPClient({
    transport: forAiSdk(transport),
    onUncaughtError: (error) => {
      uncaught.push(error);
    },
  });
  cleanups.push(() => client.close());
  return { client, transport, uncaught };
}

const rpcs = (server: HostServer) => server.requests.filter((r) => r.rpc !== undefined).map((r) => r.rpc);

describe('U12: the Vercel AI SDK, createMCPClient({ transport })', () => {
  it('U12, E1: the AI SDK reaches 2026-07-28 against a modern-only server, and generateText runs its tools()', async () => {
    const server = await host(() => startHostServerV2({ legacy: 'reject' }));
    const { client, transport, uncaught } = await aiClient(server.url);
    expect(client.initializeResult.protocolVersion).toBe('2026-07-28');
    expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
    const result = await generateText({
      model: scriptedModel('echo', { text: 'from the model' }),
      tools: await client.tools(),
      prompt: 'echo something',
      stopWhen: isStepCount(2),
    });
    expect(result.toolResults.map((r): unknown => r.output)).toMatchObject([
      { content: [{ type: 'text', text: 'from the model' }], isError: false },
    ]);
    expect(result.text).toContain('from the model');
    expect(rpcs(server)).toEqual(['server/discover', 'tools/list', 'tools/call']);
    expect(uncaught).toEqual([]);
  });

  it('U12, E1: against the 1.x server the AI SDK’s probe is refused, it falls back to initialize over the same transport, and generateText runs its tools()', async () => {
    const server = await host(() => startHostServerV1());
    const { client, transport, uncaught } = await aiClient(server.url);
    expect(client.initializeResult.protocolVersion).toBe('2025-11-25');
    expect(transport.sessionId).toBeDefined();
    const result = await generateText({
      model: scriptedModel('echo', { text: 'old era' }),
      tools: await client.tools(),
      prompt: 'echo something',
      stopWhen: isStepCount(2),
    });
    expect(result.toolResults.map((r): unknown => r.output)).toEqual([{ content: [{ type: 'text', text: 'old era' }], isError: false }]);
    expect(rpcs(server).slice(0, 3)).toEqual(['server/discover', 'initialize', 'notifications/initialized']);
    expect(uncaught).toEqual([]);
  });

  it('U12, E1: against a stateless 1.x server the AI SDK’s probe gets -32601 on a 200, and it falls back to initialize over the same transport', async () => {
    const server = await startServer({ stateful: false, sse: false });
    cleanups.push(() => server.close());
    const { client, transport, uncaught } = await aiClient(server.url);
    expect(client.initializeResult.protocolVersion).toBe('2025-11-25');
    expect(transport.actor.getSnapshot().matches('modern')).toBe(false);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'stateless' } })).toMatchObject({
      content: [{ type: 'text', text: 'stateless' }],
    });
    expect(server.requests.map((r) => r.rpc).slice(0, 2)).toEqual(['server/discover', 'initialize']);
    expect(uncaught).toEqual([]);
  });

  it('U12, E6: 2026-07-28: a tool call aborted under generateText ends its POST, the server’s handler gets the abort, and no "unknown message ID" follows', async () => {
    const server = await host(() => startHostServerV2({ legacy: 'reject' }));
    const { client, uncaught } = await aiClient(server.url);
    const controller = new AbortController();
    const run = generateText({
      model: scriptedModel('wait', { ms: 30_000 }),
      tools: await client.tools(),
      prompt: 'wait',
      stopWhen: isStepCount(2),
      abortSignal: controller.signal,
    });
    const call = await server.waitFor((r) => r.rpc === 'tools/call');
    const handler = await within(server.nextWait(), 'the tool handler to start');
    controller.abort();
    await rejection(run);
    await within(call.ended, 'the server to see the POST end', 2_000);
    expect(await within(handler.outcome, 'the handler to end')).toBe('aborted');
    // The client goes on: another call is answered, and nothing unknown arrived meanwhile.
    expect(await client.callTool({ name: 'echo', arguments: { text: 'after' } })).toMatchObject({
      content: [{ type: 'text', text: 'after' }],
    });
    expect(uncaught).toEqual([]);
    expect(rpcs(server).filter((rpc) => rpc === 'notifications/cancelled')).toEqual([]);
  });

  it('U12, E6: 2025-11-25 (the 1.x server): a tool call aborted under generateText ends its POST, and its late answer never reaches the AI SDK (no "unknown message ID")', async () => {
    const server = await host(() => startHostServerV1());
    const { client, uncaught } = await aiClient(server.url);
    const controller = new AbortController();
    const run = generateText({
      model: scriptedModel('wait', { ms: 300 }),
      tools: await client.tools(),
      prompt: 'wait',
      stopWhen: isStepCount(2),
      abortSignal: controller.signal,
    });
    const call = await server.waitFor((r) => r.rpc === 'tools/call');
    const handler = await within(server.nextWait(), 'the tool handler to start');
    controller.abort();
    await rejection(run);
    await within(call.ended, 'the server to see the POST end', 2_000);
    // The AI SDK sends no notifications/cancelled: the 1.x server's handler runs out its time and answers, to nobody.
    expect(await within(handler.outcome, 'the handler to end')).toBe('answered');
    expect(await client.callTool({ name: 'echo', arguments: { text: 'after' } })).toMatchObject({
      content: [{ type: 'text', text: 'after' }],
    });
    // A lower bound only: what the late answer had time to do, it did.
    await sleep(100);
    expect(uncaught.map(String).filter((text) => /unknown message ID/.test(text))).toEqual([]);
    expect(uncaught).toEqual([]);
  });

  it('U12, F2: the AI SDK closes per run: a new client over the same transport object starts it again', async () => {
    const server = await host(() => startHostServerV1());
    const transport = new StreamableHTTPClientTransport(server.url);
    for (const text of ['first run', 'second run']) {
      const client = await createMCPClient({ transport: forAiSdk(transport) });
      expect(await client.callTool({ name: 'echo', arguments: { text } })).toMatchObject({ content: [{ type: 'text', text }] });
      await client.close();
    }
    expect(rpcs(server).filter((rpc) => rpc === 'initialize')).toHaveLength(2);
  });
});

describe('U12: an error thrown by the host’s onmessage', () => {
  for (const era of ['2025-11-25', '2026-07-28'] as const) {
    it(`U12: ${era}: reaches onerror as the host’s own error, not wrapped`, async () => {
      const server = await host(() => (era === '2026-07-28' ? startHostServerV2({ legacy: 'reject' }) : startHostServerV1()));
      const { client, transport } = await aiClient(server.url);
      const mine = new Error('the host’s own error');
      const heard: Error[] = [];
      const onmessage = transport.onmessage;
      transport.onmessage = (message: JSONRPCMessage) => {
        onmessage?.(message);
        throw mine;
      };
      transport.onerror = (error) => heard.push(error);
      await client.callTool({ name: 'echo', arguments: { text: 'x' } });
      expect(heard[0]).toBe(mine);
    });
  }
});

describe('U12: LangChain, loadMcpTools over the 1.x SDK Client', () => {
  for (const era of ['the 1.x server', 'the v2 server’s 2025 fallback'] as const) {
    it(`U12: ${era}: loadMcpTools lists the tools and a tool runs`, async () => {
      const server = await host(() => (era === 'the 1.x server' ? startHostServerV1() : startHostServerV2()));
      const client = new ClientV1({ name: 'langchain-host', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(server.url));
      cleanups.push(() => client.close());
      const tools = await loadMcpTools('fixture', client);
      expect(tools.map((tool) => tool.name).sort()).toEqual(['echo', 'wait']);
      const echo = tools.find((tool) => tool.name === 'echo');
      expect(await echo?.invoke({ text: 'from langchain' })).toContain('from langchain');
    });
  }

  it('U12, R8: LangChain’s abort of a tool call: the 1.x Client’s notifications/cancelled reaches the server’s handler, and the POST ends', async () => {
    const server = await host(() => startHostServerV1());
    const client = new ClientV1({ name: 'langchain-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(server.url));
    cleanups.push(() => client.close());
    const wait = (await loadMcpTools('fixture', client)).find((tool) => tool.name === 'wait');
    const controller = new AbortController();
    const run = wait?.invoke({ ms: 30_000 }, { signal: controller.signal });
    const call = await server.waitFor((r) => r.rpc === 'tools/call');
    const handler = await within(server.nextWait(), 'the tool handler to start');
    controller.abort();
    await rejection(run ?? Promise.reject(new Error('no wait tool')));
    expect(await within(handler.outcome, 'the handler to end')).toBe('aborted');
    await within(call.ended, 'the server to see the POST end', 2_000);
    expect(rpcs(server)).toContain('notifications/cancelled');
  });
});

describe('U13: close() is quick on a frozen server', () => {
  for (const generation of ['1.x', 'v2'] as const) {
    it(`U13: the ${generation} Client: close() on a server that stopped answering returns once deleteTimeout (default 1 s) aborts its DELETE`, async () => {
      const server = await host(() => startHostServerV1());
      const transport = new StreamableHTTPClientTransport(server.url);
      const client =
        generation === '1.x'
          ? new ClientV1({ name: 'u13', version: '1.0.0' })
          : new ClientV2({ name: 'u13', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
      await client.connect(transport);
      // The chart's bound on the DELETE, as it will wait it.
      expect(transport.actor.getSnapshot().context.options.deleteTimeout).toBe(1_000);
      server.freeze();
      const started = performance.now();
      await within(client.close(), 'close() on the frozen server', 5_000);
      // A lower bound only: the DELETE was given its deleteTimeout.
      expect(performance.now() - started).toBeGreaterThanOrEqual(900);
      const deleted = only(
        server.requests.filter((r) => r.method === 'DELETE'),
        'DELETE',
      );
      // The DELETE the server never answered was ended by the client (aborted by the timeout), not left open.
      await within(deleted.ended, 'the DELETE to be aborted', 1_000);
      expect(transport.actor.getSnapshot().hasTag('closed')).toBe(true);
    });
  }
});

describe('U2: raw use, send(initialize) then notifications/initialized', () => {
  for (const sse of [true, false]) {
    it(`U2: the 1.x server answering with ${sse ? 'an SSE stream' : 'JSON'}: when send(initialize) resolves, its session ID is adopted, so notifications/initialized goes in the session`, async () => {
      const server = await host(() => startHostServerV1({ sse }));
      const transport = new StreamableHTTPClientTransport(server.url);
      const heard: JSONRPCMessage[] = [];
      const errors: Error[] = [];
      transport.onmessage = (message) => heard.push(message);
      transport.onerror = (error) => errors.push(error);
      cleanups.push(() => transport.close());
      await transport.start();
      await transport.send({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
      });
      // No wait for onmessage: the caller goes on as soon as send() resolves.
      const sessionId = transport.sessionId;
      expect(sessionId).toBeDefined();
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const notice = await server.waitFor((r) => r.rpc === 'notifications/initialized');
      expect(notice.headers['mcp-session-id']).toBe(sessionId);
      // tools/list answered in the session (an SSE answer arrives after its send() resolved).
      await until(() => heard.length === 2, 'the answer to tools/list');
      expect(heard.map((m) => ('id' in m ? m.id : undefined))).toEqual([0, 1]);
      expect(heard[1]).toHaveProperty('result.tools');
      expect(errors).toEqual([]);
    });
  }
});
