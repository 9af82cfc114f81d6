import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  contrastProblems,
  launchBrowser,
  looksDark,
  openWatchedPage,
  screenshot,
  sidewaysOverflow,
  type TestBrowser,
  type WatchedPage,
} from '../../testing/browser.js';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { buyWithSandbox, createMonthlyProduct } from '../../testing/purchases.js';
import { type SmtpSink, startSmtpSink } from '../../testing/smtp-sink.js';

/**
 * The checkout host's pages as buyers see them, in headless Chromium: the checkout page, a
 * declined card, the receipt, a started trial and the buyer portal, each at a 375 px phone and
 * at 1280 px, in the light and the dark colour scheme (the buyer's system setting). None scrolls
 * sideways, every text passes axe-core's contrast check, and the pages load without a console
 * error: the icon both hosts serve answers where the pages and browsers look for it.
 */
const WIDTHS = [375, 1280] as const;
const SCHEMES = ['light', 'dark'] as const;
const DECLINED_CARD = '4000 0000 0000 0002';
const GOOD_CARD = '4242 4242 4242 4242';

let server: TestServer;
let sink: SmtpSink;
let browser: TestBrowser;
let seller: SellerWithApp;
let product: { id: string; name: string };

before(async () => {
  sink = await startSmtpSink();
  // Runs the mail worker (portal sign-in links), so it owns its database.
  server = await startTestServer({ SMTP_URL: sink.url }, { ownDatabase: true });
  browser = await launchBrowser();
  seller = await sellerWithApp(server);
  product = (
    await server.api.post(
      '/products',
      {
        appId: seller.appId,
        name: 'Studio Suite',
        description: 'Edit photos and video on up to three computers.',
        price: 49,
        currency: 'USD',
        trialDays: 14,
        cancelUrl: 'https://shop.example.com/cart',
        termsUrl: 'https://shop.example.com/terms',
        privacyUrl: 'https://shop.example.com/privacy',
      },
      { token: seller.token },
    )
  ).expect(201).body;
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await sink?.close();
});

/** Console errors since the last page was opened (a failed load of the icon is one). */
type Tab = WatchedPage;
const openTab = (t: TestContext): Promise<Tab> => openWatchedPage(browser, t);

/** The page open now, at both widths in both schemes; `shot` saves each as <shot>-<scheme>-<width>. */
async function judge(page: Page, what: string, shot?: string) {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const colorScheme of SCHEMES) {
      await page.emulateMedia({ colorScheme });
      const where = `${what} at ${width} px, ${colorScheme}`;
      assert.equal(await looksDark(page), colorScheme === 'dark', `${where}: drawn ${colorScheme}`);
      assert.equal(await sidewaysOverflow(page), 0, `${where} scrolls sideways`);
      assert.deepEqual(await contrastProblems(page), [], `${where}: text below AA contrast`);
      if (shot) await screenshot(page, `${shot}-${colorScheme}-${width}`);
    }
  }
}

const h1 = async (page: Page) => (await page.getByRole('heading', { level: 1 }).textContent())?.trim();

/** The sign-in link of the last mail to `email`. */
async function linkFromMail(email: string): Promise<string> {
  await server.service.modules.notificationWorker.runOnce();
  const raw = sink.messages
    .filter((m) => m.to.includes(email))
    .at(-1)
    ?.raw.replace(/=\r\n/g, '');
  const path = /\/portal\/sign-in\/[A-Za-z0-9_-]{43}/.exec(raw ?? '')?.[0];
  assert.ok(path, 'the mail carries a sign-in link');
  return `${server.service.payUrl}${path}`;
}

describe('the checkout host’s pages on a phone and a desktop, light and dark', () => {
  test('both hosts serve the icon the pages link, cached for long, and a checkout page loads without a console error', async (t) => {
    const { page, errors } = await openTab(t);
    for (const origin of [server.service.coreUrl, server.service.payUrl]) {
      for (const path of ['/favicon.svg', '/favicon.ico']) {
        const answer = await page.request.get(`${origin}${path}`);
        assert.equal(answer.status(), 200, `${origin}${path}`);
        assert.equal(answer.headers()['content-type'], 'image/svg+xml');
        assert.equal(answer.headers()['x-content-type-options'], 'nosniff');
        const maxAge = Number(/max-age=(\d+)/.exec(answer.headers()['cache-control'] ?? '')?.[1]);
        assert.ok(maxAge >= 7 * 86_400, `cached for a week at least (${answer.headers()['cache-control']})`);
        assert.match(await answer.text(), /^<svg [^>]*viewBox="0 0 32 32">/);
      }
    }

    const icons: { url: string; status: number }[] = [];
    page.on('response', (response) => {
      if (/\/favicon\.(svg|ico)$/.test(response.url()))
        icons.push({ url: response.url(), status: response.status() });
    });
    const opened = await page.goto(`${server.service.payUrl}/checkout/${product.id}`);
    assert.equal(opened?.status(), 200);
    assert.equal(await h1(page), product.name);
    assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), '/favicon.svg');
    await page.waitForLoadState('networkidle');
    assert.ok(
      icons.some((icon) => icon.url === `${server.service.payUrl}/favicon.svg` && icon.status === 200),
      `the browser loaded the icon: ${JSON.stringify(icons)}`,
    );
    assert.deepEqual(errors, [], 'no console error (a missing icon or a blocked resource shows here)');
  });

  test('the checkout page, a declined card, the receipt and a started trial pass the contrast check and fit a phone', async (t) => {
    const { page, errors } = await openTab(t);
    await page.goto(`${server.service.payUrl}/checkout/${product.id}`);
    assert.equal(await h1(page), product.name);
    await page.getByLabel('E-mail', { exact: true }).fill('buyer@example.com');
    await judge(page, 'the checkout page', 'checkout');

    await page.getByLabel('Card number').fill(DECLINED_CARD);
    const [declined] = await Promise.all([
      page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().endsWith(`/checkout/${product.id}`),
      ),
      page.getByRole('button', { name: /^Pay / }).click(),
    ]);
    assert.equal(declined.status(), 402);
    await page.locator('#form-error').waitFor();
    await judge(page, 'a declined card');

    errors.length = 0;
    await page.getByLabel('Card number').fill(GOOD_CARD);
    await Promise.all([
      page.waitForURL(`**/checkout/${product.id}/complete?**`),
      page.getByRole('button', { name: /^Pay / }).click(),
    ]);
    assert.equal(await h1(page), 'Payment complete');
    await judge(page, 'the receipt', 'checkout-receipt');
    await page.setViewportSize({ width: 360, height: 800 });
    assert.ok(
      await page.getByLabel('Your license key').evaluate((field) => field.scrollWidth <= field.clientWidth),
      'the whole key shows in its field on a 360 px phone',
    );

    await page.goto(`${server.service.payUrl}/checkout/${product.id}?hwuid=${'studio-pc-'.repeat(6)}`);
    await page.getByLabel('E-mail for your trial key').fill(`trial-${uniqueSuffix()}@example.com`);
    await Promise.all([
      page.waitForURL(`**/checkout/${product.id}/trial`),
      page.getByRole('button', { name: 'Start your 14-day free trial' }).click(),
    ]);
    assert.equal(await h1(page), 'Your free trial has started');
    await judge(page, 'a started trial');
    assert.deepEqual(errors, [], 'no console error');
  });

  test('the buyer portal’s pages pass the contrast check and fit a phone, signed out and signed in', async (t) => {
    const email = `buyer-${uniqueSuffix()}@example.com`;
    await buyWithSandbox(server, product.id, email);
    const monthly = await createMonthlyProduct(server, seller.appId, seller.token, { name: 'Studio Cloud' });
    await buyWithSandbox(server, monthly.id, email);
    const license = await issueLicense(server, seller, { email, maxDevices: 3 });
    for (const hwuid of ['travel-laptop', `workstation-${'a1b2c3d4'.repeat(8)}`])
      (await server.api.post('/licenses/verify', { key: license.key, hwuid })).expect(200);

    const { page, errors } = await openTab(t);
    await page.goto(`${server.service.payUrl}/portal`);
    await judge(page, 'the portal’s sign-in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.locator('#link-sent').waitFor();
    await judge(page, 'the link sent');

    const link = await linkFromMail(email);
    await page.goto(link);
    await judge(page, 'the sign-in button');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.license-item').first().waitFor();
    assert.equal(await page.locator('.license-item').count(), 3, 'two purchases and the issued license');
    await judge(page, 'the buyer’s purchases', 'portal');
    // A key breaks only between its groups: one line on a desktop, two at most on a phone.
    const keys = page.locator('code.license-key');
    const limits = [
      [1280, 1],
      [375, 2],
    ] as const;
    for (const [width, most] of limits) {
      await page.setViewportSize({ width, height: 900 });
      for (const key of await keys.all()) {
        const lines = await key.evaluate((element) => element.getClientRects().length);
        assert.ok(lines <= most, `${await key.textContent()} on ${lines} lines at ${width} px`);
      }
    }
    assert.deepEqual(errors, [], 'no console error');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#sign-in-form').waitFor();
    await page.goto(link);
    assert.equal(await h1(page), 'This link no longer works');
    await judge(page, 'a used link');
  });
});
