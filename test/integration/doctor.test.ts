/**
 * N4: `mcp-xstate-transport doctor <url>`, spawned as a user runs it, against the SDK's real
 * servers behind a small front (test/support/doctor-front.ts): healthy as configured for
 * production (CORS for pages with Mcp-Session-Id exposed; the SDK's own keep-alive, its interval
 * shortened so a short watch window sees it), and one fixture per misconfiguration, each of
 * which must produce its finding and exit 8.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { cliCommand, run, type Run } from '../support/cli.js';
import { createServer } from 'node:http';
import { closedPort } from '../support/harness.js';
import { listenLocal, shutDown } from '../support/http.js';
import { startFront, type Front, type FrontOptions } from '../support/doctor-front.js';
import { startServer, type TestServer } from '../support/mcp-server.js';
import { startV2Server, type V2TestServer } from '../support/v2-server.js';

/** The keep-alive watch the tests use (the default is 20 s); the healthy servers send one every 250 ms. */
const window = ['--keepalive-window', '1.5'];

let sdk: TestServer;
/** The SDK server with no keep-alive inside the window (an hour). */
let quiet: TestServer;
let modern: V2TestServer;
const fronts: Front[] = [];

async function front(backend: URL, options: FrontOptions = {}): Promise<Front> {
  const started = await startFront(backend, options);
  fronts.push(started);
  return started;
}

const faults = (result: Run) => result.stdout.split('\n').filter((line) => line.startsWith('FAULT'));

beforeAll(async () => {
  sdk = await startServer({ keepAliveMs: 250 });
  quiet = await startServer({ keepAliveMs: 3_600_000 });
  modern = await startV2Server({ keepAliveMs: 250 });
});

afterAll(async () => {
  for (const started of fronts) await started.close();
  await sdk.close();
  await quiet.close();
  await modern.close();
});

describe('doctor against healthy servers', { timeout: 60_000 }, () => {
  it('N4: the SDK 1.x server behind a CORS front: no finding, exit 0, and the session it opened is closed', async () => {
    const healthy = await front(sdk.url);
    const closedBefore = sdk.closedSessions.length;
    const result = await run(['doctor', healthy.url.href, ...window]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ok\s+era\s+no 2026-07-28 .*the 2025 era \(initialize answered protocol 2025-11-25, with a session\)$/m);
    expect(result.stdout).toMatch(/^ok\s+get\s+GET opens the standalone stream/m);
    expect(result.stdout).toMatch(/^ok\s+keep-alive\s+the standalone GET stream carried a keep-alive after \d+\.\d s$/m);
    expect(result.stdout).toMatch(/^ok\s+cors\s+pages from https:\/\/app\.example can connect .*Mcp-Session-Id is exposed/m);
    expect(result.stdout).toMatch(/^ok\s+auth\s+/m);
    expect(result.stdout).toMatch(/^result: no findings$/m);
    expect(result.stdout).not.toMatch(/^(FAULT|note)/m);
    expect(sdk.closedSessions.length).toBe(closedBefore + 1);
  });

  it('N4: a v2 createMcpHandler server (modern era): the supported versions from server/discover, GET 405 is fine, keep-alive on subscriptions/listen', async () => {
    const healthy = await front(modern.url);
    const result = await run(['doctor', healthy.url.href, ...window]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ok\s+era\s+2026-07-28 \(sessionless; server\/discover lists supported versions: 2026-07-28\)/m);
    expect(result.stdout).toMatch(/^ok\s+get\s+GET answered 405/m);
    expect(result.stdout).toMatch(/^ok\s+keep-alive\s+a subscriptions\/listen stream carried a keep-alive/m);
    expect(result.stdout).toMatch(/^result: no findings$/m);
    expect(modern.requests.map((r) => r.rpc)).toContain('server/discover');
    expect(modern.requests.map((r) => r.rpc)).toContain('subscriptions/listen');
  });

  it('N4: --json prints one object per check and the result', async () => {
    const healthy = await front(modern.url);
    const result = await run(['doctor', healthy.url.href, ...window, '--json']);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((l) => l.event === 'check').map((l) => l.check)).toEqual([
      'era',
      'get',
      'keep-alive',
      'cors',
      'cookies',
      'redirect',
      'auth',
    ]);
    expect(lines.at(-1)).toEqual({ event: 'result', faults: 0, notes: 0, exitCode: 0 });
  });
});

describe('doctor: one fixture per misconfiguration, each its finding and exit 8', { timeout: 60_000 }, () => {
  it.each([404, 406])('N4: the standalone GET answered %i', async (status) => {
    const broken = await front(sdk.url, { getStatus: status });
    const result = await run(['doctor', broken.url.href, ...window]);
    expect(result.code).toBe(8);
    expect(faults(result)).toEqual([
      expect.stringMatching(new RegExp(`^FAULT\\s+get\\s+the standalone GET answered ${status}\\b.* — fix: answer 405 Method Not Allowed`)),
    ]);
    expect(result.stdout).toMatch(/^result: 1 fault$/m);
  });

  it('N4: no Access-Control-Expose-Headers for the session', async () => {
    const broken = await front(sdk.url, { cors: 'no-expose' });
    const result = await run(['doctor', broken.url.href, ...window]);
    expect(result.code).toBe(8);
    expect(faults(result)).toEqual([
      expect.stringMatching(
        /^FAULT\s+cors\s+Access-Control-Expose-Headers does not name Mcp-Session-Id: .* — fix: .*expose Mcp-Session-Id/,
      ),
    ]);
  });

  it('N4: a stream with no keep-alive', async () => {
    const broken = await front(quiet.url);
    const result = await run(['doctor', broken.url.href, ...window]);
    expect(result.code).toBe(8);
    expect(faults(result)).toEqual([
      expect.stringMatching(
        /^FAULT\s+keep-alive\s+no keep-alive on the standalone GET stream within 1\.5 s \(idle cutoffs: 60 s .* — fix: send an SSE comment/,
      ),
    ]);
  });

  it('N4: a redirect to another origin', async () => {
    const broken = await front(sdk.url, { redirectTo: sdk.url });
    const result = await run(['doctor', broken.url.href, ...window]);
    expect(result.code).toBe(8);
    expect(faults(result)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^FAULT\\s+redirect\\s+POST redirected \\(HTTP 307\\) to another origin, ${sdk.url.origin}: .* — fix: give clients the final URL`,
        ),
      ),
    ]);
  });

  it('N4: a WWW-Authenticate without metadata (no resource_metadata, nothing at the well-known URL)', async () => {
    const broken = await front(sdk.url, { unauthorized: 'Bearer' });
    const result = await run(['doctor', broken.url.href, ...window]);
    expect(result.code).toBe(8);
    expect(faults(result)).toEqual([
      expect.stringMatching(
        /^FAULT\s+auth\s+HTTP 401 with WWW-Authenticate: Bearer without resource_metadata, and no protected-resource metadata .* — fix: WWW-Authenticate: Bearer resource_metadata=/,
      ),
    ]);
    expect(broken.requests.map((r) => r.path)).toContain('/.well-known/oauth-protected-resource');
  });

  it('N4: an affinity cookie is a note (this transport replays it on Node), not a fault: exit 0', async () => {
    const sticky = await front(sdk.url, { cookie: 'affinity=replica-2; Path=/; HttpOnly' });
    const result = await run(['doctor', sticky.url.href, ...window]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^note\s+cookies\s+the server sets cookie\(s\) affinity .*sends them back on Node \(N3/m);
    expect(result.stdout).not.toContain('replica-2');
    expect(result.stdout).toMatch(/^result: 1 note$/m);
  });
});

describe('doctor: what it cannot check', { timeout: 60_000 }, () => {
  it('N4: a 401 whose WWW-Authenticate names resource_metadata that names an authorization server is no fault: exit 5, rerun with a token', async () => {
    const guarded = await front(sdk.url, {
      unauthorized: (self) => `Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', self).href}"`,
      metadata: { resource: 'x', authorization_servers: ['https://auth.example'] },
    });
    const result = await run(['doctor', guarded.url.href, ...window]);
    expect(result.code).toBe(5);
    expect(faults(result)).toEqual([]);
    expect(result.stdout).toMatch(
      /^ok\s+auth\s+needs authorization: metadata at .*\/\.well-known\/oauth-protected-resource\/mcp, authorization server https:\/\/auth\.example$/m,
    );
    expect(result.stdout).toMatch(/^note\s+auth\s+the other checks need a token — fix: rerun with --header 'Authorization: Bearer …'$/m);
  });

  it('N4: an unreachable server exits 3, a server that is not MCP exits 4', async () => {
    const port = await closedPort();
    const unreachable = await run(['doctor', `http://127.0.0.1:${port}/mcp`, ...window]);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toContain(`cannot reach http://127.0.0.1:${port}/mcp`);
    const page = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not found</h1>'));
    const pagePort = await listenLocal(page);
    const notMcp = await run(['doctor', `http://127.0.0.1:${pagePort}/mcp`, ...window]).finally(() => shutDown(page));
    expect(notMcp.code).toBe(4);
    expect(notMcp.stdout).toMatch(/^FAULT\s+era\s+neither 2026-07-28 .* nor 2025-11-25 .* answered/m);
  });
});

/** Spawns the CLI and stamps each stdout line with the milliseconds since the first line came. */
async function timedLines(args: string[]): Promise<{ code: number | null; lines: { ms: number; text: string }[] }> {
  const [command, ...prefix] = cliCommand;
  const child = spawn(command, [...prefix, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: { ms: number; text: string }[] = [];
  let first: number | undefined;
  let rest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const now = performance.now();
    first ??= now;
    rest += chunk.toString();
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    for (const text of parts) lines.push({ ms: Math.round(now - first), text });
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  return { code, lines };
}

describe('N6: the doctor says what it checks as it goes', { timeout: 60_000 }, () => {
  it('N6: against a server with no keep-alive, it says what it checks before any finding, and says the keep-alive wait and its length before it waits', async () => {
    const broken = await front(quiet.url);
    // Line times count from the first line the process prints: tsx compiling the CLI on a loaded
    // machine is no part of the doctor's responsiveness.
    const { code, lines } = await timedLines(['doctor', broken.url.href, '--keepalive-window', '4']);
    expect(code).toBe(8);
    const at = (pattern: RegExp) => {
      const line = lines.find((l) => pattern.test(l.text));
      expect(line, `a line matching ${String(pattern)} in:\n${lines.map((l) => `${l.ms} ${l.text}`).join('\n')}`).toBeDefined();
      return line?.ms ?? Number.NaN;
    };
    // The first thing said is what it checks: before any finding, before any network answer.
    const firstFinding = lines.findIndex((l) => /^(ok|note|FAULT)\s/.test(l.text));
    const eraSaid = lines.findIndex((l) => /^…\s+era\s+which protocol eras answer/.test(l.text));
    expect(eraSaid).toBeGreaterThan(-1);
    expect(firstFinding).toBeGreaterThan(eraSaid);
    const waitSaid = at(/^…\s+keep-alive\s+watching the standalone GET stream for a keep-alive: up to 4\.0 s/);
    const found = at(/^FAULT\s+keep-alive\s+no keep-alive/);
    // Each finding is printed as it completes: the era and GET findings come before the wait, not after it.
    const index = (pattern: RegExp) => lines.findIndex((l) => pattern.test(l.text));
    expect(index(/^ok\s+get\s+/)).toBeGreaterThan(-1);
    expect(index(/^ok\s+get\s+/)).toBeLessThan(index(/^…\s+keep-alive\s+watching/));
    expect(found - waitSaid).toBeGreaterThan(3_000);
  });

  it('N6: a preflight whose Access-Control-Allow-Headers omits Mcp-Method and Mcp-Name is a fault', async () => {
    for (const backend of [sdk.url, modern.url]) {
      const broken = await front(backend, { cors: 'no-mcp-method' });
      const result = await run(['doctor', broken.url.href, ...window]);
      expect(result.code).toBe(8);
      expect(faults(result)).toEqual([
        expect.stringMatching(
          /^FAULT\s+cors\s+the preflight of a 2026-07-28 POST does not allow Mcp-Method, Mcp-Name in Access-Control-Allow-Headers: .* — fix: .*-Allow-Headers \(.*mcp-method, mcp-name/,
        ),
      ]);
    }
  });
});
