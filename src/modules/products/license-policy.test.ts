import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  licenseByKey as licenseByKeyOf,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { buyWithSandbox, confirmPurchase, startPurchase } from '../../testing/purchases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { eventsForUser } from '../events/index.js';

/**
 * A product's license policy over HTTP: what the seller writes, and what the licenses sold (the
 * sandbox partner), trialled and issued by hand through the product then carry.
 */
let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({ USER_TOKEN_TTL: '2592000' }, { clock, ownDatabase: true });
});
after(() => server.stop());

const DAY_MS = 86_400_000;
const buyer = () => `buyer-${uniqueSuffix()}@example.com`;

async function product(seller: SellerWithApp, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Photo Tool', price: 29, currency: 'USD', ...extra },
      { token: seller.token },
    )
  ).expect(201).body as { id: string; licensePolicy: Record<string, unknown> };
}

const licenseByKey = (seller: SellerWithApp, key: string) => licenseByKeyOf(server, seller, key);

const verify = async (key: string, hwuid: string) =>
  (await server.api.post('/licenses/verify', { key, hwuid })).expect(200).body;
const seat = async (key: string, hwuid: string) =>
  (await server.api.post('/licenses/checkout', { key, hwuid })).expect(200).body;

async function bought(productId: string): Promise<string> {
  const { paid } = await buyWithSandbox(server, productId, buyer());
  assert.ok(paid.licenseKey);
  return paid.licenseKey as string;
}

describe('the policy a seller writes', () => {
  test('a product answers its policy in full; without one it sells licenses with no limit', async () => {
    const seller = await sellerWithApp(server);
    assert.deepEqual((await product(seller)).licensePolicy, {
      model: 'unlimited',
      maxDevices: null,
      maxSeats: null,
      leaseSeconds: null,
      validityDays: null,
      checkInDays: null,
      graceDays: null,
      expiryStrategy: 'restrict',
      maxUses: null,
      usesResetInterval: null,
    });
    const locked = await product(seller, {
      licensePolicy: { model: 'node_locked', maxDevices: 3, validityDays: 365 },
    });
    assert.deepEqual(locked.licensePolicy, {
      model: 'node_locked',
      maxDevices: 3,
      maxSeats: null,
      leaseSeconds: null,
      validityDays: 365,
      checkInDays: null,
      graceDays: null,
      expiryStrategy: 'restrict',
      maxUses: null,
      usesResetInterval: null,
    });
    const floating = await product(seller, { licensePolicy: { model: 'floating', maxSeats: 5 } });
    assert.equal(floating.licensePolicy.leaseSeconds, 600, 'a seat lapses after 10 minutes by default');
    const read = (await server.api.get(`/products/${locked.id}`, { token: seller.token })).expect(200).body;
    assert.deepEqual(read.licensePolicy, locked.licensePolicy);
  });

  test('a policy whose fields do not fit its model is refused naming the field, and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const refused = async (body: Record<string, unknown>, field: string) => {
      const res = await server.api.post(
        '/products',
        { appId: seller.appId, name: 'X', price: 5, currency: 'USD', ...body },
        { token: seller.token },
      );
      assertError(res, 400, 'validation_failed');
      assert.ok(
        (res.body.error.details as { field: string }[]).some((d) => d.field === field),
        `${field} in ${JSON.stringify(res.body.error.details)}`,
      );
    };
    await refused({ licensePolicy: { model: 'node_locked' } }, 'licensePolicy.maxDevices');
    await refused({ licensePolicy: { model: 'floating', leaseSeconds: 300 } }, 'licensePolicy.maxSeats');
    await refused({ licensePolicy: { model: 'unlimited', maxDevices: 2 } }, 'licensePolicy.maxDevices');
    await refused(
      { licensePolicy: { model: 'node_locked', maxDevices: 2, maxSeats: 4 } },
      'licensePolicy.maxSeats',
    );
    await refused({ licensePolicy: { model: 'node_locked', maxDevices: 0 } }, 'licensePolicy.maxDevices');
    await refused({ licensePolicy: { model: 'per_cpu' } }, 'licensePolicy.model');
    await refused({ licensePolicy: { model: 'unlimited', seats: 3 } }, 'licensePolicy.seats');
    await refused({ licensePolicy: { model: 'unlimited', graceDays: 3 } }, 'licensePolicy.graceDays');
    await refused({ licensePolicy: { model: 'unlimited', checkInDays: 0 } }, 'licensePolicy.checkInDays');
    await refused(
      { licensePolicy: { model: 'unlimited', usesResetInterval: 'day' } },
      'licensePolicy.usesResetInterval',
    );
    await refused(
      { licensePolicy: { model: 'unlimited', maxUses: 10, usesResetInterval: 'renewal' } },
      'licensePolicy.usesResetInterval',
    );
    await refused({ licensePolicy: { model: 'unlimited', maxUses: -1 } }, 'licensePolicy.maxUses');
    await refused(
      { licensePolicy: { model: 'unlimited', expiryStrategy: 'forever' } },
      'licensePolicy.expiryStrategy',
    );
    await refused(
      {
        billingType: 'recurring',
        interval: 'month',
        licensePolicy: { model: 'node_locked', maxDevices: 1, validityDays: 30 },
      },
      'licensePolicy.validityDays',
    );
    const listed = (await server.api.get(`/products?appId=${seller.appId}`, { token: seller.token })).expect(
      200,
    );
    assert.equal(listed.body.total, 0);

    const item = await product(seller, { licensePolicy: { model: 'node_locked', maxDevices: 2 } });
    const patch = await server.api.patch(
      `/products/${item.id}`,
      { licensePolicy: { model: 'floating' } },
      { token: seller.token },
    );
    assertError(patch, 400, 'validation_failed');
    const kept = (await server.api.get(`/products/${item.id}`, { token: seller.token })).expect(200).body;
    assert.equal(kept.licensePolicy.maxDevices, 2);
    // PATCH writes the policy whole.
    const changed = await server.api.patch(
      `/products/${item.id}`,
      { licensePolicy: { model: 'floating', maxSeats: 10, leaseSeconds: 120 } },
      { token: seller.token },
    );
    assert.deepEqual(changed.expect(200).body.licensePolicy, {
      model: 'floating',
      maxDevices: null,
      maxSeats: 10,
      leaseSeconds: 120,
      validityDays: null,
      checkInDays: null,
      graceDays: null,
      expiryStrategy: 'restrict',
      maxUses: null,
      usesResetInterval: null,
    });
  });
});

describe('licenses sold, trialled and issued through the product', () => {
  test('a purchase carries the device limit and the validity: "3 machines for a year"', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller, {
      licensePolicy: { model: 'node_locked', maxDevices: 3, validityDays: 365 },
    });
    const key = await bought(item.id);
    const license = await licenseByKey(seller, key);
    assert.equal(license.maxDevices, 3);
    assert.equal(license.floating, false);
    assert.equal(license.expiresAt, new Date(clock.now().getTime() + 365 * DAY_MS).toISOString());
    for (const hwuid of ['pc-1', 'pc-2', 'pc-3']) assert.equal((await verify(key, hwuid)).valid, true);
    const fourth = await verify(key, 'pc-4');
    assert.equal(fourth.valid, false);
    assert.equal(fourth.code, 'device_limit_reached');
  });

  test('a floating policy sells seats: "5 seats, a seat lapses after 5 minutes without a heartbeat"', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller, {
      licensePolicy: { model: 'floating', maxSeats: 5, leaseSeconds: 300 },
    });
    const key = await bought(item.id);
    const license = await licenseByKey(seller, key);
    assert.deepEqual(
      [license.floating, license.maxSeats, license.leaseSeconds, license.maxDevices],
      [true, 5, 300, null],
    );
    for (let i = 1; i <= 5; i++) assert.equal((await seat(key, `seat-${i}`)).valid, true);
    assert.equal((await seat(key, 'seat-6')).code, 'no_seat_available');
  });

  test('an order keeps the policy it was opened with, whatever the product says when it is paid', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller, { licensePolicy: { model: 'node_locked', maxDevices: 1 } });
    const intent = await startPurchase(server, item.id, buyer());
    (
      await server.api.patch(
        `/products/${item.id}`,
        { licensePolicy: { model: 'node_locked', maxDevices: 50 } },
        { token: seller.token },
      )
    ).expect(200);
    const paid = (await confirmPurchase(server, intent, '4242424242424242')).expect(200).body;
    assert.equal((await licenseByKey(seller, paid.licenseKey)).maxDevices, 1);
    // The next order follows the product as it is now.
    assert.equal((await licenseByKey(seller, await bought(item.id))).maxDevices, 50);
  });

  test('a trial follows the policy: its device limit, or one device when the policy has none', async () => {
    const seller = await sellerWithApp(server);
    const start = async (productId: string) =>
      (
        await server.pay.post('/api/checkout/trials', {
          productId,
          email: buyer(),
          hwuid: `pc-${uniqueSuffix()}`,
        })
      ).expect(201).body.licenseKey as string;
    const locked = await product(seller, {
      trialDays: 14,
      licensePolicy: { model: 'node_locked', maxDevices: 2 },
    });
    assert.equal((await licenseByKey(seller, await start(locked.id))).maxDevices, 2);
    const open = await product(seller, { trialDays: 14 });
    assert.equal((await licenseByKey(seller, await start(open.id))).maxDevices, 1);
    const floating = await product(seller, {
      trialDays: 14,
      licensePolicy: { model: 'floating', maxSeats: 3 },
    });
    const trial = await licenseByKey(seller, await start(floating.id));
    assert.deepEqual(
      [trial.status, trial.floating, trial.maxSeats, trial.deviceCount],
      ['trial', true, 3, 0],
    );
  });

  test('a license issued by hand with a productId starts from the policy; what the request says overrides it', async () => {
    const seller = await sellerWithApp(server);
    const issue = (body: Record<string, unknown>) =>
      server.api.post(`/apps/${seller.appId}/licenses`, body, { token: seller.token });
    const locked = await product(seller, {
      licensePolicy: { model: 'node_locked', maxDevices: 3, validityDays: 30 },
    });
    const plain = (await issue({ productId: locked.id })).expect(201).body;
    assert.equal(plain.maxDevices, 3);
    assert.equal(plain.expiresAt, new Date(clock.now().getTime() + 30 * DAY_MS).toISOString());
    const more = (await issue({ productId: locked.id, maxDevices: 10, expiresAt: null })).expect(201).body;
    assert.deepEqual([more.maxDevices, more.expiresAt], [10, null]);

    const floating = await product(seller, {
      licensePolicy: { model: 'floating', maxSeats: 5, leaseSeconds: 900 },
    });
    const seats = (await issue({ productId: floating.id, maxSeats: 20 })).expect(201).body;
    assert.deepEqual([seats.floating, seats.maxSeats, seats.leaseSeconds], [true, 20, 900]);
    const refused = await issue({ productId: floating.id, maxDevices: 2 });
    assertError(refused, 400, 'validation_failed');
    assert.equal(refused.body.error.details[0].field, 'maxDevices');
    const nodeLocked = (await issue({ productId: floating.id, floating: false, maxDevices: 2 })).expect(
      201,
    ).body;
    assert.deepEqual([nodeLocked.floating, nodeLocked.maxDevices], [false, 2]);
    // Without a product, a license is as it always was: no limit, no expiry.
    const bare = (await issue({})).expect(201).body;
    assert.deepEqual([bare.maxDevices, bare.floating, bare.expiresAt], [null, false, null]);
  });
});

describe('applying a changed policy to existing licenses', () => {
  test('one call gives them the new limits with license.updated each, on every node’s next verify', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const keys = [await bought(item.id), await bought(item.id)];
    const revoked = (
      await server.api.post(`/apps/${seller.appId}/licenses`, { productId: item.id }, { token: seller.token })
    ).expect(201).body;
    (
      await server.api.post(
        `/apps/${seller.appId}/licenses/${revoked.id}/revoke`,
        {},
        { token: seller.token },
      )
    ).expect(200);
    const floating = (
      await server.api.post(
        `/apps/${seller.appId}/licenses`,
        { productId: item.id, floating: true, maxSeats: 2 },
        { token: seller.token },
      )
    ).expect(201).body;
    // Two devices each, held in the verification cache.
    for (const key of keys)
      for (const hwuid of ['a', 'b']) assert.equal((await verify(key, hwuid)).valid, true);

    (
      await server.api.patch(
        `/products/${item.id}`,
        { licensePolicy: { model: 'node_locked', maxDevices: 2 } },
        { token: seller.token },
      )
    ).expect(200);
    // Editing the product changes nothing issued already.
    assert.equal((await verify(keys[0] as string, 'c')).valid, true);
    assert.equal((await licenseByKey(seller, keys[0] as string)).maxDevices, null);

    const before = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.updated',
    ).length;
    const applied = await server.api.post(
      `/products/${item.id}/license-policy/apply`,
      {},
      { token: seller.token },
    );
    assert.deepEqual(applied.expect(200).body, { updated: 2, skipped: 1 });
    const updated = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.updated',
    );
    assert.equal(updated.length - before, 2);

    assert.equal((await licenseByKey(seller, keys[1] as string)).maxDevices, 2);
    assert.equal((await verify(keys[1] as string, 'a')).valid, true, 'a bound device stays');
    assert.equal((await verify(keys[1] as string, 'c')).code, 'device_limit_reached');
    const stillFloating = await licenseByKey(seller, floating.key);
    assert.deepEqual([stillFloating.floating, stillFloating.maxSeats], [true, 2]);
    const revokedNow = await licenseByKey(seller, revoked.key);
    assert.deepEqual([revokedNow.status, revokedNow.maxDevices], ['revoked', null]);

    const again = await server.api.post(
      `/products/${item.id}/license-policy/apply`,
      {},
      { token: seller.token },
    );
    assert.deepEqual(again.expect(200).body, { updated: 0, skipped: 1 });
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.post(`/products/${item.id}/license-policy/apply`, {}, { token: stranger.token }),
      404,
      'not_found',
    );
  });
});
