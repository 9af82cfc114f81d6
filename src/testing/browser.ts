import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's chromium package; playwright-core brings no browser of its own (.ci/run installs it). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

// No network of the browser's own (updates, sync, QUIC probes): a test page talks to loopback only.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));

export interface TestBrowser {
  /** A page in a fresh context, so no cookies or storage carry over between tests. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Browser tests need Debian's chromium at ${CHROMIUM_PATH} (apt-get install chromium; .ci/run installs it)`,
    );
  }
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  return {
    async newPage() {
      const context = await browser.newContext();
      return context.newPage();
    },
    close: () => browser.close(),
  };
}

/**
 * Saves a PNG as artifacts/screenshots/<name>.png at the repository root; returns its path. The
 * whole page by default; `viewport` keeps to what the window shows, for pages so tall (the API
 * reference, some 400 operations) that painting all of them outlasts a loaded machine's timeout.
 */
export async function screenshot(
  page: Page,
  name: string,
  area: 'page' | 'viewport' = 'page',
): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const path = `${SCREENSHOTS}${name}.png`;
  await page.screenshot({ path, fullPage: area === 'page' });
  return path;
}
