/**
 * U10, U11: the CLI tells a user's mistake from its own fault. Each mistake, spawned as a user
 * makes it, gets its exit code and one line saying what and the fix; never "internal error", never
 * a stack, never a web page.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { findTransportError, StreamableHTTPClientTransport, StreamableHTTPError } from '../../src/index.js';
import { cliCommand, run, type Run } from '../support/cli.js';
import { startExpressServer } from '../support/express-mcp.js';
import { startServer, type TestServer } from '../support/mcp-server.js';

let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-mistakes-'));
  server = await startServer();
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await server.close();
});

/** The run's output, stdout and stderr, as lines. */
const lines = (result: Run) => `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.trim() !== '');

/** No stack frame, no "internal error", one line on stderr. */
function oneLine(result: Run): string {
  expect(result.stderr).not.toContain('internal error');
  expect(result.stderr).not.toMatch(/^\s+at /m);
  const errors = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(errors).toHaveLength(1);
  return errors[0] ?? '';
}

describe('U11: a mistake of the user is one line with its fix', { timeout: 60_000 }, () => {
  it('U11: view of a missing file exits 2 with one line naming the file and what to give', async () => {
    const file = join(dir, 'missing.jsonl');
    const result = await run(['view', file]);
    expect(result.code).toBe(2);
    const line = oneLine(result);
    expect(line).toContain(`cannot open the recording ${file}: no such file`);
    expect(line).toContain('--record');
  });

  it('U11: view of a malformed recording exits 2 with one line naming the line and what a recording is', async () => {
    const file = join(dir, 'garbage.jsonl');
    writeFileSync(file, 'this is not json\n');
    const result = await run(['view', file]);
    expect(result.code).toBe(2);
    const line = oneLine(result);
    expect(line).toContain('is not a recording: line 1');
    expect(line).toContain('--record');
  });

  it("U11: a wrong path against the SDK's express server: exit 4, at most 8 lines, no HTML, the status, type, text and the /mcp hint", async () => {
    const express = await startExpressServer();
    try {
      const result = await run([new URL('/wrong-path', express.url).href]);
      expect(result.code).toBe(4);
      const line = oneLine(result);
      expect(line).toMatch(/does not answer as an MCP server \(HTTP 404\): text\/html "Error Cannot (GET|POST) \/wrong-path"/);
      expect(line).toContain('MCP endpoints usually end in /mcp');
      expect(lines(result).length).toBeLessThanOrEqual(8);
      expect(`${result.stdout}${result.stderr}`).not.toMatch(/<\/?(html|body|pre|head|title)|<!DOCTYPE/i);
      // The library's own error says the same in one line, the page cut and summarised.
      const client = new Client({ name: 'u11', version: '1.0.0' });
      const error = await client.connect(new StreamableHTTPClientTransport(new URL('/wrong-path', express.url))).then(
        () => undefined,
        (e: unknown) => e,
      );
      const http = findTransportError(error, StreamableHTTPError);
      expect(http?.status).toBe(404);
      const message = (error as Error).message;
      expect(message).not.toContain('\n');
      expect(message).not.toMatch(/<\/?(html|body|pre|head|title)|<!DOCTYPE/i);
      expect(message).toMatch(
        /HTTP 404 Not Found \(text\/html\): Error Cannot POST \/wrong-path; is this the MCP endpoint\? \(MCP endpoints usually end in \/mcp\)/,
      );
      // The right path works: the fixture is the SDK's server, not a 404 page.
      expect((await run([express.url.href])).code).toBe(0);
    } finally {
      await express.close();
    }
  });

  it('U11: --inspect without the optional peer @statelyai/inspect exits 9 with one line and the install command', async () => {
    const [node, ...prefix] = cliCommand;
    const child = spawn(
      node,
      [...prefix.slice(0, 2), '--import', './test/support/hide-peer.ts', ...prefix.slice(2), server.url.href, '--inspect', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    const result = { code, stdout, stderr };
    expect(result.code).toBe(9);
    expect(oneLine(result)).toContain('needs the optional peer dependency @statelyai/inspect (npm install -D @statelyai/inspect)');
  });
});

describe('U11: the CLI from a clone', { timeout: 60_000 }, () => {
  it('U11: the command docs/cli.md and the README give, npm run cli -- <args>, runs the CLI in this clone', async () => {
    const docs = readFileSync('docs/cli.md', 'utf8');
    expect(docs).toContain('npm run cli -- http://127.0.0.1:3000/mcp');
    expect(readFileSync('README.md', 'utf8')).toContain('npm run cli -- <url>');
    expect(readFileSync('.ci/run', 'utf8')).toMatch(/^npm run cli -- "\$serve_url"/m);
    const child = spawn('npm', ['run', '--silent', 'cli', '--', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    expect(code).toBe(0);
    expect(stdout).toContain('mcp-xstate-transport doctor <url>');
  });
});

describe('U10: --inspect on a busy port', { timeout: 60_000 }, () => {
  it('U10: exits 9 with one line naming the port and --inspect 0, before connecting', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const before = server.requests.length;
      const result = await run([server.url.href, '--inspect', String(port)]);
      expect(result.code).toBe(9);
      const line = oneLine(result);
      expect(line).toContain(`port ${port} on 127.0.0.1 is in use`);
      expect(line).toContain('--inspect 0');
      expect(result.stdout).not.toContain('Stately inspector at');
      expect(server.requests.length).toBe(before);
    } finally {
      await new Promise<void>((resolve) =>
        busy.close(() => {
          resolve();
        }),
      );
    }
  });

  it('U10: --inspect 0 picks a free port and says which', async () => {
    const result = await run([server.url.href, '--inspect', '0']);
    expect(result.code).toBe(0);
    const said = /Stately inspector at http:\/\/127\.0\.0\.1:(\d+)\//.exec(result.stdout);
    expect(Number(said?.[1])).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/chart view at http:\/\/127\.0\.0\.1:\d+\//);
  });
});
