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
import { AuthorizationCodeProvider, ClientCredentialsProvider, CrossAppAccessProvider } from './oauth-providers.js';
import { errorText, rawContext, runScenario, textOf } from './scenarios.js';
import { listAndCallTestTool, maxAuthorizationRounds, redirectUrl, sharedScenarios } from './scenarios.js';
import type { Scenario, ScenarioKit } from './scenarios.js';

const clientInfo = { name: 'mcp-xstate-transport-conformance', version: '0.1.0' };

const log = (message: string): void => {
  process.stderr.write(`[conformance-client] ${message}\n`);
};

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

const ContextSchema = z.discriminatedUnion('name', [
  z.object({
    name: z.literal('auth/client-credentials-jwt'),
    client_id: z.string(),
    private_key_pem: z.string(),
    signing_algorithm: z.string().optional(),
  }),
  z.object({ name: z.literal('auth/client-credentials-basic'), client_id: z.string(), client_secret: z.string() }),
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
  const parsed = ContextSchema.parse(rawContext());
  if (parsed.name !== name) throw new Error(`context is for ${parsed.name}, not ${name}`);
  return parsed as Extract<Context, { name: N }>;
}

/** What the shared scenarios (scenarios.ts) use of the 1.x Client. */
const kit: ScenarioKit<Client> = {
  session,
  listToolNames,
  callTool: async (client, name, args) => textOf(await callTool(client, name, args)),
  authorizationCode: (options) => (serverUrl) =>
    authorizedSession(
      serverUrl,
      new AuthorizationCodeProvider({
        clientName: clientInfo.name,
        redirectUrl,
        maxAuthorizations: maxAuthorizationRounds,
        ...options,
      }),
      (client) => listAndCallTestTool(kit, client),
    ),
};

const scenarios: Record<string, Scenario> = {
  ...sharedScenarios(kit),

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
      await listAndCallTestTool(kit, client);
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

await runScenario(
  scenarios,
  {
    scenario: process.env.MCP_CONFORMANCE_SCENARIO,
    url: process.argv[2],
    usage: 'MCP_CONFORMANCE_SCENARIO=<scenario> client.ts <server-url>',
    what: '',
  },
  log,
);
