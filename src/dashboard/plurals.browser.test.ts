import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../testing/browser.js';
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
import { type Receiver, startReceiver } from '../testing/receiver.js';
import { testClock } from '../testing/test-clock.js';

/**
 * Counted words on the dashboard's screens, in headless Chromium: a seller with one of each
 * thing (a paid order, a device, a failed delivery, a license, a day) reads the singular, a seller
 * with two of each the plural, and the admin's totals say "1 admin" and then "2 admins". Every
 * screen's text, chart descriptions included, is scanned for a "1" followed by a plural noun.
 */
let server: TestServer;
let browser: TestBrowser;
let receiver: Receiver;

interface Estate {
  seller: Seller;
  productId: string;
  webhookId: string;
  orderEmail: string;
}
let one: Estate;
let two: Estate;

/** Nouns the dashboard counts, in the plural; "1 " before any of them is a mistake. */
const PLURALS =
  'orders|paid orders|admins|devices|users|licenses|failures|deliveries|failed deliveries|points|days|uses|minutes|accounts|keys|products|apps|webhooks|subscriptions|disputes|verifications|activations';
const ONE_WITH_PLURAL = new RegExp(`(?<![\\d.,])1 (${PLURALS})\\b`);

/**
 * A seller with `count` of each thing: sales in USD (one more in EUR for the first), licenses
 * activated on devices, a product whose policy counts devices, days and uses, and a webhook whose
 * deliveries fail.
 */
async function estate(count: 1 | 2): Promise<Estate> {
  const seller = await signUp(server, { tier: 'business' });
  const token = { token: seller.token };
  const appId = (await createApp(server, seller.token, `Tool ${count}`)).id;
  const productId = (
    await server.api.post(
      '/products',
      {
        appId,
        name: `Tool ${count} Pro`,
        price: 10,
        currency: 'USD',
        licensePolicy: {
          model: 'node_locked',
          maxDevices: count,
          validityDays: count,
          checkInDays: count,
          graceDays: count,
          maxUses: count,
        },
      },
      token,
    )
  ).expect(201).body.id as string;
  const orderEmail = `buyer-${count}@example.com`;
  for (let index = 0; index < count; index++) await buyWithSandbox(server, productId, orderEmail);
  if (count === 1) {
    // Only the first seller sells in EUR: the admin's EUR revenue is one paid order. Bought before
    // the webhook exists, so its license makes no delivery of the one this estate counts.
    const eur = (
      await server.api.post('/products', { appId, name: 'Euro', price: 5, currency: 'EUR' }, token)
    ).expect(201).body.id as string;
    await buyWithSandbox(server, eur);
  }
  receiver.answer({ status: 500, body: 'down' });
  const webhookId = (
    await server.api.post(
      '/webhooks',
      // license.updated: only the changes below make one, whatever the purchases' events do.
      { url: `${receiver.url}/down-${count}`, events: ['license.updated'], appId },
      token,
    )
  ).expect(201).body.id as string;
  for (let index = 0; index < count; index++) {
    const license = await issueLicense(server, { token: seller.token, appId });
    (await server.api.post('/licenses/verify', { key: license.key, hwuid: `device-${index}` })).expect(200);
    (
      await server.api.patch(`/apps/${appId}/licenses/${license.id}`, { metadata: { seat: index } }, token)
    ).expect(200);
  }
  await server.service.modules.deliveryWorker.runOnce();
  return { seller, productId, webhookId, orderEmail };
}

before(async () => {
  // A clock that stands still: a failed delivery's retry (5 s later) never comes due, so each
  // estate's failures are the attempts runOnce made, however slowly the machine runs the file.
  server = await startTestServer({}, { ownDatabase: true, clock: testClock(new Date()) });
  browser = await launchBrowser();
  receiver = await startReceiver();
  one = await estate(1);
  two = await estate(2);
  assert.equal(await server.service.modules.verificationCounts.flush(), true);
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.close();
});

async function signIn(t: TestContext, seller: Seller): Promise<Page> {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${server.service.coreUrl}/dashboard`);
  await page.getByLabel('E-mail').fill(seller.user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  return page;
}

/** What a reader meets on the screen: its visible text, and each chart's description. */
async function screenText(page: Page): Promise<string> {
  await page.getByText('Loading…').first().waitFor({ state: 'detached' });
  const descriptions = await page.locator('svg desc').allTextContents();
  // The rendered text, as read: textContent would run cells together and add hidden ones.
  // biome-ignore lint/performance/useDomNodeTextContent: the visible text is what is checked
  const visible = await page.locator('body').innerText();
  return [visible, ...descriptions].join('\n');
}

/** Opens a screen by its address and returns its text once `ready` shows. */
async function visit(page: Page, hash: string, ready: string): Promise<string> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.getByText(ready).first().waitFor();
  return screenText(page);
}

function assertNoSingularMistake(text: string, where: string) {
  const mistake = text.match(ONE_WITH_PLURAL);
  assert.equal(mistake, null, `${where}: "${mistake?.[0]}" in\n${text}`);
}

function assertSays(text: string, expected: readonly string[], where: string) {
  for (const words of expected)
    assert.ok(text.includes(words), `${where}: "${words}" is missing from\n${text}`);
}

describe('counted words read right with one thing and with two', () => {
  test('a seller with one of each reads the singular on every screen', async (t) => {
    const page = await signIn(t, one.seller);
    const webhook = (await server.api.get(`/webhooks/${one.webhookId}`, { token: one.seller.token })).expect(
      200,
    );
    assert.equal(webhook.body.consecutiveFailures, 1);
    const screens: [string, string, string[]][] = [
      [
        '#/overview',
        'Latest orders',
        ['1 paid order\n', 'from 1 paid order)', 'device bound to a license', '1 failed delivery since'],
      ],
      ['#/overview?from=2020-01-01&to=2020-01-01', 'No sales from', ['the 1 day before', 'Previous 1 day:']],
      [`#/licenses?email=${one.orderEmail}`, 'found', ['1 license found.']],
      [`#/orders?email=${one.orderEmail}`, 'found', ['1 order found.']],
      [`#/webhooks/${one.webhookId}`, 'failure in a row', ['(1 failure in a row)']],
      [
        `#/products/${one.productId}`,
        'Each license sold',
        ['works on up to 1 device', 'for 1 day', 'every 1 day (1 day of grace)', '1 use'],
      ],
    ];
    for (const [hash, ready, expected] of screens) {
      const text = await visit(page, hash, ready);
      assertNoSingularMistake(text, hash);
      assertSays(text, expected, hash);
    }
  });

  test('a seller with two of each reads the plural', async (t) => {
    const page = await signIn(t, two.seller);
    const failures = (await server.api.get(`/webhooks/${two.webhookId}`, { token: two.seller.token })).expect(
      200,
    ).body.consecutiveFailures as number;
    assert.ok(failures >= 2, `${failures} failures`);
    const screens: [string, string, string[]][] = [
      [
        '#/overview',
        'Latest orders',
        [
          '2 paid orders',
          'devices bound to licenses',
          `${failures} failed deliveries since`,
          '30 days before',
        ],
      ],
      [`#/licenses?email=${two.orderEmail}`, 'found', ['2 licenses found.']],
      [`#/orders?email=${two.orderEmail}`, 'found', ['2 orders found.']],
      [`#/webhooks/${two.webhookId}`, 'failures in a row', [`(${failures} failures in a row)`]],
      [
        `#/products/${two.productId}`,
        'Each license sold',
        ['works on up to 2 devices', 'for 2 days', 'every 2 days (2 days of grace)', '2 uses'],
      ],
    ];
    for (const [hash, ready, expected] of screens) {
      const text = await visit(page, hash, ready);
      assertNoSingularMistake(text, hash);
      assertSays(text, expected, hash);
    }
  });

  test('the admin’s totals count one admin, then two, and each currency’s paid orders', async (t) => {
    const adminToken = await server.adminToken();
    const admins = async () =>
      (await server.api.get('/analytics/stats', { token: adminToken })).expect(200).body.users.byRole
        .ADMIN as number;
    assert.equal(await admins(), 1, 'the configured administrator alone');
    const email = server.config.adminEmail ?? '';
    const page = await signIn(t, { token: adminToken, user: { id: '', email, role: 'ADMIN', tier: 'free' } });
    let text = await visit(page, '#/admin/analytics', 'Revenue in EUR');
    assertNoSingularMistake(text, 'analytics');
    // Three USD sales (one seller's one, the other's two), one EUR sale.
    assertSays(text, ['1 admin ·', '3 paid orders', '1 paid order\n', 'from 1 paid order)'], 'analytics');

    (
      await server.api.patch(`/admin/users/${two.seller.user.id}`, { role: 'ADMIN' }, { token: adminToken })
    ).expect(200);
    assert.equal(await admins(), 2);
    await page.reload();
    text = await visit(page, '#/admin/analytics', 'Revenue in EUR');
    assertNoSingularMistake(text, 'analytics');
    assertSays(text, ['2 admins ·'], 'analytics');
  });
});
