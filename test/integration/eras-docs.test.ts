/**
 * docs/eras.md, checked: one test per error statement there (the table's E9 row, "Errors under the
 * v2 Client"), against the SDKs' real servers on 127.0.0.1 and both Client generations.
 * test/integration/v2-errors.test.ts checks the refused connection under `auto`.
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import {
  findTransportError,
  McpTransportError,
  ModernOnlyServerError,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '../../src/index.js';
import { startV2Server } from '../support/v2-server.js';
import { listenLocal, shutDown } from '../support/http.js';
import { closedPort, rejection } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

afterEach(runCleanups);

type Generation = '1.x' | 'v2 legacy' | 'v2 auto';

function clientOf(generation: Generation): ClientV1 | Client {
  if (generation === '1.x') return new ClientV1({ name: 'eras-docs', version: '1.0.0' });
  return new Client(
    { name: 'eras-docs', version: '1.0.0' },
    { versionNegotiation: { mode: generation === 'v2 auto' ? 'auto' : 'legacy' } },
  );
}

/** What connect() rejected with, and what the transport's onerror heard. */
async function failedConnect(generation: Generation, url: URL | string) {
  const transport = new StreamableHTTPClientTransport(url);
  // Set before connect(): both Clients keep a handler that was there and call it too.
  const heard: Error[] = [];
  transport.onerror = (e) => heard.push(e);
  const error = await rejection(clientOf(generation).connect(transport));
  cleanups.push(() => transport.close());
  return { error, transport, heard };
}

/** A server on 127.0.0.1 that answers 404 to everything: an MCP URL with a wrong path. */
async function wrongPath(): Promise<URL> {
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('Not Found');
  });
  const port = await listenLocal(server);
  cleanups.push(() => shutDown(server));
  return new URL(`http://127.0.0.1:${port}/wrong`);
}

describe('docs/eras.md: a 2026-07-28-only server and a Client that cannot speak it (E9)', () => {
  for (const generation of ['1.x', 'v2 legacy'] as const) {
    it(`E9: the ${generation} Client: connect() fails at once; findTransportError finds ModernOnlyServerError, whose message names the fix`, async () => {
      const server = await startV2Server({ legacy: 'reject' });
      cleanups.push(() => server.close());
      const { error, heard } = await failedConnect(generation, server.url);
      // The Client's own error (McpError / ProtocolError -32022), with the transport's words.
      expect((error as { code?: unknown }).code).toBe(-32022);
      expect(String(error)).toMatch(/speaks only MCP 2026-07-28/);
      const found = findTransportError(error, ModernOnlyServerError);
      expect(found).toBeInstanceOf(ModernOnlyServerError);
      expect(found?.supported).toEqual(['2026-07-28']);
      expect(found?.message).toMatch(/versionNegotiation: \{ mode: 'auto' \}/);
      expect(findTransportError(error)).toBe(found);
      // At once: one initialize, no retry, no timeout; the transport failed with that very error (onerror heard it).
      expect(server.requests.map((r) => r.rpc)).toEqual(['initialize']);
      expect(heard).toContain(found);
    });
  }
});

describe('docs/eras.md: errors under each Client', () => {
  it('E2, F6: the v2 Client in auto mode, a wrong path: the probe is refused, initialize meets the 404, and connect() rejects with the StreamableHTTPError itself', async () => {
    const { error } = await failedConnect('v2 auto', await wrongPath());
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).status).toBe(404);
    expect(findTransportError(error, StreamableHTTPError)).toBe(error);
  });

  for (const generation of ['1.x', 'v2 legacy'] as const) {
    it(`F6: the ${generation} Client, a refused connection: connect() rejects with this transport's error itself, and findTransportError returns it`, async () => {
      const { error } = await failedConnect(generation, `http://127.0.0.1:${await closedPort()}/mcp`);
      expect(error).toBeInstanceOf(McpTransportError);
      expect(findTransportError(error)).toBe(error);
      expect((error as Error).message).toContain('ECONNREFUSED');
    });

    it(`F6: the ${generation} Client, a wrong path: connect() rejects with the StreamableHTTPError (404) itself`, async () => {
      const { error } = await failedConnect(generation, await wrongPath());
      expect(error).toBeInstanceOf(StreamableHTTPError);
      expect((error as StreamableHTTPError).status).toBe(404);
      expect(findTransportError(error, StreamableHTTPError)).toBe(error);
    });
  }
});
