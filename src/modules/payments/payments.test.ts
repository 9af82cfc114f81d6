import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  createApiKey,
  createApp,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { buyWithSandbox, confirmPurchase, purchaseAsSeen, startPurchase } from '../../testing/purchases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { eventsForUser } from '../events/index.js';

/** Purchases through HTTP with the built-in sandbox partner. */
let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({ USER_TOKEN_TTL: '2592000' }, { clock, ownDatabase: true });
});
after(() => server.stop());

const GOOD = '4242 4242 4242 4242';
const DECLINED = '4000000000000002';

async function product(seller: SellerWithApp, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Pro', price: 19.99, currency: 'USD', ...extra },
      { token: seller.token },
    )
  ).expect(201).body;
}

describe('a sandbox purchase', () => {
  test('pays, issues one license for the product’s app, and shows up as order and transaction', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const intent = await startPurchase(server, item.id);
    assert.equal(intent.paymentProvider, 'sandbox');
    assert.equal(intent.testMode, true);
    assert.equal(intent.amount, 19.99);
    assert.match(intent.transactionId, /^txn_/);

    const pending = (
      await server.api.post(
        '/transaction/status',
        { transaction: intent.transactionId },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(pending.transactionStatus, 'pending');

    const paid = (await confirmPurchase(server, intent, GOOD)).expect(200).body;
    assert.equal(paid.transactionStatus, 'paid');
    assert.match(paid.licenseKey, /^[0-9A-Z]{5}(-[0-9A-Z]{5}){5}$/);

    const verified = (
      await server.api.post('/licenses/verify', { key: paid.licenseKey, appId: seller.appId })
    ).expect(200).body;
    assert.equal(verified.valid, true);
    assert.equal(verified.email, 'buyer@example.com');

    const status = (
      await server.api.post(
        '/transaction/status',
        { transaction: intent.transactionId },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(status.status, 200);
    assert.equal(status.transactionStatus, 'paid');
    assert.equal(status.transactionStatusReason, '');
    assert.match(status.info, /test mode/);
    assert.deepEqual(Object.keys(status.transaction).sort(), [
      'amount',
      'currency',
      'email',
      'licenseId',
      'paymentProvider',
      'productId',
      'statusReason',
      'timestamp',
      'transactionId',
      'transactionStatus',
    ]);
    assert.equal(status.transaction.productId, item.id);

    const order = (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).expect(
      200,
    ).body;
    assert.deepEqual(
      [order.status, order.transactionId, order.licenseId],
      ['paid', intent.transactionId, status.transaction.licenseId],
    );
    const license = (
      await server.api.get(`/apps/${seller.appId}/licenses/${order.licenseId}`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      [license.productId, license.email, license.expiresAt],
      [item.id, 'buyer@example.com', null],
    );
    const created = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.created',
    );
    assert.equal(created.length, 1);

    // Confirming again changes nothing and hands out no second license.
    assert.equal((await confirmPurchase(server, intent)).expect(200).body.licenseKey, null);
    assert.equal(
      (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).body.total,
      1,
    );
    assertError(
      await server.api.delete(`/products/${item.id}`, { token: seller.token }),
      409,
      'product_in_use',
    );
  });

  test('a declined card rejects the transaction with a reason; a good card afterwards pays it', async () => {
    const seller = await sellerWithApp(server);
    const intent = await startPurchase(server, (await product(seller)).id);
    const declined = (await confirmPurchase(server, intent, DECLINED)).expect(200).body;
    assert.deepEqual(
      [declined.transactionStatus, declined.statusReason, declined.licenseKey],
      ['rejected', 'Your card was declined.', null],
    );
    const status = (
      await server.api.post(
        '/transaction/status',
        { transaction: intent.transactionId },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(status.transactionStatusReason, 'Your card was declined.');
    const paid = (await confirmPurchase(server, intent, GOOD)).expect(200).body;
    assert.equal(paid.transactionStatus, 'paid');
  });

  test('a paid order queues one notice for the buyer (with the license key) and one for the seller', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const intent = await startPurchase(
      server,
      (await product(seller, { sendLicenseToCustomer: true })).id,
      'notify@example.com',
    );
    await Promise.all([confirmPurchase(server, intent, GOOD), confirmPurchase(server, intent, GOOD)]);
    const paid = (await confirmPurchase(server, intent)).expect(200).body;
    assert.equal(paid.transactionStatus, 'paid');
    const notices = await server.db
      .selectFrom('notifications')
      .select(['kind', 'to_email', 'to_user_id', 'data', 'status'])
      .where(sql<string>`data->>'orderId'`, '=', intent.orderId)
      .orderBy('kind')
      .execute();
    assert.deepEqual(
      notices.map((n) => [n.kind, n.to_email, n.to_user_id, n.status]),
      [
        ['purchase.buyer', 'notify@example.com', null, 'pending'],
        ['purchase.seller', null, seller.user.id, 'pending'],
      ],
    );
    const license = (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).expect(200)
      .body.licenseId;
    const key = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license}`, { token: seller.token })
    ).expect(200).body.key;
    assert.equal(notices[0]?.data.licenseKey, key);
    assert.equal(notices[1]?.data.licenseKey, undefined, 'the seller’s notice does not carry the key');
  });

  test('confirmations racing one another issue exactly one license', async () => {
    const seller = await sellerWithApp(server);
    const intent = await startPurchase(server, (await product(seller)).id);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => confirmPurchase(server, intent, GOOD).then((r) => r.expect(200).body)),
    );
    assert.equal(results.filter((r) => r.licenseKey !== null).length, 1);
    assert.ok(results.every((r) => r.transactionStatus === 'paid'));
    assert.equal(
      (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).body.total,
      1,
    );
  });

  test('only the buyer holding the client secret can confirm', async () => {
    const seller = await sellerWithApp(server);
    const intent = await startPurchase(server, (await product(seller)).id);
    assertError(
      await confirmPurchase(server, { ...intent, clientSecret: `${intent.clientSecret}x` }, GOOD),
      404,
      'not_found',
    );
    assertError(
      await confirmPurchase(
        server,
        { paymentIntentId: 'sb_pi_nope', clientSecret: intent.clientSecret },
        GOOD,
      ),
      404,
      'not_found',
    );
    assert.equal(
      (
        await server.api.post(
          '/transaction/status',
          { transaction: intent.transactionId },
          { token: seller.token },
        )
      ).body.transactionStatus,
      'pending',
    );
  });
});

describe('what can be bought', () => {
  test('an inactive product, or a recurring one without a card partner price, cannot be bought', async () => {
    const seller = await sellerWithApp(server);
    const inactive = await product(seller, { active: false });
    assertError(
      await server.api.post('/stripe/create-payment-intent', {
        productId: inactive.id,
        email: 'b@example.com',
      }),
      409,
      'product_unavailable',
    );
    const noPrice = await product(seller, { billingType: 'recurring', interval: 'month' });
    assertError(
      await server.api.post('/stripe/create-payment-intent', {
        productId: noPrice.id,
        email: 'b@example.com',
      }),
      409,
      'product_unavailable',
    );
    assertError(
      await server.api.post('/stripe/create-payment-intent', {
        productId: '00000000-0000-7000-8000-000000000000',
        email: 'b@example.com',
      }),
      404,
      'not_found',
    );
  });

  test('a recurring product’s license runs one interval', async () => {
    const seller = await sellerWithApp(server);
    const monthly = await product(seller, {
      billingType: 'recurring',
      interval: 'month',
      partnerPriceIdRecurring: 'price_1',
    });
    clock.set('2030-01-31T10:00:00.000Z');
    const paid = (await confirmPurchase(server, await startPurchase(server, monthly.id), GOOD)).expect(
      200,
    ).body;
    const result = (await server.api.post('/licenses/verify', { key: paid.licenseKey })).expect(200).body;
    assert.equal(result.expiresAt, '2030-03-03T10:00:00Z');
  });

  test('amounts reach the partner in the currency’s own minor units', async () => {
    const seller = await sellerWithApp(server);
    const cases: [number, string, number][] = [
      [19.99, 'USD', 1999],
      [1500, 'JPY', 1500],
      [12.345, 'KWD', 12345],
    ];
    for (const [price, currency, minor] of cases) {
      const intent = await startPurchase(server, (await product(seller, { price, currency })).id);
      const row = await server.db
        .selectFrom('sandbox_payments')
        .select(['amount_minor', 'currency'])
        .where('id', '=', intent.paymentIntentId)
        .executeTakeFirstOrThrow();
      assert.deepEqual([Number(row.amount_minor), row.currency], [minor, currency]);
      assert.equal(intent.amount, price);
    }
  });
});

describe('an order keeps the terms it was opened with', () => {
  const subscriptionsOf = async (seller: SellerWithApp, productId: string) =>
    (await server.api.get(`/subscriptions?productId=${productId}`, { token: seller.token })).expect(200).body
      .subscriptions as { currentPeriodEnd: string }[];
  const expiryOf = async (licenseKey: string) =>
    (await server.api.post('/licenses/verify', { key: licenseKey })).expect(200).body.expiresAt;

  test('a yearly subscription switched to monthly and repriced while its payment is open still gives the year charged for', async () => {
    clock.set('2031-05-10T10:00:00.000Z');
    const seller = await sellerWithApp(server);
    const yearly = await product(seller, {
      price: 120,
      currency: 'EUR',
      billingType: 'recurring',
      interval: 'year',
      partnerPriceIdRecurring: 'price_yearly',
    });
    const intent = await startPurchase(server, yearly.id, 'yearly@example.com');
    assert.equal(intent.amount, 120);
    // The buyer is in a 3-D Secure challenge when the seller changes the product.
    (
      await server.api.patch(
        `/products/${yearly.id}`,
        { interval: 'month', price: 10 },
        { token: seller.token },
      )
    ).expect(200);
    const paid = (await confirmPurchase(server, intent, GOOD)).expect(200).body;
    assert.equal(paid.transactionStatus, 'paid');
    assert.equal(await expiryOf(paid.licenseKey), '2032-05-10T10:00:00Z');
    assert.deepEqual(
      (await subscriptionsOf(seller, yearly.id)).map((sub) => sub.currentPeriodEnd),
      ['2032-05-10T10:00:00.000Z'],
    );
    const order = (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).expect(
      200,
    ).body;
    assert.deepEqual([order.amount, order.currency], [120, 'EUR']);

    // A purchase opened after the change buys the month at the new price.
    const later = await startPurchase(server, yearly.id, 'monthly@example.com');
    assert.equal(later.amount, 10);
    const laterPaid = (await confirmPurchase(server, later, GOOD)).expect(200).body;
    assert.equal(await expiryOf(laterPaid.licenseKey), '2031-06-10T10:00:00Z');
  });

  test('a one-time product made a subscription, or a subscription made one-time, while the payment is open gives what the order was', async () => {
    clock.set('2031-08-01T08:00:00.000Z');
    const seller = await sellerWithApp(server);
    const oneTime = await product(seller);
    const monthly = await product(seller, {
      billingType: 'recurring',
      interval: 'month',
      partnerPriceIdRecurring: 'price_monthly',
    });
    const perpetual = await startPurchase(server, oneTime.id, 'once@example.com');
    const subscribed = await startPurchase(server, monthly.id, 'monthly@example.com');
    (
      await server.api.patch(
        `/products/${oneTime.id}`,
        { billingType: 'recurring', interval: 'year', partnerPriceIdRecurring: 'price_now_yearly' },
        { token: seller.token },
      )
    ).expect(200);
    (
      await server.api.patch(
        `/products/${monthly.id}`,
        { billingType: 'one_time', interval: null, partnerPriceIdRecurring: null },
        { token: seller.token },
      )
    ).expect(200);

    const once = (await confirmPurchase(server, perpetual, GOOD)).expect(200).body;
    assert.equal(await expiryOf(once.licenseKey), null);
    assert.deepEqual(await subscriptionsOf(seller, oneTime.id), []);
    const sub = (await confirmPurchase(server, subscribed, GOOD)).expect(200).body;
    assert.equal(await expiryOf(sub.licenseKey), '2031-09-01T08:00:00Z');
    assert.deepEqual(
      (await subscriptionsOf(seller, monthly.id)).map((row) => row.currentPeriodEnd),
      ['2031-09-01T08:00:00.000Z'],
    );
  });
});

describe('a paid transaction follows its license', () => {
  test('suspended or revoked reads canceled with the reason, expired stays paid, reinstated is paid again', async () => {
    clock.set('2032-03-01T10:00:00.000Z');
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const { intent, paid } = await buyWithSandbox(server, item.id, 'ann@example.com');
    const waiting = await startPurchase(server, item.id, 'later@example.com');
    const { licenseId } = (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).body;
    const license = `/apps/${seller.appId}/licenses/${licenseId}`;
    const act = async (action: 'suspend' | 'reinstate' | 'revoke') =>
      (await server.api.post(`${license}/${action}`, undefined, { token: seller.token })).expect(200);
    const expireAt = async (expiresAt: string | null) =>
      (await server.api.patch(license, { expiresAt }, { token: seller.token })).expect(200);
    const seen = () => purchaseAsSeen(server, seller.token, intent);
    const validate = async () => {
      const answer = (
        await server.pay.post('/api/checkout/mirror/validate', {
          license: paid.licenseKey,
          email: 'ann@example.com',
        })
      ).expect(200).body;
      return [answer.verified, answer.code];
    };

    assert.deepEqual(await seen(), {
      status: 'paid',
      reason: '',
      timestamp: '2032-03-01T10:00:00.000Z',
      inDefaultList: true,
    });
    assert.deepEqual(await validate(), [true, undefined]);

    clock.advance(60_000);
    await act('suspend');
    assert.deepEqual(await seen(), {
      status: 'canceled',
      reason: 'The license is suspended',
      timestamp: '2032-03-01T10:01:00.000Z',
      inDefaultList: false,
    });
    assert.deepEqual(await validate(), [false, 'license_suspended']);

    clock.advance(60_000);
    await act('reinstate');
    assert.deepEqual(await seen(), {
      status: 'paid',
      reason: '',
      timestamp: '2032-03-01T10:02:00.000Z',
      inDefaultList: true,
    });
    assert.deepEqual(await validate(), [true, undefined]);

    // An expired license is a completed purchase whose term ended: still paid, and the reason says so.
    await expireAt('2032-03-01T11:00:00.000Z');
    clock.set('2032-03-01T12:00:00.000Z');
    assert.deepEqual(await seen(), {
      status: 'paid',
      reason: 'The license has expired',
      timestamp: '2032-03-01T10:02:00.000Z',
      inDefaultList: true,
    });
    assert.deepEqual(await validate(), [false, 'license_expired']);
    await expireAt(null);
    assert.deepEqual((await seen()).reason, '');
    assert.deepEqual(await validate(), [true, undefined]);

    clock.advance(60_000);
    await act('revoke');
    assert.deepEqual(await seen(), {
      status: 'canceled',
      reason: 'The license was revoked',
      timestamp: '2032-03-01T12:01:00.000Z',
      inDefaultList: false,
    });
    assert.deepEqual(await validate(), [false, 'license_revoked']);

    // Each row of a batch reads its own license; the one still waiting for payment stays pending.
    const batch = (
      await server.api.post(
        '/transactions',
        { transactionsId: [intent.transactionId, waiting.transactionId], limits: 'all' },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.deepEqual(
      batch.transactions.map((t: { transactionStatus: string }) => t.transactionStatus),
      ['canceled', 'pending'],
    );
    const paidOnly = (await server.api.get('/orders?status=paid', { token: seller.token })).expect(200).body;
    assert.equal(paidOnly.total, 0, 'a revoked purchase is not listed as paid');
  });
});

describe('orders and transactions for the seller', () => {
  test('lists paid and pending orders with filters; transactions in relative windows, at most 200 ids', async () => {
    clock.set('2031-06-01T12:00:00.000Z');
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const old = await startPurchase(server, item.id, 'old@example.com');
    await confirmPurchase(server, old, GOOD);
    clock.set('2031-07-05T12:00:00.000Z');
    const recent = await startPurchase(server, item.id, 'recent@example.com');
    await confirmPurchase(server, recent, GOOD);
    clock.set('2031-07-14T08:00:00.000Z');
    const today = await startPurchase(server, item.id, 'today@example.com');
    const rejected = await startPurchase(server, item.id, 'declined@example.com');
    await confirmPurchase(server, rejected, DECLINED);
    clock.set('2031-07-14T20:00:00.000Z');
    // Six weeks on, the seller signs in again.
    seller.token = (
      await server.api.post('/auth/login', { email: seller.user.email, password: TEST_PASSWORD })
    ).expect(200).body.token;

    const list = (await server.api.get('/orders', { token: seller.token })).expect(200).body;
    assert.deepEqual(
      list.orders.map((o: { id: string }) => o.id),
      [today.orderId, recent.orderId, old.orderId],
    );
    assert.equal(list.orders[0].licenseId, undefined, 'the list leaves detail fields out');
    const onlyRejected = (await server.api.get('/orders?status=rejected', { token: seller.token })).expect(
      200,
    ).body;
    assert.deepEqual(
      onlyRejected.orders.map((o: { id: string }) => o.id),
      [rejected.orderId],
    );
    assert.equal(
      (await server.api.get('/orders?email=RECENT@example.com', { token: seller.token })).body.total,
      1,
    );
    assert.equal(
      (await server.api.get('/orders?from=2031-07-01T00:00:00Z', { token: seller.token })).body.total,
      2,
    );

    const ids = [old, recent, today, rejected].map((i) => i.transactionId);
    const batch = async (limits: string, email?: string) =>
      (
        await server.api.post(
          '/transactions',
          { transactionsId: ids, limits, ...(email ? { email } : {}) },
          { token: seller.token },
        )
      ).expect(200).body;
    assert.equal((await batch('all')).total, 4);
    assert.equal((await batch('month')).total, 3);
    assert.equal((await batch('week')).total, 2);
    const todayBatch = await batch('today');
    assert.deepEqual(
      todayBatch.transactions.map((t: { transactionId: string }) => t.transactionId).sort(),
      [today.transactionId, rejected.transactionId].sort(),
    );
    assert.equal(todayBatch.from, '2031-07-14T00:00:00.000Z');
    assert.equal((await batch('all', 'old@example.com')).total, 1);

    const tooMany = Array.from({ length: 201 }, (_, i) => `txn_${i}`);
    const error = assertError(
      await server.api.post(
        '/transactions',
        { transactionsId: tooMany, limits: 'all' },
        { token: seller.token },
      ),
      400,
      'validation_failed',
    );
    assert.equal(error.details?.[0]?.field, 'transactionsId');
    assertError(
      await server.api.post(
        '/transactions',
        { transactionsId: ids, limits: 'year' },
        { token: seller.token },
      ),
      400,
      'validation_failed',
    );
  });

  test('another seller sees none of it; an API key sees only its app', async () => {
    const seller = await sellerWithApp(server);
    const intent = await startPurchase(server, (await product(seller)).id);
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.get(`/orders/${intent.orderId}`, { token: stranger.token }),
      404,
      'not_found',
    );
    assertError(
      await server.api.post(
        '/transaction/status',
        { transaction: intent.transactionId },
        { token: stranger.token },
      ),
      404,
      'not_found',
    );
    assert.equal(
      (
        await server.api.post(
          '/transactions',
          { transactionsId: [intent.transactionId], limits: 'all' },
          { token: stranger.token },
        )
      ).body.total,
      0,
    );
    const sibling = await createApp(server, seller.token, 'Sibling');
    const { key } = await createApiKey(server, seller.token, sibling.id);
    assertError(await server.api.get(`/orders/${intent.orderId}`, { token: key }), 403, 'app_scope_mismatch');
    assert.equal((await server.api.get('/orders', { token: key })).body.total, 0);
  });
});
