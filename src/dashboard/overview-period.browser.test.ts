import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, screenshot, type TestBrowser } from '../testing/browser.js';
import {
  createApp,
  issueLicense,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../testing/harness.js';
import { buyWithSandbox } from '../testing/purchases.js';
import { type TestClock, testClock } from '../testing/test-clock.js';

/**
 * The overview's period picker in headless Chromium: the presets and a custom range of days live
 * in the URL (a reload keeps them, the back button returns to the last), and each figure shows
 * its value in the period before and the change. The service and the page share one fixed clock,
 * so "the last 7 days" are the same days for both.
 *
 * The seller's story (UTC), with now 2026-03-12 12:00:
 * - 2 March: one USD sale (19.99); a license verified twice and activated on a laptop;
 * - 10 March: two USD sales (39.98); three more verifications, and a desktop activated.
 */
const NOW = '2026-03-12T12:00:00.000Z';
let server: TestServer;
let browser: TestBrowser;
let clock: TestClock;
let seller: Seller;

before(async () => {
  clock = testClock('2026-03-02T10:00:00.000Z');
  server = await startTestServer({ USER_TOKEN_TTL: '2592000' }, { clock, ownDatabase: true });
  browser = await launchBrowser();
  seller = await signUp(server);
  const token = { token: seller.token };
  const appId = (await createApp(server, seller.token, 'Photo Tool')).id;
  const product = (
    await server.api.post(
      '/products',
      { appId, name: 'Photo Tool Pro', price: 19.99, currency: 'USD' },
      token,
    )
  ).expect(201).body;
  const verify = async (hwuid: string) =>
    (await server.api.post('/licenses/verify', { key: license.key, hwuid })).expect(200);
  await buyWithSandbox(server, product.id);
  const license = await issueLicense(server, { token: seller.token, appId }, { maxDevices: 2 });
  await verify('laptop');
  await verify('laptop');

  clock.set('2026-03-10T10:00:00.000Z');
  await buyWithSandbox(server, product.id);
  await buyWithSandbox(server, product.id);
  await verify('desktop');
  await verify('desktop');
  await verify('laptop');

  clock.set(NOW);
  assert.equal(await server.service.modules.verificationCounts.flush(), true);
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

async function openOverview(t: TestContext): Promise<Page> {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  t.after(() => assert.deepEqual(errors, [], 'no uncaught error'));
  await page.clock.setFixedTime(new Date(NOW));
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${server.service.coreUrl}/dashboard`);
  await page.getByLabel('E-mail').fill(seller.user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  return page;
}

/** A card's parts as shown. */
async function card(page: Page, title: string) {
  const item = page.locator('li.card').filter({ hasText: title });
  await item.waitFor();
  const text = async (selector: string) => ((await item.locator(selector).textContent()) ?? '').trim();
  return {
    value: await text('.card-value'),
    note: await text('.muted'),
    previous: await text('.card-previous'),
    change: await text('.card-change'),
  };
}

/** Numbers as the page writes them, in the browser's locale (the code runs in the page). */
const inPage = (page: Page, expression: string) => page.evaluate(expression) as Promise<string>;
const money = (page: Page, amount: number) =>
  inPage(page, `new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' }).format(${amount})`);
const signedMoney = (page: Page, amount: number) =>
  inPage(
    page,
    `new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', signDisplay: 'exceptZero' }).format(${amount})`,
  );
const percent = (page: Page, ratio: number) =>
  inPage(
    page,
    `new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 0, signDisplay: 'exceptZero' }).format(${ratio})`,
  );

const hashOf = (page: Page) => new URL(page.url()).hash;
const preset = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Period' }).getByRole('link', { name, exact: true });

describe('the overview’s period and the period before it', () => {
  test('a preset lives in the URL and each figure shows the previous period and the change', async (t) => {
    const page = await openOverview(t);
    assert.equal(await preset(page, 'Last 30 days').getAttribute('aria-current'), 'true');
    const month = await card(page, 'Revenue in USD, 30 days');
    assert.equal(month.value, await money(page, 59.97));
    assert.equal(month.note, '3 paid orders');
    assert.equal(month.previous, `Previous 30 days: ${await money(page, 0)}`);
    assert.equal(month.change, await signedMoney(page, 59.97), 'nothing before: the change alone');

    await preset(page, 'Last 7 days').click();
    assert.equal(hashOf(page), '#/overview?days=7');
    const week = await card(page, 'Revenue in USD, 7 days');
    const api = (
      await server.api.get('/overview?from=2026-03-06T00:00:00.000Z', { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      [api.period.revenue[0].amount, api.period.previous.revenue[0].amount],
      [39.98, 19.99],
      'the API agrees: 6–12 March, and 27 February–5 March before',
    );
    assert.equal(week.value, await money(page, 39.98));
    assert.equal(week.note, '2 paid orders');
    assert.equal(week.previous, `Previous 7 days: ${await money(page, 19.99)}`);
    assert.equal(week.change, `${await signedMoney(page, 19.99)} (${await percent(page, 1)})`);
    const verifications = await card(page, 'Verifications, 7 days');
    assert.deepEqual(verifications, {
      value: '3',
      note: '3 valid · 0 invalid',
      previous: 'Previous 7 days: 2',
      change: `+1 (${await percent(page, 0.5)})`,
    });
    const activations = await card(page, 'New activations, 7 days');
    assert.deepEqual(activations, {
      value: '1',
      note: 'device bound to a license',
      previous: 'Previous 7 days: 1',
      change: 'no change',
    });
    assert.equal(await preset(page, 'Last 7 days').getAttribute('aria-current'), 'true');
    assert.equal(await preset(page, 'Last 30 days').getAttribute('aria-current'), null);
    const charts = page.locator('figure.chart');
    assert.match((await charts.first().locator('figcaption').textContent()) ?? '', /last 7 days/);
    assert.equal(await charts.first().locator('tbody tr').count(), 7);
    await screenshot(page, 'overview-period-7-days');

    // A reload keeps the period; the back button returns to the last one.
    await page.reload();
    assert.equal((await card(page, 'Revenue in USD, 7 days')).value, await money(page, 39.98));
    await page.goBack();
    assert.equal(hashOf(page), '#/overview');
    assert.equal((await card(page, 'Revenue in USD, 30 days')).value, await money(page, 59.97));

    await preset(page, 'Last 90 days').click();
    const quarter = await card(page, 'Revenue in USD, 90 days');
    assert.equal(quarter.previous, `Previous 90 days: ${await money(page, 0)}`);
    assert.equal(await charts.first().locator('tbody tr').count(), 90);
  });

  test('a custom range of days: its own figures, the same number of days before, and refusals at the field', async (t) => {
    const page = await openOverview(t);
    const form = page.getByRole('form', { name: 'Custom period' });
    // The form shows the days of the period on screen.
    await card(page, 'Revenue in USD, 30 days');
    assert.equal(await form.getByLabel('From').inputValue(), '2026-02-11');
    assert.equal(await form.getByLabel('To').inputValue(), '2026-03-12');
    await form.getByLabel('From').fill('2026-03-01');
    await form.getByLabel('To').fill('2026-03-05');
    await form.getByRole('button', { name: 'Show these days' }).click();
    assert.equal(hashOf(page), '#/overview?from=2026-03-01&to=2026-03-05');
    const title = await page.evaluate(
      `['2026-03-01', '2026-03-05'].map((day) => new Date(day).toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' })).join(' – ')`,
    );
    const revenue = await card(page, `Revenue in USD, ${title}`);
    assert.equal(revenue.value, await money(page, 19.99));
    assert.equal(revenue.note, '1 paid order');
    assert.equal(revenue.previous, `Previous 5 days: ${await money(page, 0)}`);
    const verifications = await card(page, `Verifications, ${title}`);
    assert.equal(verifications.value, '2');
    assert.equal(verifications.change, '+2');
    for (const name of ['Last 7 days', 'Last 30 days', 'Last 90 days'])
      assert.equal(await preset(page, name).getAttribute('aria-current'), null);
    assert.equal(await page.locator('figure.chart').first().locator('tbody tr').count(), 5);

    // A reversed range is refused by the API, and the page says so at the From field.
    await form.getByLabel('From').fill('2026-03-09');
    await form.getByLabel('To').fill('2026-03-01');
    await form.getByRole('button', { name: 'Show these days' }).click();
    await page.getByRole('alert').filter({ hasText: 'from: must be earlier than to' }).waitFor();
    assert.equal(await form.getByLabel('From').getAttribute('aria-invalid'), 'true');
    assert.equal(await form.getByLabel('To').getAttribute('aria-invalid'), null);
    assert.equal(await page.locator('li.card').count(), 0, 'no figures for a refused period');
    await screenshot(page, 'overview-period-refused');
    await preset(page, 'Last 7 days').click();
    await card(page, 'Revenue in USD, 7 days');
    assert.equal(await form.getByLabel('From').getAttribute('aria-invalid'), null);
  });
});
