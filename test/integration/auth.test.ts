/**
 * Authorization against a real OAuth setup on 127.0.0.1 (test/support/oauth-fixture.ts): an
 * authorization server and a protected MCP server built from the official SDK's own server-side
 * auth helpers, the SDK's `Client` on top of this project's transport, and an in-memory
 * `OAuthClientProvider` whose redirects the test follows as the user's browser would.
 * A1 (the SDK's OAuth flow, finishAuth, refresh, no loop), A2 (step-up), A3 (the bearer token
 * on every request, redirect policy), H9 (the custom fetch for the OAuth requests too).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '../../src/index.js';
import { newClient, only, recordingFetch, rejection, textOf, until } from '../support/harness.js';
import {
  adminScope,
  approve,
  baseScope,
  startAuthServer,
  startProtectedServer,
  startRecordingServer,
  TestOAuthClientProvider,
  type AuthServer,
  type HttpRequestRecord,
  type ProtectedServer,
  type RecordingServer,
} from '../support/oauth-fixture.js';

let clients: Client[] = [];
let transports: StreamableHTTPClientTransport[] = [];
let servers: { close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const client of clients) await client.close();
  for (const transport of transports) await transport.close();
  for (const server of servers.reverse()) await server.close();
  clients = [];
  transports = [];
  servers = [];
  vi.restoreAllMocks();
});

interface Setup {
  as: AuthServer;
  rs: ProtectedServer;
}

async function setUp(options: { refreshTokens?: boolean } = {}): Promise<Setup> {
  const as = await startAuthServer(options);
  servers.push(as);
  const rs = await startProtectedServer(as);
  servers.push(rs);
  return { as, rs };
}

async function otherOrigin(): Promise<RecordingServer> {
  const other = await startRecordingServer();
  servers.push(other);
  return other;
}

function transportFor(url: URL, options: StreamableHTTPClientTransportOptions): StreamableHTTPClientTransport {
  const transport = new StreamableHTTPClientTransport(url, options);
  transports.push(transport);
  return transport;
}

function clientFor(): Client {
  const client = newClient();
  clients.push(client);
  return client;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function headerOf(request: HttpRequestRecord, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Waits (bounded) until the server finished its response to `request`, and returns the status. */
/** Whether an authorization URL asks for `scope`. */
function asksFor(scope: string): (url: URL) => boolean {
  return (url) => (url.searchParams.get('scope') ?? '').split(' ').includes(scope);
}

/** Whether a request carried `token` as its bearer token. */
function bearing(token: string): (request: HttpRequestRecord) => boolean {
  return (request) => headerOf(request, 'authorization') === `Bearer ${token}`;
}

async function statusOf(request: HttpRequestRecord | undefined): Promise<number | undefined> {
  await until(() => request?.status !== undefined, 'the response to finish');
  return request?.status;
}

/**
 * The whole first-time flow: connect meets 401 and rejects with the SDK's UnauthorizedError,
 * the user approves, finishAuth(code) gets the tokens, connect again succeeds.
 */
async function authorizeInteractively(client: Client, transport: StreamableHTTPClientTransport, provider: TestOAuthClientProvider) {
  const error = await rejection(client.connect(transport));
  expect(error).toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = provider.authorizationUrls.at(-1);
  expect(authorizationUrl).toBeDefined();
  await transport.finishAuth(await approve(authorizationUrl!));
  await client.connect(transport);
}

/** A client connected to the protected server through one completed authorization-code flow. */
async function authorizedClient(setup: Setup, options: StreamableHTTPClientTransportOptions = {}, url = setup.rs.url) {
  const provider = new TestOAuthClientProvider();
  const transport = transportFor(url, { authProvider: provider, ...options });
  const client = clientFor();
  await authorizeInteractively(client, transport, provider);
  return { provider, transport, client };
}

/** Waits (bounded) until the standalone GET reached the MCP endpoint, so that nothing opens later. */
async function standaloneOpened(rs: ProtectedServer): Promise<void> {
  await until(() => rs.mcpRequests().some((request) => request.method === 'GET'), 'the standalone GET');
}

const toolCalls = (rs: ProtectedServer, tool: string) =>
  rs.mcpRequests().filter((request) => request.rpc === 'tools/call' && request.tool === tool);

describe('A1: the SDK OAuth flow', () => {
  it("A1: a first connect without tokens rejects with the SDK's UnauthorizedError after redirectToAuthorization; finishAuth(code), then connect again works, and the bearer token goes on POST, GET and DELETE, never in a URL", async () => {
    const { as, rs } = await setUp();
    const provider = new TestOAuthClientProvider();
    const transport = transportFor(rs.url, { authProvider: provider });
    const client = clientFor();

    const error = await rejection(client.connect(transport));
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrls).toHaveLength(1);
    expect(provider.tokens()).toBeUndefined();

    // The initialize POST met the 401 challenge without any token.
    const [initialize] = rs.mcpRequests();
    expect(initialize?.rpc).toBe('initialize');
    expect(await statusOf(initialize)).toBe(401);
    expect(headerOf(initialize!, 'authorization')).toBeUndefined();

    // The SDK's flow: resource metadata from the challenge, the authorization server's metadata,
    // dynamic registration; then the authorization URL with PKCE, the challenged scope and the resource.
    expect(rs.requests.map((request) => request.url)).toContain(new URL(rs.resourceMetadataUrl).pathname);
    expect(as.requests.map((request) => `${request.method} ${request.url}`)).toEqual(
      expect.arrayContaining(['GET /.well-known/oauth-authorization-server', 'POST /register']),
    );
    expect(as.tokenRequests()).toHaveLength(0);
    const authorizationUrl = only(provider.authorizationUrls, 'authorization URL');
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(new URL('/authorize', as.issuer).href);
    expect(authorizationUrl.searchParams.get('scope')).toBe(baseScope);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(rs.url.href);

    // The user approves; the code comes back on the redirect; finishAuth exchanges it.
    const code = await approve(authorizationUrl);
    await transport.finishAuth(code);
    expect(as.provider.grants).toEqual([{ grantType: 'authorization_code', scopes: [baseScope] }]);
    const token = provider.accessToken;
    expect(token).toBeDefined();

    const before = rs.mcpRequests().length;
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'authorized' } }))).toBe('authorized');
    await standaloneOpened(rs);
    await client.close();

    // A3: every request after the flow carries the bearer token in the Authorization header.
    const authorized = rs.mcpRequests().slice(before);
    expect(new Set(authorized.map((request) => request.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of authorized) {
      expect(headerOf(request, 'authorization'), `${request.method} ${request.rpc ?? ''}`).toBe(`Bearer ${token!}`);
    }
    // Never in a URL, on either server.
    for (const request of [...rs.requests, ...as.requests]) {
      expect(request.url).not.toContain(token!);
      expect(request.url).not.toMatch(/access_token/i);
    }
    expect(provider.authorizationUrls).toHaveLength(1);
  });

  it('A1: with valid tokens the 401 path is never taken: no challenge, no discovery, no authorization-server request', async () => {
    const setup = await setUp();
    const { as, rs } = setup;
    const { provider, client } = await authorizedClient(setup);
    await client.close();
    const asBefore = as.requests.length;
    const rsBefore = rs.requests.length;

    const transport = transportFor(rs.url, { authProvider: provider });
    const again = clientFor();
    await again.connect(transport);
    expect(textOf(await again.callTool({ name: 'echo', arguments: { text: 'valid' } }))).toBe('valid');
    await again.close();

    expect(as.requests).toHaveLength(asBefore);
    const later = rs.requests.slice(rsBefore);
    expect(later.length).toBeGreaterThan(0);
    expect(later.filter((request) => request.url !== '/mcp')).toEqual([]);
    for (const request of later) {
      expect(request.status, `${request.method} ${request.rpc ?? ''}`).not.toBe(401);
      expect(headerOf(request, 'authorization')).toBe(`Bearer ${provider.accessToken!}`);
    }
    expect(provider.authorizationUrls).toHaveLength(1);
  });

  it('A1: a revoked access token with a refresh token: the 401 runs the SDK flow (a refresh), the call goes again once and succeeds, without the user', async () => {
    const setup = await setUp();
    const { as, rs } = setup;
    const { provider, transport, client } = await authorizedClient(setup);
    const sessionId = transport.sessionId;
    const revoked = provider.accessToken!;
    as.provider.revoke(revoked);

    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'refreshed' } }))).toBe('refreshed');

    expect(as.provider.grants.map((grant) => grant.grantType)).toEqual(['authorization_code', 'refresh_token']);
    expect(as.tokenRequests()).toHaveLength(2);
    expect(provider.authorizationUrls).toHaveLength(1);
    const calls = toolCalls(rs, 'echo');
    expect(calls).toHaveLength(2);
    // The call went with the revoked token and met 401; it went again with the new one.
    expect(await statusOf(only(calls, 'call with the revoked token', bearing(revoked)))).toBe(401);
    expect(provider.accessToken).not.toBe(revoked);
    expect(await statusOf(only(calls, 'call with the new token', bearing(provider.accessToken!)))).toBe(200);
    expect(transport.sessionId).toBe(sessionId);
  });

  it("A1: the sdkAuth option's functions run the flow and make its UnauthorizedError, instead of an SDK loaded by name (as a bundled app hands them over), given as they are exported or as a loader", async () => {
    const sdk = await import('@modelcontextprotocol/sdk/client/auth.js');
    class HandedOverUnauthorized extends Error {}
    for (const form of ['functions', 'loader'] as const) {
      const setup = await setUp();
      const calls: string[] = [];
      const functions = {
        auth: (...args: Parameters<typeof sdk.auth>) => {
          calls.push(args[1].authorizationCode === undefined ? 'auth' : 'auth with code');
          return sdk.auth(...args);
        },
        UnauthorizedError: HandedOverUnauthorized,
      };
      const provider = new TestOAuthClientProvider();
      const transport = transportFor(setup.rs.url, {
        authProvider: provider,
        sdkAuth: form === 'functions' ? functions : () => Promise.resolve(functions),
      });
      const client = clientFor();
      const error = await rejection(client.connect(transport));
      expect(error, form).toBeInstanceOf(HandedOverUnauthorized);
      expect((error as Error).name, form).toBe('UnauthorizedError');
      await transport.finishAuth(await approve(provider.authorizationUrls.at(-1)!));
      await client.connect(transport);
      setup.as.provider.revoke(provider.accessToken!);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: form } })), form).toBe(form);
      // The first 401, the code from the redirect, the refresh after the revocation: all through the handed-over auth().
      expect(calls, form).toEqual(['auth', 'auth with code', 'auth']);
    }
  });

  it('A1, F3: an initialize POSTed by the facade (the handshake on the data plane) that meets 401 with a revoked token: the chart runs the flow (a refresh), sends it again, and adopts the session, keeping that initialize for a recovery', async () => {
    const setup = await setUp();
    const { as, rs } = setup;
    const { provider, client } = await authorizedClient(setup);
    await client.close();
    const revoked = provider.accessToken!;
    as.provider.revoke(revoked);
    const before = rs.mcpRequests().length;

    const transport = transportFor(rs.url, { authProvider: provider });
    const again = clientFor();
    await again.connect(transport);
    expect(textOf(await again.callTool({ name: 'echo', arguments: { text: 'after refresh' } }))).toBe('after refresh');

    const initializes = rs
      .mcpRequests()
      .slice(before)
      .filter((request) => request.rpc === 'initialize');
    expect(initializes).toHaveLength(2);
    expect(await statusOf(only(initializes, 'initialize with the revoked token', bearing(revoked)))).toBe(401);
    expect(await statusOf(only(initializes, 'initialize with the new token', bearing(provider.accessToken!)))).toBe(200);
    expect(as.provider.grants.map((grant) => grant.grantType)).toEqual(['authorization_code', 'refresh_token']);
    expect(transport.sessionId).toBeDefined();
    expect(transport.saveState()?.initialize).toMatchObject({ method: 'initialize' });
    await again.close();
  });

  it('A1: the standalone GET that meets 401 when it reconnects runs the flow (a refresh) and opens again with the new token', async () => {
    const setup = await setUp();
    const { as, rs } = setup;
    const { provider, transport } = await authorizedClient(setup, {
      reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 10, jitter: false },
    });
    await standaloneOpened(rs);
    const revoked = provider.accessToken!;
    as.provider.revoke(revoked);
    // The server ends its standalone stream; the client reconnects it (G4) with the revoked token.
    rs.sessions.get(transport.sessionId!)!.transport.closeStandaloneSSEStream();

    const gets = () => rs.mcpRequests().filter((request) => request.method === 'GET');
    await until(() => gets().length >= 3, 'the standalone GET opened again after the flow');
    const [opened, refused, reopened] = gets();
    expect(headerOf(opened!, 'authorization')).toBe(`Bearer ${revoked}`);
    expect(headerOf(refused!, 'authorization')).toBe(`Bearer ${revoked}`);
    expect(await statusOf(refused)).toBe(401);
    expect(provider.accessToken).not.toBe(revoked);
    expect(headerOf(reopened!, 'authorization')).toBe(`Bearer ${provider.accessToken!}`);
    expect(as.provider.grants.map((grant) => grant.grantType)).toEqual(['authorization_code', 'refresh_token']);
    expect(provider.authorizationUrls).toHaveLength(1);
  });

  it('A1: a server that answers 401 again after a successful flow: the call fails, no loop; the session lives on', async () => {
    const setup = await setUp();
    const { as, rs } = setup;
    const { provider, transport, client } = await authorizedClient(setup);
    const sessionId = transport.sessionId;
    let denying = true;
    rs.deny((request) => denying && request.tool === 'echo');

    const error = await rejection(client.callTool({ name: 'echo', arguments: { text: 'denied' } }));
    expect(error).not.toBeInstanceOf(UnauthorizedError);
    expect(messageOf(error)).toMatch(/401/);

    // One flow (a refresh) and one retry, then the failure.
    const calls = toolCalls(rs, 'echo');
    expect(calls).toHaveLength(2);
    const retry = only(calls, 'call with the refreshed token', bearing(provider.accessToken!));
    expect(await statusOf(only(calls, 'call before the refresh', (call) => call !== retry))).toBe(401);
    expect(await statusOf(retry)).toBe(401);
    expect(as.tokenRequests()).toHaveLength(2);
    expect(as.provider.grants.map((grant) => grant.grantType)).toEqual(['authorization_code', 'refresh_token']);
    expect(provider.authorizationUrls).toHaveLength(1);

    // Nothing went on in the background, and the session is still there.
    denying = false;
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'allowed' } }))).toBe('allowed');
    expect(toolCalls(rs, 'echo')).toHaveLength(3);
    expect(as.tokenRequests()).toHaveLength(2);
    expect(transport.sessionId).toBe(sessionId);
  });
});

describe('A2: step-up on 403 insufficient_scope', () => {
  /** An authorized client without refresh tokens, whose `admin` call met the 403 and stepped up by a redirect. */
  async function stepUpByRedirect() {
    const setup = await setUp({ refreshTokens: false });
    const authorized = await authorizedClient(setup);
    const error = await rejection(authorized.client.callTool({ name: 'admin' }));
    return { ...setup, ...authorized, error };
  }

  it('A2: a 403 with error="insufficient_scope" steps up once: the authorization request asks for the challenged scope, and a flow that needs the user fails the call with the SDK\'s UnauthorizedError', async () => {
    const { as, rs, provider, error } = await stepUpByRedirect();
    expect(error).toBeInstanceOf(UnauthorizedError);

    const calls = toolCalls(rs, 'admin');
    expect(calls).toHaveLength(1);
    expect(await statusOf(only(calls, 'admin call'))).toBe(403);
    expect(provider.authorizationUrls).toHaveLength(2);
    const stepUp = only(provider.authorizationUrls, 'step-up authorization URL', asksFor(adminScope));
    expect(stepUp.searchParams.get('scope')).toBe(`${baseScope} ${adminScope}`);

    await approve(stepUp);
    expect(as.provider.authorizations.map((authorization) => authorization.scopes)).toEqual([[baseScope], [baseScope, adminScope]]);
  });

  it('A2: after the user approved the step-up and finishAuth(code), the call succeeds on the same session (only that call failed)', async () => {
    const { as, rs, provider, transport, client, error } = await stepUpByRedirect();
    expect(error).toBeInstanceOf(UnauthorizedError);
    const sessionId = transport.sessionId;
    expect(sessionId).toBeDefined();

    await transport.finishAuth(await approve(only(provider.authorizationUrls, 'step-up authorization URL', asksFor(adminScope))));
    expect(as.provider.grants.at(-1)).toEqual({ grantType: 'authorization_code', scopes: [baseScope, adminScope] });

    expect(textOf(await client.callTool({ name: 'admin' }))).toBe('admin done');
    const calls = toolCalls(rs, 'admin');
    expect(calls).toHaveLength(2);
    const retry = only(calls, 'call with the stepped-up token', bearing(provider.accessToken!));
    expect(headerOf(retry, 'mcp-session-id')).toBe(sessionId);
    expect(await statusOf(retry)).toBe(200);
  });

  it('A2: a step-up that the SDK flow completes without the user (a refresh that carries a newly granted scope) retries the call once, and it succeeds', async () => {
    const setup = await setUp();
    const { as, rs } = setup;
    const { provider, transport, client } = await authorizedClient(setup);
    const sessionId = transport.sessionId;
    // An administrator grants the scope meanwhile; the next token the server issues carries it.
    as.provider.extraScopes.add(adminScope);

    expect(textOf(await client.callTool({ name: 'admin' }))).toBe('admin done');

    const calls = toolCalls(rs, 'admin');
    expect(calls).toHaveLength(2);
    const retry = only(calls, 'call with the refreshed token', bearing(provider.accessToken!));
    expect(await statusOf(only(calls, 'call before the step-up', (call) => call !== retry))).toBe(403);
    expect(as.provider.grants.map((grant) => grant.grantType)).toEqual(['authorization_code', 'refresh_token']);
    expect(provider.authorizationUrls).toHaveLength(1);
    expect(transport.sessionId).toBe(sessionId);
  });

  it('A2: a second 403 after the step-up fails the call (maxStepUpRetries defaults to 1); no loop, the session lives on', async () => {
    const setup = await setUp();
    const { as, rs } = setup;
    const { provider, transport, client } = await authorizedClient(setup);
    const sessionId = transport.sessionId;

    const error = await rejection(client.callTool({ name: 'admin' }));
    expect(error).not.toBeInstanceOf(UnauthorizedError);
    expect(messageOf(error)).toMatch(/403/);

    const calls = toolCalls(rs, 'admin');
    expect(calls).toHaveLength(2);
    const retry = only(calls, 'call with the refreshed token', bearing(provider.accessToken!));
    expect(await statusOf(only(calls, 'call before the step-up', (call) => call !== retry))).toBe(403);
    expect(await statusOf(retry)).toBe(403);
    // The one step-up was the SDK's refresh (the token kept its scope); no redirect.
    expect(as.tokenRequests()).toHaveLength(2);
    expect(provider.authorizationUrls).toHaveLength(1);

    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    expect(toolCalls(rs, 'admin')).toHaveLength(2);
    expect(as.tokenRequests()).toHaveLength(2);
    expect(transport.sessionId).toBe(sessionId);
  });
});

describe('A3: redirects and the bearer token', () => {
  it('A3: a same-origin 307 of the MCP endpoint is followed by default, for POST, GET and DELETE, with the token', async () => {
    const setup = await setUp();
    const { rs } = setup;
    const { provider, client: first } = await authorizedClient(setup);
    await first.close();
    const before = rs.requests.length;

    const transport = transportFor(rs.sameOriginRedirectUrl, { authProvider: provider });
    const client = clientFor();
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'moved' } }))).toBe('moved');
    await until(
      () => rs.requests.slice(before).some((request) => request.method === 'GET' && request.url === '/mcp'),
      'the standalone GET',
    );
    await client.close();

    const later = rs.requests.slice(before);
    const hops = later.filter((request) => request.url === '/old-mcp');
    const landed = later.filter((request) => request.url === '/mcp');
    expect(hops.map((request) => request.status)).toEqual(hops.map(() => 307));
    // Each hop lands once, with its method (the GET and the POSTs run side by side: their order may differ).
    const methods = (requests: typeof later) => requests.map((request) => request.method).sort();
    expect(methods(hops)).toEqual(methods(landed));
    expect(new Set(landed.map((request) => request.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of [...hops, ...landed]) {
      expect(headerOf(request, 'authorization'), `${request.method} ${request.url}`).toBe(`Bearer ${provider.accessToken!}`);
    }
  });

  it('A3: a cross-origin redirect is not followed by default: the call fails naming the redirect, and the other origin receives no request at all', async () => {
    const setup = await setUp();
    const { rs } = setup;
    const other = await otherOrigin();
    const { client } = await authorizedClient(setup);
    await standaloneOpened(rs);
    rs.moveTo(other.url);

    const error = await rejection(client.callTool({ name: 'echo', arguments: { text: 'elsewhere' } }));
    expect(messageOf(error)).toContain(`redirect to ${other.url.href} not followed`);
    const calls = toolCalls(rs, 'echo');
    expect(await statusOf(only(calls, 'echo call'))).toBe(307);

    await client.close();
    // Not the POST, not the DELETE of close(): no token and no session ID crossed origins.
    expect(other.requests).toEqual([]);
    expect(rs.mcpRequests().some((request) => request.method === 'DELETE')).toBe(true);
  });

  it("A3: with redirectPolicy 'follow' fetch follows a cross-origin redirect itself, and the runtime strips Authorization", async () => {
    const setup = await setUp();
    const { rs } = setup;
    const other = await otherOrigin();
    const { transport, client } = await authorizedClient(setup, { redirectPolicy: 'follow' });
    await standaloneOpened(rs);
    rs.moveTo(other.url);

    const error = await rejection(client.callTool({ name: 'echo', arguments: { text: 'elsewhere' } }));
    expect(messageOf(error)).toMatch(/502/);

    // Only the POST went (the standalone GET was open before the move).
    expect(other.requests.map((request) => request.method)).toEqual(['POST']);
    const [arrived] = other.requests;
    // What fetch does on a cross-origin redirect: Authorization is removed (Fetch standard);
    // other headers, the session ID included, go along: 'follow' is the caller's choice.
    expect(headerOf(arrived!, 'authorization')).toBeUndefined();
    expect(headerOf(arrived!, 'mcp-session-id')).toBe(transport.sessionId);
  });
});

describe('H9: the custom fetch for the OAuth requests', () => {
  it('H9: discovery, registration, the code exchange and a refresh all go through the custom fetch; the global fetch is never called', async () => {
    const { as, rs } = await setUp();
    const recorder = recordingFetch();
    const globalFetch = vi.spyOn(globalThis, 'fetch');
    const provider = new TestOAuthClientProvider();
    const transport = transportFor(rs.url, { authProvider: provider, fetch: recorder.fetch });
    const client = clientFor();

    await authorizeInteractively(client, transport, provider);
    as.provider.revoke(provider.accessToken!);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'recorded' } }))).toBe('recorded');
    await client.close();

    const urls = recorder.calls.map((call) => call.url);
    expect(urls).toContain(rs.resourceMetadataUrl);
    expect(urls).toContain(new URL('/.well-known/oauth-authorization-server', as.issuer).href);
    expect(urls).toContain(new URL('/register', as.issuer).href);
    expect(urls.filter((url) => url === new URL('/token', as.issuer).href)).toHaveLength(2);
    // Every request the authorization server saw came through the custom fetch, except the
    // user's own visit to the authorize endpoint (the test plays the browser).
    const fromTransport = as.requests.filter((request) => !request.url.startsWith('/authorize'));
    expect(urls.filter((url) => url.startsWith(as.issuer.origin))).toHaveLength(fromTransport.length);
    expect(as.provider.grants.map((grant) => grant.grantType)).toEqual(['authorization_code', 'refresh_token']);
    expect(globalFetch).not.toHaveBeenCalled();
  });
});
