import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, createApp, signUp, startTestServer, type TestServer } from '../testing/harness.js';
import { assertError } from '../testing/http-client.js';
import { type TestClock, testClock } from '../testing/test-clock.js';

/** Rules that depend on time, driven by an injected clock instead of sleeps. */
let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock('2030-05-01T10:00:00.000Z');
  server = await startTestServer({ USER_TOKEN_TTL: '3600' }, { clock, ownDatabase: true });
});
after(() => server.stop());

describe('time-based rules', () => {
  test('records are stamped with the clock’s time', async () => {
    clock.set('2030-05-01T10:00:00.123Z');
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const created = (await server.api.get(`/apps/${app.id}`, { token: seller.token })).expect(200).body;
    assert.equal(created.createdAt, '2030-05-01T10:00:00.123Z');
    clock.advance(90_000);
    const renamed = (
      await server.api.patch(`/apps/${app.id}`, { name: 'Later' }, { token: seller.token })
    ).expect(200).body;
    assert.equal(renamed.createdAt, '2030-05-01T10:00:00.123Z');
    assert.equal(renamed.updatedAt, '2030-05-01T10:01:30.123Z');
  });

  test('a session token stops working when USER_TOKEN_TTL has passed', async () => {
    clock.set('2030-05-02T08:00:00.000Z');
    const seller = await signUp(server);
    assert.equal((seller as unknown as { expiresAt: string }).expiresAt, '2030-05-02T09:00:00.000Z');
    clock.advance(3_599_000);
    (await server.api.get('/auth/me', { token: seller.token })).expect(200);
    clock.advance(2_000);
    assertError(await server.api.get('/auth/me', { token: seller.token }), 401, 'unauthorized');
  });

  test('an API key’s last use is recorded at most once a minute', async () => {
    clock.set('2030-05-03T12:00:00.000Z');
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const { key } = await createApiKey(server, seller.token, app.id);
    const lastUsed = async () =>
      (await server.api.get(`/apps/${app.id}/api-keys`, { token: seller.token })).expect(200).body.apiKeys[0]
        .lastUsedAt;

    await server.api.get('/auth/me', { token: key });
    assert.equal(await lastUsed(), '2030-05-03T12:00:00.000Z');
    clock.advance(30_000);
    await server.api.get('/auth/me', { token: key });
    assert.equal(await lastUsed(), '2030-05-03T12:00:00.000Z');
    clock.advance(31_000);
    await server.api.get('/auth/me', { token: key });
    assert.equal(await lastUsed(), '2030-05-03T12:01:01.000Z');
  });
});
