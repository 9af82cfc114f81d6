import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FakeStripe, startFakeStripe } from '../../testing/fake-stripe.js';
import {
  createApiKey,
  createApp,
  issueLicense,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { paidPurchase, sendStripeEvent, startPurchase } from '../../testing/purchases.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * GET /v1/overview: a seller's own figures, made through the API while a test clock walks from
 * December 2025 to March 2026, so each lands in a known day or month. Payments go through the
 * Stripe SDK against a local fake, which also brings the dispute. A second seller with a sale of
 * their own, and a third with nothing, prove that each sees only their own rows.
 */
const WEBHOOK_SECRET = 'whsec_overview_test_secret';
const NOW = '2026-03-12T12:00:00.000Z';
let server: TestServer;
let fake: FakeStripe;
let clock: TestClock;
let receiver: Receiver;
let owner: Seller;
let stranger: Seller;
let empty: Seller;
const ids = {
  usdApp: '',
  eurApp: '',
  eurKey: '',
  disputedOrder: '',
  failingHook: '',
  disabledHook: '',
  strangerApp: '',
};

async function signIn(seller: Seller): Promise<string> {
  const res = await server.api.post('/auth/login', { email: seller.user.email, password: TEST_PASSWORD });
  return res.expect(200).body.token;
}

async function verify(body: Record<string, unknown>, valid: boolean) {
  const answer = (await server.api.post('/licenses/verify', body)).expect(200).body;
  assert.equal(answer.valid, valid, JSON.stringify(answer));
}

/**
 * The owner's story (UTC):
 * - 2025-12-15 10:00: owner, stranger and an empty seller register. The owner has a USD app
 *   (product USD 19.99) and a EUR app (product EUR 10); one USD order paid.
 * - 2026-03-02 09:00: two USD orders paid, one EUR order paid, one USD order left pending; a
 *   license (two devices) issued, activated on two devices, verified valid three times.
 * - 2026-03-05 12:00: the EUR order is disputed (its license is suspended); the stranger's USD
 *   order is paid. A verification of the suspended license answers invalid.
 * - 2026-03-10 08:00: a webhook whose receiver answers 500 fails its delivery; another is
 *   disabled by the seller.
 * - 2026-03-12 12:00: now; the verification counts are flushed.
 */
before(async () => {
  fake = await startFakeStripe();
  receiver = await startReceiver();
  clock = testClock('2025-12-15T10:00:00.000Z');
  server = await startTestServer(
    {
      STRIPE_SECRET_KEY: 'sk_test_fake',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: fake.url,
      USER_TOKEN_TTL: '2592000',
      VERIFICATION_FLUSH_MS: '3600000',
    },
    { clock, ownDatabase: true },
  );
  owner = await signUp(server);
  stranger = await signUp(server);
  empty = await signUp(server);
  const token = { token: owner.token };
  ids.usdApp = (await createApp(server, owner.token, 'Usd App')).id;
  ids.eurApp = (await createApp(server, owner.token, 'Eur App')).id;
  ids.eurKey = (await createApiKey(server, owner.token, ids.eurApp)).key;
  const product = async (seller: Seller, appId: string, body: Record<string, unknown>) =>
    (await server.api.post('/products', { appId, name: 'Pro', ...body }, { token: seller.token })).expect(201)
      .body.id as string;
  const usd = await product(owner, ids.usdApp, { price: 19.99, currency: 'USD' });
  const eur = await product(owner, ids.eurApp, { price: 10, currency: 'EUR' });
  ids.strangerApp = (await createApp(server, stranger.token, 'Stranger App')).id;
  const strangerUsd = await product(stranger, ids.strangerApp, { price: 7, currency: 'USD' });
  await paidPurchase(server, fake, usd);

  clock.set('2026-03-02T09:00:00.000Z');
  // Sessions last at most 30 days: everyone signs in again.
  for (const seller of [owner, stranger, empty]) seller.token = await signIn(seller);
  token.token = owner.token;
  await paidPurchase(server, fake, usd);
  await paidPurchase(server, fake, usd);
  const disputed = await paidPurchase(server, fake, eur);
  ids.disputedOrder = disputed.orderId;
  await startPurchase(server, usd);
  const license = await issueLicense(server, { token: owner.token, appId: ids.usdApp }, { maxDevices: 2 });
  await verify({ key: license.key, hwuid: 'laptop' }, true);
  await verify({ key: license.key, hwuid: 'desktop' }, true);
  await verify({ key: license.key, hwuid: 'laptop' }, true);

  clock.set('2026-03-05T12:00:00.000Z');
  (
    await sendStripeEvent(server, WEBHOOK_SECRET, 'charge.dispute.created', {
      id: 'dp_overview',
      object: 'dispute',
      payment_intent: disputed.paymentIntentId,
      amount: 1000,
      currency: 'eur',
      reason: 'fraudulent',
      status: 'needs_response',
    })
  ).expect(200);
  const order = (await server.api.get(`/orders/${ids.disputedOrder}`, token)).expect(200).body;
  const disputedLicense = (
    await server.api.get(`/apps/${ids.eurApp}/licenses/${order.licenseId}`, token)
  ).expect(200).body;
  assert.equal(disputedLicense.status, 'suspended');
  await verify({ key: disputedLicense.key }, false);
  await paidPurchase(server, fake, strangerUsd);

  clock.set('2026-03-10T08:00:00.000Z');
  receiver.answer((request) => (request.path === '/down' ? { status: 500, body: 'down' } : { status: 200 }));
  ids.failingHook = (
    await server.api.post(
      '/webhooks',
      { url: `${receiver.url}/down`, events: ['license.created'], appId: ids.usdApp },
      token,
    )
  ).expect(201).body.id;
  ids.disabledHook = (
    await server.api.post('/webhooks', { url: `${receiver.url}/off`, events: ['license.created'] }, token)
  ).expect(201).body.id;
  (await server.api.post(`/webhooks/${ids.disabledHook}/disable`, undefined, token)).expect(200);
  await issueLicense(server, { token: owner.token, appId: ids.usdApp });
  await server.service.modules.deliveryWorker.runOnce();
  const failing = (await server.api.get(`/webhooks/${ids.failingHook}`, token)).expect(200).body;
  assert.equal(failing.status, 'failing');

  clock.set(NOW);
  assert.equal(await server.service.modules.verificationCounts.flush(), true);
});
after(async () => {
  await server?.stop();
  await fake?.close();
  await receiver?.close();
});

const overview = async (token: string, query = '') =>
  (await server.api.get(`/overview${query}`, { token })).expect(200).body;

/** The days of a 30-day series whose `field` is not zero, as "MM-DD": value. */
function nonZero(points: Record<string, unknown>[], field: string) {
  return Object.fromEntries(
    points
      .filter((point) => point[field] !== 0)
      .map((point) => [String(point.start).slice(5, 10), point[field]]),
  );
}

describe('GET /v1/overview', () => {
  test('shows the seller revenue and paid orders per currency over 30 days and 12 months', async () => {
    const body = await overview(owner.token);
    assert.equal(body.appId, null);
    assert.equal(body.generatedAt, NOW);
    const days = body.revenue.last30Days;
    assert.equal(days.from, '2026-02-11T00:00:00.000Z');
    assert.equal(days.to, NOW);
    assert.deepEqual(
      days.series.map((s: { currency: string; amount: number; orders: number }) => [
        s.currency,
        s.amount,
        s.orders,
      ]),
      [
        ['EUR', 10, 1],
        ['USD', 39.98, 2],
      ],
      'the December sale is older than 30 days; the pending order is no revenue',
    );
    for (const series of days.series) {
      assert.equal(series.points.length, 30);
      assert.equal(series.points[0].start, days.from);
    }
    assert.deepEqual(nonZero(days.series[1].points, 'amount'), { '03-02': 39.98 });
    const months = body.revenue.last12Months;
    assert.equal(months.from, '2025-04-01T00:00:00.000Z');
    const usd = months.series.find((s: { currency: string }) => s.currency === 'USD');
    assert.equal(usd.points.length, 12);
    assert.equal(usd.amount, 59.97);
    assert.equal(usd.orders, 3);
    assert.deepEqual(
      usd.points
        .filter((p: { orders: number }) => p.orders > 0)
        .map((p: { start: string; amount: number }) => [p.start.slice(0, 7), p.amount]),
      [
        ['2025-12', 19.99],
        ['2026-03', 39.98],
      ],
    );
  });

  test('counts licenses, verifications and device activations of the seller only', async () => {
    const body = await overview(owner.token);
    // Four paid orders issued four licenses, plus two issued by hand; the disputed one is suspended.
    assert.deepEqual(body.licenses, {
      total: 6,
      byStatus: { active: 5, trial: 0, suspended: 1, revoked: 0, expired: 0 },
    });
    assert.deepEqual(body.activity.totals, { valid: 3, invalid: 1, activations: 2 });
    assert.equal(body.activity.points.length, 30);
    assert.deepEqual(nonZero(body.activity.points, 'valid'), { '03-02': 3 });
    assert.deepEqual(nonZero(body.activity.points, 'invalid'), { '03-05': 1 });
    assert.deepEqual(nonZero(body.activity.points, 'activations'), { '03-02': 2 });
  });

  test('lists failing and disabled webhook endpoints, open disputes and the latest orders', async () => {
    const body = await overview(owner.token);
    assert.equal(body.webhooks.failing, 1);
    assert.equal(body.webhooks.disabled, 1);
    assert.deepEqual(
      body.webhooks.endpoints.map((e: { id: string; status: string; consecutiveFailures: number }) => [
        e.id,
        e.status,
        e.consecutiveFailures,
      ]),
      [
        [ids.disabledHook, 'disabled', 0],
        [ids.failingHook, 'failing', 1],
      ],
    );
    assert.equal(body.webhooks.endpoints[1].failingSince, '2026-03-10T08:00:00.000Z');
    assert.equal(body.disputes.open, 1);
    assert.deepEqual(
      body.disputes.latest.map((d: { orderId: string; status: string; amount: number; currency: string }) => [
        d.orderId,
        d.status,
        d.amount,
        d.currency,
      ]),
      [[ids.disputedOrder, 'needs_response', 10, 'EUR']],
    );
    const latest = body.orders.latest;
    assert.equal(latest.length, 5);
    assert.deepEqual(
      latest.map((o: { status: string; currency: string; amount: number }) => [
        o.status,
        o.currency,
        o.amount,
      ]),
      [
        ['pending', 'USD', 19.99],
        ['canceled', 'EUR', 10],
        ['paid', 'USD', 19.99],
        ['paid', 'USD', 19.99],
        ['paid', 'USD', 19.99],
      ],
    );
    // The disputed order reads as the order routes show it (its license is suspended).
    const disputed = (await server.api.get(`/orders/${ids.disputedOrder}`, { token: owner.token })).expect(
      200,
    ).body;
    assert.equal(latest[1].id, ids.disputedOrder);
    assert.equal(latest[1].status, disputed.status);
    assert.equal(latest[1].productName, 'Pro');
  });

  test('one app: a user token names it, an API key sees its own app only', async () => {
    const usdOnly = await overview(owner.token, `?appId=${ids.usdApp}`);
    assert.equal(usdOnly.appId, ids.usdApp);
    assert.deepEqual(
      usdOnly.revenue.last30Days.series.map((s: { currency: string }) => s.currency),
      ['USD'],
    );
    assert.equal(usdOnly.disputes.open, 0);
    assert.deepEqual(
      usdOnly.webhooks.endpoints.map((e: { id: string }) => e.id),
      [ids.failingHook],
      'an endpoint of all apps is the account’s, not one app’s',
    );
    const byKey = await overview(ids.eurKey);
    assert.equal(byKey.appId, ids.eurApp);
    assert.deepEqual(
      byKey.revenue.last12Months.series.map((s: { currency: string; amount: number }) => [
        s.currency,
        s.amount,
      ]),
      [['EUR', 10]],
    );
    assert.equal(byKey.disputes.open, 1);
    assert.deepEqual(byKey.activity.totals, { valid: 0, invalid: 1, activations: 0 });
    assert.deepEqual(byKey, await overview(ids.eurKey, `?appId=${ids.eurApp}`));
    assertError(
      await server.api.get(`/overview?appId=${ids.usdApp}`, { token: ids.eurKey }),
      403,
      'app_scope_mismatch',
    );
  });

  test('another seller sees only their own figures, and an empty account sees zeros', async () => {
    const theirs = await overview(stranger.token);
    assert.deepEqual(
      theirs.revenue.last30Days.series.map((s: { currency: string; amount: number; orders: number }) => [
        s.currency,
        s.amount,
        s.orders,
      ]),
      [['USD', 7, 1]],
    );
    assert.equal(theirs.licenses.total, 1);
    assert.deepEqual(theirs.activity.totals, { valid: 0, invalid: 0, activations: 0 });
    assert.deepEqual(theirs.webhooks, { failing: 0, disabled: 0, endpoints: [] });
    assert.deepEqual(theirs.disputes, { open: 0, latest: [] });
    assert.deepEqual(
      theirs.orders.latest.map((o: { amount: number }) => o.amount),
      [7],
    );
    const none = await overview(empty.token);
    assert.deepEqual(none.revenue.last30Days.series, []);
    assert.deepEqual(none.revenue.last12Months.series, []);
    assert.deepEqual(none.licenses, {
      total: 0,
      byStatus: { active: 0, trial: 0, suspended: 0, revoked: 0, expired: 0 },
    });
    assert.deepEqual(none.activity.totals, { valid: 0, invalid: 0, activations: 0 });
    assert.equal(none.activity.points.length, 30);
    assert.deepEqual(none.webhooks, { failing: 0, disabled: 0, endpoints: [] });
    assert.deepEqual(none.disputes, { open: 0, latest: [] });
    assert.deepEqual(none.orders.latest, []);
    // The owner's app is not theirs to name.
    assertError(
      await server.api.get(`/overview?appId=${ids.usdApp}`, { token: stranger.token }),
      404,
      'not_found',
    );
  });

  test('refuses unknown parameters and a malformed appId, naming the field', async () => {
    for (const [query, field] of [
      ['?appId=nope', 'appId'],
      ['?since=2026-01-01T00:00:00Z', 'since'],
    ]) {
      const error = assertError(
        await server.api.get(`/overview${query}`, { token: owner.token }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((detail) => detail.field === field),
        `${query}: ${JSON.stringify(error)}`,
      );
    }
    assertError(await server.api.get('/overview'), 401, 'unauthorized');
  });
});

/** A period's revenue as [currency, amount, orders]. */
const revenueOf = (entries: { currency: string; amount: number; orders: number }[]) =>
  entries.map((entry) => [entry.currency, entry.amount, entry.orders]);

describe('GET /v1/overview with a period (from, to) and the period before it', () => {
  test('without from and to the period is the last 30 days, compared with the 30 days before', async () => {
    const body = await overview(owner.token);
    const { period } = body;
    assert.equal(period.from, '2026-02-11T00:00:00.000Z');
    assert.equal(period.to, NOW);
    assert.equal(period.days, 30);
    assert.deepEqual(period.revenue, body.revenue.last30Days.series, 'the same figures as last30Days');
    assert.deepEqual(period.activity, { totals: body.activity.totals, points: body.activity.points });
    assert.deepEqual(period.previous, {
      from: '2026-01-12T00:00:00.000Z',
      to: '2026-02-11T00:00:00.000Z',
      revenue: [],
      activity: { valid: 0, invalid: 0, activations: 0 },
    });
  });

  test('a week holds its own days, and the week before holds the sales, verifications and activations of 2 March', async () => {
    const body = await overview(owner.token, '?from=2026-03-03T00:00:00.000Z&to=2026-03-09T23:59:59.999Z');
    const { period } = body;
    assert.equal(period.from, '2026-03-03T00:00:00.000Z');
    assert.equal(period.to, '2026-03-09T23:59:59.999Z');
    assert.equal(period.days, 7);
    assert.deepEqual(period.revenue, [], 'no sale from 3 to 9 March');
    assert.equal(period.activity.points.length, 7);
    assert.deepEqual(period.activity.totals, { valid: 0, invalid: 1, activations: 0 });
    assert.deepEqual(nonZero(period.activity.points, 'invalid'), { '03-05': 1 });
    assert.deepEqual(period.previous.from, '2026-02-24T00:00:00.000Z');
    assert.deepEqual(period.previous.to, '2026-03-03T00:00:00.000Z');
    assert.deepEqual(revenueOf(period.previous.revenue), [
      ['EUR', 10, 1],
      ['USD', 39.98, 2],
    ]);
    assert.deepEqual(period.previous.activity, { valid: 3, invalid: 0, activations: 2 });
    // The fixed windows do not move with the period.
    assert.equal(body.revenue.last30Days.from, '2026-02-11T00:00:00.000Z');
    assert.equal(body.activity.points.length, 30);
  });

  test('a period in the past counts whole days: December holds the first sale, November nothing', async () => {
    const { period } = await overview(owner.token, '?from=2025-12-01T00:00:00Z&to=2025-12-31T23:59:59Z');
    assert.equal(period.days, 31);
    assert.deepEqual(
      period.revenue.map((s: { currency: string; amount: number; orders: number }) => [
        s.currency,
        s.amount,
        s.orders,
      ]),
      [['USD', 19.99, 1]],
    );
    assert.deepEqual(nonZero(period.revenue[0].points, 'amount'), { '12-15': 19.99 });
    assert.equal(period.previous.from, '2025-10-31T00:00:00.000Z');
    assert.equal(period.previous.to, '2025-12-01T00:00:00.000Z');
    assert.deepEqual(period.previous.revenue, []);

    // A from in the middle of a day starts the period with that whole day.
    const since = await overview(owner.token, '?from=2026-03-02T15:00:00Z');
    assert.equal(since.period.from, '2026-03-02T00:00:00.000Z');
    assert.equal(since.period.to, NOW);
    assert.equal(since.period.days, 11);
    assert.deepEqual(revenueOf(since.period.revenue), [
      ['EUR', 10, 1],
      ['USD', 39.98, 2],
    ]);
    assert.equal(since.period.previous.from, '2026-02-19T00:00:00.000Z');

    // Only `to`: the 30 days ending with its day.
    const until = await overview(owner.token, '?to=2025-12-20T08:00:00Z');
    assert.equal(until.period.from, '2025-11-21T00:00:00.000Z');
    assert.equal(until.period.days, 30);
    assert.deepEqual(revenueOf(until.period.revenue), [['USD', 19.99, 1]]);
  });

  test('a period of one app, through its API key, holds that app’s figures only', async () => {
    const query = '?from=2026-02-24T00:00:00Z&to=2026-03-09T23:59:59Z';
    const byKey = await overview(ids.eurKey, query);
    assert.deepEqual(revenueOf(byKey.period.revenue), [['EUR', 10, 1]]);
    assert.deepEqual(byKey.period.activity.totals, { valid: 0, invalid: 1, activations: 0 });
    const usd = await overview(owner.token, `${query}&appId=${ids.usdApp}`);
    assert.deepEqual(revenueOf(usd.period.revenue), [['USD', 39.98, 2]]);
    assert.deepEqual(usd.period.activity.totals, { valid: 3, invalid: 0, activations: 2 });
    const theirs = await overview(stranger.token, query);
    assert.deepEqual(revenueOf(theirs.period.revenue), [['USD', 7, 1]]);
    assert.deepEqual(theirs.period.activity.totals, { valid: 0, invalid: 0, activations: 0 });
  });

  test('refuses a malformed or reversed period, or one over 366 days, naming the field', async () => {
    const cases: [string, string, RegExp][] = [
      ['?from=yesterday', 'from', /date-time/],
      ['?from=2026-03-01', 'from', /date-time/],
      ['?to=2026-13-01T00:00:00Z', 'to', /date-time/],
      ['?from=2026-03-05T00:00:00Z&to=2026-03-01T00:00:00Z', 'from', /earlier than to/],
      ['?from=2026-03-05T00:00:00Z&to=2026-03-05T00:00:00Z', 'from', /earlier than to/],
      ['?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from', /at most 366/],
      ['?days=7', 'days', /.+/],
    ];
    for (const [query, field, message] of cases) {
      const error = assertError(
        await server.api.get(`/overview${query}`, { token: owner.token }),
        400,
        'validation_failed',
      );
      const detail = error.details?.find((d) => d.field === field);
      assert.ok(detail, `${query}: ${JSON.stringify(error)}`);
      assert.match(detail.message, message, query);
    }
    // 366 days is the longest period.
    const year = await overview(owner.token, '?from=2025-03-13T00:00:00Z&to=2026-03-13T00:00:00Z');
    assert.equal(year.period.days, 366);
    assert.equal(year.period.activity.points.length, 366);
  });
});
