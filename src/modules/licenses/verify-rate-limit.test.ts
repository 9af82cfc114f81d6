import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createApp, signUp, startTestServer, type TestServer } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

const PER_ADDRESS = 6;
const PER_KEY = 3;
let server: TestServer;
before(async () => {
  server = await startTestServer({
    VERIFY_RATE_LIMIT: String(PER_ADDRESS),
    VERIFY_KEY_RATE_LIMIT: String(PER_KEY),
    TRUST_PROXY: '1',
  });
});
after(() => server.stop());

// Each test speaks from its own address, so counters stay apart when Redis is shared.
const fromAddress = () => {
  const [a, b, c] = randomBytes(3);
  return { 'x-forwarded-for': `10.${a}.${b}.${c}` };
};

async function newKey(): Promise<string> {
  const seller = await signUp(server);
  const app = await createApp(server, seller.token);
  return (await server.api.post(`/apps/${app.id}/licenses`, {}, { token: seller.token })).expect(201).body
    .key;
}

describe(`verification limits (${process.env.REDIS_URL ? 'Redis' : 'in-process'} counters)`, () => {
  test('one key is limited however it is typed and wherever it comes from', async () => {
    const key = await newKey();
    const typings = [key, key.toLowerCase(), key.replace(/-/g, '')];
    for (const typed of typings) {
      (await server.api.post('/licenses/verify', { key: typed }, { headers: fromAddress() })).expect(200);
    }
    const refused = await server.api.post(
      '/licenses/validate-hardware',
      { key, hwuid: 'pc' },
      { headers: fromAddress() },
    );
    assertError(refused, 429, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // Another key is not affected.
    const other = await newKey();
    assert.equal(
      (await server.api.post('/licenses/verify', { key: other }, { headers: fromAddress() })).expect(200).body
        .valid,
      true,
    );
  });

  test('one address is limited across keys, route by route', async () => {
    const headers = fromAddress();
    for (let i = 0; i < PER_ADDRESS; i++) {
      (await server.api.post('/licenses/verify', { key: `unknown-${i}` }, { headers })).expect(200);
    }
    assertError(
      await server.api.post('/licenses/verify', { key: 'unknown-x' }, { headers }),
      429,
      'rate_limited',
    );
    (await server.api.post('/licenses/introspect', { license_token: 'a.b.c' }, { headers })).expect(200);
  });

  test('answers say how much of the address limit is left and when it starts again', async () => {
    const headers = fromAddress();
    const left = [];
    for (let i = 0; i < 2; i++) {
      const answer = (await server.api.post('/licenses/verify', { key: `unknown-${i}` }, { headers })).expect(
        200,
      );
      assert.equal(answer.headers.get('x-ratelimit-limit'), String(PER_ADDRESS));
      const reset = Number(answer.headers.get('x-ratelimit-reset'));
      assert.ok(reset > 0 && reset <= 60, `reset in ${reset} s`);
      left.push(Number(answer.headers.get('x-ratelimit-remaining')));
      // The same standing in the IETF fields (draft-ietf-httpapi-ratelimit-headers-11).
      assert.equal(answer.headers.get('ratelimit-policy'), `"address";q=${PER_ADDRESS};w=60`);
      assert.equal(answer.headers.get('ratelimit'), `"address";r=${PER_ADDRESS - 1 - i};t=${reset}`);
    }
    assert.deepEqual(left, [PER_ADDRESS - 1, PER_ADDRESS - 2]);
  });

  test('a refused request says none is left, and Retry-After is not before the window renews', async () => {
    const headers = fromAddress();
    for (let i = 0; i < PER_ADDRESS; i++)
      (await server.api.post('/licenses/verify', { key: `unknown-${i}` }, { headers })).expect(200);
    const refused = await server.api.post('/licenses/verify', { key: 'unknown-x' }, { headers });
    assertError(refused, 429, 'rate_limited');
    const standing = /^"address";r=0;t=(\d+)$/.exec(refused.headers.get('ratelimit') ?? '');
    assert.ok(standing, `RateLimit: ${refused.headers.get('ratelimit')}`);
    assert.equal(refused.headers.get('ratelimit-policy'), `"address";q=${PER_ADDRESS};w=60`);
    assert.ok(Number(refused.headers.get('retry-after')) >= Number(standing[1]));
  });

  test('the key limit names the key, and a refused request binds no device', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const license = (await server.api.post(`/apps/${app.id}/licenses`, {}, { token: seller.token })).expect(
      201,
    ).body;
    for (let i = 0; i < PER_KEY; i++) {
      (await server.api.post('/licenses/verify', { key: license.key }, { headers: fromAddress() })).expect(
        200,
      );
    }
    const refused = await server.api.post(
      '/licenses/validate-hardware',
      { key: license.key, hwuid: 'refused-pc' },
      { headers: fromAddress() },
    );
    assertError(refused, 429, 'rate_limited');
    assert.match(refused.body.error.message, /for this key/);
    const devices = (
      await server.api.get(`/apps/${app.id}/licenses/${license.id}/devices`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(devices.devices, []);
  });
});

describe(`the key limit of a floating license scales with its seats (${process.env.REDIS_URL ? 'Redis' : 'in-process'} counters)`, () => {
  // The default per-key limit, and no per-address limit to speak of: one office, one address.
  let office: TestServer;
  before(async () => {
    office = await startTestServer({ VERIFY_RATE_LIMIT: '100000', VERIFY_KEY_RATE_LIMIT: '60' });
  });
  after(() => office.stop());

  async function license(body: Record<string, unknown>) {
    const seller = await signUp(office);
    const app = await createApp(office, seller.token);
    return (await office.api.post(`/apps/${app.id}/licenses`, body, { token: seller.token })).expect(201)
      .body;
  }
  const call = (route: string, body: Record<string, unknown>) => office.api.post(route, body);

  test('70 devices on a 500-seat license are all answered within the minute; a plain key is refused after 60', async () => {
    const floating = await license({ floating: true, maxSeats: 500 });
    const devices = Array.from({ length: 70 }, (_, i) => `office-pc-${i}`);
    // Each device takes its seat and verifies for a token: 140 calls on one key.
    for (const route of ['/licenses/checkout', '/licenses/verify']) {
      // Ten at a time: the limit counts calls, not how many are in flight, and seventy at once
      // could wait out the database pool on a machine busy with other suites.
      const answers = [];
      for (let start = 0; start < devices.length; start += 10)
        answers.push(
          ...(await Promise.all(
            devices.slice(start, start + 10).map((hwuid) => call(route, { key: floating.key, hwuid })),
          )),
        );
      assert.deepEqual(
        [...new Set(answers.map((answer) => `${answer.status} ${answer.body.valid}`))],
        ['200 true'],
        route,
      );
    }

    const plain = await license({});
    for (let i = 0; i < 60; i++) (await call('/licenses/verify', { key: plain.key })).expect(200);
    const refused = await call('/licenses/verify', { key: plain.key });
    assertError(refused, 429, 'rate_limited');
    assert.match(refused.body.error.message, /for this key/);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
  });

  test('past its own limit, maxSeats × 2 a minute (leases of 2 minutes or more), a floating key is refused too', async () => {
    // 40 seats: 80 calls a minute; 10 seats: 20, so the plain 60 stands.
    for (const [maxSeats, limit] of [
      [40, 80],
      [10, 60],
    ] as const) {
      const floating = await license({ floating: true, maxSeats });
      for (let i = 0; i < limit; i++) {
        (await call('/licenses/checkout', { key: floating.key, hwuid: `pc-${i % maxSeats}` })).expect(200);
      }
      const refused = await call('/licenses/checkout', { key: floating.key, hwuid: 'pc-0' });
      assertError(refused, 429, 'rate_limited');
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      // Checkin counts on the same key, and is refused as well.
      assertError(await call('/licenses/checkin', { key: floating.key, hwuid: 'pc-0' }), 429, 'rate_limited');
    }
  });

  test('a short lease allows more heartbeats per seat', async () => {
    // A 60-second lease: a heartbeat every 30 s, doubled: 4 calls per seat a minute, 25 × 4 = 100.
    const floating = await license({ floating: true, maxSeats: 25, leaseSeconds: 60 });
    for (let i = 0; i < 100; i++) {
      (await call('/licenses/checkout', { key: floating.key, hwuid: `pc-${i % 25}` })).expect(200);
    }
    assertError(await call('/licenses/checkout', { key: floating.key, hwuid: 'pc-0' }), 429, 'rate_limited');
  });
});

describe('verification limits when the shared counters are unreachable', () => {
  let offline: TestServer;
  before(async () => {
    // Nothing listens there: every count fails, and requests are let through rather than refused.
    offline = await startTestServer({
      REDIS_URL: 'redis://127.0.0.1:1',
      VERIFY_RATE_LIMIT: '2',
      VERIFY_KEY_RATE_LIMIT: '1',
    });
  });
  after(() => offline.stop());

  test('verify keeps answering past the limits', async () => {
    const seller = await signUp(offline);
    const app = await createApp(offline, seller.token);
    const { key } = (await offline.api.post(`/apps/${app.id}/licenses`, {}, { token: seller.token })).expect(
      201,
    ).body;
    for (let i = 0; i < 4; i++) {
      const answer = (await offline.api.post('/licenses/verify', { key })).expect(200);
      assert.equal(answer.body.valid, true);
      assert.equal(answer.headers.get('x-ratelimit-remaining'), null);
      assert.equal(answer.headers.get('ratelimit'), null);
      assert.equal(answer.headers.get('ratelimit-policy'), null);
    }
  });
});
