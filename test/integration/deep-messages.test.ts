/**
 * S7: an answer nested deeper than the parser can follow (100,000 levels) fails its call with a
 * typed error naming the limit, never a bare `RangeError: Maximum call stack size exceeded`, and
 * nothing else is affected. The v2 SDK's real server (`createMcpHandler`) on 127.0.0.1, with the
 * v2 SDK Client over this transport; a front answers the probe or one tool's call with the deep
 * answer, as JSON or as an event stream.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { MessageTooDeepError, StreamableHTTPClientTransport } from '../../src/index.js';
import { startV2Server, type V2TestServer } from '../support/v2-server.js';
import { rejection, within } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

afterEach(runCleanups);

const levels = 100_000;
/** `{"a":{"a":…1…}}`, `depth` objects deep. */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

type Answer = 'json' | 'sse';

function answer(res: ServerResponse, as: Answer, text: string): true {
  if (as === 'json') res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  else res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${text}\n\n`);
  return true;
}

function idOf(body: unknown): string {
  const id = typeof body === 'object' && body !== null && 'id' in body ? body.id : undefined;
  return JSON.stringify(id);
}

function rpcOf(body: unknown): string | undefined {
  return typeof body === 'object' && body !== null && 'method' in body && typeof body.method === 'string' ? body.method : undefined;
}

/** A modern-only v2 server whose front answers `deep` with a result nested `depth` levels, as `as` says. */
async function deepServer(what: 'probe' | 'call', as: Answer, depth = levels): Promise<V2TestServer> {
  const server = await startV2Server({
    legacy: 'reject',
    intercept: (_req, res, body) => {
      if (what === 'probe' && rpcOf(body) === 'server/discover') {
        const result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"experimental":{"x":${nested(depth)}}},"serverInfo":{"name":"deep","version":"1"}}`;
        return answer(res, as, `{"jsonrpc":"2.0","id":${idOf(body)},"result":${result}}`);
      }
      const call = typeof body === 'object' && body !== null && 'params' in body ? (body.params as { name?: string }) : undefined;
      if (what === 'call' && rpcOf(body) === 'tools/call' && call?.name === 'deep') {
        const result = `{"resultType":"complete","content":[{"type":"text","text":"deep"}],"structuredContent":${nested(depth)}}`;
        return answer(res, as, `{"jsonrpc":"2.0","id":${idOf(body)},"result":${result}}`);
      }
      return false;
    },
  });
  cleanups.push(() => server.close());
  return server;
}

function v2Client(): Client {
  return new Client({ name: 'deep-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
}

/** Not the stack overflow, and the limit named. */
function expectNamedLimit(error: unknown): void {
  expect(error).not.toBeInstanceOf(RangeError);
  expect((error as Error).message).toMatch(/nests deeper than 512 levels/);
}

describe('S7: an answer nested too deep fails its call with a typed error naming the limit', () => {
  for (const as of ['json', 'sse'] as const) {
    it(`S7: a server/discover result nested ${levels} levels deep (${as}) rejects connect() naming the limit, not with a RangeError`, async () => {
      const server = await deepServer('probe', as);
      const transport = new StreamableHTTPClientTransport(server.url);
      const error = await within(rejection(v2Client().connect(transport)), 'connect() to reject');
      expectNamedLimit(error);
      // The Client's negotiation failed on the transport's typed error: it is the cause, not a verdict of another era.
      expect(error).toBeInstanceOf(SdkError);
      expect((error as SdkError).code).toBe(SdkErrorCode.EraNegotiationFailed);
      expect((error as Error).cause).toBeInstanceOf(MessageTooDeepError);
      await transport.close();
    });

    it(`S7: a tool result nested ${levels} levels deep (${as}) fails that call naming the limit; the next call is answered`, async () => {
      const server = await deepServer('call', as);
      const client = v2Client();
      const transport = new StreamableHTTPClientTransport(server.url);
      const warnings: Error[] = [];
      await client.connect(transport);
      cleanups.push(() => client.close());
      transport.onerror = (error) => warnings.push(error);
      const error = await within(rejection(client.callTool({ name: 'deep', arguments: {} })), 'the deep call to fail');
      expectNamedLimit(error);
      if (as === 'json') {
        // Refused before send() resolved: the call rejects with the typed error itself.
        expect(error).toBeInstanceOf(MessageTooDeepError);
      } else {
        // A stream had begun (send() resolved): the call is answered with a JSON-RPC error naming it (P10).
        expect(error).toBeInstanceOf(ProtocolError);
        expect((error as ProtocolError).data).toMatchObject({ type: 'MessageTooDeepError' });
        expect(warnings.some((w) => w instanceof MessageTooDeepError)).toBe(true);
      }
      // Nothing else is affected.
      const result = await client.callTool({ name: 'echo', arguments: { text: 'after' } });
      expect(result.content).toEqual([{ type: 'text', text: 'after' }]);
      expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
    });
  }

  it('S7: a result at the limit (500 levels) is delivered as it is', async () => {
    const server = await deepServer('call', 'sse', 500);
    const client = v2Client();
    await client.connect(new StreamableHTTPClientTransport(server.url));
    cleanups.push(() => client.close());
    const result = await client.callTool({ name: 'deep', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'deep' }]);
  });
});
