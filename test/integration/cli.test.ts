/**
 * The `mcp-xstate-transport` command, spawned as a user runs it (node on src/devtools/cli/main.ts through
 * tsx) against the SDK's real server on 127.0.0.1, and against servers that are not MCP.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, run, runInTerminal } from '../support/cli.js';
import { closedPort, header, until } from '../support/harness.js';
import { startServer, type TestServer } from '../support/mcp-server.js';
import { startV2Server } from '../support/v2-server.js';
import { createWebSocketReceiver } from '@statelyai/inspect';

let server: TestServer;
/** A plain HTTP server that is not MCP: `/html` answers a page, `/auth` 401, anything else 404. */
let plain: Server;
let plainUrl: string;

beforeAll(async () => {
  server = await startServer({ catalog: true });
  plain = createServer((req, res) => {
    if (req.url === '/auth') {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
    } else if (req.url === '/html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a web page</html>');
    } else {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not found</h1>');
    }
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await server.close();
  await new Promise((resolve) => plain.close(resolve));
});

describe('the CLI against the SDK server', { timeout: 60_000 }, () => {
  it('U7: connects, shows state changes with timings, lists tools, resources and prompts, calls a tool, closes with DELETE', async () => {
    const closedBefore = server.closedSessions.length;
    const result = await run([server.url.href, '--call', 'echo', '--args', '{"text":"hello cli"}', '--header', 'X-Trace: cli-test']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\[\s*\d+ ms\] state\s+connecting {2}\[connecting, directInitialize\]/);
    expect(result.stdout).toMatch(
      /state\s+open\.session\.active\.direct \+ open\.standalone\.active \+ open\.network\.online \+ open\.health\.steady {2}\[connected, directCalls\] {2}\(\+\d+ ms\)/,
    );
    expect(result.stdout).toMatch(/connected\s+fixture 1\.0\.0, protocol 2025-11-25/);
    expect(result.stdout).toMatch(/tools \(3\)\n {2}echo\s+echoes its text\n {2}progress/);
    expect(result.stdout).toMatch(/resources \(1\)\n {2}fixture:\/\/readme\s+a short text/);
    expect(result.stdout).toMatch(/prompts \(1\)\n {2}greet\s+a greeting/);
    expect(result.stdout).toContain('result of echo:\nhello cli');
    expect(result.stdout).toMatch(/state\s+closed {2}\[closed\]/);
    expect(server.closedSessions.length).toBe(closedBefore + 1);
    const posts = server.requests.filter((r) => r.method === 'POST' && r.rpc === 'tools/call');
    expect(posts.length).toBeGreaterThan(0);
    expect(header(posts[posts.length - 1]!, 'x-trace')).toBe('cli-test');
  });

  it('U7: --json prints one JSON object per line, with the listings and the result', async () => {
    const result = await run([server.url.href, '--json', '--call', 'echo', '--args', '{"text":"j"}']);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string } & Record<string, unknown>);
    const byEvent = (name: string) => events.find((e) => e.event === name);
    expect((byEvent('tools')?.tools as { name: string }[]).map((t) => t.name)).toEqual(['echo', 'progress', 'roots']);
    expect((byEvent('resources')?.resources as { uri: string }[]).map((r) => r.uri)).toEqual(['fixture://readme']);
    expect((byEvent('prompts')?.prompts as { name: string }[]).map((p) => p.name)).toEqual(['greet']);
    expect(byEvent('result')?.result).toEqual({ content: [{ type: 'text', text: 'j' }] });
    expect(events.filter((e) => e.event === 'state').map((e) => e.state)).toContain('closed');
  });

  it('U7, X1: --record writes the chart lifecycle as JSON lines without the session ID', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-record-'));
    try {
      const file = join(dir, 'run.jsonl');
      const result = await run([server.url.href, '--record', file]);
      expect(result.code).toBe(0);
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      expect(lines.length).toBeGreaterThan(5);
      for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
      const sessionId = [...server.closedSessions].pop();
      expect(sessionId).toBeDefined();
      expect(readFileSync(file, 'utf8')).not.toContain(sessionId);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('U7, N5: --watch (2025 era) prints change notifications until Ctrl-C, then closes the session with DELETE', async () => {
    const closedBefore = server.closedSessions.length;
    const watching = cli([server.url.href, '--watch']);
    await until(
      () => watching.output().includes('watching') && watching.output().includes('standalone listening'),
      'the CLI watching',
      400,
    );
    const session = [...server.sessions.values()].pop();
    expect(session).toBeDefined();
    session!.server.sendToolListChanged();
    await until(() => watching.output().includes('notifications/tools/list_changed'), 'the notification printed', 3_000);
    watching.child.kill('SIGINT');
    const result = await watching.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/notified\s+notifications\/tools\/list_changed/);
    expect(result.stdout).toMatch(/state\s+closed {2}\[closed\]/);
    expect(server.closedSessions.length).toBe(closedBefore + 1);
  });

  it('U7: --help prints the usage and exits 0', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('usage: mcp-xstate-transport');
  });
});

describe('the CLI: clear messages and distinct exit codes', { timeout: 60_000 }, () => {
  it('U7: a bad URL exits 2', async () => {
    const result = await run(['ftp://example/mcp']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("not an http(s) URL: 'ftp://example/mcp'");
  });

  it('U7: a refused connection exits 3', async () => {
    const port = await closedPort();
    const result = await run([`http://127.0.0.1:${port}/mcp`]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`cannot reach http://127.0.0.1:${port}/mcp (ECONNREFUSED)`);
  });

  it('U7: a server that is not MCP exits 4 (404, and a web page)', async () => {
    const notFound = await run([`${plainUrl}/mcp`]);
    expect(notFound.code).toBe(4);
    expect(notFound.stderr).toContain('does not answer as an MCP server (HTTP 404)');
    const page = await run([`${plainUrl}/html`]);
    expect(page.code).toBe(4);
    expect(page.stderr).toContain('does not answer as an MCP server');
    expect(page.stderr).toContain('text/html');
  });

  it('U7: a server that needs authorization exits 5', async () => {
    const result = await run([`${plainUrl}/auth`]);
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('needs authorization (HTTP 401)');
  });
});

describe('the CLI: progress and change notifications', { timeout: 60_000 }, () => {
  it('N5: --call asks for progress and prints each notification; a call longer than 2 s shows its progress in the waiting line', async () => {
    const result = await run([server.url.href, '--call', 'progress', '--args', '{"steps":4,"delayMs":700}']);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n').filter((line) => /\] progress /.test(line));
    expect(lines.map((line) => line.replace(/^\[\s*\d+ ms\] progress\s+/, ''))).toEqual([
      'progress 1/4 (25%)',
      'progress 2/4 (50%)',
      'progress 3/4 (75%)',
      'progress 4/4 (100%)',
    ]);
    expect(result.stdout.indexOf('progress 4/4')).toBeLessThan(result.stdout.indexOf('result of progress:\ndone 4'));
    expect(result.stderr).toMatch(/still waiting for tools\/call progress \(2 s; progress [1-4]\/4 \(\d+%\); /);
    const call = server.requests.filter((r) => r.rpc === 'tools/call').pop();
    expect((call?.body as { params: { _meta?: { progressToken?: unknown } } }).params._meta?.progressToken).toEqual(expect.any(String));
  });

  it('N5: on a terminal the progress is one line redrawn in place (carriage return, erase line), ended before the result', async () => {
    const result = await runInTerminal([server.url.href, '--call', 'progress', '--args', '{"steps":3,"delayMs":300}']);
    expect(result.code).toBe(0);
    // ESC [ K (erase to the end of the line), shown as <EL>.
    const screen = result.transcript.replaceAll(`${String.fromCharCode(27)}[K`, '<EL>');
    const redraws = [...screen.matchAll(/\r<EL>\[\s*\d+ ms\] progress\s+progress \[[#.]{20}\] (\d)\/3/g)].map((m) => m[1]);
    expect(redraws).toEqual(['1', '2', '3']);
    // No line break between the redraws: one line on the screen.
    expect(result.transcript).not.toMatch(/[12]\/3 \(\d+%\)\r?\n/);
    expect(result.transcript).toMatch(/3\/3 \(100%\)\r?\nresult of progress:/);
  });

  it('N5: in the 2026-07-28 era the progress token travels in _meta beside the envelope', async () => {
    const modern = await startV2Server({ legacy: 'reject' });
    try {
      const result = await run([modern.url.href, '--call', 'slow', '--args', '{"ms":50,"steps":2}']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/\] progress\s+slow 1\/2 \(50%\)\n.*\] progress\s+slow 2\/2 \(100%\)\n/);
      const call = modern.requests.find((r) => r.rpc === 'tools/call');
      const meta = (call?.body as { params: { _meta: Record<string, unknown> } }).params._meta;
      expect(meta.progressToken).toEqual(expect.any(String));
      expect(meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    } finally {
      await modern.close();
    }
  });

  it('N5: --listen (2026-07-28) opens a subscriptions/listen stream and prints change notifications until Ctrl-C', async () => {
    const modern = await startV2Server({ legacy: 'reject' });
    try {
      const listening = cli([modern.url.href, '--listen']);
      await until(() => listening.output().includes('notifications/subscriptions/acknowledged'), 'the subscription acknowledged', 3_000);
      const listen = modern.requests.find((r) => r.rpc === 'subscriptions/listen');
      expect((listen?.body as { params: { notifications: unknown } }).params.notifications).toEqual({ toolsListChanged: true });
      modern.handler.notify.toolsChanged();
      await until(() => listening.output().includes('notifications/tools/list_changed'), 'the change printed', 3_000);
      listening.child.kill('SIGINT');
      const result = await listening.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/watching\s+subscriptions\/listen/);
      expect(result.stdout).toMatch(/notified\s+notifications\/tools\/list_changed/);
      expect(result.stdout).toMatch(/state\s+closed {2}\[closed\]/);
      expect(result.stdout).not.toContain('warning');
    } finally {
      await modern.close();
    }
  });
});

describe('the CLI: arguments validated with zod/mini', { timeout: 60_000 }, () => {
  it('U9: a bad value exits 2 with the option, the shape it wants and what was given', async () => {
    const cases: [string[], string][] = [
      [['--timeout', 'abc'], "--timeout: expected a number of seconds greater than 0, got 'abc'"],
      [['--timeout', '-3'], "--timeout: expected a number of seconds greater than 0, got '-3'"],
      [['--call', 'echo', '--args', '[1,2]'], `--args: expected a JSON object of the tool's arguments, e.g. '{"text":"hi"}', got '[1,2]'`],
      [
        ['--call', 'echo', '--args', '{text:1}'],
        `--args: expected a JSON object of the tool's arguments, e.g. '{"text":"hi"}', got '{text:1}' (not JSON: `,
      ],
      [['--inspect', '70000'], "--inspect: expected a port number from 0 (any free one) to 65535, got '70000'"],
      [
        ['--header', 'no colon here'],
        "--header: expected 'Name: value' (a header name, a colon, a value on one line), got 'no colon here'",
      ],
      [['doctor', '--keepalive-window', '0'], "--keepalive-window: expected a number of seconds greater than 0, got '0'"],
      [
        ['doctor', '--origin', 'https://app.example/page'],
        "--origin: expected an origin such as https://app.example (scheme, host and port, no path), got 'https://app.example/page'",
      ],
    ];
    const requestsBefore = server.requests.length;
    const results = await Promise.all(
      cases.map(([args]) => (args[0] === 'doctor' ? run(['doctor', server.url.href, ...args.slice(1)]) : run([server.url.href, ...args]))),
    );
    for (const [i, result] of results.entries()) {
      expect(result.code, cases[i]![0].join(' ')).toBe(2);
      expect(result.stderr, cases[i]![0].join(' ')).toContain(`mcp-xstate-transport: ${cases[i]![1]}`);
      // U11: one line and a pointer to --help, not the whole usage text.
      expect(result.stderr).toContain('see mcp-xstate-transport --help');
      expect(result.stderr).not.toContain('usage: mcp-xstate-transport');
    }
    // Nothing was sent: a bad command line never reaches the server.
    expect(server.requests.length).toBe(requestsBefore);
  });

  it('U9: good values pass the same schemas (fractional seconds, a header with colons in its value, --args an object)', async () => {
    const result = await run([
      server.url.href,
      '--timeout',
      '2.5',
      '--header',
      'X-Note: a:b:c',
      '--call',
      'echo',
      '--args',
      '{"text":"ok"}',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('result of echo:\nok');
    const call = server.requests.filter((r) => r.rpc === 'tools/call').pop();
    expect(header(call!, 'x-note')).toBe('a:b:c');
  });
});

describe('the CLI against a 2026-07-28 server', () => {
  it('E1, U7: connects to a modern-only v2 SDK server sessionless, prints the era, lists and calls', async () => {
    const modern = await startV2Server({ legacy: 'reject' });
    try {
      const result = await run([modern.url.href, '--call', 'echo', '--args', '{"text":"from the cli"}']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/protocol 2026-07-28 \(era: modern, sessionless\)/);
      expect(result.stdout).toMatch(/from the cli/);
      expect(modern.requests.map((r) => r.rpc)).toEqual(['server/discover', 'tools/list', 'tools/call']);
      expect(modern.requests.every((r) => r.headers['mcp-session-id'] === undefined)).toBe(true);
    } finally {
      await modern.close();
    }
  });

  it('E1, U7: against a 2025 server the probe is refused and the CLI falls back to initialize (era: streamable)', async () => {
    const result = await run([server.url.href]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/era: streamable/);
  });
});

describe('the CLI with --inspect', () => {
  it('U8, U7: --inspect <port> bridges the session to the Stately inspector: a receiver on 127.0.0.1 sees the chart, redacted', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) =>
      probe.close(() => {
        resolve();
      }),
    );
    const watching = cli([server.url.href, '--inspect', String(port), '--watch']);
    await until(
      () => watching.output().includes('Stately inspector at') && watching.output().includes('watching'),
      'the CLI bridged',
      3_000,
    );
    const received: string[] = [];
    createWebSocketReceiver({ server: `ws://127.0.0.1:${port}` }).subscribe((event: unknown) => received.push(JSON.stringify(event)));
    await until(
      () => received.some((line) => line.includes('"@xstate.actor"') && line.includes('"name":"connection"')),
      'the chart arrived',
      400,
    );
    watching.child.kill('SIGINT');
    const result = await watching.done;
    expect(result.code).toBe(0);
    const sessionIds = [...new Set(server.requests.map((r) => header(r, 'mcp-session-id')).filter((id) => id !== undefined))];
    expect(sessionIds.length).toBeGreaterThan(0);
    for (const id of sessionIds) expect(received.filter((line) => line.includes(id))).toEqual([]);
  });
});
