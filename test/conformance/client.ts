/**
 * The conformance client: the official SDK `Client` over this project's
 * `StreamableHTTPClientTransport`, driven by `@modelcontextprotocol/conformance`.
 *
 *   conformance client --command "node --import tsx test/conformance/client.ts" --scenario <name>
 *
 * runs `<command> <serverUrl>` with the scenario in `MCP_CONFORMANCE_SCENARIO` and, for some
 * auth scenarios, credentials in `MCP_CONFORMANCE_CONTEXT`. Each scenario does what a real
 * application would: connect, list tools, call the tool the scenario provides, close. Auth is
 * the transport's job (`authProvider`, BEHAVIOR A1–A3); this client only plays the user agent
 * of the authorization-code flow (see oauth-providers.ts), calls `transport.finishAuth(code)`
 * and reconnects.
 *
 * Progress goes to stderr (the suite keeps it as stderr.txt). Exit status 0 = the scenario's
 * steps completed; 1 = they did not.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '../../src/index.js';
import {
  AuthorizationCodeProvider,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  type AuthorizationCodeProviderOptions,
} from './oauth-providers.js';

const clientInfo = { name: 'mcp-xstate-transport-conformance', version: '0.1.0' };
/** Where the authorization server sends the user agent back; never listened on (the code is read from the redirect). */
const redirectUrl = 'http://localhost:3000/callback';
/** The Client ID Metadata Document URL the suite's CIMD scenario expects (SEP-991). */
const cimdUrl = 'https://conformance-test.local/client-metadata.json';
/** Authorization rounds (each: redirect, finishAuth, reconnect) before giving up: step-up needs 2; a server that never accepts gets 3. */
const maxAuthorizationRounds = 3;

const log = (message: string): void => {
  process.stderr.write(`[conformance-client] ${message}\n`);
};

const errorText = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** The SDK Client with every capability a scenario may exercise. */
function createClient(): Client {
  const client = new Client(clientInfo, {
    capabilities: {
      elicitation: { form: { applyDefaults: true } },
      sampling: {},
      roots: { listChanged: true },
    },
  });
  // Accept with nothing filled in: the SDK fills in the schema's defaults (SEP-1034, applyDefaults).
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    log(`elicitation/create: ${request.params.message}`);
    return { action: 'accept', content: {} };
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    model: 'conformance-client',
    role: 'assistant',
    content: { type: 'text', text: 'sampled by the conformance client' },
  }));
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
  client.onerror = (error) => {
    log(`transport reported: ${errorText(error)}`);
  };
  return client;
}

function createTransport(serverUrl: URL, authProvider?: OAuthClientProvider): StreamableHTTPClientTransport {
  const options: StreamableHTTPClientTransportOptions = authProvider === undefined ? {} : { authProvider };
  return new StreamableHTTPClientTransport(serverUrl, options);
}

function textOf(result: CallToolResult): string {
  return result.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join(' ');
}

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const started = performance.now();
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  log(
    `tools/call ${name} → ${result.isError === true ? 'error' : 'ok'} in ${Math.round(performance.now() - started)} ms: ${textOf(result)}`,
  );
  if (result.isError === true) throw new Error(`tool ${name} failed: ${textOf(result)}`);
  return result;
}

async function listToolNames(client: Client): Promise<string[]> {
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name);
  log(`tools/list → ${names.join(', ') || '(none)'}`);
  return names;
}

function requireTool(names: readonly string[], name: string): void {
  if (!names.includes(name)) throw new Error(`server does not offer the tool ${name}`);
}

/** Connect, run `steps`, close: one session without auth. */
async function session(serverUrl: URL, steps: (client: Client) => Promise<void>): Promise<void> {
  const client = createClient();
  await client.connect(createTransport(serverUrl));
  log(`connected: ${client.getServerVersion()?.name ?? '?'}`);
  try {
    await steps(client);
  } finally {
    await client.close();
  }
}

/** `transport.finishAuth(code)` (A1), looked up at run time so this client builds before the transport has it. */
async function finishAuth(transport: StreamableHTTPClientTransport, code: string): Promise<void> {
  const method: unknown = Reflect.get(transport, 'finishAuth');
  if (typeof method !== 'function') {
    throw new Error('the transport has no finishAuth(code): BEHAVIOR A1 is not implemented yet');
  }
  const pending: unknown = Reflect.apply(method, transport, [code]);
  await pending;
}

/**
 * A session behind OAuth authorization code: whenever the transport's auth flow ended in a
 * redirect (the provider then holds a code), complete it with `finishAuth(code)` on that
 * transport and reconnect with a new transport and client, at most `maxAuthorizationRounds`.
 */
async function authorizedSession(
  serverUrl: URL,
  provider: AuthorizationCodeProvider,
  steps: (client: Client) => Promise<void>,
): Promise<void> {
  for (let round = 1; ; round += 1) {
    const client = createClient();
    const transport = createTransport(serverUrl, provider);
    try {
      await client.connect(transport);
      await steps(client);
      await client.close();
      return;
    } catch (error) {
      const code = provider.takeAuthorizationCode();
      if (code === undefined || round >= maxAuthorizationRounds) {
        await client.close().catch(() => undefined);
        throw error;
      }
      log(`round ${round} needs authorization (${errorText(error)}); finishing it with the code`);
      await finishAuth(transport, code);
      await client.close().catch(() => undefined);
    }
  }
}

/** The steps every auth scenario's MCP server supports. */
async function listAndCallTestTool(client: Client): Promise<void> {
  requireTool(await listToolNames(client), 'test-tool');
  await callTool(client, 'test-tool');
}

const ContextSchema = z.discriminatedUnion('name', [
  z.object({
    name: z.literal('auth/client-credentials-jwt'),
    client_id: z.string(),
    private_key_pem: z.string(),
    signing_algorithm: z.string().optional(),
  }),
  z.object({ name: z.literal('auth/client-credentials-basic'), client_id: z.string(), client_secret: z.string() }),
  z.object({ name: z.literal('auth/pre-registration'), client_id: z.string(), client_secret: z.string() }),
  z.object({
    name: z.literal('auth/cross-app-access-complete-flow'),
    client_id: z.string(),
    client_secret: z.string(),
    idp_client_id: z.string(),
    idp_id_token: z.string(),
    idp_issuer: z.string(),
    idp_token_endpoint: z.string(),
  }),
]);
type Context = z.infer<typeof ContextSchema>;

function context<N extends Context['name']>(name: N): Extract<Context, { name: N }> {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (raw === undefined) throw new Error('MCP_CONFORMANCE_CONTEXT is not set');
  const parsed = ContextSchema.parse(JSON.parse(raw));
  if (parsed.name !== name) throw new Error(`context is for ${parsed.name}, not ${name}`);
  return parsed as Extract<Context, { name: N }>;
}

function authorizationCodeScenario(options: Partial<AuthorizationCodeProviderOptions> = {}): (serverUrl: URL) => Promise<void> {
  return (serverUrl) =>
    authorizedSession(
      serverUrl,
      new AuthorizationCodeProvider({
        clientName: clientInfo.name,
        redirectUrl,
        maxAuthorizations: maxAuthorizationRounds,
        ...options,
      }),
      listAndCallTestTool,
    );
}

type Scenario = (serverUrl: URL) => Promise<void>;

const scenarios: Record<string, Scenario> = {
  initialize: (serverUrl) =>
    session(serverUrl, async (client) => {
      await listToolNames(client);
    }),

  tools_call: (serverUrl) =>
    session(serverUrl, async (client) => {
      requireTool(await listToolNames(client), 'add_numbers');
      const result = await callTool(client, 'add_numbers', { a: 5, b: 3 });
      if (!textOf(result).includes('8')) throw new Error(`add_numbers(5, 3) answered ${textOf(result)}`);
    }),

  'elicitation-sep1034-client-defaults': (serverUrl) =>
    session(serverUrl, async (client) => {
      requireTool(await listToolNames(client), 'test_client_elicitation_defaults');
      await callTool(client, 'test_client_elicitation_defaults');
    }),

  // The tool's POST stream sends a priming event (id, retry: 500) and closes; the response
  // arrives only on the GET that resumes it with Last-Event-ID after the retry delay (R1, R4).
  'sse-retry': (serverUrl) =>
    session(serverUrl, async (client) => {
      requireTool(await listToolNames(client), 'test_reconnection');
      await callTool(client, 'test_reconnection');
    }),

  'auth/metadata-default': authorizationCodeScenario(),
  'auth/metadata-var1': authorizationCodeScenario(),
  'auth/metadata-var2': authorizationCodeScenario(),
  'auth/metadata-var3': authorizationCodeScenario(),
  'auth/basic-cimd': authorizationCodeScenario({ clientMetadataUrl: cimdUrl }),
  'auth/scope-from-www-authenticate': authorizationCodeScenario(),
  'auth/scope-from-scopes-supported': authorizationCodeScenario(),
  'auth/scope-omitted-when-undefined': authorizationCodeScenario(),
  'auth/scope-step-up': authorizationCodeScenario(),
  'auth/scope-retry-limit': authorizationCodeScenario(),
  'auth/token-endpoint-auth-basic': authorizationCodeScenario(),
  'auth/token-endpoint-auth-post': authorizationCodeScenario(),
  'auth/token-endpoint-auth-none': authorizationCodeScenario(),
  'auth/2025-03-26-oauth-metadata-backcompat': authorizationCodeScenario(),
  'auth/2025-03-26-oauth-endpoint-fallback': authorizationCodeScenario(),
  'auth/resource-mismatch': authorizationCodeScenario(),
  'auth/offline-access-scope': authorizationCodeScenario(),
  'auth/offline-access-not-supported': authorizationCodeScenario(),

  'auth/pre-registration': (serverUrl) => {
    const { client_id, client_secret } = context('auth/pre-registration');
    return authorizationCodeScenario({ client: { client_id, client_secret, redirect_uris: [redirectUrl] } })(serverUrl);
  },

  'auth/client-credentials-basic': (serverUrl) => {
    const { client_id, client_secret } = context('auth/client-credentials-basic');
    return clientCredentialsSession(
      serverUrl,
      new ClientCredentialsProvider(client_id, { method: 'client_secret_basic', clientSecret: client_secret }),
    );
  },

  'auth/client-credentials-jwt': (serverUrl) => {
    const { client_id, private_key_pem, signing_algorithm } = context('auth/client-credentials-jwt');
    return clientCredentialsSession(
      serverUrl,
      new ClientCredentialsProvider(client_id, {
        method: 'private_key_jwt',
        privateKeyPem: private_key_pem,
        algorithm: signing_algorithm ?? 'ES256',
      }),
    );
  },

  'auth/cross-app-access-complete-flow': async (serverUrl) => {
    const ctx = context('auth/cross-app-access-complete-flow');
    const provider = new CrossAppAccessProvider({
      clientId: ctx.client_id,
      clientSecret: ctx.client_secret,
      idpClientId: ctx.idp_client_id,
      idpIdToken: ctx.idp_id_token,
      idpTokenEndpoint: ctx.idp_token_endpoint,
    });
    const client = createClient();
    await client.connect(createTransport(serverUrl, provider));
    try {
      await listAndCallTestTool(client);
    } finally {
      await client.close();
    }
  },
};

/** Non-interactive grant: the transport's 401 handling gets the token and retries; no redirect, no finishAuth. */
async function clientCredentialsSession(serverUrl: URL, provider: ClientCredentialsProvider): Promise<void> {
  const client = createClient();
  await client.connect(createTransport(serverUrl, provider));
  try {
    await listToolNames(client);
  } finally {
    await client.close();
  }
}

async function main(): Promise<number> {
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
  const url = process.argv[2];
  if (scenario === undefined || url === undefined) {
    log('usage: MCP_CONFORMANCE_SCENARIO=<scenario> client.ts <server-url>');
    return 2;
  }
  const run = scenarios[scenario];
  if (run === undefined) {
    log(`unknown scenario ${scenario}; known: ${Object.keys(scenarios).join(', ')}`);
    return 2;
  }
  log(`scenario ${scenario} against ${url}`);
  const started = performance.now();
  try {
    await run(new URL(url));
    log(`done in ${Math.round(performance.now() - started)} ms`);
    return 0;
  } catch (error) {
    log(`failed after ${Math.round(performance.now() - started)} ms: ${errorText(error)}`);
    if (error instanceof Error && error.cause !== undefined) log(`  cause: ${errorText(error.cause)}`);
    return 1;
  }
}

const status = await main();
process.exitCode = status;
// Everything was closed: the process should end by itself (F2). If something still holds the
// event loop, say so (the runner reports it) and end anyway.
setTimeout(() => {
  log('LINGERING: the event loop was still busy 2 s after close (BEHAVIOR F2)');
  process.exit(status);
}, 2_000).unref();
