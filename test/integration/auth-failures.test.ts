/**
 * A7: a 401 or 403 the transport does not resolve reaches the v2 SDK Client as the SDK types it
 * (`SdkHttpError`, CLIENT_HTTP_AUTHENTICATION / CLIENT_HTTP_FORBIDDEN, with the status and the
 * challenge) in every phase: the era probe, `initialize`, a call, a listen stream, the legacy
 * stream. The v2 SDK's real server (`createMcpHandler`) and the 1.x SDK's real servers, on
 * 127.0.0.1, behind a front that refuses what the test names.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { HttpAuthError, StreamableHTTPClientTransport, StreamableHTTPError } from '../../src/index.js';
import { startV2Server, type V2ServerOptions, type V2TestServer } from '../support/v2-server.js';
import { startLegacyServer } from '../support/legacy-server.js';
import { forwardTo, listenLocal, shutDown } from '../support/http.js';
import { rejection, within } from '../support/harness.js';
import { cleanups, runCleanups, serve } from '../support/cleanups.js';

afterEach(runCleanups);

type Refusal = 401 | 403;
const challenge = 'Bearer error="invalid_token", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"';
const expectedCode = { 401: SdkErrorCode.ClientHttpAuthentication, 403: SdkErrorCode.ClientHttpForbidden } as const;

function refuse(res: ServerResponse, status: Refusal): true {
  res.writeHead(status, { 'www-authenticate': challenge, 'content-type': 'text/plain' }).end('refused by the front');
  return true;
}

/** The v2 SDK's server behind a front that refuses, with `status`, what `refuses` names. */
async function frontedV2(
  status: Refusal,
  refuses: (rpc: string | undefined) => boolean,
  options: V2ServerOptions = {},
): Promise<V2TestServer> {
  const server = await startV2Server({
    legacy: 'reject',
    ...options,
    intercept: (_req, res, body) => {
      const rpc =
        typeof body === 'object' && body !== null && 'method' in body && typeof body.method === 'string' ? body.method : undefined;
      return refuses(rpc) ? refuse(res, status) : false;
    },
  });
  cleanups.push(() => server.close());
  return server;
}

function v2Client(mode: 'auto' | 'legacy'): Client {
  return new Client({ name: 'auth-failures-test', version: '1.0.0' }, { versionNegotiation: { mode } });
}

/** The v2 SDK's own authentication or forbidden error, with the status and the challenge; never ERA_NEGOTIATION_FAILED. */
function expectSdkAuthError(error: unknown, status: Refusal): void {
  expect(error).toBeInstanceOf(SdkHttpError);
  expect(error).toBeInstanceOf(SdkError);
  expect(error).toBeInstanceOf(HttpAuthError);
  const typed = error as HttpAuthError;
  expect(typed.code).toBe(expectedCode[status]);
  expect(typed.status).toBe(status);
  expect(typed.data.status).toBe(status);
  expect(typed.challenge).toEqual({
    error: 'invalid_token',
    resourceMetadataUrl: 'http://127.0.0.1:1/.well-known/oauth-protected-resource',
  });
  // The transport's own error stays reachable as the cause.
  expect(typed.cause).toBeInstanceOf(StreamableHTTPError);
}

describe("A7: under the v2 SDK Client, an unresolved 401/403 is the SDK's own error in every phase", () => {
  for (const status of [401, 403] as const) {
    it(`A7: the era probe (server/discover) refused ${status}: connect() rejects with ${expectedCode[status]}, not ERA_NEGOTIATION_FAILED`, async () => {
      const server = await frontedV2(status, (rpc) => rpc === 'server/discover');
      const transport = new StreamableHTTPClientTransport(server.url);
      const error = await within(rejection(v2Client('auto').connect(transport)), 'connect() to reject');
      expectSdkAuthError(error, status);
      expect((error as SdkError).code).not.toBe(SdkErrorCode.EraNegotiationFailed);
      await transport.close();
    });

    it(`A7: a call and a listen stream refused ${status} after connect reject with ${expectedCode[status]}; the connection goes on`, async () => {
      let refusing = false;
      const server = await frontedV2(status, (rpc) => refusing && (rpc === 'tools/call' || rpc === 'subscriptions/listen'));
      const client = v2Client('auto');
      const transport = new StreamableHTTPClientTransport(server.url);
      await client.connect(transport);
      cleanups.push(() => client.close());
      refusing = true;
      expectSdkAuthError(await rejection(client.callTool({ name: 'echo', arguments: { text: 'hi' } })), status);
      expectSdkAuthError(await within(rejection(client.listen({ toolsListChanged: true })), 'listen() to reject'), status);
      // Nothing else is affected: once the front lets calls through, they are answered.
      refusing = false;
      const result = await client.callTool({ name: 'echo', arguments: { text: 'again' } });
      expect(result.content).toEqual([{ type: 'text', text: 'again' }]);
      expect(transport.actor.getSnapshot().matches('modern')).toBe(true);
    });

    it(`A7: initialize refused ${status} (the v2 Client in 'legacy' mode) rejects connect() with ${expectedCode[status]}`, async () => {
      const server = await frontedV2(status, (rpc) => rpc === 'initialize', { legacy: 'stateless' });
      const transport = new StreamableHTTPClientTransport(server.url);
      expectSdkAuthError(await within(rejection(v2Client('legacy').connect(transport)), 'connect() to reject'), status);
      await transport.close();
    });

    it(`A7: the legacy HTTP+SSE stream refused ${status} rejects connect() with ${expectedCode[status]}`, async () => {
      const legacy = await startLegacyServer();
      cleanups.push(() => legacy.close());
      // A front before the SDK's real 2024-11-05 server: the GET of its one stream is refused.
      const front = createServer((req: IncomingMessage, res: ServerResponse) => {
        if (req.method === 'GET') refuse(res, status);
        else forwardTo(req, res, new URL(req.url ?? '/', legacy.url));
      });
      const port = await listenLocal(front);
      cleanups.push(() => shutDown(front));
      const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
      const error = await within(rejection(v2Client('legacy').connect(transport)), 'connect() to reject');
      expectSdkAuthError(error, status);
      await transport.close();
    });
  }
});

describe('A7: the 1.x Client keeps its errors', () => {
  it("A7: under the 1.x SDK Client an unresolved 401 is still this transport's StreamableHTTPError, not the v2 shape", async () => {
    const server = await serve();
    server.fault({ method: 'POST', rpc: 'initialize', status: 401, body: 'no' });
    const transport = new StreamableHTTPClientTransport(server.url);
    const error = await rejection(new ClientV1({ name: 'v1', version: '1.0.0' }).connect(transport));
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect(error).not.toBeInstanceOf(HttpAuthError);
    expect(error).not.toBeInstanceOf(SdkError);
    expect((error as StreamableHTTPError).code).toBe(401);
    await transport.close();
  });
});
