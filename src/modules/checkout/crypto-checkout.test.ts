import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type FakeCrypto, type FakeCryptoDelivery, startFakeCrypto } from '../../testing/fake-crypto.js';
import {
  freePort,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

/** The crypto option of the hosted checkout over HTTP, against a local fake of the partner. */
const API_KEY = 'cc_test_key_for_checkout';
const WEBHOOK_SECRET = 'cc_test_webhook_secret_for_checkout';
let fake: FakeCrypto;
let server: TestServer;
let payUrl: string;

before(async () => {
  fake = await startFakeCrypto({ apiKey: API_KEY, webhookSecret: WEBHOOK_SECRET });
  // The partner's redirect goes to PAY_PUBLIC_URL, so the checkout host must listen right there.
  const port = await freePort();
  server = await startTestServer({
    PAY_PORT: String(port),
    PAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    CRYPTO_API_URL: fake.url,
    CRYPTO_API_KEY: API_KEY,
    CRYPTO_WEBHOOK_SECRET: WEBHOOK_SECRET,
  });
  payUrl = server.service.payUrl;
  assert.equal(payUrl, `http://127.0.0.1:${port}`);
  fake.callbackUrl = `${payUrl}/api/checkout/crypto/webhook`;
});
after(async () => {
  await server?.stop();
  await fake?.close();
});

const BUYER = 'buyer@example.com';

async function product(seller: SellerWithApp, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      {
        appId: seller.appId,
        name: 'Pro',
        price: 19.99,
        currency: 'USD',
        cryptoPaymentsEnabled: true,
        successUrl: 'https://shop.example/thanks',
        ...extra,
      },
      { token: seller.token },
    )
  ).expect(201).body as { id: string };
}

/** The hosted form as a browser without JavaScript posts it. */
function postForm(productId: string, fields: Record<string, string>) {
  return fetch(`${payUrl}/checkout/${productId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

const attempt = () => randomBytes(16).toString('base64url');

/** The buyer picks crypto: our answer sends them to the partner's hosted page for a new charge. */
async function startCrypto(productId: string, email = BUYER) {
  const res = await postForm(productId, { email, attempt: attempt(), method: 'crypto' });
  await res.arrayBuffer();
  assert.equal(res.status, 303);
  const hosted = res.headers.get('location') ?? '';
  assert.ok(hosted.startsWith(`${fake.url}/pay/`), `not the partner's page: ${hosted}`);
  const chargeId = decodeURIComponent(hosted.slice(`${fake.url}/pay/`.length));
  const charge = fake.charges.get(chargeId);
  assert.ok(charge, `the partner has no charge ${chargeId}`);
  return { hosted, chargeId, completeUrl: charge.redirect_url ?? '' };
}

/** The buyer pays on the partner's page; the partner calls us back, then sends the buyer home. */
async function payAtPartner(hosted: string) {
  const res = await fetch(`${hosted}/pay`, { method: 'POST', redirect: 'manual' });
  await res.arrayBuffer();
  assert.equal(res.status, 303);
  return res.headers.get('location') ?? '';
}

async function open(url: string) {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, text: await res.text() };
}

const licenseKeyOn = (page: string) => /id="license-key"[^>]*value="([^"]+)"/.exec(page)?.[1];

const validate = (license: string, email = BUYER) =>
  server.pay.post('/api/checkout/mirror/validate', { license, email });

const sendCallback = (body: string, signature?: string) =>
  server.pay.post('/api/checkout/crypto/webhook', undefined, {
    raw: body,
    headers: {
      'content-type': 'application/json',
      ...(signature === undefined ? {} : { 'x-cc-webhook-signature': signature }),
    },
  });

async function ordersOf(seller: SellerWithApp, query = '') {
  return (await server.api.get(`/orders${query}`, { token: seller.token })).expect(200).body as {
    orders: { id: string; status: string; paymentProvider: string; email: string; transactionId: string }[];
    total: number;
  };
}

async function licensesOf(seller: SellerWithApp) {
  return (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).expect(200)
    .body as { licenses: { key: string }[]; total: number };
}

/** Settles the charge at the partner without its callback reaching us, and returns that callback. */
async function settledUnheard(settle: () => Promise<FakeCryptoDelivery>) {
  const url = fake.callbackUrl;
  fake.callbackUrl = null;
  try {
    return await settle();
  } finally {
    fake.callbackUrl = url;
  }
}

describe('the checkout page', () => {
  const CRYPTO_BUTTON = 'Pay with crypto';

  test('offers crypto for a business seller’s product with crypto payments enabled', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller);
    const page = (await server.pay.get(`/checkout/${item.id}`)).expect(200);
    assert.ok(page.text.includes(CRYPTO_BUTTON));
    assert.ok(page.text.includes('name="method" value="crypto"'));
  });

  test('does not offer crypto for a product without crypto payments enabled', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller, { cryptoPaymentsEnabled: false });
    const page = (await server.pay.get(`/checkout/${item.id}`)).expect(200);
    assert.ok(!page.text.includes(CRYPTO_BUTTON));
  });

  test('stops offering crypto once the seller’s tier drops below business, and refuses a crypto post', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller);
    (
      await server.api.patch(
        `/admin/users/${seller.user.id}`,
        { tier: 'pro' },
        { token: await server.adminToken() },
      )
    ).expect(200);
    const page = (await server.pay.get(`/checkout/${item.id}`)).expect(200);
    assert.ok(!page.text.includes(CRYPTO_BUTTON));

    const charges = fake.charges.size;
    const res = await postForm(item.id, { email: BUYER, attempt: attempt(), method: 'crypto' });
    assert.equal(res.status, 409, await res.text());
    assert.equal(fake.charges.size, charges);
    assert.equal((await ordersOf(seller)).total, 0);
  });

  test('does not offer crypto for a recurring product, and refuses a crypto post', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller, {
      billingType: 'recurring',
      interval: 'month',
      partnerPriceIdRecurring: 'price_monthly',
    });
    const page = (await server.pay.get(`/checkout/${item.id}`)).expect(200);
    assert.ok(page.text.includes('value="card"'), 'the card is still offered');
    assert.ok(!page.text.includes(CRYPTO_BUTTON));

    const charges = fake.charges.size;
    const res = await postForm(item.id, { email: BUYER, attempt: attempt(), method: 'crypto' });
    assert.equal(res.status, 409, await res.text());
    assert.equal(fake.charges.size, charges);
  });
});

describe('a crypto purchase', () => {
  test('sends the buyer to the partner, is paid by its signed callback, and shows the license', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller);
    const { hosted, chargeId, completeUrl } = await startCrypto(item.id);

    const charge = fake.charges.get(chargeId);
    assert.deepEqual(charge?.pricing.local, { amount: '19.99', currency: 'USD' });
    assert.equal(charge?.metadata.email, BUYER);
    assert.ok(completeUrl.startsWith(`${payUrl}/checkout/${item.id}/complete?order=`), completeUrl);
    assert.equal(charge?.cancel_url, `${payUrl}/checkout/${item.id}`);

    const waiting = await open(completeUrl);
    assert.equal(waiting.status, 200);
    assert.ok(waiting.text.includes('Payment in progress'));
    assert.equal(licenseKeyOn(waiting.text), undefined);

    const pending = await ordersOf(seller);
    assert.equal(pending.orders[0]?.status, 'pending');
    assert.equal(pending.orders[0]?.paymentProvider, 'crypto');

    const back = await payAtPartner(hosted);
    assert.equal(back, completeUrl);
    const callback = fake.deliveries.find((d) => d.type === 'charge:confirmed' && d.body.includes(chargeId));
    assert.equal(callback?.url, `${payUrl}/api/checkout/crypto/webhook`);
    assert.equal(callback?.statusCode, 200);

    const done = await open(back);
    assert.equal(done.status, 200, done.text);
    assert.ok(done.text.includes('Payment complete'));
    const licenseKey = licenseKeyOn(done.text);
    assert.match(licenseKey ?? '', /^[0-9A-Z]{5}(-[0-9A-Z]{5}){5}$/);

    const { orders } = await ordersOf(seller);
    assert.equal(orders.length, 1);
    assert.equal(orders[0]?.status, 'paid');
    assert.equal(orders[0]?.paymentProvider, 'crypto');
    assert.equal(orders[0]?.email, BUYER);

    const verified = (await validate(licenseKey ?? '')).expect(200).body;
    assert.equal(verified.verified, true);
    assert.equal(verified.purchase.id, orders[0]?.id);
    assert.equal(verified.purchase.transactionId, orders[0]?.transactionId);
    assert.equal(verified.purchase.subscriptionId, null);
  });

  test('asks the partner for the price in the currency’s own decimals', async () => {
    const seller = await sellerWithApp(server, 'business');
    for (const [price, currency, asked] of [
      [19.99, 'USD', '19.99'],
      [20, 'EUR', '20.00'],
      [1500, 'JPY', '1500'],
      [1.234, 'KWD', '1.234'],
    ] as const) {
      const item = await product(seller, { price, currency });
      const { chargeId } = await startCrypto(item.id);
      assert.deepEqual(fake.charges.get(chargeId)?.pricing.local, { amount: asked, currency });
    }
  });

  test('the same form attempt posted twice opens one order and one charge', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller);
    const fields = { email: BUYER, attempt: attempt(), method: 'crypto' };
    const first = await postForm(item.id, fields);
    const second = await postForm(item.id, fields);
    assert.equal(first.status, 303);
    assert.equal(second.status, 303);
    assert.equal(second.headers.get('location'), first.headers.get('location'));
    assert.equal((await ordersOf(seller)).total, 1);
  });
});

describe('the crypto partner callback', () => {
  test('with a bad signature answers 400 and changes nothing', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller);
    const { chargeId, completeUrl } = await startCrypto(item.id);
    // The charge is paid at the partner; only its callback tells us, and it is forged here.
    const genuine = await settledUnheard(() => fake.confirm(chargeId));
    const otherSecret = createHmac('sha256', 'not-the-secret').update(genuine.body).digest('hex');
    const flipped = `${genuine.signature[0] === '0' ? '1' : '0'}${genuine.signature.slice(1)}`;

    for (const signature of [undefined, '', 'nothex', otherSecret, flipped]) {
      assertError(await sendCallback(genuine.body, signature), 400, 'bad_request');
    }
    assertError(
      await sendCallback(genuine.body.replace(chargeId, 'another-charge'), genuine.signature),
      400,
      'bad_request',
    );

    const { orders } = await ordersOf(seller);
    assert.equal(orders[0]?.status, 'pending');
    assert.equal((await licensesOf(seller)).total, 0);
    // The same body with the partner's signature is what pays it.
    (await sendCallback(genuine.body, genuine.signature)).expect(200);
    assert.equal((await ordersOf(seller)).orders[0]?.status, 'paid');
    assert.ok(licenseKeyOn((await open(completeUrl)).text));
  });

  test('replayed after it was handled changes nothing: still one paid order and one license', async () => {
    const seller = await sellerWithApp(server, 'business');
    const item = await product(seller);
    const { hosted, chargeId } = await startCrypto(item.id);
    const done = await open(await payAtPartner(hosted));
    const licenseKey = licenseKeyOn(done.text);
    assert.ok(licenseKey);
    const callback = fake.deliveries.find((d) => d.type === 'charge:confirmed' && d.body.includes(chargeId));
    assert.ok(callback);
    const before = await ordersOf(seller);

    for (let i = 0; i < 3; i++) {
      assert.deepEqual((await sendCallback(callback.body, callback.signature)).expect(200).body, {
        received: true,
      });
    }

    assert.deepEqual(await ordersOf(seller), before);
    const { licenses } = await licensesOf(seller);
    assert.deepEqual(
      licenses.map((l) => l.key),
      [licenseKey],
    );
    assert.equal((await validate(licenseKey)).expect(200).body.verified, true);
  });

  test('for a charge we never made answers 200 and changes nothing', async () => {
    const body = JSON.stringify({
      event: { id: 'evt-unknown', type: 'charge:confirmed', data: { id: 'not-a-charge-of-ours' } },
    });
    const signature = createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex');
    (await sendCallback(body, signature)).expect(200);
  });
});

describe('a crypto charge that does not complete', () => {
  for (const [name, settle, reason] of [
    ['failed (underpaid)', (id: string) => fake.fail(id), 'The crypto payment did not complete'],
    ['expired', (id: string) => fake.expire(id), 'The crypto payment expired before it was completed'],
  ] as const) {
    test(`${name}: rejects the transaction, and the complete page says the payment did not go through`, async () => {
      const seller = await sellerWithApp(server, 'business');
      const item = await product(seller);
      const { chargeId, completeUrl } = await startCrypto(item.id);

      const callback = await settle(chargeId);
      assert.equal(callback.type, 'charge:failed');
      assert.equal(callback.statusCode, 200);

      const { orders } = await ordersOf(seller, '?status=rejected');
      assert.equal(orders.length, 1);
      assert.equal(orders[0]?.paymentProvider, 'crypto');
      const status = (
        await server.api.post(
          '/transaction/status',
          { transaction: orders[0]?.transactionId },
          { token: seller.token },
        )
      ).expect(200).body;
      assert.equal(status.transactionStatus, 'rejected');
      assert.equal(status.transaction.statusReason, reason);
      assert.equal(status.transaction.licenseId, null);

      const page = await open(completeUrl);
      assert.equal(page.status, 402, page.text);
      assert.ok(page.text.includes('The payment did not go through'));
      assert.ok(page.text.includes(reason));
      assert.equal(licenseKeyOn(page.text), undefined);

      assert.equal((await licensesOf(seller)).total, 0);
      // Nothing was issued to validate; a well-formed key with the buyer's e-mail is not verified.
      const guess = Array.from({ length: 6 }, () => randomBytes(3).toString('hex').slice(0, 5).toUpperCase());
      const answer = (await validate(guess.join('-'))).expect(200).body;
      assert.equal(answer.verified, false);
      assert.equal(answer.code, 'purchase_not_verified');
    });
  }
});
