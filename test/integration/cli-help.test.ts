/**
 * U7, U9, U11: the CLI as a first-time user meets it. A usage error is one line pointing at
 * --help; an option's value is read as that value; --help lists every exit code; no hint leads
 * to overwriting a file; `--view` alone keeps its page up until Ctrl-C; a tool the server does not
 * have is "no such tool" with the tools it has.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs, usage } from '../../src/devtools/cli/args.js';
import { exitCodes } from '../../src/devtools/cli/failure.js';
import { cli, run, type Run } from '../support/cli.js';
import { until } from '../support/harness.js';
import { startServer, type TestServer } from '../support/mcp-server.js';
import { startV2Server } from '../support/v2-server.js';

/** The SDK's server the runs connect to; a scratch folder for the files a hint must not overwrite. */
let server: TestServer;
const dir = mkdtempSync(join(tmpdir(), 'cli-help-'));
beforeAll(async () => (server = await startServer()));
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const stderrLines = (result: Run) => result.stderr.split('\n').filter((line) => line.trim() !== '');

describe('U11: a usage error is one line and a pointer to --help', { timeout: 60_000 }, () => {
  it('U11, U9: an unknown option, a bad value, a doctor and a view mistake: exit 2, one line naming it and "see … --help", never the usage text', async () => {
    const cases: [string[], string][] = [
      [[server.url.href, '--bogus'], 'unknown option --bogus'],
      [[server.url.href, '--timeout', 'soon'], "--timeout: expected a number of seconds greater than 0, got 'soon'"],
      [['doctor', server.url.href, '--origin', 'nope'], '--origin: expected an origin'],
      [['view', 'a.jsonl', 'b.jsonl'], 'view takes at most one recording file and no options'],
      [[], 'no URL given'],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    for (const [i, result] of results.entries()) {
      const what = cases[i]![0].join(' ');
      expect(result.code, what).toBe(2);
      const lines = stderrLines(result);
      expect(lines, what).toHaveLength(1);
      expect(lines[0], what).toContain(cases[i]![1]);
      expect(lines[0], what).toMatch(/see mcp-xstate-transport --help$/);
      expect(result.stderr, what).not.toContain('usage:');
    }
  });
});

describe('U9: an option value is parsed as that value', { timeout: 60_000 }, () => {
  it('U9: `--inspect abc` is a bad --inspect port (exit 2), not a second URL', async () => {
    const result = await run([server.url.href, '--inspect', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--inspect: expected a port number from 0 (any free one) to 65535, got 'abc'");
    expect(result.stderr).not.toContain('one URL expected');
  });

  it('U9: --inspect without a value before the URL or another option takes the default port; the URL stays the URL', () => {
    expect(parseArgs(['--inspect', 'http://127.0.0.1:1/mcp'])).toMatchObject({
      command: 'connect',
      options: { inspect: 8080, url: 'http://127.0.0.1:1/mcp' },
    });
    expect(parseArgs(['http://127.0.0.1:1/mcp', '--inspect', '--json'])).toMatchObject({ options: { inspect: 8080, json: true } });
    expect(parseArgs(['http://127.0.0.1:1/mcp', '--inspect', '0'])).toMatchObject({ options: { inspect: 0 } });
  });
});

describe('U7: --help lists every exit code', { timeout: 60_000 }, () => {
  it('U7: each exit code the CLI can return is in --help, 9 included', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    const listed = result.stdout.slice(result.stdout.indexOf('exit codes:'));
    for (const code of new Set(Object.values(exitCodes))) {
      expect(listed, `exit code ${String(code)}`).toMatch(new RegExp(`(^|\\s)${String(code)} \\S`, 'm'));
    }
    expect(listed).toMatch(/9 unavailable here: the --inspect port is in use/);
    expect(result.stdout).toBe(`${usage}\n`);
  });
});

describe('U11: no hint suggests overwriting a file that exists', { timeout: 60_000 }, () => {
  it('U11: `view notes.txt` (a file that is not a recording) suggests --record with a name no file has', async () => {
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'my notes, not a recording\n');
    const first = await run(['view', notes]);
    expect(first.code).toBe(2);
    expect(first.stderr).not.toContain(`--record ${notes}`);
    expect(first.stderr).toContain(`--record ${join(dir, 'session.jsonl')}`);

    // With session.jsonl taken too, the hint moves on to a free name.
    writeFileSync(join(dir, 'session.jsonl'), 'also mine\n');
    const second = await run(['view', notes]);
    expect(second.stderr).not.toContain(`--record ${join(dir, 'session.jsonl')}\``);
    expect(second.stderr).toContain(`--record ${join(dir, 'session-2.jsonl')}`);
  });
});

describe('U7: --view without --watch', { timeout: 60_000 }, () => {
  it('U7: the chart view outlives the session it shows: the page answers after the session closed, until Ctrl-C (exit 0)', async () => {
    const viewing = cli([server.url.href, '--view']);
    try {
      await until(() => /shows this session until Ctrl-C/.test(viewing.output()), 'the view kept up', 3_000);
      const out = viewing.output();
      // The session is over (closed), and the page still answers.
      expect(out).toMatch(/closed\s+the transport is closed/);
      const url = /chart view at (http:\/\/127\.0\.0\.1:\d+\/\S*) shows this session/.exec(out)?.[1];
      expect(url).toBeDefined();
      const page = await fetch(url!);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<html/i);
    } finally {
      viewing.child.kill('SIGINT');
    }
    const result = await viewing.done;
    expect(result.code).toBe(0);
  });
});

describe('U7: a tool the server does not have', { timeout: 60_000 }, () => {
  it("U7: 1.x server (an error result with -32602): 'no such tool' with the server's tools, exit 2", async () => {
    const result = await run([server.url.href, '--call', 'nosuch']);
    expect(result.code).toBe(2);
    const lines = stderrLines(result);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mcp-xstate-transport: no such tool: 'nosuch'; its tools: echo, progress, roots/);
    expect(result.stdout).not.toContain('the tool reported an error');
  });

  it("U7: 2026-07-28 v2 server: 'no such tool' with its tools, exit 2", async () => {
    const modern = await startV2Server({ legacy: 'reject' });
    try {
      const result = await run([modern.url.href, '--call', 'nosuch']);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/no such tool: 'nosuch'; its tools: \S/);
    } finally {
      await modern.close();
    }
  });

  it("U7: invalid arguments of a tool that exists (also -32602) stay that tool's error, exit 7", async () => {
    const result = await run([server.url.href, '--call', 'echo', '--args', '{"text":1}']);
    expect(result.code).toBe(7);
    expect(result.stdout).toContain('result of echo (the tool reported an error):');
    expect(result.stderr).not.toContain('no such tool');
  });
});
