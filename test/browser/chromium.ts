/**
 * Headless Chromium for the browser tests: Debian's package, driven by playwright-core (no
 * browser is downloaded), on a fresh profile; every error a page throws is collected.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const chromiumPath = '/usr/bin/chromium';
const screenshots = fileURLToPath(new URL('../../test-results/', import.meta.url));

/** Upper bound of every wait on a page; a restart includes one standalone-stream backoff (1 s). */
export const patience = { timeout: 15_000, interval: 50 };

/** Fails at once, saying how to install it, where Chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium is missing at ${chromiumPath}. The browser test drives Debian's chromium with playwright-core and downloads no browser: ` +
        'install it with `apt-get install -y --no-install-recommends chromium` (.ci/run does this before `npm run test:browser`).',
    );
  }
}

export interface Chromium {
  browser: BrowserContext;
  /** The first page, open on about:blank. */
  page: Page;
  /** The message of every error a page threw (`pageerror`). */
  pageErrors: string[];
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Launches headless Chromium on a fresh profile (a temporary folder named after `name`). */
export async function launchChromium(name: string, viewport?: { width: number; height: number }): Promise<Chromium> {
  requireChromium();
  const profile = mkdtempSync(join(tmpdir(), `${name}-chromium-`));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    ...(viewport === undefined ? {} : { viewport }),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return {
    browser,
    page,
    pageErrors,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where a test keeps what a person may want to look at afterwards: test-results/`name`. */
export function resultFile(name: string): string {
  mkdirSync(screenshots, { recursive: true });
  return join(screenshots, name);
}

/** A full-page screenshot into test-results/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: resultFile(name), fullPage: true });
}
