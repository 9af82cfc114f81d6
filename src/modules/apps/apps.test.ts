import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, createApp, signUp, startTestServer, type TestServer } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { eventsForUser } from '../events/index.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

describe('apps', () => {
  test('creates an app and records app.created with it', async () => {
    const seller = await signUp(server);
    const res = await server.api.post(
      '/apps',
      { name: '  Photo Tool ', description: 'Desktop editor' },
      { token: seller.token },
    );
    res.expect(201);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'clientAddresses',
      'createdAt',
      'description',
      'id',
      'name',
      'tokenAlgorithm',
      'updatedAt',
      'userId',
    ]);
    assert.equal(res.body.name, 'Photo Tool');
    assert.equal(res.body.tokenAlgorithm, 'RS256', 'RS256 unless the seller chooses otherwise');
    assert.equal(
      res.body.clientAddresses,
      'truncated',
      'license timelines keep networks unless told otherwise',
    );
    assert.equal(res.body.userId, seller.user.id);

    const events = await eventsForUser(server.db, seller.user.id);
    const created = events.filter((e) => e.type === 'app.created');
    assert.equal(created.length, 1);
    assert.equal(created[0]?.appId, res.body.id);
    assert.deepEqual(created[0]?.data, res.body);
  });

  test('reads, renames and deletes an app', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const got = (await server.api.get(`/apps/${app.id}`, { token: seller.token })).expect(200);
    assert.equal(got.body.name, 'Test App');
    const renamed = (
      await server.api.patch(`/apps/${app.id}`, { name: 'Renamed' }, { token: seller.token })
    ).expect(200);
    assert.equal(renamed.body.name, 'Renamed');
    assert.equal(renamed.body.description, '');
    assert.ok(renamed.body.updatedAt >= got.body.updatedAt);
    (await server.api.delete(`/apps/${app.id}`, { token: seller.token })).expect(204);
    assertError(await server.api.get(`/apps/${app.id}`, { token: seller.token }), 404, 'not_found');
    assertError(await server.api.delete(`/apps/${app.id}`, { token: seller.token }), 404, 'not_found');
  });

  test('refuses a blank or over-long name and unknown fields, changing nothing', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token, 'Original');
    for (const body of [{ name: '   ' }, { name: 'x'.repeat(101) }, { name: 5 }, { colour: 'red' }, {}]) {
      const error = assertError(
        await server.api.patch(`/apps/${app.id}`, body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.ok(error.details?.length, `details for ${JSON.stringify(body)}`);
    }
    const missing = assertError(
      await server.api.post('/apps', { description: 'no name' }, { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.deepEqual(missing.details, [{ field: 'name', message: 'is required' }]);
    const got = (await server.api.get(`/apps/${app.id}`, { token: seller.token })).expect(200);
    assert.equal(got.body.name, 'Original');
  });

  test('lists only the seller’s own apps, paginated in creation order', async () => {
    const seller = await signUp(server);
    const other = await signUp(server);
    await createApp(server, other.token, 'Not mine');
    const names = ['A', 'B', 'C'];
    for (const name of names) await createApp(server, seller.token, name);

    const all = (await server.api.get('/apps', { token: seller.token })).expect(200);
    assert.deepEqual(
      all.body.apps.map((a: { name: string }) => a.name),
      names,
    );
    assert.equal(all.body.total, 3);
    assert.equal(all.body.limit, 20);

    const page = (await server.api.get('/apps?limit=2&offset=1', { token: seller.token })).expect(200);
    assert.deepEqual(
      page.body.apps.map((a: { name: string }) => a.name),
      ['B', 'C'],
    );
    assert.equal(page.body.total, 3);

    const past = (await server.api.get('/apps?offset=10', { token: seller.token })).expect(200);
    assert.deepEqual(past.body.apps, []);
    assert.equal(past.body.total, 3);

    const over = assertError(
      await server.api.get('/apps?limit=101', { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.equal(over.details?.[0]?.field, 'limit');
    assertError(await server.api.get('/apps?limit=abc', { token: seller.token }), 400, 'validation_failed');
    assertError(await server.api.get('/apps?sort=name', { token: seller.token }), 400, 'validation_failed');
  });

  test('an API key reads only its own app and cannot create, change or delete apps', async () => {
    const seller = await signUp(server);
    const mine = await createApp(server, seller.token, 'Keyed');
    const sibling = await createApp(server, seller.token, 'Sibling');
    const { key } = await createApiKey(server, seller.token, mine.id);

    const list = (await server.api.get('/apps', { token: key })).expect(200);
    assert.deepEqual(
      list.body.apps.map((a: { id: string }) => a.id),
      [mine.id],
    );
    assert.equal(list.body.total, 1);
    (await server.api.get(`/apps/${mine.id}`, { token: key })).expect(200);
    assertError(await server.api.get(`/apps/${sibling.id}`, { token: key }), 403, 'app_scope_mismatch');
    assertError(await server.api.post('/apps', { name: 'New' }, { token: key }), 403, 'user_token_required');
    assertError(
      await server.api.patch(`/apps/${mine.id}`, { name: 'New' }, { token: key }),
      403,
      'user_token_required',
    );
    assertError(await server.api.delete(`/apps/${mine.id}`, { token: key }), 403, 'user_token_required');
  });

  test('an invalid app id in the path answers 400 naming it', async () => {
    const seller = await signUp(server);
    const error = assertError(
      await server.api.get('/apps/not-a-uuid', { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.equal(error.details?.[0]?.field, 'appId');
  });
});
