/**
 * A real OAuth setup on 127.0.0.1, built from the official SDK's server-side auth helpers:
 *
 * - an authorization server (`mcpAuthRouter`: metadata, dynamic client registration, an
 *   authorize endpoint that approves at once and redirects with a code, a token endpoint with
 *   PKCE and refresh) over an in-memory `OAuthServerProvider`;
 * - a protected MCP resource server: the SDK's McpServer + StreamableHTTPServerTransport behind
 *   `requireBearerAuth` (so a 401 carries `WWW-Authenticate: Bearer resource_metadata="…"`),
 *   with the protected-resource metadata from `mcpAuthMetadataRouter`;
 * - an in-memory `OAuthClientProvider` for the client side, which records where it was sent.
 *
 * Both servers log every request they receive. Nothing is mocked.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  createOAuthMetadata,
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { InvalidGrantError, InvalidRequestError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull, OAuthClientMetadata, OAuthMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { realFetch } from './harness.js';
import { listenLocal, shutDown } from './http.js';
import { InMemoryOAuthClient } from './oauth-client.js';

// ---------------------------------------------------------------------------------------------
// express, as far as this file uses it. express ships no types of its own and @types/express is
// not a dependency of this project, so the few members used here are typed by hand.

interface ExpressRequest extends IncomingMessage {
  body?: unknown;
  auth?: AuthInfo;
}
type Next = (error?: unknown) => void;
type Handler = (req: ExpressRequest, res: ServerResponse, next: Next) => void;
interface ExpressApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(...handlers: Handler[]): ExpressApp;
  all(path: string, ...handlers: Handler[]): ExpressApp;
  post(path: string, ...handlers: Handler[]): ExpressApp;
}
interface Express {
  (): ExpressApp;
  json(): Handler;
  urlencoded(options: { extended: boolean }): Handler;
}
const express = createRequire(import.meta.url)('express') as Express;

/** The SDK's express-typed helpers, seen through the hand-written types above. */
const asHandler = (handler: unknown) => handler as Handler;

/** A handler that may await: a rejection goes to express's error handling. */
function handle(fn: (req: ExpressRequest, res: ServerResponse, next: Next) => Promise<void>): Handler {
  return (req, res, next) => {
    fn(req, res, next).catch(next);
  };
}

// ---------------------------------------------------------------------------------------------
// Shared bits

export interface HttpRequestRecord {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The JSON-RPC method of a POST body to the MCP endpoint, if any. */
  rpc?: string | undefined;
  /** The tool a `tools/call` names, if any. */
  tool?: string | undefined;
  /** The response status, once the response was finished. */
  status?: number;
}

interface Listening {
  http: Server;
  port: number;
}

async function listen(app: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening> {
  const http = createServer(app);
  return { http, port: await listenLocal(http) };
}

/** Each request's log entry, for handlers further down that add to it. */
const entries = new WeakMap<IncomingMessage, HttpRequestRecord>();

function record(log: HttpRequestRecord[], req: IncomingMessage, res: ServerResponse): HttpRequestRecord {
  const entry: HttpRequestRecord = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
  log.push(entry);
  entries.set(req, entry);
  res.once('finish', () => {
    entry.status = res.statusCode;
  });
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Authorization server

/** The scope every request needs (the 401 challenge names it). */
export const baseScope = 'mcp:tools';
/** The further scope the `admin` tool needs (a 403 insufficient_scope names it). */
export const adminScope = 'mcp:admin';

interface IssuedToken {
  clientId: string;
  scopes: string[];
  resource: URL | undefined;
  expiresAt: number;
}

interface Grant {
  clientId: string;
  scopes: string[];
  resource: URL | undefined;
}

/** An in-memory `OAuthServerProvider` that approves every authorization at once. */
export class TestAuthorizationProvider implements OAuthServerProvider {
  /** Each authorization request the authorize endpoint accepted, in order. */
  readonly authorizations: AuthorizationParams[] = [];
  /** Each token grant the token endpoint served, in order. */
  readonly grants: { grantType: 'authorization_code' | 'refresh_token' | 'client_credentials'; scopes: string[] }[] = [];
  /** Scopes granted to every token issued from now on (refreshes included), as an administrator would. */
  readonly extraScopes = new Set<string>();

  private readonly clients = new Map<string, OAuthClientInformationFull>();
  private readonly codes = new Map<string, { client: OAuthClientInformationFull; params: AuthorizationParams }>();
  private readonly accessTokens = new Map<string, IssuedToken>();
  private readonly refreshTokens = new Map<string, Grant>();

  constructor(private readonly options: { refreshTokens: boolean }) {}

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: (clientId) => this.clients.get(clientId),
      registerClient: (client) => {
        // The SDK's registration handler has already generated the client_id.
        const full = client as OAuthClientInformationFull;
        this.clients.set(full.client_id, full);
        return full;
      },
    };
  }

  authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: ServerResponse): Promise<void> {
    this.authorizations.push(params);
    const code = randomUUID();
    this.codes.set(code, { client, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.writeHead(302, { location: target.href });
    res.end();
    return Promise.resolve();
  }

  challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const issued = this.codes.get(code);
    if (issued === undefined) return Promise.reject(new InvalidGrantError('unknown authorization code'));
    return Promise.resolve(issued.params.codeChallenge);
  }

  exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _codeVerifier?: string,
    _redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const issued = this.codes.get(code);
    if (issued?.client.client_id !== client.client_id) {
      return Promise.reject(new InvalidGrantError('authorization code not issued to this client'));
    }
    this.codes.delete(code);
    const scopes = issued.params.scopes ?? [];
    this.grants.push({ grantType: 'authorization_code', scopes });
    return Promise.resolve(this.issue({ clientId: client.client_id, scopes, resource: resource ?? issued.params.resource }));
  }

  exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    const grant = this.refreshTokens.get(refreshToken);
    if (grant?.clientId !== client.client_id) return Promise.reject(new InvalidGrantError('unknown refresh token'));
    if (scopes !== undefined && scopes.some((scope) => !grant.scopes.includes(scope))) {
      return Promise.reject(new InvalidRequestError('a refresh cannot widen the grant'));
    }
    this.refreshTokens.delete(refreshToken);
    this.grants.push({ grantType: 'refresh_token', scopes: grant.scopes });
    return Promise.resolve(
      this.issue({ clientId: client.client_id, scopes: scopes ?? grant.scopes, resource: resource ?? grant.resource }),
    );
  }

  verifyAccessToken(token: string): Promise<AuthInfo> {
    const issued = this.accessTokens.get(token);
    if (issued === undefined) return Promise.reject(new InvalidTokenError('unknown, expired or revoked token'));
    const info: AuthInfo = { token, clientId: issued.clientId, scopes: issued.scopes, expiresAt: issued.expiresAt };
    if (issued.resource !== undefined) info.resource = issued.resource;
    return Promise.resolve(info);
  }

  /** A6: a `client_credentials` grant (the SDK's token handler has none): an access token, no refresh token. */
  issueClientCredentials(clientId: string, scopes: string[], resource: URL | undefined): OAuthTokens {
    this.grants.push({ grantType: 'client_credentials', scopes });
    const { refresh_token: _unused, ...tokens } = this.issue({ clientId, scopes, resource });
    return tokens;
  }

  /** Forgets an access token, as if it had expired or been revoked; its refresh token stays valid. */
  revoke(accessToken: string): void {
    this.accessTokens.delete(accessToken);
  }

  private issue(grant: Grant): OAuthTokens {
    const scopes = [...new Set([...grant.scopes, ...this.extraScopes])];
    const accessToken = randomUUID();
    this.accessTokens.set(accessToken, { ...grant, scopes, expiresAt: Math.floor(Date.now() / 1000) + 3600 });
    const tokens: OAuthTokens = { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: scopes.join(' ') };
    if (this.options.refreshTokens) {
      const refreshToken = randomUUID();
      this.refreshTokens.set(refreshToken, { ...grant, scopes });
      tokens.refresh_token = refreshToken;
    }
    return tokens;
  }
}

export interface AuthServer {
  /** The issuer, `http://127.0.0.1:<port>/`. */
  issuer: URL;
  metadata: OAuthMetadata;
  provider: TestAuthorizationProvider;
  /** Every request the authorization server received. */
  requests: HttpRequestRecord[];
  /** POSTs to the token endpoint. */
  tokenRequests(): HttpRequestRecord[];
  close(): Promise<void>;
}

export async function startAuthServer(
  options: {
    refreshTokens?: boolean;
    /** A6: also serve the `client_credentials` grant to this confidential client. */
    clientCredentials?: { clientId: string; clientSecret: string };
  } = {},
): Promise<AuthServer> {
  const provider = new TestAuthorizationProvider({ refreshTokens: options.refreshTokens ?? true });
  const requests: HttpRequestRecord[] = [];
  // The issuer URL needs the port: listen first, then add the routes (express looks them up per request).
  const app = express();
  const { http, port } = await listen(app);
  const issuer = new URL(`http://127.0.0.1:${port}/`);
  const routerOptions = {
    provider,
    issuerUrl: issuer,
    scopesSupported: [baseScope, adminScope],
    authorizationOptions: { rateLimit: false as const },
    tokenOptions: { rateLimit: false as const },
    clientRegistrationOptions: { rateLimit: false as const },
  };
  app.use((req, res, next) => {
    record(requests, req, res);
    next();
  });
  const machine = options.clientCredentials;
  if (machine !== undefined) {
    app.post('/token', express.urlencoded({ extended: false }), (req, res, next) => {
      const body = (req.body ?? {}) as Record<string, string | undefined>;
      if (body.grant_type !== 'client_credentials') {
        next();
        return;
      }
      // client_secret_basic, or client_secret_post (the one the SDK's metadata lists).
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const [id, secret] =
        basic === undefined
          ? [body.client_id, body.client_secret]
          : Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent);
      res.setHeader('content-type', 'application/json');
      if (id !== machine.clientId || secret !== machine.clientSecret) {
        res.writeHead(401).end(JSON.stringify({ error: 'invalid_client' }));
        return;
      }
      const scopes = body.scope?.split(' ') ?? [baseScope];
      const resource = body.resource === undefined ? undefined : new URL(body.resource);
      res.writeHead(200).end(JSON.stringify(provider.issueClientCredentials(machine.clientId, scopes, resource)));
    });
  }
  app.use(asHandler(mcpAuthRouter(routerOptions)));
  return {
    issuer,
    metadata: createOAuthMetadata(routerOptions),
    provider,
    requests,
    tokenRequests: () => requests.filter((request) => request.method === 'POST' && request.url.startsWith('/token')),
    close: () => shutDown(http),
  };
}

// ---------------------------------------------------------------------------------------------
// Protected MCP resource server

function buildMcpServer(): McpServer {
  const server = new McpServer({ name: 'protected-fixture', version: '1.0.0' });
  server.registerTool('echo', { description: 'echoes its text', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('admin', { description: `needs the ${adminScope} scope` }, () => ({
    content: [{ type: 'text', text: 'admin done' }],
  }));
  return server;
}

function rpcOf(body: unknown): { rpc: string | undefined; tool: string | undefined } {
  if (typeof body !== 'object' || body === null || !('method' in body) || typeof body.method !== 'string') {
    return { rpc: undefined, tool: undefined };
  }
  let tool: string | undefined;
  if ('params' in body && typeof body.params === 'object' && body.params !== null && 'name' in body.params) {
    tool = typeof body.params.name === 'string' ? body.params.name : undefined;
  }
  return { rpc: body.method, tool };
}

export interface ProtectedServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: URL;
  /** `/old-mcp` on the same origin: every request there is answered 307 to `/mcp`. */
  sameOriginRedirectUrl: URL;
  /** Where the protected-resource metadata is (the 401 challenge names it). */
  resourceMetadataUrl: string;
  /** Every request the server received. */
  requests: HttpRequestRecord[];
  /** Requests to the MCP endpoint itself (`/mcp`). */
  mcpRequests(): HttpRequestRecord[];
  /** Answer matching MCP requests 401 with the usual challenge, whatever token they carry. */
  deny(match: (request: HttpRequestRecord) => boolean): void;
  /** From now on, answer every MCP request 307 to this URL (undefined: stop). */
  moveTo(url: URL | undefined): void;
  /** Session IDs the server has open. */
  sessions: Map<string, { server: McpServer; transport: StreamableHTTPServerTransport }>;
  close(): Promise<void>;
}

export async function startProtectedServer(auth: AuthServer): Promise<ProtectedServer> {
  const requests: HttpRequestRecord[] = [];
  const sessions: ProtectedServer['sessions'] = new Map();
  const denials: ((request: HttpRequestRecord) => boolean)[] = [];
  let movedTo: URL | undefined;

  // The URLs need the port: listen first, then add the routes (express looks them up per request).
  const app = express();
  const { http, port } = await listen(app);
  const mcpUrl = new URL(`http://127.0.0.1:${port}/mcp`);
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl);
  const challenge = (error: string, description: string, scope: string) =>
    `Bearer error="${error}", error_description="${description}", scope="${scope}", resource_metadata="${resourceMetadataUrl}"`;

  app.use((req, res, next) => {
    record(requests, req, res);
    next();
  });
  app.use(
    asHandler(
      mcpAuthMetadataRouter({
        oauthMetadata: auth.metadata,
        resourceServerUrl: mcpUrl,
        scopesSupported: [baseScope, adminScope],
        resourceName: 'protected fixture',
      }),
    ),
  );
  app.all('/old-mcp', (_req, res) => {
    res.writeHead(307, { location: '/mcp' });
    res.end();
  });
  app.all(
    '/mcp',
    express.json(),
    (req, res, next) => {
      const entry = entries.get(req);
      if (entry !== undefined) Object.assign(entry, rpcOf(req.body));
      if (movedTo !== undefined) {
        res.writeHead(307, { location: movedTo.href });
        res.end();
        return;
      }
      if (entry !== undefined && denials.some((deny) => deny(entry))) {
        res.writeHead(401, {
          'www-authenticate': challenge('invalid_token', 'Token refused', baseScope),
          'content-type': 'application/json',
        });
        res.end(JSON.stringify({ error: 'invalid_token', error_description: 'Token refused' }));
        return;
      }
      next();
    },
    asHandler(requireBearerAuth({ verifier: auth.provider, requiredScopes: [baseScope], resourceMetadataUrl, expectedResource: mcpUrl })),
    (req, res, next) => {
      const { tool } = rpcOf(req.body);
      if (tool === 'admin' && !(req.auth?.scopes ?? []).includes(adminScope)) {
        res.writeHead(403, {
          'www-authenticate': challenge('insufficient_scope', 'Insufficient scope', `${baseScope} ${adminScope}`),
          'content-type': 'application/json',
        });
        res.end(JSON.stringify({ error: 'insufficient_scope', error_description: 'Insufficient scope' }));
        return;
      }
      next();
    },
    handle(async (req, res) => {
      const header = req.headers['mcp-session-id'];
      const sessionId = Array.isArray(header) ? header[0] : header;
      if (sessionId !== undefined) {
        const session = sessions.get(sessionId);
        if (session === undefined) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        await session.transport.handleRequest(req, res, req.body);
        return;
      }
      const server = buildMcpServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { server, transport });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    }),
  );

  return {
    url: mcpUrl,
    sameOriginRedirectUrl: new URL(`http://127.0.0.1:${port}/old-mcp`),
    resourceMetadataUrl,
    requests,
    mcpRequests: () => requests.filter((request) => request.url === '/mcp'),
    deny: (match) => denials.push(match),
    moveTo: (url) => {
      movedTo = url;
    },
    sessions,
    close: async () => {
      for (const { server, transport } of sessions.values()) {
        await transport.close();
        await server.close();
      }
      await shutDown(http);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A server on another origin that only records what reaches it

export interface RecordingServer {
  url: URL;
  requests: HttpRequestRecord[];
  close(): Promise<void>;
}

/** Records every request and answers 502 (it is no MCP server). */
export async function startRecordingServer(): Promise<RecordingServer> {
  const requests: HttpRequestRecord[] = [];
  const { http, port } = await listen((req, res) => {
    record(requests, req, res);
    req.resume();
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('not an MCP server');
  });
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), requests, close: () => shutDown(http) };
}

// ---------------------------------------------------------------------------------------------
// Client side

/** Where the authorization server sends the user back; never contacted (the test reads the redirect). */
export const callbackUrl = 'http://127.0.0.1/callback';

/** An in-memory `OAuthClientProvider` that records each authorization URL it is sent to. */
export class TestOAuthClientProvider extends InMemoryOAuthClient {
  readonly redirectUrl = callbackUrl;
  /** Each URL `redirectToAuthorization` was given, in order. */
  readonly authorizationUrls: URL[] = [];
  /** Every token set saved, in order. */
  readonly savedTokens: OAuthTokens[] = [];

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'mcp-xstate-transport test',
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  override saveTokens(tokens: OAuthTokens): void {
    super.saveTokens(tokens);
    this.savedTokens.push(tokens);
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrls.push(authorizationUrl);
  }

  /** The access token now held. */
  get accessToken(): string | undefined {
    return this.storedTokens?.access_token;
  }
}

/**
 * Plays the user's browser: opens the authorization URL (the authorization server approves at
 * once) and reads the code from the redirect back to the client. Uses the process's real fetch,
 * never a spy.
 */
export async function approve(authorizationUrl: URL): Promise<string> {
  const response = await realFetch(authorizationUrl, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (response.status !== 302 || location === null) throw new Error(`authorization was not approved: HTTP ${response.status}`);
  const back = new URL(location);
  if (`${back.origin}${back.pathname}` !== callbackUrl) throw new Error(`redirected elsewhere: ${back.origin}${back.pathname}`);
  const code = back.searchParams.get('code');
  if (code === null) throw new Error(`no code in the redirect: ${back.searchParams.get('error') ?? 'no error either'}`);
  return code;
}
