/**
 * W5: the chart view (src/devtools/view/) in headless Chromium (Debian's package, driven by
 * playwright-core), with no network beyond 127.0.0.1.
 *
 * Replay: the setup runs a fault-proxy scenario against the SDK's real server through the JSONL
 * recorder (a POST stream cut and resumed, then a server restart whose lost session the
 * transport recovers) and the page opens that recording like a person would, with its file
 * picker. Live: a transport attached to the view through a server restart. Screenshots go to
 * test-results/.
 */
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { build, preview } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJsonlRecorder, type JsonlRecord } from '../../src/devtools/index.js';
import { attachToView, serveView, type ViewServer } from '../../src/devtools/view/index.js';
import { newClient, textOf } from '../support/harness.js';
import { startCorsServer } from './cors-server.js';
import { launchChromium, patience, requireChromium, resultFile, screenshot, type Chromium } from './chromium.js';
import { closeRigs, isResume, rig, startProxy, transportThrough } from '../support/proxy-rig.js';

let dir: string | undefined;
let recordingFile: string;
let recordingLines: string[] = [];
/** The session IDs the recorded scenario used: the page must never show them. */
const secretSessions: string[] = [];
let view: ViewServer | undefined;
let chrome: Chromium | undefined;
let page: Page;
const requestsOffLoopback: string[] = [];

const box = (machine: string, path: string): Locator => page.locator(`[data-state="${machine}:${path}"]`);
const isActive = (machine: string, path: string): Promise<boolean> =>
  box(machine, path).evaluate((element) => element.classList.contains('active'));
/** The log lines shown (internal ones are hidden by default). */
const logItems = (): Locator => page.getByRole('list', { name: 'Log' }).getByRole('listitem');
/** The text of the log lines shown, one a line. */
const logText = (): Promise<string> =>
  logItems()
    .allInnerTexts()
    .then((texts) => texts.join('\n'));
/** The log line of record `index`. */
const logItem = (index: number): Locator => page.locator(`#log li[data-index="${index}"]`);
const currentLog = (): Promise<string> => page.locator('#log li.current').innerText();
const banner = (): Locator => page.getByRole('alert');
const position = (): Promise<string> => page.locator('#position').innerText();

/** The scenario behind the recording: a stream cut and resumed, then a session the server lost and the transport recovered. */
async function recordScenario(): Promise<string[]> {
  const lines: string[] = [];
  const { proxy, client, transport } = await rig({ transport: { inspect: createJsonlRecorder((line) => lines.push(line)) } });
  secretSessions.push(transport.sessionId!);
  proxy.rule({ method: 'POST', tool: 'progress', cutAfter: 2 });
  const result = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined });
  expect(textOf(result)).toBe('done 3');
  expect(proxy.requests.filter(isResume)).toHaveLength(1);

  await proxy.restartBackend();
  expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after the restart' } }))).toBe('after the restart');
  expect(transport.sessionId).not.toBe(secretSessions[0]);
  secretSessions.push(transport.sessionId!);
  await client.close();
  await closeRigs();
  return lines;
}

beforeAll(async () => {
  requireChromium();
  dir = mkdtempSync(join(tmpdir(), 'chart-view-'));
  recordingLines = await recordScenario();
  recordingFile = join(dir, 'recovery.jsonl');
  writeFileSync(recordingFile, `${recordingLines.join('\n')}\n`);
  writeFileSync(resultFile('view-recording.jsonl'), `${recordingLines.join('\n')}\n`);

  view = await serveView();
  chrome = await launchChromium('chart-view', { width: 1500, height: 1000 });
  page = chrome.page;
  page.on('request', (request) => {
    const { hostname } = new URL(request.url());
    if (hostname !== '127.0.0.1') requestsOffLoopback.push(request.url());
  });
});

afterAll(async () => {
  await chrome?.close();
  await view?.close();
  await closeRigs();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the chart view in headless Chromium', () => {
  it('W5: the page draws the three charts from the machines, every state as a box', async () => {
    await page.goto(view!.url.href);
    for (const [machine, path] of [
      ['connection', 'open.session.active'],
      ['connection', 'reconnecting.reinitializing'],
      ['postStream', 'backoff.timed'],
      ['postStream', 'resuming'],
      ['standaloneStream', 'listening'],
    ] as const) {
      await expect(box(machine, path).count(), `${machine}:${path}`).resolves.toBe(1);
    }
    expect(await page.getByRole('status', { name: 'Mode' }).innerText()).toMatch(/^live/);
  });

  it('W5, U4: replays a recording of a cut stream and a recovered session: step to the recovery, reconnecting is highlighted, the log shows the events; session IDs stay fingerprints (X1)', async () => {
    await page.locator('#file').setInputFiles(recordingFile);
    await expect.poll(() => page.getByRole('status', { name: 'Mode' }).innerText(), patience).toBe('replay: recovery.jsonl');
    const records = recordingLines.map((line) => JSON.parse(line) as JsonlRecord).filter((record) => record.kind !== 'header');
    await expect.poll(() => page.locator('#log li').count(), patience).toBe(records.length);
    expect(await banner().isHidden()).toBe(true);
    // The first record is selected: the connection has just started (idle).
    expect(await position()).toMatch(/^record 1 of \d+/);

    // Step by step to the cut stream: the POST stream actor in backoff, with its wait.
    const backoff = records.findIndex((record) => record.kind === 'snapshot' && JSON.stringify(record.value).includes('backoff'));
    expect(backoff).toBeGreaterThan(0);
    for (let i = 0; i < records.length && !(await isActive('postStream', 'backoff')); i++) {
      await page.getByRole('button', { name: 'Step forward' }).click();
    }
    expect(await position()).toMatch(new RegExp(`^record ${backoff + 1} of`));
    expect(await currentLog()).toContain('→ backoff');
    expect(await isActive('postStream', 'backoff')).toBe(true);
    expect(await isActive('connection', 'open.session.active')).toBe(true);
    // The wait shown is the one the recording scheduled on entering backoff, with its delay.
    const timer = records
      .slice(0, backoff)
      .reverse()
      .find((r) => r.kind === 'timer' && r.actor === records[backoff]!.actor);
    expect(timer).toBeDefined();
    const delay = `${(Number(timer!.delay) / 1000).toFixed(3)} s`;
    expect(await page.getByRole('list', { name: 'Waits' }).innerText()).toMatch(
      new RegExp(`^${records[backoff]!.actor}: after resumeDelay: [\\d.]+ s left of ${delay.replace('.', '\\.')}, attempt 1$`),
    );

    // Jump (click the log) to the event that told the chart its session was gone, then step to the recovery.
    const missing = records.findIndex(
      (record, index) =>
        index > backoff && record.kind === 'event' && (record.event === 'standalone.sessionMissing' || record.event === 'post.failed'),
    );
    expect(missing).toBeGreaterThan(backoff);
    await logItem(missing).click();
    expect(await isActive('connection', 'reconnecting')).toBe(false);
    let steps = 0;
    while (!(await isActive('connection', 'reconnecting')) && steps < 20) {
      await page.getByRole('button', { name: 'Step forward' }).click();
      steps++;
    }
    expect(await isActive('connection', 'reconnecting')).toBe(true);
    expect(await isActive('connection', 'reconnecting.reinitializing')).toBe(true);
    expect(await isActive('connection', 'open')).toBe(false);
    expect(await currentLog()).toMatch(/→ reconnecting\.reinitializing \[reconnecting\]/);
    expect(await logItem(missing).innerText()).toMatch(/standalone\.sessionMissing|post\.failed/);
    await screenshot(page, 'view-replay.png');

    // Onwards: the new session, reported as a fact with fingerprints only.
    const changed = records.findIndex((record) => record.kind === 'emit' && record.event === 'session.changed');
    expect(changed).toBeGreaterThan(missing);
    await logItem(changed).click();
    expect(await currentLog()).toMatch(/emit session\.changed #[0-9a-f]{8} → #[0-9a-f]{8}/);
    const content = await page.content();
    for (const id of secretSessions) expect(content).not.toContain(id);

    // The time slider's end is the last record: the transport closed.
    await page.getByRole('slider', { name: 'Time' }).fill(
      await page
        .getByRole('slider', { name: 'Time' })
        .getAttribute('max')
        .then((max) => max ?? ''),
    );
    await expect.poll(position, patience).toMatch(new RegExp(`^record ${records.length} of ${records.length}`));
    expect(await isActive('connection', 'closed')).toBe(true);
    // And back: step back leaves the last record.
    await page.getByRole('button', { name: 'Step back' }).click();
    expect(await position()).toMatch(new RegExp(`^record ${records.length - 1} of`));
  });

  it('W5: a recording of another chart version says so and is not drawn; bad lines are named and skipped', async () => {
    const [head, ...rest] = recordingLines;
    const header = JSON.parse(head!) as JsonlRecord;
    const other = join(dir!, 'old-chart.jsonl');
    writeFileSync(
      other,
      [JSON.stringify({ ...header, chart: '0000000000000000', package: '0.0.1' }), 'not json at all', ...rest].join('\n'),
    );
    await page.locator('#file').setInputFiles(other);
    await expect.poll(() => banner().innerText(), patience).toContain('package 0.0.1 against chart 0000000000000000');
    expect(await banner().innerText()).toContain('line 2: not JSON');
    await page.getByRole('button', { name: 'Last record' }).click();
    expect(await page.locator('.state.active').count()).toBe(0);
    expect(await page.locator('#log li').count()).toBe(rest.length);
    await screenshot(page, 'view-other-chart.png');
  });

  it('W5: live: a transport attached to the view moves the chart on the page through a server restart (F3)', async () => {
    await page.getByRole('button', { name: 'Live' }).click();
    await expect.poll(() => page.getByRole('status', { name: 'Mode' }).innerText(), patience).toBe('live');
    const proxy = await startProxy();
    const transport = transportThrough(proxy);
    const bridge = attachToView(transport, view!.url);
    try {
      const client = newClient();
      await client.connect(transport);
      const before = transport.sessionId!;
      await expect.poll(() => isActive('connection', 'open.session.active'), patience).toBe(true);
      await expect.poll(() => isActive('standaloneStream', 'listening'), patience).toBe(true);
      await expect.poll(position, patience).toMatch(/session #[0-9a-f]{8}$/);

      await proxy.restartBackend();
      await expect.poll(logText, patience).toMatch(/→ reconnecting\.reinitializing \[reconnecting\]/);
      await expect.poll(logText, patience).toMatch(/emit session\.changed #[0-9a-f]{8} → #[0-9a-f]{8}/);
      await expect.poll(() => transport.sessionId !== undefined && transport.sessionId !== before, patience).toBe(true);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'live' } }))).toBe('live');
      await expect.poll(() => isActive('connection', 'open.session.active'), patience).toBe(true);
      await expect.poll(() => isActive('standaloneStream', 'listening'), patience).toBe(true);
      const content = await page.content();
      for (const id of [before, transport.sessionId!]) expect(content).not.toContain(id);
      await screenshot(page, 'view-live.png');

      // Back in time while live: step back to the recovery and see it highlighted.
      await logItems().filter({ hasText: '→ reconnecting.reinitializing' }).first().click();
      expect(await isActive('connection', 'reconnecting.reinitializing')).toBe(true);
      expect(await page.locator('#follow').isChecked()).toBe(false);
      await client.close();
      await bridge.close();
      expect(bridge.dropped).toBe(0);
    } finally {
      await bridge.close();
    }
    expect(chrome!.pageErrors).toEqual([]);
    expect(requestsOffLoopback).toEqual([]);
  });

  it(
    'W5: the example status page feeds the view live (&view=): its session shows in the view as a fingerprint',
    { timeout: 90_000 },
    async () => {
      const outDir = mkdtempSync(join(tmpdir(), 'chart-view-example-'));
      const configFile = fileURLToPath(new URL('../../examples/react-status/vite.config.ts', import.meta.url));
      await build({ configFile, logLevel: 'warn', build: { outDir, emptyOutDir: true } });
      const site = await preview({ configFile, logLevel: 'warn', build: { outDir }, preview: { host: '127.0.0.1', port: 0 } });
      const mcp = await startCorsServer();
      const example = await chrome!.browser.newPage();
      try {
        example.on('pageerror', (error) => chrome!.pageErrors.push(error.message));
        const address = site.resolvedUrls?.local[0];
        if (address === undefined) throw new Error('vite preview reported no address');
        await example.goto(`${address}?server=${encodeURIComponent(mcp.url.href)}&view=${encodeURIComponent(view!.url.href)}`);
        await expect.poll(() => example.getByRole('status', { name: 'Connection' }).innerText(), patience).toBe('connected');
        const shown = await example.getByTestId('session').innerText();
        expect(shown).toMatch(/^#[0-9a-f]{8}$/);
        // The view draws on animation frames, which a background tab does not get.
        await page.bringToFront();
        // The view was left stepped back by the previous test: follow the live transport again.
        await page.locator('#follow').check();
        await expect.poll(position, patience).toContain(`session ${shown}`);
        await expect.poll(() => isActive('connection', 'open.session.active'), patience).toBe(true);
        expect(await banner().isHidden()).toBe(true);
        const ids = [...mcp.backend.sessions.keys()];
        expect(ids.length).toBeGreaterThan(0);
        const content = await page.content();
        for (const id of ids) expect(content).not.toContain(id);
        expect(chrome!.pageErrors).toEqual([]);
      } finally {
        await example.close();
        await mcp.close();
        await site.close();
        rmSync(outDir, { recursive: true, force: true });
      }
    },
  );

  it('W5, U9: the view server refuses a non-loopback Host header and lines that are not recorder lines, naming each', async () => {
    // fetch may not set Host: a plain request, as a DNS-rebinding page would arrive.
    const refused = await new Promise<number | undefined>((resolve, reject) => {
      request(view!.url, { headers: { host: `example.com:${view!.url.port}` } }, (response) => {
        response.resume();
        resolve(response.statusCode);
      })
        .on('error', reject)
        .end();
    });
    expect(refused).toBe(421);
    const bad = await fetch(view!.ingestUrl, { method: 'POST', body: 'not json\n{"kind":1}' });
    expect(bad.status).toBe(400);
    // U9: each refused line is named, with the field and the shape it wanted.
    expect(await bad.json()).toEqual({
      accepted: 0,
      rejected: 2,
      problems: [
        'not a recording: line 1: expected one JSON object per line, got text that is not JSON',
        'not a recording: line 2: kind: expected one of header, actor, event, snapshot, emit, timer, cancel, got a number',
      ],
    });
    expect(readFileSync(recordingFile, 'utf8')).toContain('"kind":"header"');
  });
});
