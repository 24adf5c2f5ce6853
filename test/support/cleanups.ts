/**
 * What a test starts and must close after it, in one list per worker (files share their worker's
 * modules, vitest.config.ts, and run one after another in it; each empties the list after each
 * test): closed newest first, so a Client or transport closes before the server it talks to and
 * its DELETE still reaches it. A file registers `afterEach(runCleanups)` (or proxy-rig's `closeRigs`).
 */
import { startServer, type ServerOptions, type TestServer } from './mcp-server.js';
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions } from './scripted-server.js';

/** Closers of what the running test started; `cleanups.push(() => transport.close())`. */
export const cleanups: (() => Promise<void>)[] = [];

/** Runs every cleanup, newest first, and empties the list (for afterEach). */
export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** The SDK's real server (McpServer + StreamableHTTPServerTransport), closed after the test. */
export async function serve(options: ServerOptions = {}): Promise<TestServer> {
  const server = await startServer(options);
  cleanups.push(() => server.close());
  return server;
}

/** The scripted server, for the answers the SDK's server never gives, closed after the test. */
export async function scripted(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const server = await startScriptedServer(options);
  cleanups.push(() => server.close());
  return server;
}
