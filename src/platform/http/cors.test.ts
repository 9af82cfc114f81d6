import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError, type HttpResponse } from '../../testing/http-client.js';
import { requestsDrained } from './create-http-app.js';

/**
 * CORS over plain HTTP: the four client routes answer a preflight and every answer, failures
 * included, with the CORS headers (any origin, no credentials); every other route sends none.
 * cors.browser.test.ts shows the same from a page on another origin in Chromium.
 */

const ORIGIN = 'https://shop.example';
const CLIENT_ROUTES = [
  ['POST', '/licenses/verify'],
  ['POST', '/licenses/validate-hardware'],
  ['POST', '/licenses/introspect'],
  ['GET', '/licenses/jwks'],
] as const;

let server: TestServer;
let seller: SellerWithApp;

before(async () => {
  server = await startTestServer();
  seller = await sellerWithApp(server);
});
after(() => server.stop());

const preflight = (path: string, method: string, headers: Record<string, string> = {}) =>
  server.api.request('OPTIONS', path, undefined, {
    headers: {
      origin: ORIGIN,
      'access-control-request-method': method,
      'access-control-request-headers': 'content-type',
      ...headers,
    },
  });

function assertCorsHeaders(res: HttpResponse): void {
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  const exposed = res.headers.get('access-control-expose-headers') ?? '';
  for (const name of [
    'X-Request-Id',
    'Retry-After',
    'RateLimit',
    'RateLimit-Policy',
    'X-RateLimit-Remaining',
  ])
    assert.ok(exposed.includes(name), `exposes ${name}: ${exposed}`);
  assert.equal(res.headers.get('access-control-allow-credentials'), null, 'never with credentials');
}

function assertNoCorsHeaders(res: HttpResponse): void {
  const cors = [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));
  assert.deepEqual(cors, [], `no CORS header on ${res.status}`);
}

describe('CORS on the client routes', () => {
  test('a preflight answers 204 with the methods, headers and cache time, and no credentials', async () => {
    for (const [method, path] of CLIENT_ROUTES) {
      const res = await preflight(path, method);
      assert.equal(res.status, 204, `${method} ${path}: ${res.text}`);
      assert.equal(res.text, '');
      assertCorsHeaders(res);
      assert.ok(res.headers.get('access-control-allow-methods')?.split(', ').includes(method), path);
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
      assert.equal(res.headers.get('access-control-max-age'), '7200');
    }
    const jwks = await preflight('/licenses/jwks', 'GET');
    assert.equal(jwks.headers.get('access-control-allow-methods'), 'GET, HEAD');
  });

  test('answers carry the headers, with or without an Origin header', async () => {
    const license = await issueLicense(server, seller, {});
    const verified = (await server.api.post('/licenses/verify', { key: license.key })).expect(200);
    assert.equal(verified.body.valid, true);
    assertCorsHeaders(verified);
    const fromPage = await server.api.post(
      '/licenses/verify',
      { key: license.key },
      { headers: { origin: ORIGIN } },
    );
    assertCorsHeaders(fromPage.expect(200));
    const bound = await server.api.post('/licenses/validate-hardware', { key: license.key, hwuid: 'pc-1' });
    assertCorsHeaders(bound.expect(200));
    const keys = (await server.api.get('/licenses/jwks', { headers: { origin: ORIGIN } })).expect(200);
    assertCorsHeaders(keys);
    assert.ok(keys.body.keys.length > 0);
    const introspected = await server.api.post('/licenses/introspect', { license_token: 'not.a.token' });
    assert.equal(introspected.expect(200).body.active, false);
    assertCorsHeaders(introspected);
  });

  test('failures carry them too, so a page can read them: 400 and 413', async () => {
    const invalid = await server.api.post('/licenses/verify', {}, { headers: { origin: ORIGIN } });
    assertError(invalid, 400, 'validation_failed');
    assertCorsHeaders(invalid);
    const broken = await server.api.post('/licenses/verify', undefined, {
      raw: '{"key":',
      headers: { origin: ORIGIN, 'content-type': 'application/json' },
    });
    assertError(broken, 400, 'invalid_json');
    assertCorsHeaders(broken);
    const large = await server.api.post('/licenses/verify', undefined, {
      raw: JSON.stringify({ key: 'x'.repeat(300_000) }),
      headers: { origin: ORIGIN, 'content-type': 'application/json' },
    });
    assertError(large, 413, 'payload_too_large');
    assertCorsHeaders(large);
  });

  test('seller, admin and other public routes send no CORS header, and have no preflight', async () => {
    const apps = await server.api.get('/apps', { token: seller.token, headers: { origin: ORIGIN } });
    assertNoCorsHeaders(apps.expect(200));
    const anonymous = await server.api.get('/apps', { headers: { origin: ORIGIN } });
    assertError(anonymous, 401, 'unauthorized');
    assertNoCorsHeaders(anonymous);
    const admin = await server.api.get('/admin/users', { token: seller.token, headers: { origin: ORIGIN } });
    assertError(admin, 403, 'forbidden');
    assertNoCorsHeaders(admin);
    const revoke = await server.api.post('/licenses/revoke-token', { jti: 'x' }, { token: seller.token });
    assertNoCorsHeaders(revoke);
    const login = await server.api.post('/auth/login', { email: 'a@b.example', password: 'x' });
    assertNoCorsHeaders(login);
    for (const [path, method] of [
      ['/apps', 'GET'],
      ['/licenses/revoke-token', 'POST'],
      ['/auth/login', 'POST'],
      ['/admin/users', 'GET'],
    ] as const) {
      // The path is a route's, so the preflight is a method it does not take: 405, no CORS header.
      const res = await preflight(path, method, { 'access-control-request-headers': 'authorization' });
      assertError(res, 405, 'method_not_allowed');
      assert.ok(res.headers.get('allow')?.includes(method), `${path} allows ${method}`);
      assert.ok(!res.headers.get('allow')?.includes('OPTIONS'), `${path} has no preflight`);
      assertNoCorsHeaders(res);
    }
    const pay = await server.pay.request('OPTIONS', '/api/checkout/mirror/validate', undefined, {
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    assertError(pay, 405, 'method_not_allowed');
    assert.equal(pay.headers.get('allow'), 'POST');
    assertNoCorsHeaders(pay);
  });
});

describe('CORS on failures the node answers before the route runs', () => {
  let limited: TestServer;
  before(async () => {
    limited = await startTestServer({ VERIFY_RATE_LIMIT: '2', MAX_IN_FLIGHT: '1', TRUST_PROXY: '1' });
  });
  after(() => limited.stop());

  test('429 rate_limited and 503 overloaded carry the headers and Retry-After', async () => {
    // An address of its own, so counters stay apart when Redis is shared with other test files.
    const [a, b, c] = randomBytes(3);
    const headers = { origin: ORIGIN, 'x-forwarded-for': `10.${a}.${b}.${c}` };
    const verify = () => limited.api.post('/licenses/verify', { key: 'not-a-license' }, { headers });
    // Two answers, then refusals (a fresh node's first calls may pass uncounted while its Redis
    // connection opens, so this asks until refused, within a bound).
    let limitedAnswer = await verify();
    for (let calls = 1; limitedAnswer.status === 200 && calls < 10; calls++) {
      assertCorsHeaders(limitedAnswer);
      limitedAnswer = await verify();
    }
    assertError(limitedAnswer, 429, 'rate_limited');
    assertCorsHeaders(limitedAnswer);
    assert.ok(Number(limitedAnswer.headers.get('retry-after')) > 0);

    // A request whose body never comes holds the node's only slot; the next one is shed.
    const held = net.connect(Number(new URL(limited.service.coreUrl).port), '127.0.0.1');
    let heldAnswer = '';
    const heldEnded = new Promise((resolve) => held.once('close', resolve));
    held.on('data', (chunk) => {
      heldAnswer += chunk;
    });
    await new Promise((resolve) => held.once('connect', resolve));
    held.write(
      'POST /v1/licenses/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\nConnection: close\r\n\r\n',
    );
    try {
      // Only once the node holds it: a request arriving first would take the slot instead.
      const idle = () =>
        Promise.race([
          requestsDrained(limited.service.core).then(() => true),
          new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
        ]);
      for (let poll = 0; poll < 200 && !heldAnswer && (await idle()); poll++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(heldAnswer, '', 'the held request is still waiting for its body');
      const shed = await limited.api.get('/licenses/jwks', { headers: { origin: ORIGIN } });
      assertError(shed, 503, 'overloaded');
      assertCorsHeaders(shed);
      assert.ok(Number(shed.headers.get('retry-after')) > 0);
    } finally {
      // The body arrives at last, so the held request ends and the node can stop cleanly.
      held.end('{"key":12}');
      await heldEnded;
    }
  });
});
