/**
 * U10, W5: the devtools pages as a user meets them, in headless Chromium (Debian's package, driven
 * by playwright-core), with no network beyond 127.0.0.1. The live inspector's bridge page with the
 * hosted Stately inspector unreachable (pointed at a closed port of 127.0.0.1, as a machine
 * without internet meets https://stately.ai) says so and links the chart view; the chart view on a
 * modern session scrolls the active state, far below the fold, into view.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { inspectLive } from '../../src/devtools/index.js';
import { attachToView, serveView, type ViewServer } from '../../src/devtools/view/index.js';
import { closedPort } from '../support/harness.js';
import { startServer, type TestServer } from '../support/mcp-server.js';
import { startV2Server, type V2TestServer } from '../support/v2-server.js';
import { launchChromium, patience, requireChromium, screenshot, type Chromium } from './chromium.js';

/** A laptop's window: the chart view's modern states lie well below its fold. */
const viewport = { width: 1280, height: 720 };
let chrome: Chromium | undefined;
let page: Page;
let view: ViewServer | undefined;
let server: TestServer | undefined;
let modern: V2TestServer | undefined;
const offLoopback: string[] = [];

beforeAll(async () => {
  requireChromium();
  view = await serveView();
  server = await startServer();
  modern = await startV2Server({ legacy: 'reject' });
  chrome = await launchChromium('devtools', viewport);
  page = chrome.page;
  // Nothing may leave 127.0.0.1: every other request is refused and named.
  await chrome.browser.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => {
      offLoopback.push(route.request().url());
      return route.abort();
    },
  );
});

afterAll(async () => {
  await chrome?.close();
  await view?.close();
  await server?.close();
  await modern?.close();
});

describe('U10: the live bridge page when the hosted inspector cannot be reached', () => {
  it('U10: the page says the hosted inspector cannot be reached, counts the events that arrived, and links the local chart view', async () => {
    const unreachable = `http://127.0.0.1:${await closedPort()}/inspect`;
    const live = await inspectLive({ port: 0, inspectorUrl: unreachable, chartViewUrl: view!.url });
    try {
      const client = new Client({ name: 'u10', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(server!.url, { inspect: live.inspect }));
      await client.close();
      await page.goto(live.url);
      const notice = page.getByRole('alert');
      await expect.poll(() => notice.isVisible(), patience).toBe(true);
      expect(await notice.innerText()).toContain(`The hosted Stately inspector (${unreachable}) cannot be reached`);
      await expect.poll(async () => Number(await page.locator('#received').innerText()), patience).toBeGreaterThan(0);
      const link = notice.getByRole('link', { name: 'local chart view' });
      expect(await link.getAttribute('href')).toBe(view!.url.href);
      await screenshot(page, 'inspector-unreachable.png');
      // The link leads to the chart view, served here.
      const opened = await page.context().request.get((await link.getAttribute('href'))!);
      expect(opened.status()).toBe(200);
      expect(await opened.text()).toContain('<title>');
    } finally {
      live.stop();
    }
    expect(chrome!.pageErrors).toEqual([]);
  });
});

describe('W5: the chart view follows the active state', () => {
  it('W5: on a modern (2026-07-28) session the active state, below the fold, is scrolled into the viewport', async () => {
    await page.goto(view!.url.href);
    await page.getByRole('button', { name: 'Live' }).click();
    await expect.poll(() => page.getByRole('status', { name: 'Mode' }).innerText(), patience).toBe('live');
    const transport = new StreamableHTTPClientTransport(modern!.url);
    const bridge = attachToView(transport, view!.url);
    const client = new Client({ name: 'w5', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    try {
      await client.connect(transport);
      // The innermost active state of the connection chart: the modern era's.
      const innermost = page
        .locator('[data-state^="connection:"].active')
        .filter({ hasNot: page.locator('[data-state^="connection:"].active') });
      await expect.poll(() => innermost.first().getAttribute('data-state'), patience).toMatch(/^connection:modern\b/);
      const box = innermost.first();
      // Where it sits in the document: below the first screen, so only scrolling shows it.
      const top = await box.evaluate((element) => element.getBoundingClientRect().top + window.scrollY);
      expect(top).toBeGreaterThan(viewport.height);
      await expect
        .poll(
          () =>
            box.evaluate((element) => {
              const rect = element.getBoundingClientRect();
              return rect.top >= 0 && rect.top < window.innerHeight && rect.left >= 0 && rect.left < window.innerWidth;
            }),
          patience,
        )
        .toBe(true);
      await screenshot(page, 'view-modern-active.png');
    } finally {
      await client.close();
      await bridge.close();
    }
    expect(chrome!.pageErrors).toEqual([]);
    expect(offLoopback).toEqual([]);
  });
});
