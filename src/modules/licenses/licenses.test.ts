import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  createApiKey,
  createApp,
  issueLicense,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { eventsForUser } from '../events/index.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const FUTURE = '2099-01-01T00:00:00.000Z';

describe('issuing licenses', () => {
  test('issues a license with a typable key and records license.created', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, {
      email: 'buyer@example.com',
      expiresAt: FUTURE,
      metadata: { plan: 'pro', features: ['export', 'sync'], note: 'bulk order 42' },
      maxDevices: 3,
    });
    assert.deepEqual(Object.keys(license).sort(), [
      'appId',
      'checkInBy',
      'checkInDays',
      'convertedAt',
      'createdAt',
      'deviceCount',
      'email',
      'expiresAt',
      'expiryStrategy',
      'features',
      'floating',
      'graceDays',
      'id',
      'key',
      'lastCheckInAt',
      'lastVerifiedAt',
      'leaseSeconds',
      'maxDevices',
      'maxSeats',
      'maxUses',
      'metadata',
      'productId',
      'status',
      'trialEndsAt',
      'updatedAt',
      'userId',
      'usesResetInterval',
    ]);
    assert.match(license.key, /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
    assert.equal(license.status, 'active');
    assert.equal(license.expiresAt, FUTURE);
    assert.deepEqual(license.metadata, { plan: 'pro', features: ['export', 'sync'], note: 'bulk order 42' });
    assert.equal(license.maxDevices, 3);
    assert.equal(license.deviceCount, 0);

    const events = (await eventsForUser(server.db, seller.user.id)).filter((e) =>
      e.type.startsWith('license.'),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['license.created'],
    );
    assert.deepEqual(events[0]?.data, {
      id: license.id,
      licenseKey: license.key,
      userId: seller.user.id,
      productId: null,
      status: 'active',
      expiresAt: FUTURE,
      createdAt: license.createdAt,
    });
  });

  test('keys are unique and carry 150 random bits', async () => {
    const seller = await sellerWithApp(server);
    const keys = new Set<string>();
    for (let i = 0; i < 20; i++) keys.add((await issueLicense(server, seller)).key);
    assert.equal(keys.size, 20);
  });

  test('refuses a past expiry, a foreign product and bad input, issuing nothing', async () => {
    const seller = await sellerWithApp(server);
    const other = await sellerWithApp(server);
    const foreignProduct = (
      await server.api.post(
        '/products',
        { appId: other.appId, name: 'P', price: 1, currency: 'USD' },
        { token: other.token },
      )
    ).expect(201).body;
    const cases: [Record<string, unknown>, string][] = [
      [{ expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
      [{ expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ productId: foreignProduct.id }, 'productId'],
      [{ maxDevices: 0 }, 'maxDevices'],
      [{ email: 'nope' }, 'email'],
      [{ metadata: { features: 'export' } }, 'metadata.features'],
      [{ status: 'active' }, 'status'],
    ];
    for (const [body, field] of cases) {
      const error = assertError(
        await server.api.post(`/apps/${seller.appId}/licenses`, body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${field}: ${JSON.stringify(error.details)}`,
      );
    }
    const list = (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).expect(
      200,
    );
    assert.equal(list.body.total, 0);
  });

  test('links a license to the app’s product, and that product can then not be deleted', async () => {
    const seller = await sellerWithApp(server);
    const product = (
      await server.api.post(
        '/products',
        { appId: seller.appId, name: 'P', price: 5, currency: 'EUR' },
        { token: seller.token },
      )
    ).expect(201).body;
    const license = await issueLicense(server, seller, { productId: product.id });
    assert.equal(license.productId, product.id);
    assertError(
      await server.api.delete(`/products/${product.id}`, { token: seller.token }),
      409,
      'product_in_use',
    );
    assertError(await server.api.delete(`/apps/${seller.appId}`, { token: seller.token }), 409, 'app_in_use');
    // Nor can it move to another app under its licenses.
    const other = await createApp(server, seller.token, 'Other');
    assertError(
      await server.api.patch(`/products/${product.id}`, { appId: other.id }, { token: seller.token }),
      409,
      'product_in_use',
    );
    assert.equal(
      (await server.api.get(`/products/${product.id}`, { token: seller.token })).body.appId,
      seller.appId,
    );
  });
});

describe('listing and changing licenses', () => {
  test('lists an app’s licenses with filters and pagination', async () => {
    const seller = await sellerWithApp(server);
    const product = (
      await server.api.post(
        '/products',
        { appId: seller.appId, name: 'P', price: 5, currency: 'EUR' },
        { token: seller.token },
      )
    ).expect(201).body;
    const a = await issueLicense(server, seller, { email: 'Ann@Example.com', productId: product.id });
    const b = await issueLicense(server, seller, { email: 'bob@example.com' });
    const c = await issueLicense(server, seller);
    (
      await server.api.post(`/apps/${seller.appId}/licenses/${c.id}/suspend`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    const ids = async (query: string) =>
      (await server.api.get(`/apps/${seller.appId}/licenses${query}`, { token: seller.token }))
        .expect(200)
        .body.licenses.map((l: { id: string }) => l.id);
    assert.deepEqual(await ids(''), [c.id, b.id, a.id], 'newest first');
    assert.deepEqual(await ids('?status=suspended'), [c.id]);
    assert.deepEqual(await ids(`?productId=${product.id}`), [a.id]);
    assert.deepEqual(await ids('?email=ann@example.com'), [a.id]);
    assert.deepEqual(await ids('?limit=1&offset=1'), [b.id]);
    const other = await sellerWithApp(server);
    assertError(
      await server.api.get(`/apps/${seller.appId}/licenses`, { token: other.token }),
      404,
      'not_found',
    );
  });

  test('finds one license by its key however it is typed, and nothing for a key that is not one', async () => {
    const seller = await sellerWithApp(server);
    const wanted = await issueLicense(server, seller);
    await issueLicense(server, seller);
    const found = async (key: string) =>
      (
        await server.api.get(`/apps/${seller.appId}/licenses?key=${encodeURIComponent(key)}`, {
          token: seller.token,
        })
      ).expect(200).body;
    const typed = ` ${wanted.key.toLowerCase().replaceAll('-', '').replaceAll('0', 'o')} `;
    for (const key of [wanted.key, typed]) {
      const page = await found(key);
      assert.deepEqual(
        page.licenses.map((l: { id: string }) => l.id),
        [wanted.id],
        key,
      );
      assert.equal(page.total, 1);
    }
    assert.deepEqual(await found('not-a-key'), { licenses: [], total: 0, limit: 20, offset: 0 });
    // Another app's key is not found through this app.
    const other = await sellerWithApp(server);
    const foreign = await issueLicense(server, other);
    assert.equal((await found(foreign.key)).total, 0);
  });

  test('updates e-mail, expiry, metadata and device limit with license.updated', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const updated = (
      await server.api.patch(
        `/apps/${seller.appId}/licenses/${license.id}`,
        { email: 'new@example.com', expiresAt: FUTURE, metadata: { plan: 'team' }, maxDevices: 5 },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(updated.email, 'new@example.com');
    assert.equal(updated.expiresAt, FUTURE);
    assert.deepEqual(updated.metadata, { plan: 'team' });
    assert.equal(updated.maxDevices, 5);
    const types = (await eventsForUser(server.db, seller.user.id)).map((e) => e.type);
    assert.deepEqual(
      types.filter((t) => t.startsWith('license.')),
      ['license.created', 'license.updated'],
    );
  });

  test('suspend, reinstate and revoke follow the documented moves', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const path = `/apps/${seller.appId}/licenses/${license.id}`;
    const post = (action: string) => server.api.post(`${path}/${action}`, undefined, { token: seller.token });
    assert.equal((await post('suspend')).expect(200).body.status, 'suspended');
    assertError(await post('suspend'), 409, 'conflict');
    assert.equal((await post('reinstate')).expect(200).body.status, 'active');
    assertError(await post('reinstate'), 409, 'conflict');
    assert.equal((await post('revoke')).expect(200).body.status, 'revoked');
    assertError(await post('reinstate'), 409, 'conflict');
    assertError(await post('revoke'), 409, 'conflict');
    const events = (await eventsForUser(server.db, seller.user.id)).filter((e) =>
      e.type.startsWith('license.'),
    );
    assert.deepEqual(
      events.map((e) => [e.type, e.data.status]),
      [
        ['license.created', 'active'],
        ['license.revoked', 'suspended'],
        ['license.updated', 'active'],
        ['license.revoked', 'revoked'],
      ],
    );
  });

  test('an API key manages only its own app’s licenses', async () => {
    const seller = await sellerWithApp(server);
    const { key } = await createApiKey(server, seller.token, seller.appId);
    const license = (await server.api.post(`/apps/${seller.appId}/licenses`, {}, { token: key })).expect(
      201,
    ).body;
    (await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: key })).expect(200);
    const sibling = await createApp(server, seller.token, 'Sibling');
    assertError(
      await server.api.get(`/apps/${sibling.id}/licenses`, { token: key }),
      403,
      'app_scope_mismatch',
    );
  });
});

describe('a new key for a license', () => {
  test('the old key stops on every verify at once; devices, history and the buyer’s mail follow the new one', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const product = (
      await server.api.post(
        '/products',
        { appId: seller.appId, name: 'Studio', price: 5, currency: 'EUR', sendLicenseToCustomer: true },
        { token: seller.token },
      )
    ).expect(201).body;
    const email = `leaked-${Date.now()}@example.com`;
    const license = await issueLicense(server, seller, { productId: product.id, email, maxDevices: 1 });
    const verify = async (key: string, hwuid: string) =>
      (await server.api.post('/licenses/verify', { key, hwuid })).expect(200).body;
    assert.equal((await verify(license.key, 'desk')).valid, true, 'bound, and held in the cache');

    const regenerate = (token = seller.token) =>
      server.api.post(`/apps/${seller.appId}/licenses/${license.id}/regenerate-key`, {}, { token });
    const changed = (await regenerate()).expect(200).body;
    assert.notEqual(changed.key, license.key);
    assert.deepEqual(
      { ...changed, key: license.key, updatedAt: license.updatedAt },
      { ...license, deviceCount: 1, updatedAt: license.updatedAt },
    );
    assert.equal((await verify(license.key, 'desk')).code, 'license_not_found');
    const again = await verify(changed.key, 'desk');
    assert.deepEqual([again.valid, again.hw_bound], [true, true], 'the bound device carries over');
    assert.equal((await verify(changed.key, 'laptop')).code, 'device_limit_reached');

    const events = (await eventsForUser(server.db, seller.user.id)).filter((e) =>
      e.type.startsWith('license.'),
    );
    assert.deepEqual(
      events.map((e) => [e.type, e.data.licenseKey]),
      [
        ['license.created', license.key],
        ['license.updated', changed.key],
      ],
    );
    const mailed = await server.db
      .selectFrom('notifications')
      .select(['kind', 'to_email', 'data'])
      .where('to_email', '=', email)
      .execute();
    assert.deepEqual(
      mailed.map((m) => [m.kind, (m.data as { licenseKey: string }).licenseKey]),
      [['license.key_replaced', changed.key]],
    );
    const stranger = await sellerWithApp(server);
    assertError(await regenerate(stranger.token), 404, 'not_found');
  });
});

describe('verification', () => {
  const verify = (body: Record<string, unknown>) => server.api.post('/licenses/verify', body);

  test('a valid key verifies with its details and a token, whatever way it is typed', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, {
      email: 'buyer@example.com',
      expiresAt: '2099-06-30T12:34:56.789Z',
    });
    for (const typed of [
      license.key,
      license.key.toLowerCase(),
      license.key.replace(/-/g, ''),
      license.key.replace(/0/g, 'O'),
    ]) {
      const res = (await verify({ key: typed })).expect(200);
      assert.equal(res.body.valid, true, typed);
      assert.equal(res.body.status, 'ACTIVE');
      assert.equal(res.body.expiresAt, '2099-06-30T12:34:56Z');
      assert.equal(res.body.email, 'buyer@example.com');
      assert.equal(res.body.verificationType, 'basic');
      assert.equal(res.body.code, undefined);
      assert.match(res.body.license_token, /^eyJ/);
      assert.equal(res.body.license_jwks_uri, `${server.config.apiBaseUrl}/licenses/jwks`);
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
  });

  test('invalid outcomes answer 200 with valid false, a reason and no token', async () => {
    const seller = await sellerWithApp(server);
    const suspended = await issueLicense(server, seller);
    const revoked = await issueLicense(server, seller);
    const base = `/apps/${seller.appId}/licenses`;
    (await server.api.post(`${base}/${suspended.id}/suspend`, undefined, { token: seller.token })).expect(
      200,
    );
    (await server.api.post(`${base}/${revoked.id}/revoke`, undefined, { token: seller.token })).expect(200);
    const cases: [string, string, string][] = [
      [suspended.key, 'license_suspended', 'SUSPENDED'],
      [revoked.key, 'license_revoked', 'REVOKED'],
      ['AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA', 'license_not_found', 'NOT_FOUND'],
      ['not a key at all', 'license_not_found', 'NOT_FOUND'],
    ];
    for (const [key, code, status] of cases) {
      const res = (await verify({ key })).expect(200);
      assert.equal(res.body.valid, false);
      assert.equal(res.body.code, code);
      assert.equal(res.body.status, status);
      assert.equal(res.body.license_token, undefined);
    }
  });

  test('a key of another app answers exactly like an unknown key', async () => {
    const seller = await sellerWithApp(server);
    const other = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const foreign = (await verify({ key: license.key, appId: other.appId })).expect(200).body;
    const unknown = (await verify({ key: 'AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA', appId: other.appId })).expect(
      200,
    ).body;
    assert.deepEqual(foreign, unknown);
    assert.equal((await verify({ key: license.key, appId: seller.appId })).expect(200).body.valid, true);
  });

  test('malformed bodies answer 400', async () => {
    assertError(await verify({}), 400, 'validation_failed');
    assertError(await verify({ key: 5 }), 400, 'validation_failed');
    assertError(await verify({ key: 'x', hwuid: '   ' }), 400, 'validation_failed');
    assertError(
      await server.api.post('/licenses/verify', undefined, {
        raw: 'key=x',
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
  });

  test('devices are activated up to the limit and validate-hardware never takes a place', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 2 });
    assert.equal((await verify({ key: license.key })).body.code, 'hwuid_required');
    const hw = (hwuid: string) => server.api.post('/licenses/validate-hardware', { key: license.key, hwuid });
    assert.equal((await hw('laptop')).expect(200).body.code, 'device_not_bound');

    for (const hwuid of ['laptop', 'desktop', 'laptop']) {
      const res = (await verify({ key: license.key, hwuid })).expect(200).body;
      assert.equal(res.valid, true, hwuid);
      assert.equal(res.hw_bound, true);
    }
    const refused = (await verify({ key: license.key, hwuid: 'tablet' })).expect(200).body;
    assert.equal(refused.valid, false);
    assert.equal(refused.code, 'device_limit_reached');
    assert.equal(refused.license_token, undefined);

    const validated = (await hw('desktop')).expect(200).body;
    assert.equal(validated.valid, true);
    assert.equal(validated.hw_bound, true);
    assert.match(validated.license_token, /^eyJ/);
    assert.equal((await hw('tablet')).body.code, 'device_not_bound');

    const path = `/apps/${seller.appId}/licenses/${license.id}`;
    const devices = (await server.api.get(`${path}/devices`, { token: seller.token })).expect(200).body;
    assert.deepEqual(
      devices.devices.map((d: { hwuid: string }) => d.hwuid),
      ['laptop', 'desktop'],
    );
    (await server.api.delete(`${path}/devices/laptop`, { token: seller.token })).expect(204);
    assertError(await server.api.delete(`${path}/devices/laptop`, { token: seller.token }), 404, 'not_found');
    assert.equal((await verify({ key: license.key, hwuid: 'tablet' })).body.valid, true);
    const after = (await server.api.get(path, { token: seller.token })).expect(200).body;
    assert.equal(after.deviceCount, 2);
    assertError(
      await server.api.patch(path, { maxDevices: 1 }, { token: seller.token }),
      400,
      'validation_failed',
    );
  });

  test('20 concurrent verifies with 20 devices on a 2-device license activate exactly 2', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 2 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        verify({ key: license.key, hwuid: `device-${i}` }).then((r) => r.expect(200).body),
      ),
    );
    assert.equal(results.filter((r) => r.valid).length, 2);
    assert.equal(results.filter((r) => r.code === 'device_limit_reached').length, 18);
    const { rows } = await sql<{
      n: number;
    }>`select count(*) as n from license_devices where license_id = ${license.id}`.execute(server.db);
    assert.equal(Number(rows[0]?.n), 2);
    const row = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
    ).expect(200).body;
    assert.equal(row.deviceCount, 2);
  });

  test('the same new device verified concurrently takes one place', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 3 });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => verify({ key: license.key, hwuid: 'same' }).then((r) => r.body)),
    );
    assert.ok(results.every((r) => r.valid));
    const row = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
    ).expect(200).body;
    assert.equal(row.deviceCount, 1);
  });
});

describe('device names and platforms', () => {
  const verify = (body: Record<string, unknown>) => server.api.post('/licenses/verify', body);
  const devicesOf = async (seller: { appId: string; token: string }, licenseId: string) =>
    (
      await server.api.get(`/apps/${seller.appId}/licenses/${licenseId}/devices`, { token: seller.token })
    ).expect(200).body.devices as { hwuid: string; name: string | null; platform: string | null }[];
  const labels = (devices: { hwuid: string; name: string | null; platform: string | null }[]) =>
    devices.map((d) => [d.hwuid, d.name, d.platform]);

  test('a device carries the name and platform its client sends; a later call sending others replaces them', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 3 });
    const { key } = license;
    for (const body of [
      { key, hwuid: 'mac-1', name: 'Ana’s MacBook', platform: 'macOS 15' },
      { key, hwuid: 'pc-1' },
    ]) {
      assert.equal((await verify(body)).expect(200).body.valid, true);
    }
    assert.deepEqual(labels(await devicesOf(seller, license.id)), [
      ['mac-1', 'Ana’s MacBook', 'macOS 15'],
      ['pc-1', null, null],
    ]);

    // The same label again, and a call that leaves it out, change nothing.
    (await verify({ key, hwuid: 'mac-1', name: 'Ana’s MacBook', platform: 'macOS 15' })).expect(200);
    (await verify({ key, hwuid: 'mac-1' })).expect(200);
    assert.deepEqual(labels(await devicesOf(seller, license.id))[0], ['mac-1', 'Ana’s MacBook', 'macOS 15']);

    // An update of the system, a new name, and a device named late: each replaces what it sends.
    (await verify({ key, hwuid: 'mac-1', platform: 'macOS 26' })).expect(200);
    (await verify({ key, hwuid: 'pc-1', name: 'Front desk', platform: 'Windows 11' })).expect(200);
    const validated = (
      await server.api.post('/licenses/validate-hardware', { key, hwuid: 'mac-1', name: 'Ana’s Mac' })
    ).expect(200).body;
    assert.equal(validated.valid, true);
    assert.deepEqual(labels(await devicesOf(seller, license.id)), [
      ['mac-1', 'Ana’s Mac', 'macOS 26'],
      ['pc-1', 'Front desk', 'Windows 11'],
    ]);
    // Said again right after (from this node's memory), the new label stands.
    (await verify({ key, hwuid: 'mac-1', name: 'Ana’s Mac', platform: 'macOS 26' })).expect(200);
    assert.deepEqual(labels(await devicesOf(seller, license.id))[0], ['mac-1', 'Ana’s Mac', 'macOS 26']);
  });

  test('a bad name or platform answers 400 naming the field, and binds nothing', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 3 });
    const { key } = license;
    for (const [body, field] of [
      [{ key, hwuid: 'a', name: 'x'.repeat(101) }, 'name'],
      [{ key, hwuid: 'a', name: '   ' }, 'name'],
      [{ key, hwuid: 'a', name: '' }, 'name'],
      [{ key, hwuid: 'a', name: ' padded' }, 'name'],
      [{ key, hwuid: 'a', name: 'tab\there' }, 'name'],
      [{ key, hwuid: 'a', name: 7 }, 'name'],
      [{ key, hwuid: 'a', platform: 'p'.repeat(51) }, 'platform'],
      [{ key, hwuid: 'a', platform: null }, 'platform'],
    ] as const) {
      const error = assertError(await verify(body), 400, 'validation_failed');
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(error)}`,
      );
    }
    assert.deepEqual(await devicesOf(seller, license.id), []);
    // At the limits, accepted.
    const longest = { key, hwuid: 'a', name: 'n'.repeat(100), platform: 'p'.repeat(50) };
    assert.equal((await verify(longest)).expect(200).body.valid, true);
    assert.deepEqual(labels(await devicesOf(seller, license.id)), [['a', 'n'.repeat(100), 'p'.repeat(50)]]);
  });
});

describe('odd input and races', () => {
  test('dates that are not real instants between 1970 and 9999 answer 400, never 500', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    for (const expiresAt of ['2099-12-31T23:59:60Z', '0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z']) {
      const error = assertError(
        await server.api.patch(
          `/apps/${seller.appId}/licenses/${license.id}`,
          { expiresAt },
          { token: seller.token },
        ),
        400,
        'validation_failed',
      );
      assert.equal(error.details?.[0]?.field, 'expiresAt', expiresAt);
    }
    assertError(
      await server.api.post(
        `/apps/${seller.appId}/licenses`,
        { expiresAt: '2099-12-31T23:59:60Z' },
        { token: seller.token },
      ),
      400,
      'validation_failed',
    );
    assertError(
      await server.api.post(
        `/apps/${seller.appId}/licenses`,
        { metadata: { 'a\u0000b': 1 } },
        { token: seller.token },
      ),
      400,
      'validation_failed',
    );
  });

  test('a revoke racing an expiry extension leaves the license revoked', async () => {
    const seller = await sellerWithApp(server);
    for (let i = 0; i < 5; i++) {
      const license = await issueLicense(server, seller);
      const path = `/apps/${seller.appId}/licenses/${license.id}`;
      await Promise.all([
        server.api.post(`${path}/revoke`, undefined, { token: seller.token }),
        server.api.patch(path, { expiresAt: FUTURE }, { token: seller.token }),
      ]);
      assert.equal((await server.api.get(path, { token: seller.token })).body.status, 'revoked');
    }
  });

  test('lowering the device limit while devices activate never leaves more devices than the limit', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 10 });
    const path = `/apps/${seller.appId}/licenses/${license.id}`;
    await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        server.api.post('/licenses/verify', { key: license.key, hwuid: `d${i}` }),
      ),
      server.api.patch(path, { maxDevices: 3 }, { token: seller.token }),
    ]);
    const after = (await server.api.get(path, { token: seller.token })).body;
    assert.ok(
      after.deviceCount <= after.maxDevices,
      `${after.deviceCount} devices, limit ${after.maxDevices}`,
    );
  });
});
