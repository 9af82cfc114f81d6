import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CheckoutClient, LicensingApiError } from '../../../packages/client/src/index.js';
import { verifyMerchantSignature } from '../../modules/webhooks/merchant-signature.js';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { buyWithSandbox, createMonthlyProduct, GOOD_CARD } from '../../testing/purchases.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/** Recurring purchases, renewal charges from the seller's backend, cancellation, merchant webhooks. */
let server: TestServer;
let clock: TestClock;
let receiver: Receiver;
before(async () => {
  clock = testClock(new Date());
  receiver = await startReceiver();
  // This file runs the webhook delivery worker: it owns its database.
  server = await startTestServer({ USER_TOKEN_TTL: '2592000' }, { clock, ownDatabase: true });
});
after(async () => {
  await server.stop();
  await receiver.close();
});

const DAY = 86_400_000;

interface Subscribed {
  seller: SellerWithApp;
  product: { id: string; callbackSecret: string };
  subscriptionId: string;
  licenseKey: string;
  email: string;
}

/** A seller's monthly product bought through the checkout API with a sandbox card. */
async function subscribe(card = GOOD_CARD, extra: Record<string, unknown> = {}): Promise<Subscribed> {
  const seller = await sellerWithApp(server);
  const product = await createMonthlyProduct(server, seller.appId, seller.token, extra);
  const email = `buyer-${Math.random().toString(36).slice(2)}@example.com`;
  const { paid } = await buyWithSandbox(server, product.id, email, card);
  const list = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body;
  assert.equal(list.subscriptions.length, 1);
  return { seller, product, subscriptionId: list.subscriptions[0].id, licenseKey: paid.licenseKey, email };
}

const charge = (body: Record<string, unknown>) =>
  server.pay.post('/api/checkout/mirror/subscription/charge', body);

const renewal = (s: Subscribed, extra: Record<string, unknown> = {}) => ({
  subscription_id: s.subscriptionId,
  amount: 9.5,
  currency: 'EUR',
  callback_secret: s.product.callbackSecret,
  ...extra,
});

async function subscriptionOf(s: Subscribed) {
  const list = (await server.api.get('/subscriptions', { token: s.seller.token })).expect(200).body;
  return list.subscriptions.find((row: { id: string }) => row.id === s.subscriptionId);
}

async function verify(key: string) {
  return (await server.api.post('/licenses/verify', { key })).expect(200).body;
}

describe('a recurring checkout', () => {
  test('opens an active subscription whose period end is the license expiry', async () => {
    const s = await subscribe();
    const row = await subscriptionOf(s);
    assert.deepEqual(Object.keys(row).sort(), [
      'canceledAt',
      'createdAt',
      'currentPeriodEnd',
      'email',
      'id',
      'partnerSubscriptionId',
      'productId',
      'status',
    ]);
    assert.equal(row.status, 'active');
    assert.equal(row.productId, s.product.id);
    assert.equal(row.email, s.email);
    assert.match(row.partnerSubscriptionId, /^sb_cus_/);
    const license = await verify(s.licenseKey);
    assert.equal(license.valid, true);
    assert.equal(
      new Date(license.expiresAt).getTime(),
      Math.floor(Date.parse(row.currentPeriodEnd) / 1000) * 1000,
    );
  });

  test('lists by status and product, with limit and offset', async () => {
    const s = await subscribe();
    const q = (query: string) => server.api.get(`/subscriptions?${query}`, { token: s.seller.token });
    assert.equal((await q('status=canceled')).expect(200).body.total, 0);
    const page = (await q(`status=active&productId=${s.product.id}&limit=5&offset=0`)).expect(200).body;
    assert.deepEqual([page.total, page.limit, page.offset, page.subscriptions.length], [1, 5, 0, 1]);
    assertError(await q('status=paused'), 400, 'validation_failed');
  });
});

describe('a renewal charge', () => {
  test('charges the saved card once for the period, moves the period and the license expiry', async () => {
    const s = await subscribe();
    const before = await subscriptionOf(s);
    clock.advance(28 * DAY);
    const answer = (await charge(renewal(s))).expect(200).body;
    assert.equal(answer.success, true);
    assert.equal(answer.duplicate, false);
    assert.equal(answer.status, 'paid');
    assert.equal(answer.amount, 9.5);
    assert.equal(answer.currency, 'EUR');
    assert.ok(Date.parse(answer.currentPeriodEnd) > Date.parse(before.currentPeriodEnd));
    assert.equal(answer.licenseExpiresAt, answer.currentPeriodEnd);
    const license = await verify(s.licenseKey);
    assert.equal(
      Date.parse(license.expiresAt),
      Math.floor(Date.parse(answer.currentPeriodEnd) / 1000) * 1000,
    );
    const orders = (await server.api.get('/orders', { token: s.seller.token })).expect(200).body;
    assert.deepEqual(
      orders.orders.map((o: { status: string; amount: number }) => [o.status, o.amount]),
      [
        ['paid', 9.5],
        ['paid', 9.5],
      ],
    );
    const status = (
      await server.api.post(
        '/transaction/status',
        { transaction: answer.transactionId },
        { token: s.seller.token },
      )
    ).expect(200).body;
    assert.equal(status.transactionStatus, 'paid');
  });

  test('starts a quota that resets at each renewal again from zero; one that never resets keeps its count', async () => {
    const s = await subscribe(GOOD_CARD, {
      licensePolicy: { model: 'unlimited', maxUses: 20, usesResetInterval: 'renewal' },
    });
    const use = async (key: string, amount: number) =>
      (await server.api.post('/licenses/usage', { key, amount })).expect(200).body;
    assert.equal((await use(s.licenseKey, 15)).uses_remaining, 5);
    const kept = await subscribe(GOOD_CARD, { licensePolicy: { model: 'unlimited', maxUses: 20 } });
    assert.equal((await use(kept.licenseKey, 15)).uses_remaining, 5);
    clock.advance(28 * DAY);
    (await charge(renewal(s))).expect(200);
    (await charge(renewal(kept))).expect(200);
    assert.equal((await verify(s.licenseKey)).uses_remaining, 20, 'a new period of use');
    assert.equal((await verify(kept.licenseKey)).uses_remaining, 5, 'never resets');
  });

  test('sent ten times at once, charges once and moves the period once', async () => {
    const s = await subscribe();
    const before = await subscriptionOf(s);
    clock.advance(27 * DAY);
    const answers = await Promise.all(Array.from({ length: 10 }, () => charge(renewal(s))));
    const bodies = answers.map((res) => res.expect(200).body);
    assert.equal(new Set(bodies.map((b) => b.transactionId)).size, 1, 'every answer names the one charge');
    assert.equal(bodies.filter((b) => b.duplicate === false).length, 1);
    const after = await subscriptionOf(s);
    const moved = Date.parse(after.currentPeriodEnd) - Date.parse(before.currentPeriodEnd);
    assert.ok(moved >= 28 * DAY && moved <= 31 * DAY, 'one month, not ten');
    const charges = await server.db
      .selectFrom('sandbox_payments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('customer_id', '=', after.partnerSubscriptionId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(charges.n), 2, 'the first payment and one renewal at the partner');
  });

  test('sent again after it was paid, answers the same charge for a day, then renewal_not_due', async () => {
    const s = await subscribe();
    clock.advance(29 * DAY);
    const paid = (await charge(renewal(s))).expect(200).body;
    clock.advance(60 * 60_000);
    const repeat = (await charge(renewal(s))).expect(200).body;
    assert.deepEqual(repeat, { ...paid, duplicate: true });
    clock.advance(DAY);
    const again = assertError(await charge(renewal(s)), 409, 'renewal_not_due');
    assert.deepEqual(again.details, [{ field: 'currentPeriodEnd', message: paid.currentPeriodEnd }]);
    const orders = await server.db
      .selectFrom('orders')
      .select('id')
      .where('product_id', '=', s.product.id)
      .execute();
    assert.equal(orders.length, 2, 'the purchase and one renewal');
  });

  test('is refused before the renewal window opens', async () => {
    const s = await subscribe();
    assertError(await charge(renewal(s)), 409, 'renewal_not_due');
  });

  test('with a wrong secret or an unknown subscription answers 401 the same way, and charges nothing', async () => {
    const s = await subscribe();
    clock.advance(28 * DAY);
    const wrong = assertError(
      await charge(renewal(s, { callback_secret: 'cbs_wrong' })),
      401,
      'invalid_callback_secret',
    );
    const unknown = assertError(
      await charge(renewal(s, { subscription_id: '0190f7a0-0000-7000-8000-000000000000' })),
      401,
      'invalid_callback_secret',
    );
    assert.equal(wrong.message, unknown.message);
    const other = await subscribe();
    assertError(
      await charge(renewal(s, { callback_secret: other.product.callbackSecret })),
      401,
      'invalid_callback_secret',
    );
    assert.equal((await server.api.get('/orders', { token: s.seller.token })).expect(200).body.total, 1);
  });

  test('in another currency answers currency_mismatch naming the field', async () => {
    const s = await subscribe();
    clock.advance(28 * DAY);
    const error = assertError(await charge(renewal(s, { currency: 'USD' })), 400, 'currency_mismatch');
    assert.equal(error.details?.[0]?.field, 'currency');
    assertError(await charge(renewal(s, { amount: 9.999 })), 400, 'validation_failed');
    assertError(await charge(renewal(s, { amount: -1 })), 400, 'validation_failed');
    assertError(await charge({ subscription_id: s.subscriptionId }), 400, 'validation_failed');
  });

  test('declined at the partner answers 402, rejects the transaction and keeps the period', async () => {
    const s = await subscribe('4000000000000341');
    const before = await subscriptionOf(s);
    clock.advance(28 * DAY);
    const error = assertError(await charge(renewal(s)), 402, 'payment_declined');
    assert.match(error.message, /declined/);
    const transactionId = error.details?.[0]?.message as string;
    const status = (
      await server.api.post('/transaction/status', { transaction: transactionId }, { token: s.seller.token })
    ).expect(200).body;
    assert.equal(status.transactionStatus, 'rejected');
    assert.equal((await subscriptionOf(s)).currentPeriodEnd, before.currentPeriodEnd);
  });

  test('brings back a license that expired when the renewal was late', async () => {
    const s = await subscribe();
    clock.advance(35 * DAY);
    await server.service.modules.licenses.expireDue();
    assert.equal((await verify(s.licenseKey)).valid, false);
    const paid = (await charge(renewal(s))).expect(200).body;
    assert.ok(Date.parse(paid.currentPeriodEnd) > clock.now().getTime() + 27 * DAY, 'a full period from now');
    assert.equal((await verify(s.licenseKey)).valid, true);
  });
  test('through the SDK: chargeRenewal charges, and a wrong secret throws the 401 as an API error', async () => {
    const s = await subscribe();
    clock.advance(28 * DAY);
    const client = new CheckoutClient({ payUrl: server.service.payUrl });
    const wrong = await client
      .chargeRenewal({
        subscriptionId: s.subscriptionId,
        amount: 9.5,
        currency: 'EUR',
        callbackSecret: 'cbs_wrong',
      })
      .catch((error: unknown) => error);
    assert.ok(wrong instanceof LicensingApiError);
    assert.equal(wrong.status, 401);
    assert.equal(wrong.code, 'invalid_callback_secret');
    const paid = await client.chargeRenewal({
      subscriptionId: s.subscriptionId,
      amount: 9.5,
      currency: 'EUR',
      callbackSecret: s.product.callbackSecret,
    });
    assert.equal(paid.status, 'paid');
    assert.equal(paid.subscriptionId, s.subscriptionId);
  });
});

describe('cancel', () => {
  test('cancels once, then answers 409; renewals are refused and the card is released', async () => {
    const s = await subscribe();
    const canceled = (
      await server.api.post(`/subscriptions/${s.subscriptionId}/cancel`, undefined, { token: s.seller.token })
    ).expect(200).body;
    assert.deepEqual(Object.keys(canceled).sort(), ['canceledAt', 'id', 'status']);
    assert.equal(canceled.status, 'canceled');
    assert.equal(canceled.id, s.subscriptionId);
    assertError(
      await server.api.post(`/subscriptions/${s.subscriptionId}/cancel`, undefined, {
        token: s.seller.token,
      }),
      409,
      'subscription_inactive',
    );
    const row = await subscriptionOf(s);
    assert.equal(row.status, 'canceled');
    assert.equal(row.canceledAt, canceled.canceledAt);
    clock.advance(28 * DAY);
    assertError(await charge(renewal(s)), 409, 'subscription_inactive');
    const released = await server.db
      .selectFrom('sandbox_payments')
      .select('saved_released_at')
      .where('customer_id', '=', row.partnerSubscriptionId)
      .where('card', 'is not', null)
      .executeTakeFirstOrThrow();
    assert.ok(released.saved_released_at, 'the partner no longer holds the card for us');
    assert.equal((await verify(s.licenseKey)).valid, true, 'the paid period still counts');
  });

  test('two cancels at once: one succeeds, the other answers 409', async () => {
    const s = await subscribe();
    const results = await Promise.all(
      [1, 2].map(() =>
        server.api.post(`/subscriptions/${s.subscriptionId}/cancel`, undefined, { token: s.seller.token }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
  });

  test('another seller’s subscription is not found', async () => {
    const s = await subscribe();
    const other = await sellerWithApp(server);
    assertError(
      await server.api.post(`/subscriptions/${s.subscriptionId}/cancel`, undefined, { token: other.token }),
      404,
      'not_found',
    );
    assert.equal((await server.api.get('/subscriptions', { token: other.token })).expect(200).body.total, 0);
  });
});

describe('merchant webhooks', () => {
  test('deliver payment, renewal and cancel events signed with the product’s callback secret', async () => {
    const s = await subscribe('4242424242424242', { merchantWebhookUrl: `${receiver.url}/merchant` });
    clock.advance(28 * DAY);
    const paid = (await charge(renewal(s))).expect(200).body;
    (
      await server.api.post(`/subscriptions/${s.subscriptionId}/cancel`, undefined, { token: s.seller.token })
    ).expect(200);
    await server.service.modules.deliveryWorker.runOnce();
    // Up to four deliveries run side by side per endpoint: order them by event time, then kind.
    const rank = [
      'payment.succeeded',
      'subscription.created',
      'subscription.renewed',
      'subscription.canceled',
    ];
    const arrived = receiver.requests
      .filter((r) => r.path === '/merchant' && r.json.data.productId === s.product.id)
      .sort(
        (a, b) =>
          a.json.timestamp.localeCompare(b.json.timestamp) ||
          rank.indexOf(a.json.type) - rank.indexOf(b.json.type),
      );
    assert.deepEqual(
      arrived.map((r) => r.json.type),
      [
        'payment.succeeded',
        'subscription.created',
        'payment.succeeded',
        'subscription.renewed',
        'subscription.canceled',
      ],
    );
    for (const request of arrived) {
      const header = request.headers['x-svc-pay-signature'] as string;
      assert.ok(verifyMerchantSignature(s.product.callbackSecret, header, request.body, clock.now()));
      assert.equal(verifyMerchantSignature('cbs_other', header, request.body, clock.now()), false);
      assert.equal(
        request.headers['x-webhook-signature'],
        undefined,
        'never signed with a core webhook secret',
      );
      assert.equal('signature' in request.json, false);
    }
    assert.equal(arrived[0]?.json.data.licenseKey, s.licenseKey);
    assert.equal(arrived[3]?.json.data.transactionId, paid.transactionId);
    assert.equal(arrived[4]?.json.data.subscriptionId, s.subscriptionId);
  });

  test('follow a rotated secret and a changed URL; a product without a URL sends none', async () => {
    const s = await subscribe();
    // The worker runs every moment in production: the purchase's events go out (to nobody) first.
    await server.service.modules.deliveryWorker.runOnce();
    const rotated = (
      await server.api.post(`/products/${s.product.id}/rotate-callback-secret`, undefined, {
        token: s.seller.token,
      })
    ).expect(200).body;
    (
      await server.api.patch(
        `/products/${s.product.id}`,
        { merchantWebhookUrl: `${receiver.url}/moved` },
        { token: s.seller.token },
      )
    ).expect(200).body;
    await server.service.modules.deliveryWorker.runOnce();
    assert.equal(
      receiver.requests.filter((r) => r.json?.data?.productId === s.product.id).length,
      0,
      'events from before the URL was set are not sent',
    );
    (
      await server.api.post(`/subscriptions/${s.subscriptionId}/cancel`, undefined, { token: s.seller.token })
    ).expect(200);
    await server.service.modules.deliveryWorker.runOnce();
    const arrived = receiver.requests.filter((r) => r.json?.data?.productId === s.product.id);
    assert.deepEqual(
      arrived.map((r) => [r.path, r.json.type]),
      [['/moved', 'subscription.canceled']],
    );
    assert.ok(
      verifyMerchantSignature(
        rotated.callbackSecret,
        arrived[0]?.headers['x-svc-pay-signature'] as string,
        arrived[0]?.body as string,
        clock.now(),
      ),
    );
    const list = (await server.api.get('/webhooks', { token: s.seller.token })).expect(200).body;
    assert.equal(list.total, 0, 'merchant endpoints are not core webhooks');
  });

  test('the seller reads the product’s delivery log and redelivers with the current secret', async () => {
    const s = await subscribe();
    // The purchase's events go out (to nobody) before the URL is set, as in production.
    await server.service.modules.deliveryWorker.runOnce();
    const logs = (path = '') =>
      server.api.get(`/products/${s.product.id}/merchant-webhook/logs${path}`, { token: s.seller.token });
    const none = (await logs()).expect(200).body;
    assert.deepEqual([none.logs, none.total], [[], 0], 'no merchant URL yet: nothing was sent');

    (
      await server.api.patch(
        `/products/${s.product.id}`,
        { merchantWebhookUrl: `${receiver.url}/log-${s.product.id}` },
        { token: s.seller.token },
      )
    ).expect(200);
    receiver.answer((request) =>
      request.path === `/log-${s.product.id}` ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' },
    );
    try {
      (
        await server.api.post(`/subscriptions/${s.subscriptionId}/cancel`, undefined, {
          token: s.seller.token,
        })
      ).expect(200);
      await server.service.modules.deliveryWorker.runOnce();
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
    const failed = (await logs()).expect(200).body;
    assert.equal(failed.total, 1);
    assert.deepEqual(
      [failed.logs[0].eventType, failed.logs[0].statusCode, failed.logs[0].success],
      ['subscription.canceled', 503, false],
    );
    assert.equal(failed.logs[0].responseBody, 'busy');

    const rotated = (
      await server.api.post(`/products/${s.product.id}/rotate-callback-secret`, undefined, {
        token: s.seller.token,
      })
    ).expect(200).body;
    const sent = (
      await server.api.post(
        `/products/${s.product.id}/merchant-webhook/deliveries/${failed.logs[0].deliveryId}/redeliver`,
        undefined,
        { token: s.seller.token },
      )
    ).expect(200).body;
    assert.deepEqual([sent.success, sent.statusCode], [true, 200]);
    const again = receiver.requests.filter((r) => r.path === `/log-${s.product.id}`);
    assert.equal(again.length, 2);
    assert.equal(again[1]?.json.id, again[0]?.json.id, 'the same event id, so receivers de-duplicate');
    assert.ok(
      verifyMerchantSignature(
        rotated.callbackSecret,
        again[1]?.headers['x-svc-pay-signature'] as string,
        again[1]?.body as string,
        clock.now(),
      ),
      'signed with the secret as it is now',
    );
    const after = (await logs('?limit=1')).expect(200).body;
    assert.deepEqual([after.total, after.logs.length, after.logs[0].trigger], [2, 1, 'manual']);

    // Another seller sees neither the log nor the delivery; without a URL nothing is sent again.
    const other = await sellerWithApp(server);
    assertError(
      await server.api.get(`/products/${s.product.id}/merchant-webhook/logs`, { token: other.token }),
      404,
      'not_found',
    );
    assertError(
      await server.api.post(
        `/products/${s.product.id}/merchant-webhook/deliveries/${failed.logs[0].deliveryId}/redeliver`,
        undefined,
        { token: other.token },
      ),
      404,
      'not_found',
    );
    assert.equal(receiver.requests.filter((r) => r.path === `/log-${s.product.id}`).length, 2);
    (
      await server.api.patch(
        `/products/${s.product.id}`,
        { merchantWebhookUrl: null },
        { token: s.seller.token },
      )
    ).expect(200);
    assertError(
      await server.api.post(
        `/products/${s.product.id}/merchant-webhook/deliveries/${failed.logs[0].deliveryId}/redeliver`,
        undefined,
        { token: s.seller.token },
      ),
      409,
      'conflict',
    );
  });

  test('a receiver answering 410 Gone does not switch the product’s merchant webhook off', async () => {
    const path = `/gone-${Math.random().toString(36).slice(2)}`;
    const s = await subscribe('4242424242424242', { merchantWebhookUrl: `${receiver.url}${path}` });
    receiver.answer((request) => (request.path === path ? { status: 410 } : { status: 200, body: 'ok' }));
    try {
      await server.service.modules.deliveryWorker.runOnce();
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
    const gone = receiver.requests.filter((r) => r.path === path).length;
    assert.ok(gone >= 2, 'the purchase events were answered 410');

    // The seller's URL is the only switch: the next events go out, and the purchase's retries too.
    clock.advance(28 * DAY);
    (await charge(renewal(s))).expect(200);
    await server.service.modules.deliveryWorker.runOnce();
    const later = receiver.requests.filter((r) => r.path === path).slice(gone);
    assert.deepEqual(later.map((r) => r.json.type).sort(), [
      'payment.succeeded',
      'payment.succeeded',
      'subscription.created',
      'subscription.renewed',
    ]);
  });
});
