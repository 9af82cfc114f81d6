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
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { paidPurchase, sendStripeEvent, startPurchase } from '../../testing/purchases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * Admin analytics over a database of their own, so every count is exact. The data is made
 * through the API while a test clock walks through March 2026, so it lands in known buckets;
 * payments go through the Stripe SDK against a local fake, which also brings the refund and the
 * dispute the sandbox cannot make.
 */
const WEBHOOK_SECRET = 'whsec_analytics_test_secret';
const NOW = '2026-03-12T12:00:00.000Z';
let server: TestServer;
let fake: FakeStripe;
let clock: TestClock;
let adminToken: string;
let adminKey: string;
let seller: Seller;
let sellerKey: string;

async function verify(key: string, valid: boolean) {
  const body = (await server.api.post('/licenses/verify', { key })).expect(200).body;
  assert.equal(body.valid, valid, JSON.stringify(body));
}

/**
 * March 2026, day by day (UTC). Licenses L1–L9, orders O1–O7:
 * - Mon 2nd 09:00: the server starts (the admin account); seller (pro) registers; L1, L3
 *   perpetual, L2 expiring on the 4th at 09:00; O1 USD 19.99 paid (L4); two monthly USD 5
 *   subscriptions paid (O2, O3: L8, L9); O4 left pending; O5 declined.
 * - Tue 3rd 10:00: a free seller registers; L1 suspended; O6 EUR 10 paid (L5); O7 USD 19.99
 *   paid (L6).
 * - Wed 4th 12:00: L2 has expired (no job ran: it still counts as expired); L3 revoked; O7
 *   refunded (L6 revoked).
 * - Tue 10th 08:00: business and enterprise sellers register; O6 disputed (L5 suspended); L7
 *   issued; one subscription canceled; the EUR product taken off sale.
 * - Wed 11th 08:00: the enterprise seller's account is deleted.
 * - Thu 12th 12:00: now.
 * Verifications (flushed once, at the end): L1 twice and L2 on the 2nd (valid); L1, L2 and L3 on
 * the 4th (suspended, expired, revoked: invalid), and a key of no license (not counted); L7 on
 * the 10th (valid).
 */
before(async () => {
  fake = await startFakeStripe();
  clock = testClock('2026-03-02T09:00:00.000Z');
  server = await startTestServer(
    {
      STRIPE_SECRET_KEY: 'sk_test_fake',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: fake.url,
      USER_TOKEN_TTL: '2592000',
    },
    { clock, ownDatabase: true },
  );
  adminToken = await server.adminToken();
  adminKey = (await createApiKey(server, adminToken, (await createApp(server, adminToken, 'Admin tools')).id))
    .key;

  seller = await signUp(server, { tier: 'pro' });
  const appId = (await createApp(server, seller.token)).id;
  sellerKey = (await createApiKey(server, seller.token, appId)).key;
  const token = { token: seller.token };
  const product = async (body: Record<string, unknown>) =>
    (await server.api.post('/products', { appId, name: 'Pro', ...body }, token)).expect(201).body
      .id as string;
  const usd = await product({ price: 19.99, currency: 'USD' });
  const eur = await product({ price: 10, currency: 'EUR' });
  const monthly = await product({
    price: 5,
    currency: 'USD',
    billingType: 'recurring',
    interval: 'month',
    partnerPriceIdRecurring: 'price_monthly',
  });
  const license = `/apps/${appId}/licenses`;
  const l1 = await issueLicense(server, { token: seller.token, appId });
  const l2 = await issueLicense(
    server,
    { token: seller.token, appId },
    { expiresAt: '2026-03-04T09:00:00.000Z' },
  );
  const l3 = await issueLicense(server, { token: seller.token, appId });
  await verify(l1.key, true);
  await verify(l1.key, true);
  await verify(l2.key, true);
  await paidPurchase(server, fake, usd);
  await paidPurchase(server, fake, monthly);
  await paidPurchase(server, fake, monthly);
  await startPurchase(server, usd);
  const declined = await startPurchase(server, usd);
  fake.fail(declined.paymentIntentId, 'Your card was declined.');
  (
    await sendStripeEvent(server, WEBHOOK_SECRET, 'payment_intent.payment_failed', {
      id: declined.paymentIntentId,
      object: 'payment_intent',
    })
  ).expect(200);

  clock.set('2026-03-03T10:00:00.000Z');
  await signUp(server);
  (await server.api.post(`${license}/${l1.id}/suspend`, undefined, token)).expect(200);
  const disputed = await paidPurchase(server, fake, eur);
  const refunded = await paidPurchase(server, fake, usd);

  clock.set('2026-03-04T12:00:00.000Z');
  (await server.api.post(`${license}/${l3.id}/revoke`, undefined, token)).expect(200);
  (
    await sendStripeEvent(server, WEBHOOK_SECRET, 'charge.refunded', {
      id: 'ch_refunded',
      object: 'charge',
      payment_intent: refunded.paymentIntentId,
      refunded: true,
    })
  ).expect(200);
  await verify(l1.key, false);
  await verify(l2.key, false);
  await verify(l3.key, false);
  await verify('NOT0-A0LI-CENS-EKEY', false);

  clock.set('2026-03-10T08:00:00.000Z');
  await signUp(server, { tier: 'business' });
  const closing = await signUp(server, { tier: 'enterprise' });
  (
    await sendStripeEvent(server, WEBHOOK_SECRET, 'charge.dispute.created', {
      id: 'dp_analytics',
      object: 'dispute',
      payment_intent: disputed.paymentIntentId,
      amount: 1000,
      currency: 'eur',
      reason: 'fraudulent',
      status: 'needs_response',
    })
  ).expect(200);
  const l7 = await issueLicense(server, { token: seller.token, appId });
  await verify(l7.key, true);
  const subscriptions = (await server.api.get('/subscriptions', token)).expect(200).body.subscriptions;
  (await server.api.post(`/subscriptions/${subscriptions[0].id}/cancel`, undefined, token)).expect(200);
  (await server.api.patch(`/products/${eur}`, { active: false }, token)).expect(200);

  clock.set('2026-03-11T08:00:00.000Z');
  (await server.api.delete(`/admin/users/${closing.user.id}`, { token: adminToken })).expect(204);

  clock.set(NOW);
  assert.equal(await server.service.modules.verificationCounts.flush(), true);
});
after(async () => {
  await server.stop();
  await fake.close();
});

const get = (path: string, token = adminToken) => server.api.get(path, { token });
/** Midnight UTC of a day of March 2026. */
const march = (day: number) => `2026-03-${String(day).padStart(2, '0')}T00:00:00.000Z`;
const range = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i);

describe('GET /v1/analytics/stats', () => {
  test('counts every resource now, with every status named and revenue from paid orders only', async () => {
    const stats = (await get('/analytics/stats')).expect(200).body;
    assert.deepEqual(stats, {
      users: {
        total: 4,
        byTier: { free: 2, pro: 1, business: 1, enterprise: 0 },
        byRole: { SELLER: 3, ADMIN: 1 },
        deleted: 1,
      },
      apps: { total: 2 },
      products: { total: 3, active: 2 },
      licenses: {
        total: 9,
        byStatus: { active: 4, trial: 0, suspended: 2, revoked: 2, expired: 1 },
        verificationsLast30Days: { valid: 4, invalid: 3 },
      },
      orders: { total: 7, byStatus: { pending: 1, paid: 4, canceled: 1, rejected: 1 }, refunded: 1 },
      subscriptions: { total: 2, byStatus: { active: 1, canceled: 1 } },
      disputes: { total: 1, open: 1 },
      revenue: [
        { currency: 'EUR', amount: 10, orders: 1 },
        { currency: 'USD', amount: 29.99, orders: 3 },
      ],
      generatedAt: NOW,
    });
  });
});

describe('GET /v1/analytics/revenue', () => {
  test('sums paid orders per currency and day of payment, zero-filled over the range', async () => {
    const body = (await get('/analytics/revenue?from=2026-03-01T00:00:00Z')).expect(200).body;
    assert.deepEqual([body.from, body.to, body.interval], ['2026-03-01T00:00:00.000Z', NOW, 'day']);
    const only = (paidOn: number, amount: number, orders: number) =>
      range(1, 12).map((day) =>
        day === paidOn ? { start: march(day), amount, orders } : { start: march(day), amount: 0, orders: 0 },
      );
    assert.deepEqual(body.series, [
      { currency: 'EUR', amount: 10, orders: 1, points: only(3, 10, 1) },
      { currency: 'USD', amount: 29.99, orders: 3, points: only(2, 29.99, 3) },
    ]);
  });

  test('filters one currency, in weeks that start on Monday', async () => {
    const body = (
      await get('/analytics/revenue?interval=week&from=2026-02-20T00:00:00Z&currency=usd')
    ).expect(200).body;
    assert.equal(body.series.length, 1);
    assert.deepEqual(body.series[0], {
      currency: 'USD',
      amount: 29.99,
      orders: 3,
      points: [
        { start: '2026-02-16T00:00:00.000Z', amount: 0, orders: 0 },
        { start: '2026-02-23T00:00:00.000Z', amount: 0, orders: 0 },
        { start: '2026-03-02T00:00:00.000Z', amount: 29.99, orders: 3 },
        { start: '2026-03-09T00:00:00.000Z', amount: 0, orders: 0 },
      ],
    });
  });

  test('answers no series for a range without revenue', async () => {
    const body = (await get('/analytics/revenue?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z')).expect(
      200,
    ).body;
    assert.deepEqual(body.series, []);
    assert.equal((await get('/analytics/revenue?currency=JPY')).expect(200).body.series.length, 0);
  });
});

describe('GET /v1/analytics/licenses', () => {
  test('counts issued, suspended, revoked and expired per day, the licenses active at each day’s end, and verifications', async () => {
    const body = (await get('/analytics/licenses?from=2026-03-01T00:00:00Z&interval=day')).expect(200).body;
    assert.deepEqual(body.totals, { active: 4, trial: 0, suspended: 2, revoked: 2, expired: 1 });
    assert.deepEqual(body.verifications, { valid: 4, invalid: 3 });
    const point = (
      day: number,
      issued: number,
      suspended: number,
      revoked: number,
      expired: number,
      active: number,
      verifications = { valid: 0, invalid: 0 },
    ) => ({
      start: march(day),
      issued,
      suspended,
      revoked,
      expired,
      active,
      verifications,
    });
    assert.deepEqual(body.points, [
      point(1, 0, 0, 0, 0, 0),
      point(2, 6, 0, 0, 0, 6, { valid: 3, invalid: 0 }),
      point(3, 2, 1, 0, 0, 7),
      point(4, 0, 0, 2, 1, 4, { valid: 0, invalid: 3 }),
      ...range(5, 9).map((day) => point(day, 0, 0, 0, 0, 4)),
      point(10, 1, 1, 0, 0, 4, { valid: 1, invalid: 0 }),
      point(11, 0, 0, 0, 0, 4),
      point(12, 0, 0, 0, 0, 4),
    ]);
  });

  test('aligns months to their first day and buckets after now to nothing new', async () => {
    const months = (await get('/analytics/licenses?interval=month&from=2026-01-15T00:00:00Z')).expect(
      200,
    ).body;
    assert.deepEqual(
      months.points.map((p: Record<string, unknown>) => [
        p.start,
        p.issued,
        p.expired,
        p.active,
        p.verifications,
      ]),
      [
        ['2026-01-01T00:00:00.000Z', 0, 0, 0, { valid: 0, invalid: 0 }],
        ['2026-02-01T00:00:00.000Z', 0, 0, 0, { valid: 0, invalid: 0 }],
        ['2026-03-01T00:00:00.000Z', 9, 1, 4, { valid: 4, invalid: 3 }],
      ],
    );
    const ahead = (await get('/analytics/licenses?from=2026-03-11T00:00:00Z&to=2026-03-14T00:00:00Z')).expect(
      200,
    ).body;
    assert.deepEqual(
      ahead.points.map((p: Record<string, unknown>) => [p.start, p.issued, p.active]),
      [
        ['2026-03-11T00:00:00.000Z', 0, 4],
        ['2026-03-12T00:00:00.000Z', 0, 4],
        ['2026-03-13T00:00:00.000Z', 0, 4],
        ['2026-03-14T00:00:00.000Z', 0, 4],
      ],
    );
  });

  test('defaults to 30 days, 12 weeks or 12 months before now', async () => {
    const daily = (await get('/analytics/licenses')).expect(200).body;
    assert.deepEqual([daily.from, daily.to, daily.interval], ['2026-02-10T12:00:00.000Z', NOW, 'day']);
    assert.equal(daily.points.length, 31);
    assert.equal(daily.points[0].start, '2026-02-10T00:00:00.000Z');
    const weekly = (await get('/analytics/licenses?interval=week')).expect(200).body;
    assert.equal(weekly.from, '2025-12-18T12:00:00.000Z');
    assert.deepEqual(
      [weekly.points.length, weekly.points[0].start, weekly.points.at(-1).start],
      [13, '2025-12-15T00:00:00.000Z', '2026-03-09T00:00:00.000Z'],
    );
    const monthly = (await get('/analytics/licenses?interval=month')).expect(200).body;
    assert.deepEqual(
      [monthly.from, monthly.points.length, monthly.points[0].start],
      ['2025-03-12T12:00:00.000Z', 13, '2025-03-01T00:00:00.000Z'],
    );
  });
});

describe('GET /v1/analytics/users', () => {
  test('counts registrations by current tier and deletions per day, and the accounts existing at each day’s end', async () => {
    const body = (await get('/analytics/users?from=2026-03-01T00:00:00Z')).expect(200).body;
    assert.deepEqual(body.totals, {
      total: 4,
      byTier: { free: 2, pro: 1, business: 1, enterprise: 0 },
      byRole: { SELLER: 3, ADMIN: 1 },
      deleted: 1,
    });
    const tiers = (free = 0, pro = 0, business = 0, enterprise = 0) => ({ free, pro, business, enterprise });
    const point = (day: number, registrations: number, deleted: number, total: number, byTier = tiers()) => ({
      start: march(day),
      registrations,
      deleted,
      total,
      byTier,
    });
    assert.deepEqual(body.points, [
      point(1, 0, 0, 0),
      point(2, 2, 0, 2, tiers(1, 1)),
      point(3, 1, 0, 3, tiers(1)),
      ...range(4, 9).map((day) => point(day, 0, 0, 3)),
      point(10, 2, 0, 5, tiers(0, 0, 1, 1)),
      point(11, 0, 1, 4),
      point(12, 0, 0, 4),
    ]);
  });

  test('buckets weeks from Monday', async () => {
    const body = (await get('/analytics/users?interval=week&from=2026-03-04T00:00:00Z')).expect(200).body;
    assert.deepEqual(
      body.points.map((p: Record<string, unknown>) => [p.start, p.registrations, p.deleted, p.total]),
      [
        ['2026-03-02T00:00:00.000Z', 3, 0, 3],
        ['2026-03-09T00:00:00.000Z', 2, 1, 4],
      ],
    );
  });
});

describe('query validation', () => {
  const refused = async (path: string, field: string) => {
    const error = assertError(await get(path), 400, 'validation_failed');
    assert.equal(error.details?.[0]?.field, field, `${path}: ${JSON.stringify(error)}`);
  };

  test('refuses a range that is empty or longer than 366 buckets, naming from', async () => {
    await refused('/analytics/licenses?from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'from');
    await refused('/analytics/users?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'from');
    await refused('/analytics/revenue?from=2026-03-13T00:00:00Z', 'from');
    await refused('/analytics/licenses?from=2025-03-10T00:00:00Z', 'from');
    await refused('/analytics/licenses?interval=month&from=1995-01-01T00:00:00Z', 'from');
    // 366 day buckets are still fine.
    (await get('/analytics/licenses?from=2025-03-12T00:00:00Z')).expect(200);
  });

  test('refuses an unknown interval, a malformed date or currency, and unknown fields', async () => {
    await refused('/analytics/revenue?interval=hour', 'interval');
    await refused('/analytics/users?from=yesterday', 'from');
    await refused('/analytics/revenue?currency=US', 'currency');
    await refused('/analytics/licenses?page=2', 'page');
    await refused('/analytics/stats?from=2026-03-01T00:00:00Z', 'from');
  });
});

describe('access', () => {
  const routes = ['/analytics/stats', '/analytics/revenue', '/analytics/licenses', '/analytics/users'];

  test('refuses sellers’ tokens and API keys with 403 and anonymous callers with 401', async () => {
    for (const path of routes) {
      assertError(await get(path, seller.token), 403, 'forbidden');
      assertError(await get(path, sellerKey), 403, 'forbidden');
      assertError(await server.api.get(path), 401, 'unauthorized');
    }
  });

  test('answers an admin’s API key', async () => {
    for (const path of routes) (await get(path, adminKey)).expect(200);
    assert.equal((await get('/analytics/stats', adminKey)).body.users.byRole.ADMIN, 1);
  });
});
