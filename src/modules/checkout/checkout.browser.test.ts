import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import {
  CheckoutClient,
  sealMirrorPayload,
  verifyMerchantWebhook,
  verifyMirrorRedirect,
} from '../../../packages/client/src/index.js';
import { launchBrowser, screenshot, type TestBrowser } from '../../testing/browser.js';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';

/**
 * The hosted checkout in headless Chromium: a buyer's page against the real checkout host (sandbox
 * card partner), a loopback receiver standing in for the seller's site and merchant webhook.
 */
let server: TestServer;
let browser: TestBrowser;
let shop: Receiver;

before(async () => {
  // This file runs the webhook delivery worker, so its rows must not be shared with other files.
  server = await startTestServer({}, { ownDatabase: true });
  browser = await launchBrowser();
  shop = await startReceiver();
});
after(async () => {
  await browser?.close();
  await shop?.close();
  await server?.stop();
});

const GOOD_CARD = '4242 4242 4242 4242';
const DECLINED_CARD = '4000 0000 0000 0002';
const LICENSE_KEY = /^[0-9A-Z]{5}(-[0-9A-Z]{5}){5}$/;

const payUrl = () => server.service.payUrl;

interface ShopProduct {
  id: string;
  name: string;
  successUrl: string;
  termsUrl: string;
  callbackSecret: string;
  /** Where its merchant webhooks arrive, as the receiver records the path. */
  webhookPath: string;
}

/** A product whose successUrl, terms and merchant webhook all live on the shop receiver. */
async function shopProduct(seller: SellerWithApp, extra: Record<string, unknown> = {}): Promise<ShopProduct> {
  const tag = uniqueSuffix();
  const created = (
    await server.api.post(
      '/products',
      {
        appId: seller.appId,
        name: `Desk Lamp ${tag}`,
        price: 19.99,
        currency: 'USD',
        successUrl: `${shop.url}/thanks/${tag}?from=checkout`,
        cancelUrl: `${shop.url}/cart/${tag}`,
        termsUrl: `${shop.url}/terms`,
        merchantWebhookUrl: `${shop.url}/merchant/${tag}`,
        ...extra,
      },
      { token: seller.token },
    )
  ).expect(201).body;
  // The secret as the seller's backend reads it.
  const stored = (await server.api.get(`/products/${created.id}`, { token: seller.token })).expect(200).body;
  return {
    id: stored.id,
    name: stored.name,
    successUrl: stored.successUrl,
    termsUrl: stored.termsUrl,
    callbackSecret: stored.callbackSecret,
    webhookPath: `/merchant/${tag}`,
  };
}

/** A page in its own browser context, closed when the test ends. */
async function openPage(t: TestContext): Promise<Page> {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  return page;
}

/** The request the buyer's browser made to the product's successUrl. */
function arrivalAt(item: ShopProduct) {
  const path = new URL(item.successUrl).pathname.replace(/^\/hooks/, '');
  const arrival = shop.requests.find((request) => request.path.startsWith(`${path}?`));
  assert.ok(arrival, `the browser reached ${item.successUrl}`);
  return { ...arrival, query: new URL(arrival.path, 'http://shop.test').searchParams };
}

const onSuccessUrl = (item: ShopProduct) => (url: URL) =>
  url.href.startsWith(item.successUrl.slice(0, item.successUrl.indexOf('?')));

/** Presses Enter in a field and returns the answer to the form post (for posts that do not redirect). */
async function submitFrom(page: Page, field: Locator) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/checkout/')),
    field.press('Enter'),
  ]);
  return response;
}

async function orderCount(seller: SellerWithApp): Promise<number> {
  return (await server.api.get('/orders', { token: seller.token })).expect(200).body.total;
}

describe('the hosted checkout in a browser', () => {
  test('sells a one-time product with the keyboard alone, shows the key, and signs the way back to the seller', async (t) => {
    const seller = await sellerWithApp(server, 'enterprise');
    const item = await shopProduct(seller);
    const page = await openPage(t);

    const opened = await page.goto(`${payUrl()}/checkout/${item.id}`);
    assert.equal(opened?.status(), 200);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), item.name);
    assert.equal(await page.getByText('$19.99', { exact: true }).count(), 1);
    assert.equal(await page.getByRole('link', { name: 'Terms' }).getAttribute('href'), item.termsUrl);

    // Tab, type, Enter: no pointer anywhere on the form.
    const email = page.getByLabel('E-mail');
    const card = page.getByLabel('Card number');
    await page.keyboard.press('Tab');
    assert.ok(await email.evaluate((field) => field.matches(':focus')), 'Tab reaches the e-mail first');
    await page.keyboard.type('buyer@example.com');
    await page.keyboard.press('Tab');
    assert.ok(await card.evaluate((field) => field.matches(':focus')), 'Tab moves on to the card');
    await page.keyboard.type(GOOD_CARD);
    assert.equal(await email.inputValue(), 'buyer@example.com');
    await screenshot(page, 'checkout-one-time');
    await Promise.all([page.waitForURL(`**/checkout/${item.id}/complete?**`), page.keyboard.press('Enter')]);

    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Payment complete');
    const license = await page.getByLabel('Your license key').inputValue();
    assert.match(license, LICENSE_KEY);
    await screenshot(page, 'checkout-one-time-success');

    // The key field, then the way on to the seller.
    const onward = page.getByRole('link', { name: /^Continue/ });
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.ok(await onward.evaluate((link) => link.matches(':focus')), 'Tab reaches Continue');
    await Promise.all([page.waitForURL(onSuccessUrl(item)), page.keyboard.press('Enter')]);
    const arrival = arrivalAt(item);
    assert.ok(verifyMirrorRedirect(arrival.path, { callbackSecret: item.callbackSecret }));
    assert.equal(arrival.query.get('license'), license);
    assert.equal(arrival.query.get('email'), 'buyer@example.com');
    assert.equal(arrival.query.get('product_id'), item.id);
    assert.equal(arrival.query.get('from'), 'checkout', "the seller's own parameter is kept");
    assert.equal(arrival.query.get('subscription_id'), null);

    const validation = await new CheckoutClient({ payUrl: payUrl() }).validatePurchase({
      license,
      email: 'buyer@example.com',
    });
    assert.equal(validation.verified, true);
    if (validation.verified) {
      assert.equal(validation.purchase.productId, item.id);
      assert.equal(validation.purchase.transactionId, arrival.query.get('transaction_id'));
    }

    await server.service.modules.deliveryWorker.runOnce();
    const hooks = shop.requests.filter((r) => r.path === item.webhookPath);
    const succeeded = hooks.find((r) => r.json.type === 'payment.succeeded');
    assert.ok(succeeded, `payment.succeeded among ${hooks.map((r) => r.json.type).join(', ')}`);
    const event = verifyMerchantWebhook(succeeded.body, succeeded.headers['x-svc-pay-signature'], {
      callbackSecret: item.callbackSecret,
    });
    assert.equal(event.type, 'payment.succeeded');
    assert.equal(event.data.licenseKey, license);
    assert.equal(event.data.productId, item.id);
  });

  test('sends the buyer of a subscription straight to successUrl with the subscription to renew', async (t) => {
    const seller = await sellerWithApp(server, 'enterprise');
    const item = await shopProduct(seller, {
      billingType: 'recurring',
      interval: 'month',
      partnerPriceIdRecurring: 'price_x',
      autoRedirect: true,
    });
    const page = await openPage(t);
    await page.goto(`${payUrl()}/checkout/${item.id}`);
    assert.equal(await page.getByText('Billed every month').count(), 1);

    await page.getByLabel('E-mail').fill('subscriber@example.com');
    await page.getByLabel('Card number').fill(GOOD_CARD);
    await Promise.all([page.waitForURL(onSuccessUrl(item)), page.getByLabel('Card number').press('Enter')]);

    const arrival = arrivalAt(item);
    assert.ok(verifyMirrorRedirect(arrival.path, { callbackSecret: item.callbackSecret }));
    const subscriptionId = arrival.query.get('subscription_id');
    assert.ok(subscriptionId, 'the redirect carries subscription_id');
    assert.match(arrival.query.get('license') ?? '', LICENSE_KEY);

    const listed = (
      await server.api.get(`/subscriptions?productId=${item.id}`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      listed.subscriptions.map((s: { id: string; status: string; email: string }) => [
        s.id,
        s.status,
        s.email,
      ]),
      [[subscriptionId, 'active', 'subscriber@example.com']],
    );
  });

  test('strict mode locks the sealed e-mail and returns the token on the signed redirect', async (t) => {
    const seller = await sellerWithApp(server, 'enterprise');
    const item = await shopProduct(seller);
    const payload = sealMirrorPayload({
      callbackSecret: item.callbackSecret,
      productId: item.id,
      token: 'order-8812',
      email: 'ann@example.com',
    });
    const page = await openPage(t);
    const opened = await page.goto(new CheckoutClient({ payUrl: payUrl() }).checkoutUrl(item.id, payload));
    assert.equal(opened?.status(), 200);

    const email = page.getByLabel('E-mail');
    assert.equal(await email.inputValue(), 'ann@example.com');
    assert.equal(await email.getAttribute('readonly'), '');
    assert.equal(await email.isEditable(), false);

    await page.getByLabel('Card number').fill(GOOD_CARD);
    await Promise.all([
      page.waitForURL(`**/checkout/${item.id}/complete?**`),
      page.getByLabel('Card number').press('Enter'),
    ]);
    await Promise.all([
      page.waitForURL(onSuccessUrl(item)),
      page.getByRole('link', { name: /^Continue/ }).click(),
    ]);
    const arrival = arrivalAt(item);
    assert.ok(verifyMirrorRedirect(arrival.path, { callbackSecret: item.callbackSecret }));
    assert.equal(arrival.query.get('token'), 'order-8812');
    assert.equal(arrival.query.get('email'), 'ann@example.com');
  });

  test('strict mode refuses a tampered payload with a plain error page and opens no order', async (t) => {
    const seller = await sellerWithApp(server, 'enterprise');
    const item = await shopProduct(seller);
    const payload = sealMirrorPayload({
      callbackSecret: item.callbackSecret,
      productId: item.id,
      token: 'order-8813',
      email: 'ann@example.com',
    });
    const at = 20;
    const tampered = `${payload.slice(0, at)}${payload[at] === 'A' ? 'B' : 'A'}${payload.slice(at + 1)}`;
    const before = await orderCount(seller);
    const page = await openPage(t);

    const opened = await page.goto(`${payUrl()}/checkout/${item.id}?payload=${tampered}`);
    assert.equal(opened?.status(), 400);
    assert.equal(
      await page.getByRole('heading', { level: 1 }).textContent(),
      'This checkout link is not valid',
    );
    assert.equal(await page.getByLabel('Card number').count(), 0, 'no form to pay with');

    // The same payload changed in the form after the page opened is refused when paying.
    await page.goto(`${payUrl()}/checkout/${item.id}?payload=${payload}`);
    await page
      .locator('input[name="payload"]')
      .evaluate((field, value) => field.setAttribute('value', value), tampered);
    await page.getByLabel('Card number').fill(GOOD_CARD);
    const paid = await submitFrom(page, page.getByLabel('Card number'));
    assert.equal(paid.status(), 400);
    await page.getByRole('heading', { name: 'This checkout link is not valid' }).waitFor();

    assert.equal(await orderCount(seller), before);
  });

  test('shows a declined card on the page and lets the buyer pay with another card', async (t) => {
    const seller = await sellerWithApp(server, 'enterprise');
    const item = await shopProduct(seller);
    const page = await openPage(t);
    await page.goto(`${payUrl()}/checkout/${item.id}`);

    await page.getByLabel('E-mail').fill('retry@example.com');
    await page.getByLabel('Card number').fill(DECLINED_CARD);
    const declined = await submitFrom(page, page.getByLabel('Card number'));
    assert.equal(declined.status(), 402);
    assert.match((await page.getByRole('alert').textContent()) ?? '', /declined/i);
    assert.equal(await page.getByLabel('E-mail').inputValue(), 'retry@example.com', 'the e-mail is kept');

    await page.getByLabel('Card number').fill(GOOD_CARD);
    await Promise.all([
      page.waitForURL(`**/checkout/${item.id}/complete?**`),
      page.getByLabel('Card number').press('Enter'),
    ]);
    const license = await page.getByLabel('Your license key').inputValue();
    assert.match(license, LICENSE_KEY);
    const validation = await new CheckoutClient({ payUrl: payUrl() }).validatePurchase({
      license,
      email: 'retry@example.com',
    });
    assert.equal(validation.verified, true);
  });

  test('starts a free trial from the page for the device that opened it, without payment', async (t) => {
    const seller = await sellerWithApp(server);
    const item = await shopProduct(seller, { trialDays: 14 });
    const page = await openPage(t);
    await page.goto(`${payUrl()}/checkout/${item.id}?hwuid=browser-pc`);

    const start = page.getByRole('button', { name: 'Start your 14-day free trial' });
    await page.getByLabel('E-mail for your trial key').fill('trial@example.com');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/trial')),
      start.press('Enter'),
    ]);
    assert.equal(answer.status(), 200);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your free trial has started');
    const key = await page.getByLabel('Your trial license key').inputValue();
    assert.match(key, LICENSE_KEY);
    await screenshot(page, 'checkout-trial-started');

    const verified = (await server.api.post('/licenses/verify', { key, hwuid: 'browser-pc' })).expect(
      200,
    ).body;
    assert.equal(verified.valid, true);
    assert.equal(verified.status, 'TRIAL');
    assert.equal(verified.hw_bound, true);
    assert.equal(await orderCount(seller), 0, 'no order: nothing was paid');
  });
});
