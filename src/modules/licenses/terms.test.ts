import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import {
  createOfflineActivationRequest,
  LicenseFileError,
  LicensingClient,
  verifyLicenseFile,
} from '../../../packages/client/src/index.js';
import {
  issueLicense,
  licenseByKey as licenseByKeyOf,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { buyWithSandbox } from '../../testing/purchases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { eventsForUser } from '../events/index.js';

/**
 * Check-in, expiry strategy and usage quotas over HTTP (issue 39, points 2 and 3): what a
 * product's policy gives the licenses it sells, what verify, tokens and license files say, and
 * what the seller reads and sets.
 */
let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({ USER_TOKEN_TTL: '2592000' }, { clock, ownDatabase: true });
});
after(() => server.stop());

const DAY_MS = 86_400_000;

async function product(seller: SellerWithApp, licensePolicy: Record<string, unknown>) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Photo Tool', price: 29, currency: 'USD', licensePolicy },
      { token: seller.token },
    )
  ).expect(201).body as { id: string; licensePolicy: Record<string, unknown> };
}

async function bought(seller: SellerWithApp, policy: Record<string, unknown>) {
  const item = await product(seller, policy);
  const { paid } = await buyWithSandbox(server, item.id, `buyer-${uniqueSuffix()}@example.com`);
  assert.ok(paid.licenseKey);
  const key = paid.licenseKey as string;
  return { key, license: await licenseByKeyOf(server, seller, key), productId: item.id };
}

const verify = async (body: Record<string, unknown>) =>
  (await server.api.post('/licenses/verify', body)).expect(200).body;

const consume = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  server.api.post('/licenses/usage', body, { headers });

describe('check-in', () => {
  test('a license sold under checkInDays must verify online: overdue past days and grace, until the next online verify', async () => {
    const seller = await sellerWithApp(server);
    const { key, license } = await bought(seller, {
      model: 'node_locked',
      maxDevices: 2,
      checkInDays: 7,
      graceDays: 2,
    });
    assert.equal(license.checkInDays, 7);
    assert.equal(license.graceDays, 2);
    assert.equal(license.checkInBy, new Date(Date.parse(license.createdAt) + 9 * DAY_MS).toISOString());

    const first = await verify({ key, hwuid: 'pc-1' });
    assert.equal(first.valid, true);
    assert.equal(first.check_in_by, new Date(clock.now().getTime() + 9 * DAY_MS).toISOString());
    const claims = decodeJwt(first.license_token);
    assert.equal(claims.check_in_by, Math.floor(clock.now().getTime() / 1000) + 9 * 86_400);

    // Eight days offline: still within the grace. Ten: overdue for whoever asks without checking in.
    clock.advance(8 * DAY_MS);
    assert.equal((await verify({ key, hwuid: 'pc-1', checkIn: false })).valid, true);
    clock.advance(2 * DAY_MS);
    const overdue = await verify({ key, hwuid: 'pc-1', checkIn: false });
    assert.equal(overdue.valid, false);
    assert.equal(overdue.code, 'check_in_overdue');
    assert.equal(overdue.license_token, undefined, 'no token for an overdue license');
    const consumed = (await consume({ key, hwuid: 'pc-1', amount: 1 })).expect(200).body;
    assert.equal(consumed.code, 'check_in_overdue');
    const seen = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
    ).expect(200).body;
    assert.ok(Date.parse(seen.checkInBy) < clock.now().getTime(), 'the seller sees it overdue');

    // The client comes online: its verify is told it was overdue and is the check-in, so the
    // next one finds the license in good standing again.
    const late = await verify({ key, hwuid: 'pc-1' });
    assert.equal(late.valid, false);
    assert.equal(late.code, 'check_in_overdue');
    const back = await verify({ key, hwuid: 'pc-1' });
    assert.equal(back.valid, true);
    assert.equal(back.check_in_by, new Date(clock.now().getTime() + 9 * DAY_MS).toISOString());
    assert.equal((await verify({ key, hwuid: 'pc-1', checkIn: false })).valid, true);
    const after = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
    ).expect(200).body;
    assert.equal(after.lastCheckInAt, clock.now().toISOString(), 'recorded before the answer');
  });

  test('the SDK’s verify makes the check-in of an overdue license and answers as it then stands', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { checkInDays: 1 });
    const client = new LicensingClient({ baseUrl: server.service.coreUrl });
    assert.equal((await client.verify({ key: license.key, appId: seller.appId })).valid, true);
    clock.advance(2 * DAY_MS);
    const asked = await client.verify({ key: license.key, appId: seller.appId, checkIn: false });
    assert.equal(asked.code, 'check_in_overdue', 'asked without checking in: overdue');
    const checked = await client.verify({ key: license.key, appId: seller.appId });
    assert.equal(checked.valid, true);
    assert.equal(checked.check_in_by, new Date(clock.now().getTime() + DAY_MS).toISOString());
  });

  test('a license file carries check_in_by, and the SDK refuses it past that as check_in_overdue', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1, checkInDays: 30, graceDays: 5 });
    const written = createOfflineActivationRequest({ key: license.key, hwuid: 'air-1' });
    const { licenseFile } = (
      await server.api.post(
        '/licenses/offline-activations',
        { request: written.request },
        { token: seller.token },
      )
    ).expect(200).body;
    const keySet = (await server.api.get('/licenses/jwks')).expect(200).body;
    const options = { keySet, appId: seller.appId, hwuid: 'air-1' };
    const issuedAt = clock.now().getTime();
    const claims = await verifyLicenseFile(licenseFile, { ...options, now: () => new Date(issuedAt) });
    assert.equal(claims.check_in_by, Math.floor(issuedAt / 1000) + 35 * 86_400);
    await verifyLicenseFile(licenseFile, { ...options, now: () => new Date(issuedAt + 34 * DAY_MS) });
    const refused = await verifyLicenseFile(licenseFile, {
      ...options,
      now: () => new Date(issuedAt + 36 * DAY_MS),
    }).then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof LicenseFileError);
    assert.equal(refused.code, 'check_in_overdue');
  });
});

describe('expiry strategy', () => {
  test('maintain_access: past its expiry the license verifies as EXPIRED on the devices it had, binds no new one, and its token says so', async () => {
    const seller = await sellerWithApp(server);
    const { key, license } = await bought(seller, {
      model: 'node_locked',
      maxDevices: 3,
      validityDays: 30,
      expiryStrategy: 'maintain_access',
    });
    assert.equal(license.expiryStrategy, 'maintain_access');
    assert.equal((await verify({ key, hwuid: 'pc-1' })).valid, true);
    // The same purchase under restrict, to stop at its expiry as before.
    const { key: restricted } = await bought(seller, {
      model: 'node_locked',
      maxDevices: 3,
      validityDays: 30,
    });
    assert.equal((await verify({ key: restricted, hwuid: 'pc-1' })).valid, true);

    clock.advance(31 * DAY_MS);
    const kept = await verify({ key, hwuid: 'pc-1' });
    assert.equal(kept.valid, true);
    assert.equal(kept.expired, true);
    assert.equal(kept.status, 'EXPIRED');
    const claims = decodeJwt(kept.license_token);
    assert.equal(claims.expired, true);
    assert.equal(claims.status, 'EXPIRED');
    assert.ok((claims.exp ?? 0) * 1000 > clock.now().getTime(), 'the token is not already expired');
    const introspected = (
      await server.api.post('/licenses/introspect', { license_token: kept.license_token })
    ).expect(200).body;
    assert.equal(introspected.active, true);
    assert.equal(introspected.status, 'EXPIRED');

    const fresh = await verify({ key, hwuid: 'pc-new' });
    assert.equal(fresh.valid, false);
    assert.equal(fresh.code, 'license_expired');

    const stopped = await verify({ key: restricted, hwuid: 'pc-1' });
    assert.equal(stopped.valid, false);
    assert.equal(stopped.code, 'license_expired');
    assert.equal(stopped.expired, undefined);
  });
});

describe('usage quotas', () => {
  test('50 simultaneous consumes of a 10-use license: exactly 10 succeed, the rest are usage_exhausted, and the events come once', async () => {
    const seller = await sellerWithApp(server);
    const { key, license } = await bought(seller, { model: 'unlimited', maxUses: 10 });
    assert.equal(license.maxUses, 10);
    assert.equal(license.usesResetInterval, 'never');
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => (await consume({ key, amount: 1 })).expect(200).body),
    );
    const consumed = answers.filter((a) => a.consumed);
    assert.equal(consumed.length, 10);
    assert.deepEqual(
      consumed.map((a) => a.uses).sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      'each use counted once',
    );
    for (const refused of answers.filter((a) => !a.consumed)) {
      assert.equal(refused.code, 'usage_exhausted');
      assert.equal(refused.uses_remaining, 0);
    }
    const usage = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/usage`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(usage, {
      licenseId: license.id,
      maxUses: 10,
      uses: 10,
      usesRemaining: 0,
      usesResetInterval: 'never',
      resetsAt: null,
    });
    const events = (await eventsForUser(server.db, seller.user.id)).filter((e) =>
      e.type.startsWith('license.usage.'),
    );
    assert.deepEqual(events.map((e) => e.type).sort(), [
      'license.usage.exhausted',
      'license.usage.threshold',
    ]);
    const threshold = events.find((e) => e.type === 'license.usage.threshold');
    assert.equal(threshold?.data.uses, 8, 'at 80 %');
    assert.equal(threshold?.data.id, license.id);
  });

  test('a retried consume with its Idempotency-Key counts once; verify and its token carry uses_remaining', async () => {
    const seller = await sellerWithApp(server);
    const { key } = await bought(seller, { model: 'unlimited', maxUses: 100 });
    const idempotency = { 'idempotency-key': `use-${uniqueSuffix()}` };
    const first = (await consume({ key, amount: 7 }, idempotency)).expect(200);
    const again = (await consume({ key, amount: 7 }, idempotency)).expect(200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    assert.equal(first.body.uses_remaining, 93);
    const verified = await verify({ key });
    assert.equal(verified.uses_remaining, 93, 'counted once');
    assert.equal(decodeJwt(verified.license_token).uses_remaining, 93);
    assertError(await consume({ key, amount: 0 }), 400, 'validation_failed');
    assertError(await consume({ key }), 400, 'validation_failed');
    assert.equal((await verify({ key })).uses_remaining, 93, 'a refused body changes nothing');
  });

  test('a daily quota starts again each UTC day; the seller reads, sets and resets the count', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxUses: 5, usesResetInterval: 'day' });
    const { key } = license;
    assert.equal((await consume({ key, amount: 5 })).expect(200).body.uses_remaining, 0);
    const full = (await consume({ key, amount: 1 })).expect(200).body;
    assert.equal(full.code, 'usage_exhausted');
    const now = clock.now();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    assert.equal(full.resets_at, new Date(midnight).toISOString());

    clock.advance(midnight - now.getTime() + 1_000);
    assert.equal((await verify({ key })).uses_remaining, 5, 'a new day');
    assert.equal((await consume({ key, amount: 2 })).expect(200).body.uses, 2);

    const path = `/apps/${seller.appId}/licenses/${license.id}/usage`;
    const set = (await server.api.put(path, { uses: 4 }, { token: seller.token })).expect(200).body;
    assert.equal(set.uses, 4);
    assert.equal((await verify({ key })).uses_remaining, 1);
    const reset = (await server.api.post(`${path}/reset`, {}, { token: seller.token })).expect(200).body;
    assert.equal(reset.uses, 0);
    assert.equal(reset.usesRemaining, 5);
    assertError(await server.api.put(path, { uses: -1 }, { token: seller.token }), 400, 'validation_failed');
    const other = await sellerWithApp(server);
    (await server.api.get(path, { token: other.token })).expect(404);

    const plain = await issueLicense(server, seller);
    const noQuota = assertError(
      await server.api.put(
        `/apps/${seller.appId}/licenses/${plain.id}/usage`,
        { uses: 1 },
        { token: seller.token },
      ),
      400,
      'validation_failed',
    );
    assert.equal(noQuota.details?.[0]?.field, 'maxUses');
    assert.equal((await consume({ key: plain.key, amount: 1 })).expect(200).body.code, 'no_usage_quota');
  });

  test('the largest quota counts and crosses its threshold like any other', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxUses: 1_000_000_000 });
    const first = (await consume({ key: license.key, amount: 1 })).expect(200).body;
    assert.equal(first.consumed, true);
    assert.equal(first.uses_remaining, 999_999_999);
    const path = `/apps/${seller.appId}/licenses/${license.id}/usage`;
    (await server.api.put(path, { uses: 799_999_999 }, { token: seller.token })).expect(200);
    assert.equal((await consume({ key: license.key, amount: 1 })).expect(200).body.uses, 800_000_000);
    const events = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.usage.threshold',
    );
    assert.equal(events.length, 1);
  });

  test('a node-locked license consumes only on a bound device; a suspended one consumes nothing', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1, maxUses: 3 });
    assert.equal((await consume({ key: license.key, amount: 1 })).expect(200).body.code, 'hwuid_required');
    assert.equal(
      (await consume({ key: license.key, hwuid: 'pc-9', amount: 1 })).expect(200).body.code,
      'device_not_bound',
    );
    assert.equal((await verify({ key: license.key, hwuid: 'pc-9' })).valid, true);
    assert.equal(
      (await consume({ key: license.key, hwuid: 'pc-9', amount: 1 })).expect(200).body.consumed,
      true,
    );
    (
      await server.api.post(
        `/apps/${seller.appId}/licenses/${license.id}/suspend`,
        {},
        { token: seller.token },
      )
    ).expect(200);
    const suspended = (await consume({ key: license.key, hwuid: 'pc-9', amount: 1 })).expect(200).body;
    assert.equal(suspended.code, 'license_suspended');
    assert.equal((await consume({ key: 'NOPE-NOPE', amount: 1 })).expect(200).body.code, 'license_not_found');
  });
});

describe('terms on licenses issued and changed by hand', () => {
  test('a hand-issued license starts from the product’s terms and may override them; fields that do not go together are refused', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller, {
      model: 'unlimited',
      checkInDays: 14,
      maxUses: 50,
      usesResetInterval: 'month',
    });
    const inherited = await issueLicense(server, seller, { productId: item.id });
    assert.equal(inherited.checkInDays, 14);
    assert.equal(inherited.graceDays, 0);
    assert.equal(inherited.maxUses, 50);
    assert.equal(inherited.usesResetInterval, 'month');
    const overridden = await issueLicense(server, seller, {
      productId: item.id,
      checkInDays: null,
      maxUses: 5,
      expiryStrategy: 'maintain_access',
    });
    assert.equal(overridden.checkInDays, null);
    assert.equal(overridden.graceDays, null);
    assert.equal(overridden.maxUses, 5);
    assert.equal(overridden.usesResetInterval, 'month');
    assert.equal(overridden.expiryStrategy, 'maintain_access');

    const refused = async (body: Record<string, unknown>, field: string) => {
      const res = assertError(
        await server.api.post(`/apps/${seller.appId}/licenses`, body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.equal(res.details?.[0]?.field, field, JSON.stringify(res.details));
    };
    await refused({ graceDays: 3 }, 'graceDays');
    await refused({ usesResetInterval: 'day' }, 'usesResetInterval');
    await refused({ maxUses: 0 }, 'maxUses');
    await refused({ expiryStrategy: 'sometimes' }, 'expiryStrategy');

    const path = `/apps/${seller.appId}/licenses/${inherited.id}`;
    const patched = (await server.api.patch(path, { maxUses: null }, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(patched.maxUses, null);
    assert.equal(patched.usesResetInterval, null);
    assert.equal(patched.checkInDays, 14, 'the rest stays');
    const bad = assertError(
      await server.api.patch(path, { checkInDays: null, graceDays: 2 }, { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.equal(bad.details?.[0]?.field, 'graceDays');
  });

  test('applying a product’s policy gives its licenses the new check-in, expiry and quota', async () => {
    const seller = await sellerWithApp(server);
    const { key, productId } = await bought(seller, { model: 'unlimited' });
    assert.equal((await verify({ key })).uses_remaining, undefined);
    (
      await server.api.patch(
        `/products/${productId}`,
        {
          licensePolicy: {
            model: 'unlimited',
            maxUses: 20,
            checkInDays: 3,
            expiryStrategy: 'maintain_access',
          },
        },
        { token: seller.token },
      )
    ).expect(200);
    const applied = (
      await server.api.post(`/products/${productId}/license-policy/apply`, {}, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(applied, { updated: 1, skipped: 0 });
    const license = await licenseByKeyOf(server, seller, key);
    assert.equal(license.maxUses, 20);
    assert.equal(license.checkInDays, 3);
    assert.equal(license.expiryStrategy, 'maintain_access');
    assert.equal((await verify({ key })).uses_remaining, 20);
  });
});
