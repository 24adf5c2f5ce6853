/**
 * The conformance client for the SDK's next major version: the v2 `Client` of
 * `@modelcontextprotocol/client` over a Streamable HTTP transport, driven by
 * `@modelcontextprotocol/conformance` 0.2 (installed as `@modelcontextprotocol/conformance-next`).
 *
 *   conformance client --command "node --import tsx test/conformance/client-v2.ts --transport ours" \
 *     --scenario <name> --spec-version <2025-11-25 | 2026-07-28>
 *
 * The suite runs `<command> <serverUrl>` with the scenario in `MCP_CONFORMANCE_SCENARIO`, the
 * protocol revision it runs at in `MCP_CONFORMANCE_PROTOCOL_VERSION`, and scenario data (client
 * credentials, the tool calls to make) in `MCP_CONFORMANCE_CONTEXT`.
 *
 * `--transport` (or `MCP_CONFORMANCE_TRANSPORT`) picks the transport under the Client:
 * - `ours` (default): this project's `StreamableHTTPClientTransport`;
 * - `sdk`: the SDK's own v2 `StreamableHTTPClientTransport`, the baseline.
 * Everything else (the Client, its options, the OAuth provider, the steps) is the same for both.
 *
 * At 2025-11-25 the Client connects the 2025 way (`initialize`); at 2026-07-28 it negotiates
 * with `server/discover` (`versionNegotiation`: `auto` by default, `--negotiation pin` pins
 * `{ pin: '2026-07-28' }`) and sends the per-request `_meta` envelope. OAuth is the transport's
 * job (`authProvider`); this client plays the user agent of the authorization-code flow (see
 * `BrowserlessAuthorizationCodeProvider`), calls `transport.finishAuth(code, iss)` and reconnects.
 *
 * Progress goes to stderr (the suite keeps it as stderr.txt). Exit status 0 = the scenario's
 * steps completed; 1 = they did not; 2 = usage.
 */
import {
  Client,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  DpopSession,
  PrivateKeyJwtProvider,
  requestJwtAuthorizationGrant,
  StreamableHTTPClientTransport as SdkStreamableHTTPClientTransport,
  type CallToolResult,
  type OAuthClientProvider,
  type OAuthTokens,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { InMemoryOAuthClient } from '../support/oauth-client.js';
import { errorText, rawContext, runScenario, textOf } from './scenarios.js';
import { listAndCallTestTool, maxAuthorizationRounds, redirectUrl, sharedScenarios } from './scenarios.js';
import type { Scenario, ScenarioKit } from './scenarios.js';

const clientInfo = { name: 'mcp-xstate-transport-conformance-v2', version: '0.1.0' };
/** The revision whose lifecycle is stateless (`server/discover`, per-request `_meta`). */
const modernVersion = '2026-07-28';

const log = (message: string): void => {
  process.stderr.write(`[conformance-client-v2] ${message}\n`);
};

// ---------------------------------------------------------------------------------------------
// Command line

type TransportChoice = 'ours' | 'sdk';
type NegotiationChoice = 'auto' | 'pin';

interface Invocation {
  transport: TransportChoice;
  negotiation: NegotiationChoice;
  serverUrl: string | undefined;
}

function parseInvocation(): Invocation {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { transport: { type: 'string' }, negotiation: { type: 'string' } },
  });
  const transport = values.transport ?? process.env.MCP_CONFORMANCE_TRANSPORT ?? 'ours';
  const negotiation = values.negotiation ?? process.env.MCP_CONFORMANCE_NEGOTIATION ?? 'auto';
  if (transport !== 'ours' && transport !== 'sdk') throw new Error(`--transport must be ours or sdk, not ${transport}`);
  if (negotiation !== 'auto' && negotiation !== 'pin') throw new Error(`--negotiation must be auto or pin, not ${negotiation}`);
  return { transport, negotiation, serverUrl: positionals.at(-1) };
}

const invocation = parseInvocation();
/** The revision the suite runs this scenario at; without it, the 2025 lifecycle. */
const protocolVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const modern = protocolVersion === modernVersion;
const scenarioName = process.env.MCP_CONFORMANCE_SCENARIO;

// ---------------------------------------------------------------------------------------------
// OAuth: one provider object for both transports

/**
 * The authorization-code flow without a browser, for either transport: when `auth()` asks to
 * redirect the user agent, the authorization URL is fetched with `redirect: 'manual'`, and
 * `code` and `iss` (RFC 9207) are read from the `Location` it redirects to (state checked) and
 * kept for the caller, who hands them to `transport.finishAuth(code, iss)` and reconnects.
 * Client information and tokens are kept exactly as `auth()` saved them (the v2 SDK stamps the
 * issuer on them, so an authorization server migration reads back nothing and registers again).
 */
class BrowserlessAuthorizationCodeProvider extends InMemoryOAuthClient {
  readonly clientMetadataUrl?: string;
  /** Authorization requests made so far. */
  authorizations = 0;
  private expectedState: string | undefined;
  private pending: { code: string; iss: string | undefined } | undefined;

  constructor(options: { client?: OAuthClientInformationMixed | undefined; clientMetadataUrl?: string | undefined } = {}) {
    super(options.client);
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: clientInfo.name,
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  state(): string {
    this.expectedState = randomBytes(16).toString('base64url');
    return this.expectedState;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.storedClient = undefined;
    if (scope === 'all' || scope === 'tokens') this.storedTokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.authorizations >= maxAuthorizationRounds) {
      throw new Error(`refusing authorization request ${this.authorizations + 1}: limit is ${maxAuthorizationRounds}`);
    }
    this.authorizations += 1;
    log(`authorization request ${this.authorizations}: scope=${authorizationUrl.searchParams.get('scope') ?? '(none)'}`);
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (location === null) throw new Error(`authorization endpoint answered ${response.status} without a redirect`);
    const redirect = new URL(location, authorizationUrl);
    const expected = new URL(redirectUrl);
    if (redirect.origin !== expected.origin || redirect.pathname !== expected.pathname) {
      throw new Error(`authorization redirected to ${redirect.origin}${redirect.pathname}, not the redirect URL`);
    }
    const error = redirect.searchParams.get('error');
    if (error !== null) throw new Error(`authorization failed: ${error}`);
    if (this.expectedState !== undefined && redirect.searchParams.get('state') !== this.expectedState) {
      throw new Error('authorization redirect carried a different state');
    }
    const code = redirect.searchParams.get('code');
    if (code === null) throw new Error('authorization redirect carried no code');
    this.pending = { code, iss: redirect.searchParams.get('iss') ?? undefined };
  }

  /** The code (and `iss`) from the latest redirect, once; undefined when no redirect happened since. */
  takeAuthorization(): { code: string; iss: string | undefined } | undefined {
    const pending = this.pending;
    this.pending = undefined;
    return pending;
  }
}

/**
 * A5 (SEP-1932): the same flow with a DPoP key: `dpop()` hands the SDK's `DpopSession` to `auth()`
 * (the token request's proof) and to the transport (a proof on every MCP request).
 */
class DpopAuthorizationCodeProvider extends BrowserlessAuthorizationCodeProvider {
  private readonly session = DpopSession.create();

  dpop(): Promise<DpopSession> {
    return this.session;
  }
}

const jwtBearerGrant = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * A6, workload identity federation (SEP-1933): the RFC 7523 JWT-bearer grant with a workload's
 * JWT as the assertion, a public client (no client authentication). The v2 SDK has no provider
 * of its own for it; `auth()` runs any provider that prepares its token request.
 */
class WorkloadIdentityProvider implements OAuthClientProvider {
  private stored: OAuthTokens | undefined;

  constructor(
    private readonly clientId: string,
    private readonly assertion: string,
  ) {}

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: clientInfo.name, redirect_uris: [], grant_types: [jwtBearerGrant], token_endpoint_auth_method: 'none' };
  }

  clientInformation(): { client_id: string } {
    return { client_id: this.clientId };
  }

  tokens(): OAuthTokens | undefined {
    return this.stored;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.stored = tokens;
  }

  redirectToAuthorization(): void {
    throw new Error('the JWT-bearer grant has no user redirect');
  }

  saveCodeVerifier(): void {
    // No PKCE in a JWT-bearer grant.
  }

  codeVerifier(): string {
    throw new Error('the JWT-bearer grant has no code verifier');
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    const params = new URLSearchParams({ grant_type: jwtBearerGrant, assertion: this.assertion });
    if (scope !== undefined) params.set('scope', scope);
    return params;
  }
}

// ---------------------------------------------------------------------------------------------
// Client and transport

function versionNegotiation(): VersionNegotiationOptions | undefined {
  if (!modern) return undefined;
  return { mode: invocation.negotiation === 'pin' ? { pin: modernVersion } : 'auto' };
}

/** The v2 Client with every capability a scenario may exercise (request-metadata checks that roots, sampling and elicitation are declared). */
function createClient(): Client {
  const negotiation = versionNegotiation();
  const client = new Client(clientInfo, {
    capabilities: {
      elicitation: { form: { applyDefaults: true } },
      sampling: {},
      roots: { listChanged: true },
    },
    ...(negotiation === undefined ? {} : { versionNegotiation: negotiation }),
  });
  // Accept with nothing filled in: the SDK fills in the schema's defaults (SEP-1034,
  // applyDefaults). The MRTR scenario (SEP-2322) asks for a `confirmed` flag.
  client.setRequestHandler('elicitation/create', (request) => {
    log(`elicitation/create: ${request.params.message}`);
    return scenarioName === 'sep-2322-client-request-state'
      ? { action: 'accept', content: { confirmed: true } }
      : { action: 'accept', content: {} };
  });
  client.setRequestHandler('sampling/createMessage', () => ({
    model: 'conformance-client',
    role: 'assistant',
    content: { type: 'text', text: 'sampled by the conformance client' },
  }));
  client.setRequestHandler('roots/list', () => ({ roots: [] }));
  client.onerror = (error) => {
    log(`client reported: ${errorText(error)}`);
  };
  return client;
}

type AnyTransport = StreamableHTTPClientTransport | SdkStreamableHTTPClientTransport;

function createTransport(serverUrl: URL, authProvider?: OAuthClientProvider): AnyTransport {
  if (invocation.transport === 'sdk') {
    return new SdkStreamableHTTPClientTransport(serverUrl, authProvider === undefined ? {} : { authProvider });
  }
  return new StreamableHTTPClientTransport(serverUrl, authProvider === undefined ? {} : { authProvider });
}

async function connect(client: Client, transport: AnyTransport): Promise<void> {
  await client.connect(transport);
  const version = client.getNegotiatedProtocolVersion() ?? '?';
  log(`connected over ${invocation.transport}: ${client.getServerVersion()?.name ?? '?'}, protocol ${version}`);
}

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const started = performance.now();
  const result = await client.callTool({ name, arguments: args }, {});
  log(
    `tools/call ${name} → ${result.isError === true ? 'error' : 'ok'} in ${Math.round(performance.now() - started)} ms: ${textOf(result)}`,
  );
  if (result.isError === true) throw new Error(`tool ${name} failed: ${textOf(result)}`);
  return result;
}

async function listTools(client: Client): Promise<Awaited<ReturnType<Client['listTools']>>['tools']> {
  const { tools } = await client.listTools();
  log(`tools/list → ${tools.map((tool) => tool.name).join(', ') || '(none)'}`);
  return tools;
}

async function listToolNames(client: Client): Promise<string[]> {
  return (await listTools(client)).map((tool) => tool.name);
}

/** Connect, run `steps`, close: one session without auth. */
async function session(serverUrl: URL, steps: (client: Client) => Promise<void>): Promise<void> {
  const client = createClient();
  await connect(client, createTransport(serverUrl));
  try {
    await steps(client);
  } finally {
    await client.close();
  }
}

/** A6: a session whose provider gets its token without the user (the extension grants): `auth()` runs inside the transport. */
async function providerSession(serverUrl: URL, provider: OAuthClientProvider, steps: (client: Client) => Promise<void>): Promise<void> {
  const client = createClient();
  await connect(client, createTransport(serverUrl, provider));
  try {
    await steps(client);
  } finally {
    await client.close();
  }
}

/** `transport.finishAuth(code, iss)`, looked up at run time (this project's transport may take the code alone). */
async function finishAuth(transport: AnyTransport, code: string, iss: string | undefined): Promise<void> {
  const method: unknown = Reflect.get(transport, 'finishAuth');
  if (typeof method !== 'function') throw new Error('the transport has no finishAuth(code)');
  const pending: unknown = Reflect.apply(method, transport, iss === undefined ? [code] : [code, iss]);
  await pending;
}

/**
 * A session behind OAuth authorization code: whenever the transport's auth flow ended in a
 * redirect (the provider then holds a code), complete it with `finishAuth(code, iss)` on that
 * transport and start over with a new transport and client, at most `maxAuthorizationRounds`.
 */
async function authorizedSession(
  serverUrl: URL,
  provider: BrowserlessAuthorizationCodeProvider,
  steps: (client: Client) => Promise<void>,
): Promise<void> {
  for (let round = 1; ; round += 1) {
    const client = createClient();
    const transport = createTransport(serverUrl, provider);
    try {
      await connect(client, transport);
      await steps(client);
      await client.close();
      return;
    } catch (error) {
      const authorization = provider.takeAuthorization();
      if (authorization === undefined || round >= maxAuthorizationRounds) {
        await client.close().catch(() => undefined);
        throw error;
      }
      log(
        `round ${round} needs authorization (${errorText(error)}); finishing it with the code${authorization.iss === undefined ? '' : ' and iss'}`,
      );
      await finishAuth(transport, authorization.code, authorization.iss);
      await client.close().catch(() => undefined);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Scenario data

const ClientCredentialsContext = z.object({ client_id: z.string(), client_secret: z.string() });
const PrivateKeyJwtContext = z.object({ client_id: z.string(), private_key_pem: z.string(), signing_algorithm: z.string() });
const CrossAppAccessContext = z.object({
  client_id: z.string(),
  client_secret: z.string(),
  idp_client_id: z.string(),
  idp_id_token: z.string(),
  idp_token_endpoint: z.string(),
});
const WorkloadIdentityContext = z.object({ client_id: z.string(), valid_jwt: z.string() });
const ToolCallsContext = z.object({
  toolCalls: z.array(z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()) })),
});

/** What the shared scenarios (scenarios.ts) use of the v2 Client. */
const kit: ScenarioKit<Client> = {
  session,
  listToolNames,
  callTool: async (client, name, args) => textOf(await callTool(client, name, args)),
  authorizationCode: (options) => (serverUrl) =>
    authorizedSession(serverUrl, new BrowserlessAuthorizationCodeProvider(options), listAndCallTest),
};
const listAndCallTest = (client: Client) => listAndCallTestTool(kit, client);

/** The JSON Schema 2020-12 preservation scenario's tools (SEP-1613): list the focal tool, hand its inputSchema back verbatim. */
const jsonSchemaFocalTool = 'json_schema_2020_12_tool';
const jsonSchemaEchoTool = 'json_schema_echo';

const scenarios: Record<string, Scenario> = {
  ...sharedScenarios(kit, [
    'auth/authorization-server-migration',
    'auth/iss-supported',
    'auth/iss-not-advertised',
    'auth/iss-supported-missing',
    'auth/iss-wrong-issuer',
    'auth/iss-unexpected',
    'auth/iss-normalized',
    'auth/metadata-issuer-mismatch',
  ]),

  // SEP-2575: every POST carries MCP-Protocol-Version and the _meta envelope; a -32022 answer
  // to the first version is retried with a supported one. Negotiation at connect, then one request.
  'request-metadata': (serverUrl) =>
    session(serverUrl, async (client) => {
      await listTools(client);
    }),

  // SEP-2106: a tool whose schema holds a network $ref; listing must not fetch it.
  'json-schema-ref-no-deref': (serverUrl) =>
    session(serverUrl, async (client) => {
      await listTools(client);
    }),

  'json-schema-2020-12-preservation': (serverUrl) =>
    session(serverUrl, async (client) => {
      const focal = (await listTools(client)).find((tool) => tool.name === jsonSchemaFocalTool);
      if (focal === undefined) throw new Error(`server does not offer the tool ${jsonSchemaFocalTool}`);
      await callTool(client, jsonSchemaEchoTool, { schema: focal.inputSchema });
    }),

  // SEP-2322: the Client fulfils the embedded elicitation itself and retries with
  // inputResponses and the byte-exact requestState, on a fresh id.
  'sep-2322-client-request-state': (serverUrl) =>
    session(serverUrl, async (client) => {
      await listTools(client);
      await callTool(client, 'test_mrtr_echo_state');
      await callTool(client, 'test_mrtr_no_state');
      await callTool(client, 'test_mrtr_unrelated');
      // No resultType from a 2026 server: the Client may reject it locally; it must not retry.
      await callTool(client, 'test_mrtr_no_result_type').catch((error: unknown) => {
        log(`test_mrtr_no_result_type rejected: ${errorText(error)}`);
      });
    }),

  // SEP-2243: Mcp-Method on every POST, Mcp-Name on the call/read/get verbs.
  'http-standard-headers': (serverUrl) =>
    session(serverUrl, async (client) => {
      const [tool] = await listTools(client);
      if (tool !== undefined) await callTool(client, tool.name);
      const { resources } = await client.listResources();
      const [resource] = resources;
      if (resource !== undefined) await client.readResource({ uri: resource.uri });
      const { prompts } = await client.listPrompts();
      const [prompt] = prompts;
      if (prompt !== undefined) await client.getPrompt({ name: prompt.name, arguments: {} });
    }),

  // SEP-2243: x-mcp-header parameters mirrored into Mcp-Param-* headers; the calls come from the context.
  'http-custom-headers': (serverUrl) =>
    session(serverUrl, async (client) => {
      await listTools(client);
      for (const call of ToolCallsContext.parse(rawContext()).toolCalls) {
        await callTool(client, call.name, call.arguments);
      }
    }),

  // SEP-2243: tools with invalid x-mcp-header annotations are left out of tools/list; call what is left.
  'http-invalid-tool-headers': (serverUrl) =>
    session(serverUrl, async (client) => {
      for (const tool of await listTools(client)) {
        await callTool(client, tool.name, { region: 'us-west1' }).catch((error: unknown) => {
          log(`tools/call ${tool.name} rejected: ${errorText(error)}`);
        });
      }
    }),

  // A5: DPoP-bound tokens (SEP-1932); -nonce: the authorization and MCP servers both ask for a nonce first.
  'auth/dpop': (serverUrl) => authorizedSession(serverUrl, new DpopAuthorizationCodeProvider(), listAndCallTest),
  'auth/dpop-nonce': (serverUrl) => authorizedSession(serverUrl, new DpopAuthorizationCodeProvider(), listAndCallTest),

  // A6: the extension grants, each with the SDK's provider (workload identity with the one above).
  'auth/client-credentials-basic': (serverUrl) => {
    const { client_id, client_secret } = ClientCredentialsContext.parse(rawContext());
    return providerSession(
      serverUrl,
      // The suite's context names no issuer, so the credentials cannot be pinned to one (`expectedIssuer`).
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      new ClientCredentialsProvider({ clientId: client_id, clientSecret: client_secret }),
      listAndCallTest,
    );
  },
  'auth/client-credentials-jwt': (serverUrl) => {
    const { client_id, private_key_pem, signing_algorithm } = PrivateKeyJwtContext.parse(rawContext());
    // The suite's context names no issuer, so the credentials cannot be pinned to one (`expectedIssuer`).
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    const provider = new PrivateKeyJwtProvider({ clientId: client_id, privateKey: private_key_pem, algorithm: signing_algorithm });
    return providerSession(serverUrl, provider, listAndCallTest);
  },
  'auth/enterprise-managed-authorization': (serverUrl) => {
    const context = CrossAppAccessContext.parse(rawContext());
    // The suite's context names no issuer, so the credentials cannot be pinned to one (`expectedIssuer`).
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    const provider = new CrossAppAccessProvider({
      clientId: context.client_id,
      clientSecret: context.client_secret,
      // The enterprise IdP's token exchange (RFC 8693): the user's ID token for an ID-JAG naming this MCP server.
      assertion: async (target) =>
        (
          await requestJwtAuthorizationGrant({
            tokenEndpoint: context.idp_token_endpoint,
            audience: target.authorizationServerUrl,
            resource: target.resourceUrl,
            idToken: context.idp_id_token,
            clientId: context.idp_client_id,
            ...(target.scope === undefined ? {} : { scope: target.scope }),
            fetchFn: target.fetchFn,
          })
        ).jwtAuthGrant,
    });
    return providerSession(serverUrl, provider, listAndCallTest);
  },
  'auth/wif-jwt-bearer': (serverUrl) => {
    const { client_id, valid_jwt } = WorkloadIdentityContext.parse(rawContext());
    return providerSession(serverUrl, new WorkloadIdentityProvider(client_id, valid_jwt), listAndCallTest);
  },
};

await runScenario(
  scenarios,
  {
    scenario: scenarioName,
    url: invocation.serverUrl,
    usage: 'MCP_CONFORMANCE_SCENARIO=<scenario> client-v2.ts [--transport ours|sdk] [--negotiation auto|pin] <server-url>',
    what: `at ${protocolVersion ?? '(no protocol version given)'} over ${invocation.transport}`,
  },
  log,
);
