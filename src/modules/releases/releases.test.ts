import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createApiKey,
  createApp,
  type SellerWithApp,
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

const releasesOf = (seller: SellerWithApp) => `/apps/${seller.appId}/releases`;

async function create(seller: SellerWithApp, body: Record<string, unknown>) {
  return (await server.api.post(releasesOf(seller), body, { token: seller.token })).expect(201).body;
}

async function rowCount(appId: string): Promise<number> {
  const row = await server.db
    .selectFrom('releases')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('releases', () => {
  test('a release is created as a draft, answered with the allow-listed fields and a Location', async () => {
    const seller = await sellerWithApp(server);
    const res = await server.api.post(
      releasesOf(seller),
      { version: 'v1.4.0', notes: 'Faster export', requiredFeatures: ['pro'] },
      { token: seller.token },
    );
    res.expect(201);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'appId',
      'channel',
      'createdAt',
      'id',
      'notes',
      'publishedAt',
      'requiredFeatures',
      'status',
      'updatedAt',
      'version',
      'yankedAt',
    ]);
    assert.equal(res.body.version, '1.4.0', 'the leading v is dropped');
    assert.equal(res.body.channel, 'stable');
    assert.equal(res.body.status, 'draft');
    assert.equal(res.body.publishedAt, null);
    assert.deepEqual(res.body.requiredFeatures, ['pro']);
    assert.equal(res.headers.get('location'), `/v1/apps/${seller.appId}/releases/${res.body.id}`);
    const got = (
      await server.api.get(`${releasesOf(seller)}/${res.body.id}`, { token: seller.token })
    ).expect(200);
    assert.deepEqual(got.body, res.body);
  });

  test('lists newest version first as semantic versioning orders them, filtered by channel and status', async () => {
    const seller = await sellerWithApp(server);
    for (const version of ['1.2.0', '1.10.0', '2.0.0-beta.2', '2.0.0-beta.11', '1.10.0-rc.1', '0.9.0']) {
      await create(seller, { version });
    }
    const all = (await server.api.get(releasesOf(seller), { token: seller.token })).expect(200).body;
    assert.equal(all.total, 6);
    assert.deepEqual(
      all.releases.map((r: { version: string }) => r.version),
      ['2.0.0-beta.11', '2.0.0-beta.2', '1.10.0', '1.10.0-rc.1', '1.2.0', '0.9.0'],
    );
    assert.deepEqual(
      all.releases.map((r: { channel: string }) => r.channel),
      ['beta', 'beta', 'stable', 'rc', 'stable', 'stable'],
      'a pre-release takes the channel its tag names',
    );
    const beta = (await server.api.get(`${releasesOf(seller)}?channel=beta`, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(beta.total, 2);
    const page = (
      await server.api.get(`${releasesOf(seller)}?limit=2&offset=2`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      page.releases.map((r: { version: string }) => r.version),
      ['1.10.0', '1.10.0-rc.1'],
    );
    assert.equal(page.total, 6);
    const published = (
      await server.api.get(`${releasesOf(seller)}?status=published`, { token: seller.token })
    ).expect(200).body;
    assert.equal(published.total, 0);
    const refused = assertError(
      await server.api.get(`${releasesOf(seller)}?channel=nightly`, { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.equal(refused.details?.[0]?.field, 'channel');
  });

  test('refuses what is not a release, naming the field, and creates nothing', async () => {
    const seller = await sellerWithApp(server);
    const cases: [Record<string, unknown>, string][] = [
      [{ version: '1.2' }, 'version'],
      [{ version: '01.2.3' }, 'version'],
      [{ version: '1.2.3', channel: 'nightly' }, 'channel'],
      [{ version: '2.0.0-nightly.5' }, 'channel'],
      [{ version: '1.2.3', requiredFeatures: ['Not A Feature'] }, 'requiredFeatures'],
      [{ version: '1.2.3', notes: 'x'.repeat(20_001) }, 'notes'],
      [{ version: '1.2.3', status: 'published' }, 'status'],
    ];
    for (const [body, field] of cases) {
      const error = assertError(
        await server.api.post(releasesOf(seller), body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((detail) => detail.field === field || detail.field.startsWith(`${field}.`)),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(error)}`,
      );
    }
    assert.equal(await rowCount(seller.appId), 0);
    // A pre-release whose tag names no channel is accepted once the channel is given.
    assert.equal((await create(seller, { version: '2.0.0-nightly.5', channel: 'dev' })).channel, 'dev');
  });

  test('one release per version: a v prefix or build metadata does not make another', async () => {
    const seller = await sellerWithApp(server);
    await create(seller, { version: '3.1.0' });
    for (const version of ['3.1.0', 'v3.1.0', '3.1.0+build.7']) {
      const error = assertError(
        await server.api.post(releasesOf(seller), { version }, { token: seller.token }),
        409,
        'release_exists',
      );
      assert.equal(error.details?.[0]?.field, 'version');
    }
    assert.equal(await rowCount(seller.appId), 1);
    // Another app of the same seller has versions of its own.
    const other = await createApp(server, seller.token, 'Other');
    (
      await server.api.post(`/apps/${other.id}/releases`, { version: '3.1.0' }, { token: seller.token })
    ).expect(201);
  });

  test('a create repeated with its Idempotency-Key makes one release', async () => {
    const seller = await sellerWithApp(server);
    const headers = { 'idempotency-key': `release-${seller.appId}` };
    const first = (
      await server.api.post(releasesOf(seller), { version: '1.0.0' }, { token: seller.token, headers })
    ).expect(201);
    const again = (
      await server.api.post(releasesOf(seller), { version: '1.0.0' }, { token: seller.token, headers })
    ).expect(201);
    assert.deepEqual(again.body, first.body);
    assert.equal(await rowCount(seller.appId), 1);
  });

  test('publish and yank move a release on once, record their events, and a yank is final', async () => {
    const seller = await sellerWithApp(server);
    const draft = await create(seller, { version: '5.0.0', notes: 'First' });
    const path = `${releasesOf(seller)}/${draft.id}`;
    assertError(await server.api.post(`${path}/yank`, {}, { token: seller.token }), 409, 'release_not_draft');

    const published = (await server.api.post(`${path}/publish`, {}, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(published.status, 'published');
    assert.ok(published.publishedAt);
    const again = (await server.api.post(`${path}/publish`, {}, { token: seller.token })).expect(200).body;
    assert.equal(again.publishedAt, published.publishedAt, 'publishing again changes nothing');

    const renamed = assertError(
      await server.api.patch(path, { version: '5.0.1' }, { token: seller.token }),
      409,
      'release_not_draft',
    );
    assert.match(renamed.message, /version/);
    const noted = (await server.api.patch(path, { notes: 'Second' }, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(noted.notes, 'Second');
    assert.equal(noted.version, '5.0.0');
    assertError(await server.api.delete(path, { token: seller.token }), 409, 'release_not_draft');

    const yanked = (await server.api.post(`${path}/yank`, {}, { token: seller.token })).expect(200).body;
    assert.equal(yanked.status, 'yanked');
    assert.ok(yanked.yankedAt);
    assert.equal(
      (await server.api.post(`${path}/yank`, {}, { token: seller.token })).expect(200).body.yankedAt,
      yanked.yankedAt,
    );
    assertError(await server.api.post(`${path}/publish`, {}, { token: seller.token }), 409, 'release_yanked');
    assertError(
      await server.api.patch(path, { notes: 'Third' }, { token: seller.token }),
      409,
      'release_yanked',
    );
    // The version stays taken.
    assertError(
      await server.api.post(releasesOf(seller), { version: '5.0.0' }, { token: seller.token }),
      409,
      'release_exists',
    );

    const events = (await eventsForUser(server.db, seller.user.id)).filter((e) =>
      e.type.startsWith('release.'),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['release.published', 'release.yanked'],
      'one event for each change, none for the repeats',
    );
    assert.deepEqual(events[0]?.data, published);
    assert.equal((events[1]?.data as { status: string } | undefined)?.status, 'yanked');
  });

  test('a draft changes its version and is deleted; a taken version is refused', async () => {
    const seller = await sellerWithApp(server);
    await create(seller, { version: '1.0.0' });
    const draft = await create(seller, { version: '1.1.0-rc.1' });
    const path = `${releasesOf(seller)}/${draft.id}`;
    const changed = (await server.api.patch(path, { version: '1.1.0' }, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(changed.version, '1.1.0');
    assert.equal(changed.channel, 'rc', 'the channel stays as it was unless changed');
    assertError(
      await server.api.patch(path, { version: '1.0.0' }, { token: seller.token }),
      409,
      'release_exists',
    );
    assertError(await server.api.patch(path, {}, { token: seller.token }), 400, 'validation_failed');
    (await server.api.delete(path, { token: seller.token })).expect(204);
    assertError(await server.api.get(path, { token: seller.token }), 404, 'not_found');
    assert.equal(await rowCount(seller.appId), 1);
  });

  test('the app’s API key manages its releases; another app’s key and another seller reach none', async () => {
    const seller = await sellerWithApp(server);
    const key = (await createApiKey(server, seller.token, seller.appId)).key;
    const made = (await server.api.post(releasesOf(seller), { version: '7.0.0' }, { token: key })).expect(
      201,
    ).body;
    (await server.api.post(`${releasesOf(seller)}/${made.id}/publish`, {}, { token: key })).expect(200);

    const sibling = await createApp(server, seller.token, 'Sibling');
    const siblingKey = (await createApiKey(server, seller.token, sibling.id)).key;
    assertError(await server.api.get(releasesOf(seller), { token: siblingKey }), 403, 'app_scope_mismatch');
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.get(`${releasesOf(seller)}/${made.id}`, { token: stranger.token }),
      404,
      'not_found',
    );
    assertError(
      await server.api.post(`${releasesOf(seller)}/${made.id}/yank`, {}, { token: stranger.token }),
      404,
      'not_found',
    );
    // Another app's release is not found through this app, even for its owner.
    assertError(
      await server.api.get(`/apps/${sibling.id}/releases/${made.id}`, { token: seller.token }),
      404,
      'not_found',
    );
    assert.equal(
      (await server.api.get(`${releasesOf(seller)}/${made.id}`, { token: seller.token })).expect(200).body
        .status,
      'published',
    );
  });

  test('an app with releases is not deleted', async () => {
    const seller = await sellerWithApp(server);
    await create(seller, { version: '1.0.0' });
    const refused = assertError(
      await server.api.delete(`/apps/${seller.appId}`, { token: seller.token }),
      409,
      'app_in_use',
    );
    assert.match(refused.message, /releases/);
  });
});
