import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

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
  newPage(options?: BrowserContextOptions): Promise<Page>;
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
    async newPage(options) {
      const context = await browser.newContext(options);
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

/** How far the page reaches past the viewport's right edge: 0 when nothing scrolls sideways. */
export async function sidewaysOverflow(page: Page): Promise<number> {
  return Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
}

/** Whether the page is drawn dark: the background of its body (or root) has a luminance below 0.2. */
export async function looksDark(page: Page): Promise<boolean> {
  const colour = String(
    await page.evaluate(
      "[document.body, document.documentElement].map((e) => getComputedStyle(e).backgroundColor).find((c) => c !== 'rgba(0, 0, 0, 0)') ?? ''",
    ),
  );
  const [r = 255, g = 255, b = 255] = (colour.match(/\d+(\.\d+)?/g) ?? []).map(Number);
  const linear = (value: number) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b) < 0.2;
}

let axeSource: Promise<string> | null = null;

/**
 * The text on the page whose contrast with its background is below WCAG AA, as axe-core judges
 * it (its color-contrast rule), one line per element: [] when every text passes. axe is put into
 * the page through the debugging protocol, which the page's content security policy does not
 * govern, so the page is judged under its real policy.
 */
export async function contrastProblems(page: Page): Promise<string[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(await axeSource);
  const violations = (await page.evaluate(
    "axe.run(document, { runOnly: ['color-contrast'], resultTypes: ['violations'] }).then((r) => r.violations)",
  )) as { nodes: { target: unknown[]; failureSummary?: string }[] }[];
  return violations.flatMap((violation) =>
    violation.nodes.map(
      (node) => `${node.target.join(' ')}: ${(node.failureSummary ?? '').replace(/\s+/g, ' ').trim()}`,
    ),
  );
}

/** A page and what it reported: console errors and uncaught exceptions (a blocked script or style is one). */
export interface WatchedPage {
  page: Page;
  errors: string[];
}

/** A fresh page whose console errors and uncaught exceptions are collected, closed when the test ends. */
export async function openWatchedPage(browser: TestBrowser, t: TestContext): Promise<WatchedPage> {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  const watched: WatchedPage = { page, errors: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') watched.errors.push(message.text());
  });
  page.on('pageerror', (error) => watched.errors.push(error.message));
  return watched;
}
