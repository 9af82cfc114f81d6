import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sealMirrorPayload } from '../../../packages/client/src/index.js';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { verifyRedirect } from './mirror-signature.js';

/** The hosted checkout over plain HTTP (no JavaScript): pages, strict mode, redirects, validate. */
let server: TestServer;
before(async () => {
  server = await startTestServer({ CHECKOUT_VALIDATE_RATE_LIMIT: '40' });
});
after(() => server.stop());

const SHOP = 'https://shop.example/thanks?ref=7';

async function product(seller: SellerWithApp, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      {
        appId: seller.appId,
        name: 'Pro <Edition>',
        description: 'Everything & more',
        price: 19.99,
        currency: 'USD',
        successUrl: SHOP,
        cancelUrl: 'https://shop.example/cancel',
        termsUrl: 'https://shop.example/terms',
        ...extra,
      },
      { token: seller.token },
    )
  ).expect(201).body;
}

const page = (path: string) => fetch(`${server.service.payUrl}${path}`, { redirect: 'manual' });
const post = (productId: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${server.service.payUrl}/checkout/${productId}`, {
    method: 'POST',
    body: new URLSearchParams({
      attempt: `attempt-${Math.random().toString(36).slice(2)}-x`,
      method: 'card',
      ...form,
    }),
    headers,
    redirect: 'manual',
  });

/** Pays with the sandbox form and returns the success page's signed continue redirect. */
async function buy(productId: string, form: Record<string, string>) {
  const paid = await post(productId, { card: '4242424242424242', ...form });
  assert.equal(paid.status, 303, await paid.clone().text());
  const done = await page(paid.headers.get('location') as string);
  if (done.status === 303) return { location: new URL(done.headers.get('location') as string), html: '' };
  const html = await done.text();
  assert.equal(done.status, 200, html);
  const next = /id="continue" href="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  assert.ok(next, 'a continue link');
  const followed = await page(next);
  assert.equal(followed.status, 303);
  return { location: new URL(followed.headers.get('location') as string), html };
}

async function ordersOf(seller: SellerWithApp) {
  return (await server.api.get('/orders?status=paid', { token: seller.token })).expect(200).body;
}

describe('the checkout page', () => {
  test('shows the product, its price and links, escaped, with a sandbox card form and security headers', async () => {
    const item = await product(await sellerWithApp(server));
    const res = await page(`/checkout/${item.id}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    const html = await res.text();
    assert.ok(html.includes('Pro &lt;Edition&gt;'));
    assert.ok(!html.includes('<Edition>'));
    assert.ok(html.includes('$19.99'));
    assert.ok(html.includes('href="https://shop.example/terms"'));
    assert.ok(html.includes('href="https://shop.example/cancel"'));
    assert.match(html, /<label for="email">E-mail<\/label>/);
    assert.match(html, /<label for="card">Card number<\/label>/);
    assert.ok(!html.includes(item.callbackSecret), 'never the callback secret');
  });

  test('answers a clear 404 page for an unknown, malformed or inactive product', async () => {
    const item = await product(await sellerWithApp(server), { active: false });
    for (const id of [item.id, '0190f7a0-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const res = await page(`/checkout/${id}`);
      assert.equal(res.status, 404);
      assert.match(await res.text(), /not available/);
    }
  });

  test('says a recurring product without a partner price cannot be bought by card', async () => {
    const item = await product(await sellerWithApp(server), { billingType: 'recurring', interval: 'month' });
    const html = await (await page(`/checkout/${item.id}`)).text();
    assert.match(html, /cannot be bought by card/);
    assert.ok(!html.includes('name="card"'));
  });

  test('shows a declined card on the form and charges nothing', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const res = await post(item.id, { email: 'b@example.com', card: '4000000000000002' });
    assert.equal(res.status, 402);
    assert.match(await res.text(), /role="alert"[^>]*>Your card was declined/);
    assert.equal((await ordersOf(seller)).total, 0);
  });

  test('a double submit of one form opens one order and one license', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const form = { email: 'twice@example.com', card: '4242424242424242', attempt: 'same-attempt-0123456789' };
    const answers = await Promise.all([post(item.id, form), post(item.id, form)]);
    assert.deepEqual(
      answers.map((r) => r.status),
      [303, 303],
    );
    assert.equal(answers[0]?.headers.get('location'), answers[1]?.headers.get('location'));
    assert.equal((await ordersOf(seller)).total, 1);
  });

  test('a payment or trial form sent from another site is refused with 403 and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller, { trialDays: 14 });
    const paid = { email: 'forged@example.com', card: '4242424242424242' };
    const payUrl = new URL(server.service.payUrl);
    for (const headers of <Record<string, string>[]>[
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://attacker.example' },
      { origin: `${payUrl.protocol}//${payUrl.hostname}:1` },
    ]) {
      const res = await post(item.id, paid, headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.match(await res.text(), /This form can only be sent from the checkout page itself/);
      const trial = await fetch(`${server.service.payUrl}/checkout/${item.id}/trial`, {
        method: 'POST',
        body: new URLSearchParams({ email: 'forged-trial@example.com' }),
        headers,
        redirect: 'manual',
      });
      assert.equal(trial.status, 403, JSON.stringify(headers));
    }
    assert.equal((await ordersOf(seller)).total, 0);
    const licenses = (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).expect(
      200,
    );
    assert.equal(licenses.body.total, 0, 'no trial was started');
    // The page's own form (same origin, as the browser says) and a server without either header go on.
    assert.equal((await post(item.id, paid, { 'sec-fetch-site': 'same-origin' })).status, 303);
    assert.equal((await post(item.id, paid, { origin: payUrl.origin })).status, 303);
    assert.equal((await post(item.id, paid)).status, 303);
    assert.equal((await ordersOf(seller)).total, 3);
  });
});

describe('the signed redirect and validate', () => {
  test('sends the buyer on with signed parameters the seller verifies; validate confirms the purchase', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const { location, html } = await buy(item.id, { email: 'Ann@Example.com' });
    assert.match(html, /Payment complete/);
    assert.equal(location.origin + location.pathname, 'https://shop.example/thanks');
    assert.equal(location.searchParams.get('ref'), '7', 'the seller’s own parameter stays');
    const params = location.searchParams;
    assert.equal(params.get('status'), 'successful');
    assert.equal(params.get('email'), 'Ann@Example.com');
    assert.equal(params.get('product_id'), item.id);
    assert.ok(verifyRedirect(item.callbackSecret, params, new Date()));
    const tampered = new URLSearchParams(params);
    tampered.set('email', 'eve@example.com');
    assert.equal(verifyRedirect(item.callbackSecret, tampered, new Date()), false);

    const license = params.get('license') as string;
    const ok = (
      await server.pay.post('/api/checkout/mirror/validate', { license, email: ' ann@example.com ' })
    ).expect(200).body;
    const order = (await ordersOf(seller)).orders[0];
    assert.deepEqual(ok, {
      success: true,
      verified: true,
      status: 'successful',
      purchase: {
        id: order.id,
        productId: item.id,
        createdAt: order.createdAt,
        transactionId: params.get('transaction_id'),
        subscriptionId: null,
      },
    });
  });

  test('validate answers one not-verified shape for a wrong e-mail, an unknown license or an unpaid order', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const { location } = await buy(item.id, { email: 'owner@example.com' });
    const license = location.searchParams.get('license') as string;
    const manual = (
      await server.api.post(
        `/apps/${seller.appId}/licenses`,
        { email: 'x@example.com' },
        { token: seller.token },
      )
    ).expect(201).body;
    const answers = await Promise.all(
      [
        { license, email: 'someone@example.com' },
        { license: 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ', email: 'owner@example.com' },
        { license: manual.key, email: 'x@example.com' },
        { license: 'nonsense', email: 'owner@example.com' },
      ].map(async (body) => (await server.pay.post('/api/checkout/mirror/validate', body)).expect(200).body),
    );
    for (const answer of answers)
      assert.deepEqual(answer, {
        success: false,
        verified: false,
        status: 'not_verified',
        code: 'purchase_not_verified',
        message: 'No paid purchase matches this license and e-mail',
      });
    assertError(
      await server.pay.post('/api/checkout/mirror/validate', { license }),
      400,
      'validation_failed',
    );
  });

  test('validate refuses a purchase whose license was suspended, expired or revoked, and says which', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const { location } = await buy(item.id, { email: 'kim@example.com' });
    const license = location.searchParams.get('license') as string;
    const { licenseId } = (
      await server.api.get(`/orders/${(await ordersOf(seller)).orders[0].id}`, { token: seller.token })
    ).expect(200).body;
    const path = `/apps/${seller.appId}/licenses/${licenseId}`;
    const validate = async () =>
      (await server.pay.post('/api/checkout/mirror/validate', { license, email: 'kim@example.com' })).expect(
        200,
      ).body;
    const refused = (code: string, message: string) => ({
      success: false,
      verified: false,
      status: 'not_verified',
      code,
      message,
    });

    (await server.api.post(`${path}/suspend`, undefined, { token: seller.token })).expect(200);
    assert.deepEqual(
      await validate(),
      refused('license_suspended', 'The license of this purchase is suspended'),
    );
    (await server.api.post(`${path}/reinstate`, undefined, { token: seller.token })).expect(200);
    assert.equal((await validate()).verified, true);

    (await server.api.patch(path, { expiresAt: '2020-01-01T00:00:00Z' }, { token: seller.token })).expect(
      200,
    );
    assert.deepEqual(
      await validate(),
      refused('license_expired', 'The license of this purchase has expired'),
    );
    (await server.api.patch(path, { expiresAt: null }, { token: seller.token })).expect(200);

    (await server.api.post(`${path}/revoke`, undefined, { token: seller.token })).expect(200);
    assert.deepEqual(
      await validate(),
      refused('license_revoked', 'The license of this purchase was revoked'),
    );
    // Only a caller holding both the license and its e-mail learns why.
    assert.equal(
      (await server.pay.post('/api/checkout/mirror/validate', { license, email: 'eve@example.com' })).body
        .code,
      'purchase_not_verified',
    );
  });

  test('autoRedirect sends an Enterprise seller’s buyer straight on; hideEmail keeps the e-mail out', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const item = await product(seller, { autoRedirect: true, hideEmail: true });
    const paid = await post(item.id, { email: 'quiet@example.com', card: '4242424242424242' });
    const done = await page(paid.headers.get('location') as string);
    assert.equal(done.status, 303);
    const params = new URL(done.headers.get('location') as string).searchParams;
    assert.equal(params.get('email'), null);
    assert.ok(verifyRedirect(item.callbackSecret, params, new Date()));
  });

  test('a seller whose tier dropped loses autoRedirect: the buyer sees the success page', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const item = await product(seller, { autoRedirect: true });
    (
      await server.api.patch(
        `/admin/users/${seller.user.id}`,
        { tier: 'pro' },
        { token: await server.adminToken() },
      )
    ).expect(200);
    const paid = await post(item.id, { email: 'b@example.com', card: '4242424242424242' });
    const done = await page(paid.headers.get('location') as string);
    assert.equal(done.status, 200);
    assert.match(await done.text(), /Payment complete/);
  });

  test('validate is rate limited per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++)
      statuses.push(
        (await server.pay.post('/api/checkout/mirror/validate', { license: 'x', email: 'a@b.co' })).status,
      );
    assert.ok(statuses.includes(429));
  });
});

describe('strict mirror mode', () => {
  test('prefills and locks the e-mail and returns the token in the signed redirect', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const payload = sealMirrorPayload({
      callbackSecret: item.callbackSecret,
      productId: item.id,
      token: 'order-8812',
      email: 'locked@example.com',
      issuedAt: new Date(),
    });
    const html = await (await page(`/checkout/${item.id}?payload=${payload}`)).text();
    assert.match(html, /value="locked@example.com" readonly/);
    const { location } = await buy(item.id, { payload, email: 'changed@example.com' });
    assert.equal(location.searchParams.get('token'), 'order-8812');
    assert.equal(location.searchParams.get('email'), 'locked@example.com', 'the form cannot change it');
    assert.ok(verifyRedirect(item.callbackSecret, location.searchParams, new Date()));
  });

  test('refuses a tampered, foreign or stale payload with a 400 page and charges nothing', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const other = await product(seller);
    const seal = (secret: string, productId: string, issuedAt = new Date()) =>
      sealMirrorPayload({ callbackSecret: secret, productId, token: 't', email: 'a@example.com', issuedAt });
    const good = seal(item.callbackSecret, item.id);
    const flipped = `${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}`;
    const cases: [string, RegExp][] = [
      [flipped, /not valid/],
      [seal(other.callbackSecret, other.id), /not valid/],
      [seal(item.callbackSecret, other.id), /not valid/],
      [seal('cbs_someone_else', item.id), /not valid/],
      [seal(item.callbackSecret, item.id, new Date(Date.now() - 31 * 60_000)), /expired/],
      ['v1.!!!', /not valid/],
    ];
    for (const [payload, message] of cases) {
      const shown = await page(`/checkout/${item.id}?payload=${encodeURIComponent(payload)}`);
      assert.equal(shown.status, 400);
      assert.match(await shown.text(), message);
      const paid = await post(item.id, { payload, email: 'a@example.com', card: '4242424242424242' });
      assert.equal(paid.status, 400);
    }
    assert.equal((await ordersOf(seller)).total, 0);
  });
});
