import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ProtocolError, StreamableHTTPClientTransport } from '../../src/index.js';
import { startLegacyServer } from '../support/legacy-server.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

afterEach(runCleanups);

describe('legacy HTTP+SSE fallback', () => {
  for (const status of [400, 404, 405]) {
    it(`L1, L2: an initialize answered ${status} falls back to the 2024-11-05 transport; the SDK Client works unchanged`, async () => {
      const legacy = await startLegacyServer({ postStatus: status });
      cleanups.push(() => legacy.close());
      const transport = new StreamableHTTPClientTransport(legacy.url);
      const states: string[] = [];
      transport.actor.subscribe((snapshot) => states.push(JSON.stringify(snapshot.value)));
      const client = new Client({ name: 'legacy-test', version: '1.0.0' });
      cleanups.push(() => client.close());
      await client.connect(transport);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'over the old transport' } });
      expect(result.content).toEqual([{ type: 'text', text: 'over the old transport' }]);
      expect(states).toContain(JSON.stringify({ legacy: 'awaitingEndpoint' }));
      expect(transport.actor.getSnapshot().matches({ legacy: 'ready' })).toBe(true);
      expect(transport.actor.getSnapshot().hasTag('connected')).toBe(true);
      // One refused POST to the URL, then GET, then every message to the endpoint.
      expect(legacy.requests.filter((r) => r.method === 'POST' && r.path === '/mcp')).toHaveLength(1);
      expect(legacy.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
      expect(legacy.requests.filter((r) => r.path === '/messages').length).toBeGreaterThanOrEqual(3);
      expect(transport.sessionId).toBeUndefined();
    });
  }

  it('L1: an endpoint on another origin is refused and the connection fails with a ProtocolError', async () => {
    const legacy = await startLegacyServer({ endpointOrigin: 'http://127.0.0.2:9' });
    cleanups.push(() => legacy.close());
    const transport = new StreamableHTTPClientTransport(legacy.url);
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const client = new Client({ name: 'legacy-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow(/origin/);
    expect(errors.some((e) => e instanceof ProtocolError || e.cause instanceof ProtocolError)).toBe(true);
    expect(legacy.requests.filter((r) => r.path === '/messages')).toHaveLength(0);
    await transport.close();
  });

  it('L1: legacyFallback: false makes a 405 to initialize an ordinary failure', async () => {
    const legacy = await startLegacyServer();
    cleanups.push(() => legacy.close());
    const transport = new StreamableHTTPClientTransport(legacy.url, { legacyFallback: false });
    const client = new Client({ name: 'legacy-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow(/405/);
    expect(legacy.requests.filter((r) => r.method === 'GET')).toHaveLength(0);
    await transport.close();
  });

  for (const status of [401, 403]) {
    it(`L1: ${status} to initialize never falls back`, async () => {
      const legacy = await startLegacyServer({ postStatus: status });
      cleanups.push(() => legacy.close());
      const transport = new StreamableHTTPClientTransport(legacy.url);
      const client = new Client({ name: 'legacy-test', version: '1.0.0' });
      await expect(client.connect(transport)).rejects.toThrow(String(status));
      expect(legacy.requests.filter((r) => r.method === 'GET')).toHaveLength(0);
      await transport.close();
    });
  }
});
