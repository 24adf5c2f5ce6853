/**
 * The status page (examples/react-status) built by Vite for the browser and opened in headless
 * Chromium (Debian's package, driven by playwright-core), against the SDK's real server behind a
 * CORS front on another origin. The checks are what a person looks at: the badge, the result of
 * a call, the notification list, Close and Start. Screenshots go to test-results/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, preview, type PreviewServer, type Rolldown } from 'vite';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserOnly } from '../../examples/react-status/vite.config.js';
import { fingerprint } from '../../machines/index.js';
import { startCorsServer, type CorsServer } from './cors-server.js';
import { startModernCorsServer, type ModernCorsServer } from './modern-server.js';
import { launchChromium, patience, requireChromium, screenshot, type Chromium } from './chromium.js';

const configFile = fileURLToPath(new URL('../../examples/react-status/vite.config.ts', import.meta.url));

let outDir: string | undefined;
let bundle: Rolldown.RolldownOutput;
let site: PreviewServer | undefined;
let mcp: CorsServer | undefined;
let modern: ModernCorsServer | undefined;
let address: string;
let chrome: Chromium | undefined;
let page: Page;

function outputOf(result: Awaited<ReturnType<typeof build>>): Rolldown.RolldownOutput {
  const first = Array.isArray(result) ? result[0] : result;
  if (first === undefined || !('output' in first)) throw new Error('vite build gave no output');
  return first;
}

/** The backend's session ID whose fingerprint the page shows. */
function sessionShown(shown: string): string | undefined {
  return [...mcp!.backend.sessions.keys()].find((id) => fingerprint(id) === shown);
}

const badge = (): Locator => page.getByRole('status', { name: 'Connection' });
const result = (): Locator => page.getByRole('status', { name: 'Result' });
const notifications = (): Locator => page.getByRole('list', { name: 'Notifications' }).getByRole('listitem');
const session = (): Promise<string> => page.getByTestId('session').innerText();
const history = (): Promise<string> => page.getByTestId('history').innerText();

beforeAll(async () => {
  requireChromium();
  outDir = mkdtempSync(join(tmpdir(), 'react-status-'));
  bundle = outputOf(await build({ configFile, logLevel: 'warn', build: { outDir, emptyOutDir: true } }));
  site = await preview({ configFile, logLevel: 'warn', build: { outDir }, preview: { host: '127.0.0.1', port: 0 } });
  mcp = await startCorsServer();
  modern = await startModernCorsServer();
  chrome = await launchChromium('react-status');
  page = chrome.page;
  const local = site.resolvedUrls?.local[0];
  if (local === undefined) throw new Error('vite preview reported no address');
  address = local;
  await page.goto(`${address}?server=${encodeURIComponent(mcp.url.href)}`);
});

afterAll(async () => {
  await chrome?.close();
  await mcp?.close();
  await modern?.close();
  await site?.close();
  if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true });
});

describe('the status page in headless Chromium', () => {
  it('U5: the page, the transport and the SDK Client bundle for the browser with no Node-only module in the import graph', async () => {
    const modules = bundle.output.flatMap((item) => (item.type === 'chunk' ? item.moduleIds : []));
    for (const file of [
      'src/transport.ts',
      'src/data-plane.ts',
      'src/sse/reader.ts',
      'machines/connection/index.ts',
      'machines/standalone-stream.ts',
    ]) {
      expect(
        modules.some((id) => id.endsWith(file)),
        file,
      ).toBe(true);
    }
    expect(modules.some((id) => id.includes('@xstate/react'))).toBe(true);
    expect(modules.filter((id) => id.startsWith('node:') || id.includes('browser-external'))).toEqual([]);

    // The guard in the page's Vite config is what makes a Node-only import fail the build.
    await expect(
      build({
        configFile: false,
        logLevel: 'silent',
        plugins: [
          browserOnly(),
          { name: 'entry', resolveId: (id) => (id === 'entry' ? id : null), load: (id) => (id === 'entry' ? "import 'node:fs';" : null) },
        ],
        build: { write: false, rolldownOptions: { input: 'entry' } },
      }),
    ).rejects.toThrow(/Node-only module 'node:fs'/);
  });

  it('U3: the badge follows the chart to connected; the chart path, the standalone stream and the session fingerprint are shown, never the session ID (X1)', async () => {
    await expect.poll(() => badge().innerText(), patience).toBe('connected');
    await expect.poll(() => page.getByTestId('chart-state').innerText(), patience).toContain('open.standalone.active');
    await expect.poll(() => page.getByTestId('standalone-state').innerText(), patience).toMatch(/^listening/);
    const shown = await session();
    expect(shown).toMatch(/^#[0-9a-f]{8}$/);
    const id = sessionShown(shown);
    expect(id).toBeDefined();
    expect(await page.content()).not.toContain(id);
    expect(await history()).toBe('idle → connecting → connected');
  });

  it('U3: Call echo shows the tool result', async () => {
    await page.getByRole('textbox', { name: 'Echo text' }).fill('hello from Chromium');
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => result().innerText(), patience).toBe('echo → hello from Chromium');
  });

  it("G3: notifications appear in the list: progress on the call's own stream, a log message and tools/list_changed on the standalone stream", async () => {
    await page.getByRole('button', { name: 'Call progress' }).click();
    await expect.poll(() => result().innerText(), patience).toBe('progress → done 3');
    await mcp!.log('hello from the server');
    mcp!.toolsChanged();
    await expect
      .poll(() => notifications().allInnerTexts(), patience)
      .toEqual([
        'notifications/progress 1/3',
        'notifications/progress 2/3',
        'notifications/progress 3/3',
        'notifications/message info: "hello from the server"',
        'notifications/tools/list_changed',
      ]);
    await screenshot(page, 'react-status.png');
  });

  it('F3, U3: a server restart shows reconnecting, then connected on a new session where calls work', async () => {
    const before = await session();
    await mcp!.restartBackend();
    // W6: the standalone stream, cut by the restart, may wait to reconnect (degraded) before the
    // session is found gone.
    await expect.poll(history, patience).toMatch(/^idle → connecting → connected → (degraded → )?reconnecting → connected$/);
    await expect.poll(session, patience).not.toBe(before);
    expect(sessionShown(await session())).toBeDefined();
    await page.getByRole('textbox', { name: 'Echo text' }).fill('after the restart');
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => result().innerText(), patience).toBe('echo → after the restart');
    await screenshot(page, 'react-status-restarted.png');
  });

  it('F1, U3: Close shows closed, and the server saw a DELETE for the session', async () => {
    const id = sessionShown(await session());
    expect(id).toBeDefined();
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => badge().innerText(), patience).toBe('closed');
    // close() ends the session: the transport no longer names one.
    expect(await session()).toBe('—');
    const deleted = await mcp!.backend.waitFor((request) => request.method === 'DELETE', patience.timeout);
    expect(deleted.headers['mcp-session-id']).toBe(id);
    expect(mcp!.backend.closedSessions).toContain(id);
    await screenshot(page, 'react-status-closed.png');
  });

  it('F2, U3: Start connects again, on a new session', async () => {
    const closed = new Set(mcp!.backend.closedSessions.map((id) => fingerprint(id)));
    await page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => badge().innerText(), patience).toBe('connected');
    const shown = await session();
    expect(closed.has(shown)).toBe(false);
    expect(sessionShown(shown)).toBeDefined();
    await page.getByRole('textbox', { name: 'Echo text' }).fill('after Start');
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => result().innerText(), patience).toBe('echo → after Start');
    expect(await history()).toMatch(/connected → closing → closed → connecting → connected$/);
    expect(chrome!.pageErrors).toEqual([]);
  });

  it('W1: a reload keeps the session (same fingerprint, no initialize) and every numbered notification arrives once, in order', async () => {
    const notes = async () =>
      (await notifications().allInnerTexts()).filter((text) => text.includes('"reload ')).map((text) => /"reload (\d+)"/.exec(text)?.[1]);
    const before = await session();
    const initializes = () => mcp!.backend.requests.filter((request) => request.rpc === 'initialize').length;
    const initialized = initializes();
    for (const n of [1, 2, 3]) await mcp!.log(`reload ${n}`);
    await expect.poll(notes, patience).toEqual(['1', '2', '3']);
    const gets = mcp!.backend.requests.filter((request) => request.method === 'GET').length;

    // The server goes on sending while the page reloads: these land on the old page, or nowhere
    // (stored by the server's event store) until the new page resumes the stream.
    const reloading = page.reload();
    for (const n of [4, 5, 6]) await mcp!.log(`reload ${n}`);
    await reloading;
    await expect.poll(() => badge().innerText(), patience).toBe('connected');
    for (const n of [7, 8]) await mcp!.log(`reload ${n}`);
    await expect.poll(notes, patience).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);

    expect(await session()).toBe(before);
    expect(await page.getByTestId('restored').innerText()).toMatch(/^yes/);
    // E1: the restored session says its era, though no initialize said it this time.
    expect(await page.getByTestId('era').innerText()).toBe('streamable');
    expect(initializes()).toBe(initialized);
    // No connecting: the restored transport opened the session it was given.
    expect(await history()).toBe('idle → connected');
    const resumed = mcp!.backend.requests.filter((request) => request.method === 'GET').slice(gets);
    expect(resumed.some((request) => typeof request.headers['last-event-id'] === 'string')).toBe(true);
    // Calls work on the restored session.
    await page.getByRole('textbox', { name: 'Echo text' }).fill('after the reload');
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => result().innerText(), patience).toBe('echo → after the reload');
    await screenshot(page, 'react-status-reloaded.png');
  });

  it('W2: offline shows offline and fails a call at once; online shows connected again within a second', async () => {
    await chrome!.browser.setOffline(true);
    await expect.poll(() => badge().innerText(), patience).toBe('offline');
    await page.getByRole('textbox', { name: 'Echo text' }).fill('while offline');
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => result().innerText(), patience).toMatch(/^echo failed: .*offline/);
    await screenshot(page, 'react-status-offline.png');
    const back = performance.now();
    await chrome!.browser.setOffline(false);
    await expect.poll(() => badge().innerText(), { timeout: 1_000, interval: 20 }).toBe('connected');
    console.log(`W2: connected again ${(performance.now() - back).toFixed(0)} ms after going online`);
    await expect.poll(() => page.getByTestId('standalone-state').innerText(), patience).toMatch(/^listening/);
    expect(await history()).toBe('idle → connected → offline → connected');
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => result().innerText(), patience).toBe('echo → while offline');
  });

  it('W3: while the standalone stream backs off, the page counts down to the next attempt', async () => {
    const nextRetry = () => page.getByTestId('next-retry').innerText();
    expect(await nextRetry()).toBe('—');
    mcp!.setAvailable(false);
    await expect.poll(nextRetry, patience).toMatch(/^standalone stream: reconnecting in \d+\.\d s \(attempt [2-9]\)$/);
    await screenshot(page, 'react-status-countdown.png');
    mcp!.setAvailable(true);
    await expect.poll(() => page.getByTestId('standalone-state').innerText(), patience).toMatch(/^listening/);
    await expect.poll(nextRetry, patience).toBe('—');
    expect(chrome!.pageErrors).toEqual([]);
  });

  it("W6: an outage turns the badge degraded (amber), with the reason under it; the server's return turns it connected", async () => {
    await expect.poll(() => badge().innerText(), patience).toBe('connected');
    const reason = () => page.getByTestId('degraded-reason');
    expect(await reason().count()).toBe(0);
    mcp!.setAvailable(false);
    await page.getByRole('textbox', { name: 'Echo text' }).fill('during the outage');
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => badge().innerText(), patience).toBe('degraded');
    await expect.poll(() => result().innerText(), patience).toMatch(/^echo failed: .*503/);
    await expect.poll(() => reason().innerText(), patience).toMatch(/HTTP 503|terminated|network|fetch/i);
    expect(await badge().evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(180, 83, 9)');
    await screenshot(page, 'react-status-degraded.png');
    mcp!.setAvailable(true);
    await expect.poll(() => badge().innerText(), patience).toBe('connected');
    expect(await reason().count()).toBe(0);
    expect(await history()).toMatch(/connected → degraded → connected$/);
    await page.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => result().innerText(), patience).toBe('echo → during the outage');
  });
});

describe('the status page with a 2026-07-28 server (the v2 SDK, ?era=modern)', () => {
  let modernPage: Page;

  it('E1, W7: a modern session: the badge is connected, the era and the protocol are shown, there is no session; a listen stream is open', async () => {
    modernPage = await chrome!.browser.newPage();
    await modernPage.goto(`${address}?server=${encodeURIComponent(modern!.url.href)}&era=modern`);
    await expect.poll(() => modernPage.getByRole('status', { name: 'Connection' }).innerText(), patience).toBe('connected');
    expect(await modernPage.getByTestId('era').innerText()).toBe('modern');
    expect(await modernPage.getByTestId('protocol').innerText()).toBe('2026-07-28');
    expect(await modernPage.getByTestId('session').innerText()).toBe('—');
    expect(await modernPage.getByTestId('chart-state').innerText()).toContain('modern.calls.open');
    await expect.poll(() => modernPage.getByTestId('listen').innerText(), patience).toBe('open: tools/list_changed');
    expect(modern!.rpcs).toContain('server/discover');
    expect(modern!.rpcs).toContain('subscriptions/listen');
    expect(modern!.rpcs).not.toContain('initialize');
  });

  it('E7, W7: a notification on the listen stream is shown, and calls work in the era', async () => {
    modern!.toolsChanged();
    const notes = () => modernPage.getByRole('list', { name: 'Notifications' }).getByRole('listitem').allInnerTexts();
    await expect.poll(notes, patience).toContain('notifications/tools/list_changed');
    await modernPage.getByRole('textbox', { name: 'Echo text' }).fill('hello, 2026');
    await modernPage.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(() => modernPage.getByRole('status', { name: 'Result' }).innerText(), patience).toBe('echo → hello, 2026');
    await screenshot(modernPage, 'react-status-modern.png');
    expect(await modernPage.getByTestId('history').innerText()).toBe('idle → connecting → connected');
    expect(chrome!.pageErrors).toEqual([]);
  });

  it('W6, E7: an outage of the 2026-07-28 server turns the badge degraded and drops the listen stream; an answered call turns it connected and the page listens again', async () => {
    const badgeHere = () => modernPage.getByRole('status', { name: 'Connection' }).innerText();
    const resultHere = () => modernPage.getByRole('status', { name: 'Result' }).innerText();
    modern!.setAvailable(false);
    await modernPage.getByRole('textbox', { name: 'Echo text' }).fill('after the outage');
    await modernPage.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(badgeHere, patience).toBe('degraded');
    await expect.poll(() => modernPage.getByTestId('degraded-reason').innerText(), patience).toMatch(/HTTP 503|stream ended/);
    await expect.poll(() => modernPage.getByTestId('listen').innerText(), patience).toBe('ended (remote)');
    await screenshot(modernPage, 'react-status-modern-degraded.png');
    modern!.setAvailable(true);
    // No standalone stream in this era: the next answered call is the success that ends it.
    await modernPage.getByRole('button', { name: 'Call echo' }).click();
    await expect.poll(resultHere, patience).toBe('echo → after the outage');
    await expect.poll(badgeHere, patience).toBe('connected');
    await expect.poll(() => modernPage.getByTestId('listen').innerText(), patience).toBe('open: tools/list_changed');
    modern!.toolsChanged();
    const notes = () => modernPage.getByRole('list', { name: 'Notifications' }).getByRole('listitem').allInnerTexts();
    await expect.poll(notes, patience).toEqual(['notifications/tools/list_changed', 'notifications/tools/list_changed']);
    expect(await modernPage.getByTestId('history').innerText()).toBe('idle → connecting → connected → degraded → connected');
    expect(chrome!.pageErrors).toEqual([]);
    await modernPage.close();
  });
});
