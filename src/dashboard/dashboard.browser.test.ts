import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { verifyWebhook } from '../../packages/client/src/index.js';
import { launchBrowser, screenshot, type TestBrowser } from '../testing/browser.js';
import {
  createApp,
  freePort,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
  uniqueSuffix,
} from '../testing/harness.js';
import { buyWithSandbox } from '../testing/purchases.js';
import { type Receiver, startReceiver } from '../testing/receiver.js';

/**
 * The seller dashboard in headless Chromium against a real core host: every step goes through
 * the screens (roles and labels, the keyboard where natural) and is checked through the API.
 * The page may talk to its own origin only, and must run without a console error (a blocked
 * inline style or script shows up there).
 */
let server: TestServer;
let browser: TestBrowser;
let receiver: Receiver;

before(async () => {
  // The checkout link must lead to the real checkout host, so its public address is its port.
  const payPort = await freePort();
  // It runs the webhook delivery worker (merchant webhooks), so it owns its database.
  server = await startTestServer(
    { PAY_PORT: String(payPort), PAY_PUBLIC_URL: `http://127.0.0.1:${payPort}` },
    { ownDatabase: true },
  );
  browser = await launchBrowser();
  receiver = await startReceiver();
});
after(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.stop();
});

const dashboardUrl = () => `${server.service.coreUrl}/dashboard`;

interface Dashboard {
  page: Page;
  /** Requests the page made to any other origin. */
  foreign: string[];
  /** Console errors and uncaught exceptions, other than answers the test provoked on purpose. */
  errors: string[];
}

/** A dashboard tab in its own browser context (own sessionStorage), with the clipboard allowed. */
async function openDashboard(t: TestContext): Promise<Dashboard> {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  const origin = new URL(server.service.coreUrl).origin;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const seen: Dashboard = { page, foreign: [], errors: [] };
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== origin) seen.foreign.push(url);
  });
  page.on('console', (message) => {
    // Chromium reports every 4xx answer of fetch as a console error; those are the API's answers.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      seen.errors.push(message.text());
  });
  page.on('pageerror', (error) => seen.errors.push(error.message));
  await page.goto(dashboardUrl());
  return seen;
}

/** Asserts the tab stayed on its own origin and ran cleanly. */
function assertClean(seen: Dashboard) {
  assert.deepEqual(seen.foreign, [], 'no request goes to another host');
  assert.deepEqual(seen.errors, [], 'no console error (CSP violations show up here)');
}

const heading = (page: Page, name: string | RegExp) =>
  page.getByRole('heading', { level: 1, name, exact: typeof name === 'string' });
/** An entry of the dashboard's menu. */
const menu = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });
const form = (page: Page, name: string) => page.getByRole('form', { name });
const status = (page: Page) => page.getByRole('status');
const clipboard = (page: Page): Promise<string> => page.evaluate('navigator.clipboard.readText()');

async function focused(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => element.matches(':focus'));
}

async function signIn(page: Page, email: string) {
  await heading(page, 'Sign in').waitFor();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await heading(page, 'Overview').waitFor();
}

describe('the seller dashboard in a browser', () => {
  test('a new seller signs up, sets up an app, key, product and license, and watches a webhook delivery', async (t) => {
    const seen = await openDashboard(t);
    const { page } = seen;
    const email = `dash-${uniqueSuffix()}@test.example`;

    // Sign up.
    await heading(page, 'Sign in').waitFor();
    await page.getByRole('link', { name: 'Create an account' }).click();
    await heading(page, 'Create an account').waitFor();
    await page.getByLabel('Name').fill('Ada Seller');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await screenshot(page, 'dashboard-sign-up');
    await page.getByLabel('Password').press('Enter');
    await heading(page, 'Overview').waitFor();
    assert.equal(await menu(page, 'Overview').getAttribute('aria-current'), 'page');
    assert.equal(await menu(page, 'Analytics').count(), 0, 'no admin area for a seller');

    // An app, from the empty list's own button.
    await menu(page, 'Apps').click();
    await heading(page, 'Apps').waitFor();
    await page.getByRole('button', { name: 'Create your first app' }).click();
    await page.getByLabel('App name').fill('Photo Tool');
    await page.getByLabel('App name').press('Enter');
    await heading(page, 'App: Photo Tool').waitFor();
    const appId = page.url().split('#/apps/')[1] ?? '';
    await screenshot(page, 'dashboard-app');

    // An API key: shown once, copied, and it works.
    await page.getByLabel('Key name').fill('backend');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Your new API key' });
    await keyDialog.waitFor();
    assert.match((await keyDialog.textContent()) ?? '', /you will not see it again/);
    const key = await keyDialog.getByLabel('API key “backend”').inputValue();
    assert.match(key, /^sk_/);
    await keyDialog.getByRole('button', { name: 'Copy key' }).click();
    await status(page).filter({ hasText: 'API key copied to the clipboard' }).waitFor();
    assert.equal(await clipboard(page), key);
    await screenshot(page, 'dashboard-api-key-once');
    await page.keyboard.press('Escape');
    await keyDialog.waitFor({ state: 'hidden' });
    const me = (await server.api.get('/auth/me', { token: key })).expect(200).body;
    assert.equal(me.credential.kind, 'api_key');
    assert.equal(me.credential.appId, appId);
    const keyRow = page.getByRole('row', { name: /backend/ });
    assert.match((await keyRow.textContent()) ?? '', new RegExp(`${key.slice(0, 8)}.*Never.*Active`));
    assert.doesNotMatch((await page.content()) ?? '', new RegExp(key), 'the key is gone from the page');

    // What license timelines keep of client addresses: the network by default, none once chosen.
    const settings = form(page, 'App settings');
    const addresses = settings.getByLabel('Client addresses in license timelines');
    assert.equal(await addresses.inputValue(), 'truncated');
    await addresses.selectOption('none');
    await settings.getByRole('button', { name: 'Save app' }).click();
    await status(page).filter({ hasText: 'App saved' }).waitFor();
    assert.equal((await server.api.get(`/apps/${appId}`, { token: key })).body.clientAddresses, 'none');

    // A product, its checkout link and its callback secret.
    await menu(page, 'Products').click();
    await heading(page, 'Products').waitFor();
    await page.getByRole('link', { name: 'New product' }).click();
    await heading(page, 'New product').waitFor();
    await page.getByLabel('Product name').fill('Photo Tool Pro');
    await page.getByLabel('Price', { exact: true }).fill('29.5');
    await page.getByRole('button', { name: 'Create product' }).click();
    await heading(page, 'Product: Photo Tool Pro').waitFor();
    const productId = page.url().split('#/products/')[1] ?? '';
    const product = (await server.api.get(`/products/${productId}`, { token: key })).expect(200).body;
    assert.equal(product.price, 29.5);
    assert.equal(product.appId, appId);

    await page.getByRole('button', { name: 'Copy checkout link' }).click();
    const checkoutLink = await clipboard(page);
    assert.equal(checkoutLink, `${server.service.payUrl}/checkout/${productId}`);
    const checkoutPage = await fetch(checkoutLink);
    assert.equal(checkoutPage.status, 200);
    assert.match(await checkoutPage.text(), /Photo Tool Pro/);

    const secretCell = page.getByRole('definition').filter({ hasText: 'Callback secret hidden' });
    assert.equal(await secretCell.count(), 1, 'the callback secret starts masked');
    assert.doesNotMatch(await page.content(), new RegExp(product.callbackSecret));
    await page.getByRole('button', { name: 'Reveal callback secret' }).click();
    await page.getByText(product.callbackSecret, { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotateDialog = page.getByRole('dialog', { name: 'Rotate the callback secret?' });
    await rotateDialog.getByRole('button', { name: 'Rotate secret' }).click();
    await status(page).filter({ hasText: 'Callback secret rotated' }).waitFor();
    const rotated = (await server.api.get(`/products/${productId}`, { token: key })).expect(200).body;
    assert.notEqual(rotated.callbackSecret, product.callbackSecret);
    await page.getByText(rotated.callbackSecret, { exact: true }).waitFor();

    const button = (name: string) => page.getByRole('button', { name, exact: true });
    await button('Deactivate').click();
    await status(page).filter({ hasText: 'Product deactivated' }).waitFor();
    await button('Activate').waitFor();
    assert.equal((await server.api.get(`/products/${productId}`, { token: key })).body.active, false);
    await button('Activate').click();
    await status(page).filter({ hasText: 'Product activated' }).waitFor();
    await button('Deactivate').waitFor();
    assert.equal((await server.api.get(`/products/${productId}`, { token: key })).body.active, true);

    // A change through the form: only that field is sent, and a bad value is named.
    const details = form(page, 'Product details');
    await details.getByLabel('Currency').fill('XX');
    await details.getByRole('button', { name: 'Save product' }).click();
    await details.getByRole('alert').filter({ hasText: 'currency' }).waitFor();
    assert.equal(await details.getByLabel('Currency').getAttribute('aria-invalid'), 'true');
    await details.getByLabel('Currency').fill('EUR');
    await details.getByRole('button', { name: 'Save product' }).click();
    await status(page).filter({ hasText: 'Product saved' }).waitFor();
    assert.equal((await server.api.get(`/products/${productId}`, { token: key })).body.currency, 'EUR');

    // The license policy, said in plain words as it is typed: "3 devices, for a year".
    await details.getByLabel('Devices', { exact: true }).selectOption('node_locked');
    await details.getByLabel('Devices per license').fill('3');
    await details.getByLabel('License valid for (days)').fill('365');
    await details.getByText('Each license sold works on up to 3 devices, for 365 days.').waitFor();
    await details.getByLabel('Must go online every (days)').fill('30');
    await details.getByLabel('Grace (days)').fill('7');
    await details.getByLabel('When a license ends').selectOption('maintain_access');
    await details.getByLabel('Uses per license').fill('500');
    await details.getByLabel('Count starts again').selectOption('month');
    await details
      .getByText(
        'Each license sold works on up to 3 devices, for 365 days; it must go online every 30 days (7 days of grace); once it ends it keeps working as it was; 500 uses a month.',
      )
      .waitFor();
    // The status still says the last save's "Product saved": wait for this save's answer instead.
    await Promise.all([
      page.waitForResponse(
        (res) => res.request().method() === 'PATCH' && res.url().endsWith(`/products/${productId}`),
      ),
      details.getByRole('button', { name: 'Save product' }).click(),
    ]);
    assert.deepEqual((await server.api.get(`/products/${productId}`, { token: key })).body.licensePolicy, {
      model: 'node_locked',
      maxDevices: 3,
      maxSeats: null,
      leaseSeconds: null,
      validityDays: 365,
      checkInDays: 30,
      graceDays: 7,
      expiryStrategy: 'maintain_access',
      maxUses: 500,
      usesResetInterval: 'month',
    });
    await screenshot(page, 'dashboard-product');

    // Licenses: issue one, find it by its key, suspend and reinstate it, release a device.
    const other = (
      await server.api.post(`/apps/${appId}/licenses`, { email: 'bob@example.com' }, { token: key })
    ).expect(201).body;
    await menu(page, 'Licenses').click();
    await heading(page, 'Licenses').waitFor();
    const issue = form(page, 'Issue a license');
    await issue.getByLabel('Buyer e-mail').fill('ann@example.com');
    await issue.getByLabel('Product', { exact: true }).selectOption({ label: 'Photo Tool Pro' });
    await issue.getByLabel('Maximum devices').fill('2');
    await issue.getByLabel('Plan').fill('pro');
    await issue.getByRole('button', { name: 'Issue license' }).click();
    const issuedNotice = page.getByRole('region', { name: 'Issued license', exact: true });
    await issuedNotice.waitFor();
    const licenseKey = (await issuedNotice.locator('code').textContent()) ?? '';
    assert.match(licenseKey, /^[0-9A-Z]{5}(-[0-9A-Z]{5}){5}$/);
    await page.getByText('2 licenses.').waitFor();

    const search = form(page, 'Search licenses');
    await search.getByLabel('License key').fill(licenseKey.toLowerCase().replaceAll('-', ''));
    await search.getByLabel('License key').press('Enter');
    await page.getByText('1 license found.').waitFor();
    const rows = page.getByRole('table', { name: 'Licenses' }).getByRole('row');
    assert.equal(await rows.count(), 2, 'a header and the one license');
    assert.match((await rows.nth(1).textContent()) ?? '', /ann@example\.com.*active.*Photo Tool Pro.*0 of 2/);
    assert.equal(await page.getByText(other.key).count(), 0);
    await screenshot(page, 'dashboard-licenses');

    (await server.api.post('/licenses/verify', { key: licenseKey, hwuid: 'laptop-1' })).expect(200);
    await page.getByRole('link', { name: licenseKey }).click();
    await heading(page, 'License').waitFor();
    const license = (
      await server.api.get(`/apps/${appId}/licenses?key=${licenseKey}`, { token: key })
    ).expect(200).body.licenses[0];
    await page.getByRole('button', { name: 'Suspend' }).click();
    await status(page).filter({ hasText: 'License suspended' }).waitFor();
    const licensePath = `/apps/${appId}/licenses/${license.id}`;
    assert.equal((await server.api.get(licensePath, { token: key })).body.status, 'suspended');
    // A verification refused meanwhile, twice, in the timeline once its batch is written.
    for (let call = 0; call < 2; call++) {
      const refused = (
        await server.api.post('/licenses/verify', { key: licenseKey, hwuid: 'laptop-1' })
      ).expect(200);
      assert.equal(refused.body.code, 'license_suspended');
    }
    assert.equal(await server.service.modules.timelineJournal.flush(), true);
    await page.getByRole('button', { name: 'Reinstate' }).click();
    await status(page).filter({ hasText: 'License reinstated' }).waitFor();
    assert.equal((await server.api.get(licensePath, { token: key })).body.status, 'active');
    const timeline = page.getByRole('table', { name: 'Timeline' });
    await timeline.getByRole('row', { name: /Reinstated/ }).waitFor();
    await page.getByLabel('Only failures').check();
    const failure = timeline.getByRole('row', { name: /refused license_suspended/ });
    await failure.waitFor();
    assert.match((await failure.textContent()) ?? '', /laptop-1/);
    assert.match((await failure.textContent()) ?? '', /refused license_suspended, 2 times/);
    assert.equal(await timeline.getByRole('row').count(), 2, 'a header and the one (repeated) failure');
    await page.getByLabel('Only failures').uncheck();
    await timeline.getByRole('row', { name: /Reinstated/ }).waitFor();
    await page
      .getByRole('table', { name: 'Devices' })
      .getByRole('row', { name: /laptop-1/ })
      .waitFor();
    await screenshot(page, 'dashboard-license');
    await page.getByRole('button', { name: 'Remove device laptop-1' }).click();
    await page
      .getByRole('dialog', { name: /Remove the device/ })
      .getByRole('button', { name: 'Remove device' })
      .click();
    await page.getByText('No device has activated this license.').waitFor();
    assert.equal((await server.api.get(`${licensePath}/devices`, { token: key })).body.total, 0);

    // A webhook: its secret shown once, a test event, its log, a redelivery.
    await menu(page, 'Webhooks').click();
    await heading(page, 'Webhooks').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    const endpoint = `${receiver.url}/dashboard-${uniqueSuffix()}`;
    const add = form(page, 'Add a webhook');
    await add.getByLabel('Endpoint URL').fill(endpoint);
    await add.getByLabel('license.revoked').check();
    await add.getByLabel('App', { exact: true }).selectOption({ label: 'Photo Tool' });
    await add.getByRole('button', { name: 'Add webhook' }).click();
    const secretDialog = page.getByRole('dialog', { name: 'Webhook signing secret' });
    const secret = await secretDialog.getByLabel('Signing secret').inputValue();
    await secretDialog.getByRole('button', { name: 'Done' }).click();
    await heading(page, 'Webhook').waitFor();
    await page.getByText('Nothing delivered yet.', { exact: false }).waitFor();

    const before = receiver.requests.length;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await status(page).filter({ hasText: 'Test event: delivered, the endpoint answered 200' }).waitFor();
    const delivered = receiver.requests.slice(before);
    assert.equal(delivered.length, 1);
    const envelope = verifyWebhook({
      secret,
      body: delivered[0]?.body ?? '',
      signature: delivered[0]?.headers['x-webhook-signature'] as string,
      timestamp: delivered[0]?.headers['x-webhook-timestamp'] as string,
    });
    assert.equal(envelope.type, 'webhook.test');
    const log = page.getByRole('table', { name: 'Delivery attempts, newest first' });
    await log.getByRole('row', { name: /webhook\.test/ }).waitFor();
    assert.match(
      (await log.getByRole('row').nth(1).textContent()) ?? '',
      /webhook\.test.*test.*success.*200/,
    );
    await log.getByText('Response body').first().click();
    await log.getByText('ok', { exact: true }).first().waitFor();
    await screenshot(page, 'dashboard-webhook');

    await log
      .getByRole('button', { name: /^Redeliver/ })
      .first()
      .click();
    await status(page).filter({ hasText: 'Redelivery: delivered, the endpoint answered 200' }).waitFor();
    await log.getByRole('row').nth(2).waitFor();
    assert.match(
      (await log.getByRole('row').nth(1).textContent()) ?? '',
      /webhook\.test.*manual.*success.*200/,
    );
    assert.equal(receiver.requests.length, before + 2);

    assertClean(seen);
  });

  test('orders, subscriptions and disputes show a sandbox purchase, and a subscription can be canceled', async (t) => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token, 'Shop App');
    const merchantPath = `/merchant-${uniqueSuffix()}`;
    const products: { id: string }[] = [];
    const buy = async (body: Record<string, unknown>, email: string) => {
      const product = (
        await server.api.post(
          '/products',
          { appId: app.id, currency: 'USD', ...body },
          { token: seller.token },
        )
      ).expect(201).body;
      products.push(product);
      await buyWithSandbox(server, product.id, email);
    };
    await buy({ name: 'Desk Lamp', price: 19.99 }, 'lamp@example.com');
    await buy(
      {
        name: 'Lamp Club',
        price: 5,
        billingType: 'recurring',
        interval: 'month',
        partnerPriceIdRecurring: 'price_monthly',
        merchantWebhookUrl: `${receiver.url}${merchantPath}`,
      },
      'club@example.com',
    );

    const seen = await openDashboard(t);
    const { page } = seen;
    await signIn(page, seller.user.email);

    await menu(page, 'Orders').click();
    await heading(page, 'Orders').waitFor();
    const lampOrder = page.getByRole('row', { name: /lamp@example\.com/ });
    await lampOrder.filter({ hasText: 'Desk Lamp' }).waitFor();
    assert.match((await lampOrder.textContent()) ?? '', /Desk Lamp.*\$19\.99.*paid/);
    await screenshot(page, 'dashboard-orders');
    await lampOrder.getByRole('link').click();
    await heading(page, 'Order').waitFor();
    await page.getByRole('link', { name: 'Desk Lamp' }).waitFor();
    assert.match((await page.locator('dl').textContent()) ?? '', /lamp@example\.com.*Desk Lamp/);

    await menu(page, 'Subscriptions').click();
    await heading(page, 'Subscriptions').waitFor();
    const subscription = page.getByRole('row', { name: /club@example\.com/ });
    await subscription.filter({ hasText: 'Lamp Club' }).waitFor();
    assert.match((await subscription.textContent()) ?? '', /Lamp Club.*active/);
    await subscription.getByRole('button', { name: 'Cancel subscription of club@example.com' }).click();
    const cancelDialog = page.getByRole('dialog', { name: /Cancel the subscription/ });
    await cancelDialog.waitFor();
    assert.ok(
      await focused(cancelDialog.getByRole('button', { name: 'Cancel', exact: true })),
      'the safe choice has focus',
    );
    await cancelDialog.getByRole('button', { name: 'Cancel subscription' }).click();
    await status(page).filter({ hasText: 'Subscription of club@example.com canceled' }).waitFor();
    await subscription.filter({ hasText: 'canceled' }).waitFor();
    const listed = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body;
    assert.equal(listed.subscriptions[0].status, 'canceled');
    await screenshot(page, 'dashboard-subscriptions');

    // The club's merchant webhook deliveries: the purchase and the cancel, with a redelivery.
    await server.service.modules.deliveryWorker.runOnce();
    const merchant = () => receiver.requests.filter((r) => r.path === merchantPath);
    assert.deepEqual(
      merchant()
        .map((r) => r.json.type)
        .sort(),
      ['payment.succeeded', 'subscription.canceled', 'subscription.created'],
    );
    await page.goto(`${dashboardUrl()}#/products/${products[1]?.id}`);
    await heading(page, 'Product: Lamp Club').waitFor();
    const deliveries = page.getByRole('table', { name: /Delivery attempts/ });
    const canceled = deliveries.getByRole('row', { name: /subscription\.canceled/ });
    await canceled.waitFor();
    assert.match((await canceled.textContent()) ?? '', /subscription\.canceled.*auto.*success.*200/);
    await canceled.getByRole('button', { name: /Redeliver/ }).click();
    await status(page).filter({ hasText: 'Redelivery: delivered, the endpoint answered 200' }).waitFor();
    assert.equal(merchant().length, 4);
    assert.equal(merchant()[3]?.json.type, 'subscription.canceled');
    await screenshot(page, 'dashboard-merchant-deliveries');

    await menu(page, 'Disputes').click();
    await heading(page, 'Disputes').waitFor();
    await page.getByText('No disputes', { exact: true }).waitFor();
    await screenshot(page, 'dashboard-disputes');

    assertClean(seen);
  });

  test('license and order lists sort by their column headings, keep filters in the URL and export them', async (t) => {
    const seller = await signUp(server);
    const first = await createApp(server, seller.token, 'Photo Tool');
    const second = await createApp(server, seller.token, 'Video Tool');
    const issue = async (appId: string, email: string, createdAt: string) => {
      const license = (
        await server.api.post(`/apps/${appId}/licenses`, { email }, { token: seller.token })
      ).expect(201).body;
      await server.db
        .updateTable('licenses')
        .set({ created_at: new Date(createdAt) })
        .where('id', '=', license.id)
        .execute();
      return license;
    };
    await issue(first.id, 'Ann.Lee@Example.org', '2025-01-01T00:00:00Z');
    await issue(second.id, 'bob@example.com', '2025-02-01T00:00:00Z');
    await issue(first.id, 'cy@example.net', '2025-03-01T00:00:00Z');

    const seen = await openDashboard(t);
    const { page } = seen;
    await signIn(page, seller.user.email);
    await menu(page, 'Licenses').click();
    await heading(page, 'Licenses').waitFor();
    const table = page.getByRole('table', { name: 'Licenses' });
    const emails = async () => (await table.locator('tbody tr td:nth-child(2)').allTextContents()).join(' ');
    const sortButton = (name: string) => table.getByRole('columnheader', { name }).getByRole('button');
    /** Waits until the column is sorted `direction` and the rows for that sort are shown. */
    const sortedBy = async (list: Locator, name: string, direction: 'ascending' | 'descending') => {
      await list
        .getByRole('columnheader', { name })
        .and(page.locator(`[aria-sort="${direction}"]`))
        .waitFor();
      await list.and(page.locator('[aria-busy="false"]')).waitFor();
    };
    await page.getByText('3 licenses.').waitFor();
    // Across both apps, newest first.
    assert.equal(await emails(), 'cy@example.net bob@example.com Ann.Lee@Example.org');
    assert.equal(
      await table.getByRole('columnheader', { name: 'Created' }).getAttribute('aria-sort'),
      'descending',
    );
    assert.match((await table.getByRole('row').nth(1).textContent()) ?? '', /Photo Tool.*Never/);

    await sortButton('Created').click();
    await page.waitForURL(/#\/licenses\?sort=createdAt$/);
    await sortedBy(table, 'Created', 'ascending');
    assert.equal(await emails(), 'Ann.Lee@Example.org bob@example.com cy@example.net');
    await sortButton('E-mail').click();
    await page.waitForURL(/sort=email$/);
    await sortButton('E-mail').click();
    await page.waitForURL(/sort=-email$/);
    await sortedBy(table, 'E-mail', 'descending');
    assert.equal(await emails(), 'cy@example.net bob@example.com Ann.Lee@Example.org');
    await page.goBack();
    await page.waitForURL(/sort=email$/);
    await sortedBy(table, 'E-mail', 'ascending');
    assert.equal(await emails(), 'Ann.Lee@Example.org bob@example.com cy@example.net');

    // Part of an address, in another case.
    const search = form(page, 'Search licenses');
    await search.getByLabel('Buyer e-mail').fill('EXAMPLE.ORG');
    await search.getByLabel('Buyer e-mail').press('Enter');
    await page.getByText('1 license found.').waitFor();
    await page.waitForURL(/email=EXAMPLE\.ORG/);
    assert.equal(await emails(), 'Ann.Lee@Example.org');
    const exportLink = page.getByRole('link', { name: 'Export CSV' });
    assert.equal(
      await exportLink.getAttribute('href'),
      '/v1/licenses/export.csv?email=EXAMPLE.ORG&sort=email',
    );
    await screenshot(page, 'dashboard-licenses-sorted');

    // A reload (or the link shared) shows the same search.
    await page.reload();
    await page.getByText('1 license found.').waitFor();
    assert.equal(await form(page, 'Search licenses').getByLabel('Buyer e-mail').inputValue(), 'EXAMPLE.ORG');
    assert.equal(await emails(), 'Ann.Lee@Example.org');
    await sortedBy(table, 'E-mail', 'ascending');
    const [download] = await Promise.all([page.waitForEvent('download'), exportLink.click()]);
    assert.equal(download.suggestedFilename(), 'licenses.csv');
    const csv = await new Promise<string>((resolve, reject) => {
      download.createReadStream().then((stream) => {
        let text = '';
        stream.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      }, reject);
    });
    assert.equal(csv.split('\r\n').filter(Boolean).length, 2, 'the header and Ann’s license');
    assert.match(csv, /Ann\.Lee@Example\.org/);

    // Orders: the same, by amount.
    const product = (
      await server.api.post(
        '/products',
        { appId: first.id, name: 'Lens Pack', price: 12, currency: 'USD' },
        { token: seller.token },
      )
    ).expect(201).body;
    const small = (await buyWithSandbox(server, product.id, 'Small.Buyer@Example.org')).intent.orderId;
    const big = (await buyWithSandbox(server, product.id, 'big@example.com')).intent.orderId;
    await server.db.updateTable('orders').set({ amount: '99.0000' }).where('id', '=', big).execute();
    await server.db
      .updateTable('orders')
      .set({ created_at: new Date('2025-05-01T00:00:00Z') })
      .where('id', '=', small)
      .execute();
    await menu(page, 'Orders').click();
    await heading(page, 'Orders').waitFor();
    const orders = page.getByRole('table', { name: 'Orders' });
    const buyers = async () => (await orders.locator('tbody tr td:nth-child(2)').allTextContents()).join(' ');
    await orders.getByRole('row', { name: /big@example\.com/ }).waitFor();
    assert.equal(await buyers(), 'big@example.com Small.Buyer@Example.org', 'newest first');
    await orders.getByRole('columnheader', { name: 'Amount' }).getByRole('button').click();
    await page.waitForURL(/#\/orders\?sort=-amount$/);
    await sortedBy(orders, 'Amount', 'descending');
    assert.equal(await buyers(), 'big@example.com Small.Buyer@Example.org');
    await orders.getByRole('columnheader', { name: 'Amount' }).getByRole('button').click();
    await page.waitForURL(/sort=amount$/);
    await sortedBy(orders, 'Amount', 'ascending');
    assert.equal(await buyers(), 'Small.Buyer@Example.org big@example.com');
    const orderSearch = form(page, 'Search orders');
    await orderSearch.getByLabel('Buyer e-mail').fill('buyer@EXAMPLE');
    await orderSearch.getByLabel('Buyer e-mail').press('Enter');
    await page.getByText('1 order found.').waitFor();
    await page.reload();
    await page.getByText('1 order found.').waitFor();
    assert.equal(await buyers(), 'Small.Buyer@Example.org');
    assert.equal(
      await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href'),
      '/v1/orders/export.csv?email=buyer%40EXAMPLE&sort=amount',
    );
    await screenshot(page, 'dashboard-orders-sorted');

    assertClean(seen);
  });

  test('an admin sees the analytics with charts and their data and manages accounts; a seller gets no admin area', async (t) => {
    const seller = await signUp(server);
    const sellerTab = await openDashboard(t);
    await signIn(sellerTab.page, seller.user.email);
    assert.equal(await menu(sellerTab.page, 'Analytics').count(), 0);
    assert.equal(await menu(sellerTab.page, 'Accounts').count(), 0);
    await sellerTab.page.goto(`${dashboardUrl()}#/admin/analytics`);
    await heading(sellerTab.page, 'Page not found').waitFor();
    await sellerTab.page.goto(`${dashboardUrl()}#/admin/accounts`);
    await heading(sellerTab.page, 'Page not found').waitFor();
    // A crafted link cannot steer a screen's API calls to another path.
    await sellerTab.page.goto(`${dashboardUrl()}#/apps/x/licenses/..%2F..%2F..%2Fproducts`);
    await heading(sellerTab.page, 'Page not found').waitFor();
    assertClean(sellerTab);

    const admin: Seller = await signUp(server, { role: 'ADMIN' });
    const seen = await openDashboard(t);
    const { page } = seen;
    await signIn(page, admin.user.email);
    await menu(page, 'Analytics').click();
    await heading(page, 'Analytics').waitFor();
    const users = page.getByRole('listitem').filter({ hasText: /^Users/ });
    await users.waitFor();
    const stats = (await server.api.get('/analytics/stats', { token: admin.token })).expect(200).body;
    assert.ok(stats.users.total >= 2);
    // The cards show the figures the API answers (a few, so no thousands separators).
    assert.equal(await users.locator('.card-value').textContent(), String(stats.users.total));
    const licensesCard = page.getByRole('listitem').filter({ hasText: /^Licenses\s*\d/ });
    assert.equal(await licensesCard.locator('.card-value').textContent(), String(stats.licenses.total));
    assert.match(
      (await licensesCard.locator('.muted').textContent()) ?? '',
      new RegExp(`^${stats.licenses.byStatus.active} active`),
    );

    const licensesChart = page.getByRole('img', { name: /^Licenses/ });
    await licensesChart.waitFor();
    await page.getByRole('img', { name: /^Active licenses/ }).waitFor();
    assert.ok(
      (await page.getByRole('img').count()) >= 4,
      'licenses, active licenses, new users and users in total at least',
    );
    await page.getByText('Show the data of “New users” as a table').click();
    const usersTable = page.getByRole('table', { name: 'New users' });
    await usersTable.waitFor();
    // 30 days of days: one row per day, with the header.
    assert.equal(await usersTable.getByRole('row').count(), 31);
    await screenshot(page, 'dashboard-analytics');

    const range = form(page, 'Range of the charts');
    await range.getByLabel('Interval').selectOption('month');
    await range.getByRole('button', { name: 'Show' }).click();
    await usersTable.getByRole('row').nth(3).waitFor({ state: 'detached' });
    assert.ok((await usersTable.getByRole('row').count()) <= 3, 'one or two months');

    // Accounts: find the seller by a part of the e-mail and raise their plan tier.
    await menu(page, 'Accounts').click();
    await heading(page, 'Accounts').waitFor();
    const search = form(page, 'Search accounts');
    const find = async (email: string, found: string) => {
      await search.getByLabel('E-mail contains').fill(email);
      await search.getByLabel('E-mail contains').press('Enter');
      await page.getByText(found, { exact: true }).waitFor();
    };
    await find(seller.user.email.split('@')[0] ?? '', '1 account found.');
    const sellerRow = page
      .getByRole('table', { name: 'Accounts' })
      .getByRole('row', { name: seller.user.email });
    assert.match((await sellerRow.textContent()) ?? '', /Test Seller.*Seller.*free/);
    await sellerRow.getByRole('button', { name: `Manage account of ${seller.user.email}` }).click();
    const panel = page.getByRole('region', { name: `Account: ${seller.user.email}` });
    await panel.waitFor();
    await panel.getByLabel('Plan tier', { exact: true }).selectOption('business');
    await panel.getByRole('button', { name: 'Save tier' }).click();
    await status(page)
      .filter({ hasText: `Plan tier of ${seller.user.email} set to business` })
      .waitFor();
    await sellerRow.filter({ hasText: 'business' }).waitFor();
    const sellerMe = (await server.api.get('/auth/me', { token: seller.token })).expect(200).body;
    assert.equal(sellerMe.user.tier, 'business');
    await search.getByLabel('Plan tier').selectOption('business');
    await search.getByRole('button', { name: 'Search', exact: true }).click();
    await sellerRow.waitFor();
    assert.equal(await page.getByText('1 account found.', { exact: true }).count(), 1);
    await screenshot(page, 'dashboard-accounts');

    // A role change asks first, and starts on Cancel.
    await panel.getByRole('button', { name: 'Make administrator' }).click();
    const promote = page.getByRole('dialog', { name: `Make ${seller.user.email} an administrator?` });
    await promote.waitFor();
    assert.ok(await focused(promote.getByRole('button', { name: 'Cancel', exact: true })));
    await promote.getByRole('button', { name: 'Make administrator' }).click();
    await status(page)
      .filter({ hasText: `${seller.user.email} is now an administrator` })
      .waitFor();
    assert.equal((await server.api.get('/auth/me', { token: seller.token })).body.user.role, 'ADMIN');
    await panel.getByRole('button', { name: 'Remove admin role' }).click();
    await page
      .getByRole('dialog', { name: `Remove the admin role of ${seller.user.email}?` })
      .getByRole('button', { name: 'Remove admin role' })
      .click();
    await status(page)
      .filter({ hasText: `${seller.user.email} is now a seller` })
      .waitFor();
    assert.equal((await server.api.get('/auth/me', { token: seller.token })).body.user.role, 'SELLER');

    // Closing another account: its session stops working, and it leaves the list.
    const leaving = await signUp(server);
    await search.getByRole('button', { name: 'Clear search' }).click();
    await find(leaving.user.email, '1 account found.');
    await page.getByRole('button', { name: `Manage account of ${leaving.user.email}` }).click();
    const leavingPanel = page.getByRole('region', { name: `Account: ${leaving.user.email}` });
    await leavingPanel.getByRole('button', { name: 'Close account' }).click();
    const closeDialog = page.getByRole('dialog', { name: `Close the account of ${leaving.user.email}?` });
    assert.match(
      (await closeDialog.textContent()) ?? '',
      /sessions and API keys stop working.*can no longer sign in.*records.*stay/,
    );
    await closeDialog.getByRole('button', { name: 'Close account' }).click();
    await status(page)
      .filter({ hasText: `Account of ${leaving.user.email} closed` })
      .waitFor();
    await page.getByText('No account matches this search.').waitFor();
    await leavingPanel.waitFor({ state: 'detached' });
    (await server.api.get('/auth/me', { token: leaving.token })).expect(401);

    // The admin's own account offers neither demotion nor closing.
    await find(admin.user.email, '1 account found.');
    const ownRow = page.getByRole('row', { name: admin.user.email });
    assert.match((await ownRow.textContent()) ?? '', /\(you\).*Administrator/);
    await ownRow.getByRole('button', { name: /^Manage/ }).click();
    const ownPanel = page.getByRole('region', { name: `Account: ${admin.user.email}` });
    await ownPanel.getByText('This is your own account', { exact: false }).waitFor();
    assert.equal(await ownPanel.getByRole('button', { name: 'Remove admin role' }).count(), 0);
    assert.equal(await ownPanel.getByRole('button', { name: 'Close account' }).count(), 0);
    assertClean(seen);
  });

  test('the sign-in form works with the keyboard alone and shows a refused sign-in next to it', async (t) => {
    const seller = await signUp(server);
    const seen = await openDashboard(t);
    const { page } = seen;
    await heading(page, 'Sign in').waitFor();

    await page.keyboard.press('Tab');
    assert.ok(
      await focused(page.getByRole('button', { name: 'Skip to main content' })),
      'the skip link comes first',
    );
    await page.keyboard.press('Tab');
    assert.ok(await focused(page.getByLabel('Theme')), 'then the colour scheme in the top bar');
    await page.keyboard.press('Tab');
    assert.ok(await focused(page.getByLabel('E-mail')), 'then the e-mail');
    await page.keyboard.type(seller.user.email);
    await page.keyboard.press('Tab');
    assert.ok(await focused(page.getByLabel('Password')), 'then the password');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    const refused = form(page, 'Sign in').getByRole('alert');
    await refused.waitFor();
    assert.match((await refused.textContent()) ?? '', /E-mail or password is incorrect/);
    await screenshot(page, 'dashboard-sign-in-refused');

    await page.getByLabel('Password').fill('');
    await page.getByLabel('Password').focus();
    await page.keyboard.type(TEST_PASSWORD);
    await page.keyboard.press('Enter');
    await heading(page, 'Overview').waitFor();
    // After moving to a screen, focus is on its heading, and the skip link leads past the menu.
    assert.ok(await focused(heading(page, 'Overview')));
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    assert.ok(
      await page
        .getByRole('navigation', { name: 'Dashboard' })
        .evaluate((nav) => nav.matches(':focus-within')),
      'the menu comes before the screen',
    );
    assertClean(seen);
  });
});
