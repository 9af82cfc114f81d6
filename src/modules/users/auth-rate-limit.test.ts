import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestServer, TEST_PASSWORD, type TestServer, uniqueSuffix } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

const LIMIT = 3;
let server: TestServer;
before(async () => {
  // One trusted proxy hop, so each test can speak from its own client address
  // (keeps counters apart when REDIS_URL makes them shared across test files).
  server = await startTestServer({ AUTH_RATE_LIMIT: String(LIMIT), TRUST_PROXY: '1' });
});
after(() => server.stop());

// With one trusted hop the client is the last address in X-Forwarded-For.
const fromAddress = () => {
  const [a, b, c] = randomBytes(3);
  return { 'x-forwarded-for': `203.0.113.9, 10.${a}.${b}.${c}` };
};

async function register(headers = fromAddress()) {
  const email = `limited-${uniqueSuffix()}@example.com`;
  const res = await server.api.post('/auth/register', { email, password: TEST_PASSWORD }, { headers });
  return { res, email };
}

describe(`sign-in and registration limits (${process.env.REDIS_URL ? 'Redis' : 'in-process'} counters)`, () => {
  test('sign-in attempts from one address are stopped with 429 and Retry-After, whatever the e-mail', async () => {
    const { email } = await register();
    const headers = fromAddress();
    assertError(
      await server.api.post('/auth/login', { email, password: 'guess' }, { headers }),
      401,
      'invalid_credentials',
    );
    for (let i = 1; i < LIMIT; i++) {
      const other = `someone-${uniqueSuffix()}@example.com`;
      assertError(
        await server.api.post('/auth/login', { email: other, password: 'guess' }, { headers }),
        401,
        'invalid_credentials',
      );
    }
    const blocked = await server.api.post('/auth/login', { email, password: TEST_PASSWORD }, { headers });
    assertError(blocked, 429, 'rate_limited');
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    // Another address is not affected.
    (
      await server.api.post('/auth/login', { email, password: TEST_PASSWORD }, { headers: fromAddress() })
    ).expect(200);
  });

  test('malformed attempts count too', async () => {
    const headers = fromAddress();
    for (let i = 0; i < LIMIT; i++) {
      assertError(
        await server.api.post('/auth/login', { email: 'x' }, { headers }),
        400,
        'validation_failed',
      );
    }
    assertError(
      await server.api.post('/auth/login', { email: 'x@example.com', password: 'p' }, { headers }),
      429,
      'rate_limited',
    );
  });

  test('registrations from one address are limited', async () => {
    const headers = fromAddress();
    for (let i = 0; i < LIMIT; i++) (await register(headers)).res.expect(201);
    const refused = await register(headers);
    assertError(refused.res, 429, 'rate_limited');
    // Nothing was created for the refused attempt.
    const login = await server.api.post(
      '/auth/login',
      { email: refused.email, password: TEST_PASSWORD },
      { headers: fromAddress() },
    );
    assertError(login, 401, 'invalid_credentials');
  });
});
