import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import {
  contrastProblems,
  launchBrowser,
  looksDark,
  openWatchedPage,
  screenshot,
  sidewaysOverflow,
  type TestBrowser,
  type WatchedPage,
} from '../testing/browser.js';
import { type FakeStripe, startFakeStripe } from '../testing/fake-stripe.js';
import {
  createApiKey,
  createApp,
  issueLicense,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../testing/harness.js';
import { createMonthlyProduct, paidPurchase, sendStripeEvent } from '../testing/purchases.js';
import { type Receiver, startReceiver } from '../testing/receiver.js';

/**
 * Every screen of the dashboard, holding data, in headless Chromium: at a 375 px phone and at
 * 1280 px, in the light and the dark colour scheme. No screen scrolls sideways, every text passes
 * axe-core's contrast check, list rows become cards on the phone, and the seller's choice of
 * scheme is remembered and applied before the app's script runs.
 */
const WEBHOOK_SECRET = 'whsec_screens_browser_secret';
const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };
const SCHEMES = ['light', 'dark'] as const;
/** Long unbroken values are what would push a narrow page sideways. */
const LONG_EMAIL = 'first.middle.lastname.of.the.buyer@subdomain.long-company-name.example.com';
const LONG_DEVICE = `workstation-${'a1b2c3d4'.repeat(8)}`;
const EXPIRES_AT = '2031-03-15T23:59:59.999Z';

let server: TestServer;
let browser: TestBrowser;
let fake: FakeStripe;
let receiver: Receiver;
let seller: Seller;
let admin: Seller;
const ids = {
  appId: '',
  productId: '',
  orderId: '',
  disputeId: '',
  webhookId: '',
  licenseId: '',
  key: '',
  releaseId: '',
};
const artifactDir = mkdtempSync(join(tmpdir(), 'licensing-screens-'));

/**
 * A seller with two apps, an API key, a one-time and a monthly product (both sold), a dispute, a
 * license used on two devices (so its timeline has entries), and a webhook whose deliveries fail.
 */
before(async () => {
  fake = await startFakeStripe();
  receiver = await startReceiver();
  server = await startTestServer(
    {
      STRIPE_SECRET_KEY: 'sk_test_fake',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: fake.url,
      ARTIFACT_DIR: artifactDir,
    },
    { ownDatabase: true },
  );
  browser = await launchBrowser();
  seller = await signUp(server);
  admin = await signUp(server, { role: 'ADMIN' });
  const token = { token: seller.token };
  ids.appId = (await createApp(server, seller.token, 'Photo Tool')).id;
  await createApp(server, seller.token, 'Video Tool');
  await createApiKey(server, seller.token, ids.appId, 'production backend');
  receiver.answer({ status: 500, body: 'down' });
  ids.productId = (
    await server.api.post(
      '/products',
      {
        appId: ids.appId,
        name: 'Photo Tool Pro',
        price: 19.99,
        currency: 'USD',
        merchantWebhookUrl: `${receiver.url}/merchant`,
      },
      token,
    )
  ).expect(201).body.id;
  const monthly = await createMonthlyProduct(server, ids.appId, seller.token, { name: 'Photo Club' });
  const sale = await paidPurchase(server, fake, ids.productId);
  ids.orderId = sale.orderId;
  await paidPurchase(server, fake, monthly.id);
  (
    await sendStripeEvent(server, WEBHOOK_SECRET, 'charge.dispute.created', {
      id: 'dp_screens_browser',
      object: 'dispute',
      payment_intent: sale.paymentIntentId,
      amount: 1999,
      currency: 'usd',
      reason: 'product_not_received',
      status: 'needs_response',
    })
  ).expect(200);
  ids.disputeId = (await server.api.get('/disputes', token)).expect(200).body.disputes[0].id;

  ids.webhookId = (
    await server.api.post(
      '/webhooks',
      {
        url: `${receiver.url}/hooks/${'a-rather-long-path-segment-'.repeat(3)}`,
        events: ['license.created'],
      },
      token,
    )
  ).expect(201).body.id;
  const license = await issueLicense(
    server,
    { token: seller.token, appId: ids.appId },
    { email: LONG_EMAIL, maxDevices: 3, expiresAt: EXPIRES_AT, metadata: { plan: 'pro' } },
  );
  ids.licenseId = license.id;
  ids.key = license.key;
  for (const hwuid of ['travel-laptop', LONG_DEVICE])
    (await server.api.post('/licenses/verify', { key: license.key, hwuid })).expect(200);
  // Releases: a published one with files (one with a long name), a draft and a beta.
  const releaseOf = async (version: string, body: Record<string, unknown> = {}) =>
    (await server.api.post(`/apps/${ids.appId}/releases`, { version, ...body }, token)).expect(201).body
      .id as string;
  await releaseOf('1.3.0-beta.2', { notes: 'Try the new export.' });
  ids.releaseId = await releaseOf('1.2.0', {
    notes: 'Exports to PDF.\nFixes the crash on start.',
    requiredFeatures: ['pro'],
  });
  for (const [filename, query] of [
    [`PhotoTool-1.2.0-${'long-build-name-'.repeat(3)}x86_64.AppImage`, '?platform=linux&arch=x64'],
    ['PhotoTool-1.2.0.dmg', '?platform=macos'],
  ] as const) {
    const res = await fetch(
      `${server.service.coreUrl}/v1/apps/${ids.appId}/releases/${ids.releaseId}/artifacts/${filename}${query}`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/octet-stream' },
        body: randomBytes(250_000),
      },
    );
    assert.equal(res.status, 201, await res.text());
  }
  (await server.api.post(`/apps/${ids.appId}/releases/${ids.releaseId}/publish`, undefined, token)).expect(
    200,
  );
  await releaseOf('1.2.1');
  await server.service.modules.deliveryWorker.runOnce();
  assert.equal(await server.service.modules.verificationCounts.flush(), true);
  assert.equal(await server.service.modules.timelineJournal.flush(), true);
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await fake?.close();
  await receiver?.close();
  rmSync(artifactDir, { recursive: true, force: true });
});

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });
/** A computed style of the element (of its ::before with `pseudo`). */
const styleOf = (locator: Locator, property: string, pseudo?: string) =>
  locator.evaluate(
    (element, [name, part]) =>
      element.ownerDocument.defaultView?.getComputedStyle(element, part).getPropertyValue(name as string),
    [property, pseudo] as const,
  );
const pageBackground = (page: Page) =>
  page.evaluate('getComputedStyle(document.documentElement).backgroundColor');

type Tab = WatchedPage;

async function openDashboard(t: TestContext): Promise<Tab> {
  const tab = await openWatchedPage(browser, t);
  const { page } = tab;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: new URL(server.service.coreUrl).origin,
  });
  await page.goto(`${server.service.coreUrl}/dashboard`);
  return tab;
}

async function signIn(page: Page, email: string) {
  await heading(page, 'Sign in').waitFor();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await heading(page, 'Overview').waitFor();
}

interface Screen {
  path: string;
  title: string;
  /** What shows once the screen's data is in, beyond its heading. */
  ready?: (page: Page) => Promise<void>;
  /** Saved as <shot>-<scheme>-<width>.png. */
  shot?: string;
}

const SELLER_SCREENS = (): Screen[] => [
  {
    path: '/overview',
    title: 'Overview',
    ready: (page) => page.locator('figure.chart').first().waitFor(),
    shot: 'overview',
  },
  { path: '/apps', title: 'Apps' },
  { path: `/apps/${ids.appId}`, title: 'App: Photo Tool' },
  { path: '/products', title: 'Products' },
  { path: '/products/new', title: 'New product' },
  { path: `/products/${ids.productId}`, title: 'Product: Photo Tool Pro' },
  { path: '/licenses', title: 'Licenses', shot: 'licenses' },
  {
    path: `/apps/${ids.appId}/licenses/${ids.licenseId}`,
    title: 'License',
    ready: (page) =>
      page
        .getByRole('table', { name: 'Timeline' })
        .getByRole('row', { name: /travel-laptop/ })
        .first()
        .waitFor(),
    shot: 'license-timeline',
  },
  {
    path: `/apps/${ids.appId}/releases`,
    title: 'Releases: Photo Tool',
    ready: (page) => page.getByRole('table', { name: 'Releases' }).waitFor(),
    shot: 'releases',
  },
  {
    path: `/apps/${ids.appId}/releases/${ids.releaseId}`,
    title: 'Release 1.2.0',
    ready: (page) => page.getByRole('table', { name: 'Files' }).waitFor(),
    shot: 'release',
  },
  { path: '/webhooks', title: 'Webhooks' },
  {
    path: `/webhooks/${ids.webhookId}`,
    title: 'Webhook',
    ready: (page) =>
      page
        .getByRole('table', { name: 'Delivery attempts, newest first' })
        .getByRole('row', { name: /license\.created/ })
        .waitFor(),
  },
  { path: '/orders', title: 'Orders' },
  { path: `/orders/${ids.orderId}`, title: 'Order' },
  { path: '/subscriptions', title: 'Subscriptions' },
  { path: '/disputes', title: 'Disputes' },
  { path: `/disputes/${ids.disputeId}`, title: 'Dispute' },
];

const ADMIN_SCREENS: Screen[] = [
  {
    path: '/admin/analytics',
    title: 'Analytics',
    ready: (page) => page.getByRole('img', { name: /^Licenses/ }).waitFor(),
  },
  {
    path: '/admin/accounts',
    title: 'Accounts',
    ready: (page) => page.getByRole('table', { name: 'Accounts' }).waitFor(),
  },
];

async function open(page: Page, screen: Screen) {
  await page.goto(`${server.service.coreUrl}/dashboard#${screen.path}`);
  await heading(page, screen.title).waitFor();
  await screen.ready?.(page);
  await page.getByText('Loading…').first().waitFor({ state: 'detached' });
}

/** A screenshot that holds a picture (a blank page compresses to a few hundred bytes). */
async function picture(page: Page, name: string) {
  const path = await screenshot(page, name);
  assert.ok(statSync(path).size > 10_000, `${path} is ${statSync(path).size} bytes`);
}

/**
 * The screen at both widths in both schemes: nothing wider than the window, no text below AA
 * contrast. The scheme is the system's (emulated), which the dashboard follows by default.
 */
async function judge(page: Page, screen: Screen) {
  for (const viewport of [PHONE, DESKTOP]) {
    await page.setViewportSize(viewport);
    for (const colorScheme of SCHEMES) {
      await page.emulateMedia({ colorScheme });
      const where = `${screen.path} at ${viewport.width} px, ${colorScheme}`;
      assert.equal(await looksDark(page), colorScheme === 'dark', `${where}: drawn ${colorScheme}`);
      assert.equal(await sidewaysOverflow(page), 0, `${where} scrolls sideways`);
      assert.deepEqual(await contrastProblems(page), [], `${where}: text below AA contrast`);
      if (screen.shot) await picture(page, `${screen.shot}-${colorScheme}-${viewport.width}`);
    }
  }
}

describe('every dashboard screen on a phone and a desktop, light and dark', () => {
  test('no screen scrolls sideways or has text below AA contrast, signed out, as a seller and as an admin', async (t) => {
    const tab = await openDashboard(t);
    const { page } = tab;
    await heading(page, 'Sign in').waitFor();
    await judge(page, { path: '/sign-in', title: 'Sign in' });
    await page.getByRole('link', { name: 'Create an account' }).click();
    await heading(page, 'Create an account').waitFor();
    await judge(page, { path: '/sign-up', title: 'Create an account' });
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signIn(page, seller.user.email);
    for (const screen of SELLER_SCREENS()) {
      await open(page, screen);
      await judge(page, screen);
    }
    assert.deepEqual(tab.errors, [], 'no console error');

    const adminTab = await openDashboard(t);
    await signIn(adminTab.page, admin.user.email);
    for (const screen of ADMIN_SCREENS) {
      await open(adminTab.page, screen);
      await judge(adminTab.page, screen);
    }
    assert.deepEqual(adminTab.errors, [], 'no console error');
  });

  test('on a phone a license is a card showing its status, its key shortened on one line with a copy button, and its expiry', async (t) => {
    const { page, errors } = await openDashboard(t);
    await page.setViewportSize(PHONE);
    await signIn(page, seller.user.email);
    await open(page, { path: '/licenses', title: 'Licenses' });
    const table = page.getByRole('table', { name: 'Licenses' });
    const card = table.locator('tbody tr').filter({ hasText: LONG_EMAIL });
    const box = async (locator: Locator) => {
      const found = await locator.boundingBox();
      assert.ok(found, 'shown');
      return found;
    };

    // A card: one column of its own, within the screen, not a row of a table.
    assert.equal(await styleOf(card, 'display'), 'grid');
    const cardBox = await box(card);
    assert.ok(cardBox.x >= 0 && cardBox.x + cardBox.width <= PHONE.width, 'the card fits the screen');
    assert.equal(
      await table
        .locator('thead')
        .getByRole('button', { name: /E-mail/ })
        .isVisible(),
      true,
    );

    // The key: the link's text is the whole key, shown on one line, cut in the middle.
    const link = card.getByRole('link', { name: ids.key, exact: true });
    const start = link.locator('.short-key-start');
    const keyBox = await box(link);
    const lineHeight = Number.parseFloat((await styleOf(link, 'line-height')) ?? '');
    assert.ok(keyBox.height < lineHeight * 1.5, `the key is on one line (${keyBox.height} px high)`);
    assert.ok(
      await start.evaluate((element) => element.scrollWidth > element.clientWidth),
      'the key is shortened',
    );
    assert.ok((await styleOf(start, 'text-overflow')) === 'ellipsis');
    assert.equal(await link.locator('.short-key-end').textContent(), ids.key.slice(-5), 'its end shows');
    assert.ok(keyBox.x + keyBox.width <= cardBox.x + cardBox.width);

    // The status, beside the key at the top of the card.
    const status = card.locator('td.cell-status');
    assert.equal((await status.textContent())?.trim(), 'active');
    const statusBox = await box(status.locator('.badge'));
    assert.ok(Math.abs(statusBox.y - keyBox.y) < lineHeight, 'the status stands on the key’s line');
    assert.ok(statusBox.x + statusBox.width <= cardBox.x + cardBox.width);

    // The expiry, the card's figure, under its column's title.
    const expiry = card.locator('td.cell-figure');
    const expected = await page.evaluate(
      (iso) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' }),
      EXPIRES_AT,
    );
    assert.equal((await expiry.textContent())?.trim(), expected);
    assert.equal(await styleOf(expiry, 'content', '::before'), '"Expires"');
    assert.ok(await expiry.isVisible());
    assert.ok((await box(expiry)).y > keyBox.y, 'below the key');

    // The copy button copies the whole key.
    await card.getByRole('button', { name: `Copy license key ${ids.key}` }).click();
    await page.getByRole('status').filter({ hasText: 'License key copied to the clipboard' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), ids.key);

    // On the license's own page the whole key fits on one line.
    await card.getByRole('link', { name: ids.key }).click();
    await heading(page, 'License').waitFor();
    const whole = page.getByRole('definition').locator('code').filter({ hasText: ids.key });
    assert.ok((await box(whole)).height < lineHeight * 1.5, 'one line');
    assert.equal(
      await whole
        .locator('.short-key-start')
        .evaluate((element) => element.scrollWidth > element.clientWidth),
      false,
      'and is not cut',
    );
    assert.deepEqual(errors, []);
  });

  test('follows the system’s scheme until light or dark is chosen, remembers the choice and applies it before the app runs', async (t) => {
    const { page, errors } = await openDashboard(t);
    const background = () => pageBackground(page);
    const LIGHT = 'rgb(244, 246, 249)';
    const DARK = 'rgb(17, 21, 27)';
    await heading(page, 'Sign in').waitFor();
    const theme = page.getByLabel('Theme');
    assert.equal(await theme.inputValue(), 'system');
    await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await background(), LIGHT);
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await background(), DARK, 'the system’s dark scheme is followed');

    await theme.selectOption('light');
    assert.equal(await background(), LIGHT, 'light chosen, against the system');
    assert.equal(await page.evaluate("localStorage.getItem('dashboard.theme')"), 'light');

    // A reload with the app's script held back: the choice is already applied by the page itself.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/dashboard/assets/app.js', async (route) => {
      await held;
      await route.continue();
    });
    await page.reload({ waitUntil: 'commit' });
    // Parsed and styled; the app's script (a module, run after parsing) still waits.
    await page.waitForFunction(
      "document.readyState !== 'loading' && getComputedStyle(document.documentElement).backgroundColor !== 'rgba(0, 0, 0, 0)'",
    );
    assert.equal(await page.locator('#root noscript').count(), 1, 'the app has not run');
    assert.equal(await page.evaluate('document.documentElement.dataset.theme'), 'light');
    assert.equal(await background(), LIGHT);
    release();
    await heading(page, 'Sign in').waitFor();
    assert.equal(await theme.inputValue(), 'light', 'the switch shows the choice');

    await page.emulateMedia({ colorScheme: 'light' });
    await theme.selectOption('dark');
    assert.equal(await background(), DARK, 'dark chosen, against the system');
    await signIn(page, seller.user.email);
    assert.equal(await background(), DARK, 'and kept after sign-in');

    await theme.selectOption('system');
    assert.equal(await page.evaluate("localStorage.getItem('dashboard.theme')"), null);
    assert.equal(await background(), LIGHT, 'back to the system’s scheme');
    assert.deepEqual(errors, [], 'no console error (the inline script is allowed by its hash)');
  });
});
