import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, screenshot, type TestBrowser } from '../testing/browser.js';
import { type FakeStripe, startFakeStripe } from '../testing/fake-stripe.js';
import {
  createApp,
  issueLicense,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../testing/harness.js';
import { paidPurchase, sendStripeEvent } from '../testing/purchases.js';
import { type Receiver, startReceiver } from '../testing/receiver.js';

/**
 * The overview (the first screen after sign-in) and the dashboard at a phone's width, in headless
 * Chromium: the numbers shown are the API's, every chart has a text alternative, the compact menu
 * opens and navigates, and an empty account is told what to do next, without scrolling sideways
 * (screens.browser.test.ts holds every screen with data to that). Screenshots go to
 * artifacts/screenshots/ and are checked to hold a picture.
 */
const WEBHOOK_SECRET = 'whsec_overview_browser_secret';
let server: TestServer;
let browser: TestBrowser;
let fake: FakeStripe;
let receiver: Receiver;
let seller: Seller;
const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };

/** A seller with sales in USD and EUR, verifications, an activation, a failing webhook and a dispute. */
before(async () => {
  fake = await startFakeStripe();
  receiver = await startReceiver();
  server = await startTestServer(
    { STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: fake.url },
    { ownDatabase: true },
  );
  browser = await launchBrowser();
  seller = await signUp(server);
  const token = { token: seller.token };
  const appId = (await createApp(server, seller.token, 'Photo Tool')).id;
  const product = async (body: Record<string, unknown>) =>
    (await server.api.post('/products', { appId, name: 'Photo Tool Pro', ...body }, token)).expect(201).body
      .id as string;
  const usd = await product({ price: 19.99, currency: 'USD' });
  const eur = await product({ price: 10, currency: 'EUR' });
  await paidPurchase(server, fake, usd);
  await paidPurchase(server, fake, usd);
  const disputed = await paidPurchase(server, fake, eur);
  (
    await sendStripeEvent(server, WEBHOOK_SECRET, 'charge.dispute.created', {
      id: 'dp_overview_browser',
      object: 'dispute',
      payment_intent: disputed.paymentIntentId,
      amount: 1000,
      currency: 'eur',
      reason: 'fraudulent',
      status: 'needs_response',
    })
  ).expect(200);
  const license = await issueLicense(server, { token: seller.token, appId }, { maxDevices: 3 });
  for (const hwuid of ['laptop', 'desktop', 'laptop'])
    (await server.api.post('/licenses/verify', { key: license.key, hwuid })).expect(200);
  receiver.answer({ status: 500, body: 'down' });
  (
    await server.api.post('/webhooks', { url: `${receiver.url}/down`, events: ['license.created'] }, token)
  ).expect(201);
  await issueLicense(server, { token: seller.token, appId });
  await server.service.modules.deliveryWorker.runOnce();
  assert.equal(await server.service.modules.verificationCounts.flush(), true);
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await fake?.close();
  await receiver?.close();
});

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });
const menuLink = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });

async function openSignedIn(t: TestContext, email: string, viewport: { width: number; height: number }) {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  t.after(() => assert.deepEqual(errors, [], 'no console error'));
  await page.setViewportSize(viewport);
  await page.goto(`${server.service.coreUrl}/dashboard`);
  await heading(page, 'Sign in').waitFor();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await heading(page, 'Overview').waitFor();
  return page;
}

/** How far the page reaches past the viewport's right edge (0 when nothing overflows). */
const overflow = async (page: Page): Promise<number> =>
  Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));

/** A screenshot that holds a picture: a PNG of some size (a blank page compresses to almost nothing). */
async function picture(page: Page, name: string) {
  const path = await screenshot(page, name);
  assert.ok(statSync(path).size > 15_000, `${path} is ${statSync(path).size} bytes`);
}

/** Money as the page formats it, in the browser's own locale. */
const money = (page: Page, amount: number, currency: string) =>
  page.evaluate(
    ([value, code]) => new Intl.NumberFormat(undefined, { style: 'currency', currency: code }).format(value),
    [amount, currency] as [number, string],
  );

const card = async (page: Page, title: string) =>
  (await page.locator('li.card').filter({ hasText: title }).locator('.card-value').textContent())?.trim();

describe('the overview and the dashboard at a phone’s width', () => {
  test('the overview is the first screen and shows the API’s numbers, each chart with a text alternative', async (t) => {
    const page = await openSignedIn(t, seller.user.email, DESKTOP);
    assert.equal(await menuLink(page, 'Overview').getAttribute('aria-current'), 'page');
    const api = (await server.api.get('/overview', { token: seller.token })).expect(200).body;
    await page.locator('figure.chart').first().waitFor();

    for (const series of api.revenue.last30Days.series)
      assert.equal(
        await card(page, `Revenue in ${series.currency}, 30 days`),
        await money(page, series.amount, series.currency),
      );
    assert.deepEqual(
      api.revenue.last30Days.series.map((s: { currency: string; amount: number }) => [s.currency, s.amount]),
      [
        ['EUR', 10],
        ['USD', 39.98],
      ],
    );
    assert.equal(await card(page, 'Active licenses'), String(api.licenses.byStatus.active));
    assert.equal(api.activity.totals.valid, 3);
    assert.equal(await card(page, 'Verifications, 30 days'), '3');
    assert.equal(await card(page, 'New activations, 30 days'), String(api.activity.totals.activations));
    assert.equal(api.activity.totals.activations, 2);
    assert.equal(await card(page, 'Webhooks needing attention'), '1');
    assert.equal(await card(page, 'Open disputes'), '1');

    // Each chart: a figure with a caption, an image named by its title and described by its
    // points and totals, and its numbers as a table.
    const charts = page.locator('figure.chart');
    const count = await charts.count();
    assert.equal(count, 2 * api.revenue.last30Days.series.length + 2);
    for (let index = 0; index < count; index++) {
      const chart = charts.nth(index);
      const caption = (await chart.locator('figcaption').textContent()) ?? '';
      const svg = chart.locator('svg[role="img"]');
      const name = await svg.evaluate((element) =>
        (element.getAttribute('aria-labelledby') ?? '')
          .split(' ')
          .map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '')
          .join(' '),
      );
      assert.ok(name.startsWith(caption), `${caption}: named "${name}"`);
      assert.match(name, /points from .* total .* highest/, caption);
      const rows = await chart.locator('table tbody tr').count();
      assert.ok(rows === 30 || rows === 12, `${caption}: ${rows} rows`);
    }
    const table = charts.filter({ hasText: 'Revenue in USD, last 30 days' }).locator('table');
    await charts.filter({ hasText: 'Revenue in USD, last 30 days' }).locator('summary').click();
    assert.equal(
      (await table.locator('tbody tr').last().locator('td').textContent())?.trim(),
      await money(page, 39.98, 'USD'),
      'today’s sales are the last row',
    );

    // The latest orders, the open dispute and the failing endpoint, each leading to its page.
    const orders = page.getByRole('region', { name: 'Latest orders' });
    assert.equal(await orders.locator('tbody tr').count(), api.orders.latest.length);
    const disputes = page.getByRole('region', { name: 'Open disputes' });
    assert.equal(
      await disputes.getByRole('link', { name: await money(page, 10, 'EUR') }).getAttribute('href'),
      `#/disputes/${api.disputes.latest[0].id}`,
    );
    assert.equal(
      await disputes.getByRole('link', { name: /All disputes/ }).getAttribute('href'),
      '#/disputes',
    );
    await picture(page, 'overview-desktop');
    const hooks = page.getByRole('region', { name: 'Webhooks needing attention' });
    await hooks.getByRole('link', { name: `${receiver.url}/down` }).click();
    await heading(page, 'Webhook').waitFor();
    assert.equal(page.url().split('#')[1], `/webhooks/${api.webhooks.endpoints[0].id}`);
  });

  test('at 375 px the compact menu opens, navigates and closes', async (t) => {
    const page = await openSignedIn(t, seller.user.email, PHONE);
    await page.locator('figure.chart').first().waitFor();
    const button = page.getByRole('button', { name: 'Menu' });
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await menuLink(page, 'Apps').isVisible(), false, 'the menu is folded');
    assert.equal(await overflow(page), 0, 'Overview overflows');
    await picture(page, 'overview-phone');

    const screens: [string, string][] = [
      ['Apps', 'Apps'],
      ['Products', 'Products'],
      ['Licenses', 'Licenses'],
      ['Webhooks', 'Webhooks'],
      ['Orders', 'Orders'],
      ['Subscriptions', 'Subscriptions'],
      ['Disputes', 'Disputes'],
      ['Overview', 'Overview'],
    ];
    for (const [entry, title] of screens) {
      await button.click();
      assert.equal(await button.getAttribute('aria-expanded'), 'true');
      await menuLink(page, entry).click();
      await heading(page, title).waitFor();
      await page.getByText('Loading…').first().waitFor({ state: 'detached' });
      assert.equal(await button.getAttribute('aria-expanded'), 'false', `the menu folds after ${entry}`);
    }

    // With the keyboard alone: Enter opens, Tab reaches the first screen, Escape folds it again
    // and gives focus back to the button.
    await button.focus();
    await page.keyboard.press('Enter');
    assert.equal(await button.getAttribute('aria-expanded'), 'true');
    // The menu renders after the keypress; Tab before it would skip past it.
    await menuLink(page, 'Overview').waitFor();
    await page.keyboard.press('Tab');
    assert.ok(
      await menuLink(page, 'Overview').evaluate((element) => element.matches(':focus')),
      'Tab reaches the first screen',
    );
    await page.keyboard.press('Escape');
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.ok(await button.evaluate((element) => element.matches(':focus')), 'focus returns to the button');
  });

  test('an empty account is told what to do next, and a create form opens only when asked', async (t) => {
    const newcomer = await signUp(server);
    const page = await openSignedIn(t, newcomer.user.email, PHONE);
    const start = page.getByText('Nothing to show yet');
    await start.waitFor();
    assert.equal(await page.getByRole('link', { name: 'Create an app' }).getAttribute('href'), '#/apps');
    assert.equal(await overflow(page), 0);
    await picture(page, 'overview-empty-phone');

    await page.getByRole('link', { name: 'Create an app' }).click();
    await heading(page, 'Apps').waitFor();
    await page.getByText('No apps yet').waitFor();
    assert.equal(await page.getByLabel('App name').count(), 0, 'no form until asked for');
    assert.equal(await overflow(page), 0);
    await picture(page, 'apps-empty-phone');
    await page.getByRole('button', { name: 'Create your first app' }).click();
    const name = page.getByLabel('App name');
    assert.ok(await name.evaluate((element) => element.matches(':focus')), 'focus goes to the form');
    assert.equal(await page.getByRole('button', { name: 'New app' }).getAttribute('aria-expanded'), 'true');
    await page.keyboard.press('Escape');
    assert.equal(await page.getByLabel('App name').count(), 0, 'Escape closes the form');
    await page.getByRole('button', { name: 'New app' }).click();
    await page.getByLabel('App name').fill('First App');
    await page.getByLabel('App name').press('Enter');
    await heading(page, 'App: First App').waitFor();

    const emptyLists: [string, string][] = [
      ['Webhooks', 'No webhooks yet'],
      ['Products', 'No products yet'],
      ['Orders', 'No orders yet'],
      ['Disputes', 'No disputes'],
    ];
    for (const [entry, empty] of emptyLists) {
      await page.getByRole('button', { name: 'Menu' }).click();
      await menuLink(page, entry).click();
      await page.getByText(empty, { exact: true }).waitFor();
      assert.equal(await overflow(page), 0, `${entry} overflows at 375 px`);
    }
    await page.setViewportSize(DESKTOP);
    await page.getByRole('button', { name: 'Menu' }).waitFor({ state: 'hidden' });
    assert.ok(await menuLink(page, 'Overview').isVisible(), 'a wide screen shows the menu as a sidebar');
    await menuLink(page, 'Overview').click();
    await page.getByText('Nothing to show yet').waitFor();
    await picture(page, 'overview-empty-desktop');
  });
});
