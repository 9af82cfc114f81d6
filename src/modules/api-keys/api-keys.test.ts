import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createApiKey, createApp, signUp, startTestServer, type TestServer } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

describe('API keys', () => {
  test('shows the key once at creation and only its prefix afterwards', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const res = (
      await server.api.post(`/apps/${app.id}/api-keys`, { name: 'CI server' }, { token: seller.token })
    ).expect(201);
    assert.match(res.body.key, /^sk_[0-9a-f]{48}$/);
    assert.equal(res.body.prefix, res.body.key.slice(0, 12));
    assert.equal(res.body.appId, app.id);
    assert.equal(res.body.lastUsedAt, null);
    assert.equal(res.body.revokedAt, null);

    const list = (await server.api.get(`/apps/${app.id}/api-keys`, { token: seller.token })).expect(200);
    assert.equal(list.body.total, 1);
    assert.deepEqual(Object.keys(list.body.apiKeys[0]).sort(), [
      'appId',
      'createdAt',
      'id',
      'lastUsedAt',
      'name',
      'prefix',
      'revokedAt',
    ]);
    assert.ok(!list.text.includes(res.body.key));
  });

  test('stores only a hash of the key', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const { id, key } = await createApiKey(server, seller.token, app.id);
    const row = await server.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, createHash('sha256').update(key).digest('hex'));
    assert.ok(!Object.values(row).some((value) => value === key));
  });

  test('a key acts for its seller and records when it was last used', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const { id, key } = await createApiKey(server, seller.token, app.id);
    const me = (await server.api.get('/auth/me', { token: key })).expect(200);
    assert.equal(me.body.user.id, seller.user.id);
    assert.deepEqual(me.body.credential, { kind: 'api_key', appId: app.id, apiKeyId: id });
    const list = (await server.api.get(`/apps/${app.id}/api-keys`, { token: seller.token })).expect(200);
    assert.match(list.body.apiKeys[0].lastUsedAt, /Z$/);
  });

  test('a revoked key answers 401 at once and stays listed as revoked', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const kept = await createApiKey(server, seller.token, app.id, 'kept');
    const revoked = await createApiKey(server, seller.token, app.id, 'revoked');
    (await server.api.get('/auth/me', { token: revoked.key })).expect(200);
    (await server.api.delete(`/apps/${app.id}/api-keys/${revoked.id}`, { token: seller.token })).expect(204);
    assertError(await server.api.get('/auth/me', { token: revoked.key }), 401, 'unauthorized');
    (await server.api.get('/auth/me', { token: kept.key })).expect(200);

    const list = (await server.api.get(`/apps/${app.id}/api-keys`, { token: seller.token })).expect(200);
    const byName = Object.fromEntries(
      list.body.apiKeys.map((k: { name: string; revokedAt: string | null }) => [k.name, k.revokedAt]),
    );
    assert.equal(byName.kept, null);
    assert.match(byName.revoked, /Z$/);
    // Revoking again keeps the first revocation time.
    (await server.api.delete(`/apps/${app.id}/api-keys/${revoked.id}`, { token: seller.token })).expect(204);
    const again = (await server.api.get(`/apps/${app.id}/api-keys`, { token: seller.token })).expect(200);
    assert.equal(
      again.body.apiKeys.find((k: { name: string }) => k.name === 'revoked').revokedAt,
      byName.revoked,
    );
  });

  test('keys of a deleted app stop working', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const { key } = await createApiKey(server, seller.token, app.id);
    (await server.api.delete(`/apps/${app.id}`, { token: seller.token })).expect(204);
    assertError(await server.api.get('/auth/me', { token: key }), 401, 'unauthorized');
  });

  test('keys of a deleted seller stop working', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const { key } = await createApiKey(server, seller.token, app.id);
    (await server.api.delete(`/admin/users/${seller.user.id}`, { token: await server.adminToken() })).expect(
      204,
    );
    assertError(await server.api.get('/auth/me', { token: key }), 401, 'unauthorized');
  });

  test('an API key can neither mint nor revoke keys', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const { id, key } = await createApiKey(server, seller.token, app.id);
    assertError(
      await server.api.post(`/apps/${app.id}/api-keys`, { name: 'x' }, { token: key }),
      403,
      'user_token_required',
    );
    assertError(await server.api.get(`/apps/${app.id}/api-keys`, { token: key }), 403, 'user_token_required');
    assertError(
      await server.api.delete(`/apps/${app.id}/api-keys/${id}`, { token: key }),
      403,
      'user_token_required',
    );
  });

  test('an admin’s API key carries the ADMIN role', async () => {
    const admin = await signUp(server, { role: 'ADMIN' });
    const app = await createApp(server, admin.token);
    const { key } = await createApiKey(server, admin.token, app.id);
    (await server.api.get('/admin/users', { token: key })).expect(200);
    const seller = await signUp(server);
    const sellerApp = await createApp(server, seller.token);
    const sellerKey = await createApiKey(server, seller.token, sellerApp.id);
    assertError(await server.api.get('/admin/users', { token: sellerKey.key }), 403, 'forbidden');
  });

  test('a key name is required and bounded', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(101) }]) {
      const error = assertError(
        await server.api.post(`/apps/${app.id}/api-keys`, body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.equal(error.details?.[0]?.field, 'name');
    }
    const list = (await server.api.get(`/apps/${app.id}/api-keys`, { token: seller.token })).expect(200);
    assert.equal(list.body.total, 0);
  });
});
