import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

/**
 * Entitlements through HTTP: features named on a product, inherited or overridden by its
 * licenses, answered by verify and carried in license tokens.
 */
let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

async function product(seller: SellerWithApp, features?: string[]) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Suite', price: 10, currency: 'USD', ...(features ? { features } : {}) },
      { token: seller.token },
    )
  ).expect(201).body;
}

async function verified(key: string, appId: string) {
  const result = (await server.api.post('/licenses/verify', { key, appId })).expect(200).body;
  assert.equal(result.valid, true, JSON.stringify(result));
  return { features: result.features, claim: decodeJwt(result.license_token).features };
}

describe('entitlements', () => {
  test('a license inherits its product’s features, in the verify result and the token', async () => {
    const seller = await sellerWithApp(server);
    const suite = await product(seller, ['export', 'sync.cloud']);
    assert.deepEqual(suite.features, ['export', 'sync.cloud']);
    const license = await issueLicense(server, seller, { productId: suite.id });
    assert.equal(license.features, null);
    assert.deepEqual(await verified(license.key, seller.appId), {
      features: ['export', 'sync.cloud'],
      claim: ['export', 'sync.cloud'],
    });
  });

  test('a license’s own features override its product’s, and null inherits again', async () => {
    const seller = await sellerWithApp(server);
    const suite = await product(seller, ['export']);
    const license = await issueLicense(server, seller, { productId: suite.id, features: ['export', 'pdf'] });
    assert.deepEqual(license.features, ['export', 'pdf']);
    assert.deepEqual(await verified(license.key, seller.appId), {
      features: ['export', 'pdf'],
      claim: ['export', 'pdf'],
    });
    const path = `/apps/${seller.appId}/licenses/${license.id}`;
    // An empty list is an override too: this license grants nothing.
    (await server.api.patch(path, { features: [] }, { token: seller.token })).expect(200);
    assert.deepEqual(await verified(license.key, seller.appId), { features: [], claim: [] });
    (await server.api.patch(path, { features: null }, { token: seller.token })).expect(200);
    assert.deepEqual((await verified(license.key, seller.appId)).features, ['export']);
  });

  test('changing a product’s features changes what its licenses verify with at once', async () => {
    const seller = await sellerWithApp(server);
    const suite = await product(seller, ['export']);
    const license = await issueLicense(server, seller, { productId: suite.id });
    assert.deepEqual((await verified(license.key, seller.appId)).features, ['export']);
    (
      await server.api.patch(
        `/products/${suite.id}`,
        { features: ['export', 'sync'] },
        { token: seller.token },
      )
    ).expect(200);
    assert.deepEqual(await verified(license.key, seller.appId), {
      features: ['export', 'sync'],
      claim: ['export', 'sync'],
    });
  });

  test('metadata.features keeps working, ahead of the product’s and behind the license’s own', async () => {
    const seller = await sellerWithApp(server);
    const suite = await product(seller, ['export']);
    const legacy = await issueLicense(server, seller, {
      productId: suite.id,
      metadata: { plan: 'pro', features: ['Legacy Feature'] },
    });
    const result = await verified(legacy.key, seller.appId);
    assert.deepEqual(result, { features: ['Legacy Feature'], claim: ['Legacy Feature'] });
    (
      await server.api.patch(
        `/apps/${seller.appId}/licenses/${legacy.id}`,
        { features: ['sync'] },
        { token: seller.token },
      )
    ).expect(200);
    assert.deepEqual((await verified(legacy.key, seller.appId)).features, ['sync']);

    // Nothing set anywhere: an empty list in the result and, as before, no claim.
    const bare = await issueLicense(server, seller);
    assert.deepEqual(await verified(bare.key, seller.appId), { features: [], claim: undefined });
  });

  test('bad feature names answer 400 naming the field and change nothing', async () => {
    const seller = await sellerWithApp(server);
    const suite = await product(seller, ['export']);
    const cases: [string, string, Record<string, unknown>, string][] = [
      [
        'post',
        '/products',
        { appId: seller.appId, name: 'X', price: 1, currency: 'USD', features: ['Export'] },
        'features.0',
      ],
      ['patch', `/products/${suite.id}`, { features: ['ok', '-dash-first'] }, 'features.1'],
      ['patch', `/products/${suite.id}`, { features: ['a', 'a'] }, 'features'],
      [
        'patch',
        `/products/${suite.id}`,
        { features: Array.from({ length: 65 }, (_, i) => `f${i}`) },
        'features',
      ],
      ['patch', `/products/${suite.id}`, { features: ['x'.repeat(65)] }, 'features.0'],
      ['post', `/apps/${seller.appId}/licenses`, { features: ['has space'] }, 'features.0'],
      ['post', `/apps/${seller.appId}/licenses`, { features: 'export' }, 'features'],
    ];
    for (const [method, path, body, field] of cases) {
      const res =
        method === 'post'
          ? await server.api.post(path, body, { token: seller.token })
          : await server.api.patch(path, body, { token: seller.token });
      const error = assertError(res, 400, 'validation_failed');
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(error)}`,
      );
    }
    const stored = (await server.api.get(`/products/${suite.id}`, { token: seller.token })).expect(200).body;
    assert.deepEqual(stored.features, ['export']);
    const licenses = (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).expect(
      200,
    );
    assert.equal(licenses.body.total, 0);
  });
});
