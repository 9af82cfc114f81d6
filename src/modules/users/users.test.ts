import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import {
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { eventsForUser } from '../events/index.js';

const JWT_SECRET = 'test-secret-that-is-long-enough-0123456789';
let server: TestServer;

before(async () => {
  server = await startTestServer({ JWT_SECRET });
});
after(() => server.stop());

describe('registration', () => {
  test('registers a seller and returns a working session token', async () => {
    const email = `New.Seller-${uniqueSuffix()}@Example.com`;
    const res = await server.api.post('/auth/register', { email, password: TEST_PASSWORD, name: '  Ada ' });
    res.expect(201);
    assert.deepEqual(Object.keys(res.body).sort(), ['expiresAt', 'token', 'user']);
    assert.deepEqual(Object.keys(res.body.user).sort(), [
      'createdAt',
      'email',
      'id',
      'name',
      'role',
      'tier',
      'updatedAt',
    ]);
    assert.equal(res.body.user.email, email);
    assert.equal(res.body.user.name, 'Ada');
    assert.equal(res.body.user.role, 'SELLER');
    assert.equal(res.body.user.tier, 'free');
    assert.match(res.body.user.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const me = (await server.api.get('/auth/me', { token: res.body.token })).expect(200);
    assert.equal(me.body.user.id, res.body.user.id);
    assert.deepEqual(me.body.credential, { kind: 'user_token' });
  });

  test('stores the password only as a scrypt hash', async () => {
    const seller = await signUp(server);
    const row = await server.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', seller.user.id)
      .executeTakeFirstOrThrow();
    assert.match(row.password_hash, /^scrypt\$\d+\$8\$1\$/);
    assert.ok(!row.password_hash.includes(TEST_PASSWORD));
  });

  test('records user.registered in the outbox with the account', async () => {
    const seller = await signUp(server);
    const events = await eventsForUser(server.db, seller.user.id);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.type, 'user.registered');
    assert.deepEqual(events[0]?.data, {
      id: seller.user.id,
      email: seller.user.email,
      name: 'Test Seller',
      createdAt: (seller.user as { createdAt?: string }).createdAt,
    });
  });

  test('refuses an e-mail already taken in another letter case', async () => {
    const email = `dup-${uniqueSuffix()}@example.com`;
    await signUp(server, { email });
    const res = await server.api.post('/auth/register', {
      email: email.toUpperCase(),
      password: TEST_PASSWORD,
    });
    assertError(res, 409, 'email_taken');
    const count = await server.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  test('two simultaneous registrations of one e-mail create one account', async () => {
    const email = `race-${uniqueSuffix()}@example.com`;
    const results = await Promise.all(
      [1, 2, 3].map(() => server.api.post('/auth/register', { email, password: TEST_PASSWORD })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409]);
  });

  test('names each invalid field and writes nothing', async () => {
    const email = `bad-${uniqueSuffix()}@example.com`;
    const res = await server.api.post('/auth/register', { email, password: 'short', role: 'ADMIN' });
    const error = assertError(res, 400, 'validation_failed');
    const fields = error.details?.map((d) => d.field).sort();
    assert.deepEqual(fields, ['password', 'role']);
    assertError(
      await server.api.post('/auth/register', { email: 'not-an-email', password: TEST_PASSWORD }),
      400,
      'validation_failed',
    );
    assertError(
      await server.api.post('/auth/login', { email, password: 'short' }),
      401,
      'invalid_credentials',
    );
  });
});

describe('login', () => {
  test('signs in with the e-mail in any letter case', async () => {
    const seller = await signUp(server);
    const res = await server.api.post('/auth/login', {
      email: seller.user.email.toUpperCase(),
      password: TEST_PASSWORD,
    });
    res.expect(200);
    assert.equal(res.body.user.id, seller.user.id);
    (await server.api.get('/auth/me', { token: res.body.token })).expect(200);
  });

  test('does not reveal whether the e-mail exists', async () => {
    const seller = await signUp(server);
    const wrongPassword = await server.api.post('/auth/login', {
      email: seller.user.email,
      password: 'wrong password',
    });
    const unknownEmail = await server.api.post('/auth/login', {
      email: `nobody-${uniqueSuffix()}@example.com`,
      password: 'wrong password',
    });
    const a = assertError(wrongPassword, 401, 'invalid_credentials');
    const b = assertError(unknownEmail, 401, 'invalid_credentials');
    assert.equal(a.message, b.message);
  });
});

describe('session tokens', () => {
  const key = new TextEncoder().encode(JWT_SECRET);

  test('refuses a tampered, unsigned, expired or foreign-audience token', async () => {
    const seller = await signUp(server);
    const [header, payload, signature] = seller.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(
      JSON.stringify({ ...claims, sub: '00000000-0000-7000-8000-000000000000' }),
    ).toString('base64url');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(seller.user.id)
      .setIssuer(claims.iss)
      .setAudience(claims.aud)
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .sign(key);
    const otherAudience = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(seller.user.id)
      .setIssuer(claims.iss)
      .setAudience('something-else')
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key);
    for (const token of [
      `${header}.${forged}.${signature}`,
      unsigned,
      expired,
      otherAudience,
      'garbage.token.here',
    ]) {
      assertError(await server.api.get('/auth/me', { token }), 401, 'unauthorized');
    }
  });

  test('refuses the token of a deleted account', async () => {
    const seller = await signUp(server);
    (await server.api.get('/auth/me', { token: seller.token })).expect(200);
    (await server.api.delete(`/admin/users/${seller.user.id}`, { token: await server.adminToken() })).expect(
      204,
    );
    assertError(await server.api.get('/auth/me', { token: seller.token }), 401, 'unauthorized');
    assertError(
      await server.api.post('/auth/login', { email: seller.user.email, password: TEST_PASSWORD }),
      401,
      'invalid_credentials',
    );
  });
});

describe('admin user management', () => {
  test('an admin lists users and filters them', async () => {
    const seller = await signUp(server);
    const token = await server.adminToken();
    const res = (
      await server.api.get(`/admin/users?email=${encodeURIComponent(seller.user.email)}`, { token })
    ).expect(200);
    assert.equal(res.body.total, 1);
    assert.equal(res.body.users[0].id, seller.user.id);
    assert.equal(res.body.limit, 20);
    assert.equal(res.body.offset, 0);
    const admins = (await server.api.get('/admin/users?role=ADMIN&limit=100', { token })).expect(200);
    assert.ok(admins.body.users.every((u: { role: string }) => u.role === 'ADMIN'));
    assert.ok(
      admins.body.users.every(
        (u: Record<string, unknown>) => !('passwordHash' in u) && !('password_hash' in u),
      ),
    );
  });

  test('an admin sets tier and role, and the change applies to live sessions', async () => {
    const seller = await signUp(server);
    const token = await server.adminToken();
    const res = (
      await server.api.patch(`/admin/users/${seller.user.id}`, { tier: 'business' }, { token })
    ).expect(200);
    assert.equal(res.body.tier, 'business');
    assertError(await server.api.get('/admin/users', { token: seller.token }), 403, 'forbidden');
    (await server.api.patch(`/admin/users/${seller.user.id}`, { role: 'ADMIN' }, { token })).expect(200);
    const me = (await server.api.get('/auth/me', { token: seller.token })).expect(200);
    assert.equal(me.body.user.role, 'ADMIN');
    assert.equal(me.body.user.tier, 'business');
    (await server.api.get('/admin/users', { token: seller.token })).expect(200);
  });

  test('refuses an unknown tier, an empty change and an unknown user', async () => {
    const seller = await signUp(server);
    const token = await server.adminToken();
    const bad = assertError(
      await server.api.patch(`/admin/users/${seller.user.id}`, { tier: 'gold' }, { token }),
      400,
      'validation_failed',
    );
    assert.equal(bad.details?.[0]?.field, 'tier');
    assertError(
      await server.api.patch(`/admin/users/${seller.user.id}`, {}, { token }),
      400,
      'validation_failed',
    );
    assertError(
      await server.api.patch('/admin/users/00000000-0000-7000-8000-000000000000', { tier: 'pro' }, { token }),
      404,
      'not_found',
    );
    const me = (await server.api.get('/auth/me', { token: seller.token })).expect(200);
    assert.equal(me.body.user.tier, 'free');
  });

  test('an admin cannot demote or delete themselves', async () => {
    const admin = await signUp(server, { role: 'ADMIN' });
    assertError(
      await server.api.patch(`/admin/users/${admin.user.id}`, { role: 'SELLER' }, { token: admin.token }),
      409,
      'conflict',
    );
    assertError(
      await server.api.delete(`/admin/users/${admin.user.id}`, { token: admin.token }),
      409,
      'conflict',
    );
  });

  test('the configured admin account exists at start', async () => {
    const me = (await server.api.get('/auth/me', { token: await server.adminToken() })).expect(200);
    assert.equal(me.body.user.role, 'ADMIN');
    assert.equal(me.body.user.email, server.config.adminEmail);
  });
});
