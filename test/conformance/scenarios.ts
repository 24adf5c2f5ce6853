/**
 * The conformance scenarios both SDK generations' clients run, written once: client.ts (the 1.x
 * `Client`) and client-v2.ts (the v2 `Client`) each give a `ScenarioKit` (their Client, transport
 * and authorization-code flow) and add only the scenarios of their own (the v2 suite's 2026-07-28
 * and extension scenarios, each generation's client-credentials providers). The run itself
 * (`runScenario`, `exitWhenIdle`) is shared too.
 */
import { z } from 'zod';

/** Where the authorization server sends the user agent back; never listened on (the code is read from the redirect). */
export const redirectUrl = 'http://localhost:3000/callback';
/** The Client ID Metadata Document URL the suite's CIMD scenario expects (SEP-991). */
export const cimdUrl = 'https://conformance-test.local/client-metadata.json';
/** Authorization rounds (each: redirect, finishAuth, reconnect) before giving up: step-up and AS migration need 2; a server that never accepts gets 3. */
export const maxAuthorizationRounds = 3;

export type Scenario = (serverUrl: URL) => Promise<void>;

export const errorText = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** A tool result's text, as both generations' `CallToolResult` hold it. */
export function textOf(result: { content: readonly { type: string; text?: unknown }[] }): string {
  return result.content.map((item) => (item.type === 'text' && typeof item.text === 'string' ? item.text : `[${item.type}]`)).join(' ');
}

export function requireTool(names: readonly string[], name: string): void {
  if (!names.includes(name)) throw new Error(`server does not offer the tool ${name}`);
}

/** The client registered ahead of time (auth/pre-registration): what the suite's context gives. */
export interface PreRegisteredClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** What one SDK generation's conformance client gives the shared scenarios. */
export interface ScenarioKit<C> {
  /** Connect, run `steps`, close: one session without auth. */
  session(serverUrl: URL, steps: (client: C) => Promise<void>): Promise<void>;
  listToolNames(client: C): Promise<string[]>;
  /** Calls a tool, failing when the tool answers an error; the result's text. */
  callTool(client: C, name: string, args?: Record<string, unknown>): Promise<string>;
  /** A session behind the authorization-code flow (the client plays the user agent), listing and calling `test-tool`. */
  authorizationCode(options: { clientMetadataUrl?: string; client?: PreRegisteredClient }): Scenario;
}

const PreRegistrationContext = z.object({ name: z.literal('auth/pre-registration'), client_id: z.string(), client_secret: z.string() });

/** The suite's scenario data (`MCP_CONFORMANCE_CONTEXT`), as JSON. */
export function rawContext(): unknown {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (raw === undefined) throw new Error('MCP_CONFORMANCE_CONTEXT is not set');
  return JSON.parse(raw);
}

/** The authorization-code scenarios of both suites (the 0.1.16 suite's auth scenarios, all in 0.2 too). */
const authorizationCodeScenarios = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
] as const;

/** The scenarios both generations run the same way, with `kit`'s Client; `moreAuthorizationCode` names a suite's further ones. */
export function sharedScenarios<C>(kit: ScenarioKit<C>, moreAuthorizationCode: readonly string[] = []): Record<string, Scenario> {
  const table: Record<string, Scenario> = {
    initialize: (serverUrl) =>
      kit.session(serverUrl, async (client) => {
        await kit.listToolNames(client);
      }),

    tools_call: (serverUrl) =>
      kit.session(serverUrl, async (client) => {
        requireTool(await kit.listToolNames(client), 'add_numbers');
        const text = await kit.callTool(client, 'add_numbers', { a: 5, b: 3 });
        if (!text.includes('8')) throw new Error(`add_numbers(5, 3) answered ${text}`);
      }),

    'elicitation-sep1034-client-defaults': (serverUrl) =>
      kit.session(serverUrl, async (client) => {
        requireTool(await kit.listToolNames(client), 'test_client_elicitation_defaults');
        await kit.callTool(client, 'test_client_elicitation_defaults');
      }),

    // The tool's POST stream sends a priming event (id, retry: 500) and closes; the response
    // arrives only on the GET that resumes it with Last-Event-ID after the retry delay (R1, R4).
    'sse-retry': (serverUrl) =>
      kit.session(serverUrl, async (client) => {
        requireTool(await kit.listToolNames(client), 'test_reconnection');
        await kit.callTool(client, 'test_reconnection');
      }),

    'auth/basic-cimd': kit.authorizationCode({ clientMetadataUrl: cimdUrl }),

    'auth/pre-registration': (serverUrl) => {
      const { client_id, client_secret } = PreRegistrationContext.parse(rawContext());
      return kit.authorizationCode({ client: { client_id, client_secret, redirect_uris: [redirectUrl] } })(serverUrl);
    },
  };
  for (const name of [...authorizationCodeScenarios, ...moreAuthorizationCode]) table[name] = kit.authorizationCode({});
  return table;
}

/** The steps every auth scenario's MCP server supports. */
export async function listAndCallTestTool<C>(kit: Pick<ScenarioKit<C>, 'listToolNames' | 'callTool'>, client: C): Promise<void> {
  requireTool(await kit.listToolNames(client), 'test-tool');
  await kit.callTool(client, 'test-tool');
}

/**
 * Runs the scenario the suite names (`MCP_CONFORMANCE_SCENARIO`) from `scenarios` against `url` and
 * sets the exit status: 0 when its steps completed, 1 when they did not, 2 for a wrong invocation.
 * Everything was closed then: the process should end by itself (F2). If something still holds the
 * event loop, it says so (the runner reports it) and ends anyway.
 */
export async function runScenario(
  scenarios: Record<string, Scenario>,
  invocation: { scenario: string | undefined; url: string | undefined; usage: string; what: string },
  log: (message: string) => void,
): Promise<void> {
  const status = await statusOf(scenarios, invocation, log);
  process.exitCode = status;
  setTimeout(() => {
    log('LINGERING: the event loop was still busy 2 s after close (BEHAVIOR F2)');
    process.exit(status);
  }, 2_000).unref();
}

async function statusOf(
  scenarios: Record<string, Scenario>,
  invocation: { scenario: string | undefined; url: string | undefined; usage: string; what: string },
  log: (message: string) => void,
): Promise<number> {
  const { scenario, url } = invocation;
  if (scenario === undefined || url === undefined) {
    log(`usage: ${invocation.usage}`);
    return 2;
  }
  const run = scenarios[scenario];
  if (run === undefined) {
    log(`unknown scenario ${scenario}; known: ${Object.keys(scenarios).join(', ')}`);
    return 2;
  }
  log(`scenario ${scenario}${invocation.what === '' ? '' : ` ${invocation.what}`} against ${url}`);
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
