import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  createApiKey,
  createApp,
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../../testing/harness.js';
import { assertError, type HttpClient, type HttpResponse } from '../../testing/http-client.js';

let server: TestServer;
const logLines: string[] = [];
before(async () => {
  server = await startTestServer({ LOG_LEVEL: 'info' }, { logLines });
});
after(() => server.stop());

/** Writes `request` on a new connection and reads until the server closes it. */
function rawExchange(request: string): Promise<string> {
  const url = new URL(server.api.baseUrl);
  return new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(request));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

async function licenseCount(seller: SellerWithApp): Promise<number> {
  const list = await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token });
  return list.expect(200).body.total;
}

describe('the HTTP contract shared by both hosts', () => {
  test('a known path asked with another method answers 405 with Allow, before any credential check', async () => {
    for (const [client, path, allow] of [
      [server.api, '/auth/me', 'GET, HEAD'],
      [server.api, '/apps', 'GET, HEAD, POST'],
      [server.pay, '/api/checkout/trials', 'POST'],
    ] as const) {
      const res = await client.request('PATCH', path, { a: 1 });
      const error = assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers.get('allow'), allow);
      assert.match(error.message, new RegExp(`does not take PATCH; it takes ${allow}$`));
      assert.equal(res.body.error.requestId, res.headers.get('x-request-id'));
    }
  });

  test('unknown routes answer 404 in the error body on both hosts, before any credential check', async () => {
    for (const client of [server.api, server.pay]) {
      const error = assertError(await client.get('/no/such/route'), 404, 'route_not_found');
      assert.match(error.message, /^No route GET (\/v1)?\/no\/such\/route$/);
    }
    assertError(await server.api.post('/no-such-thing', { a: 1 }), 404, 'route_not_found');
  });

  test('every response carries a request id; a sane incoming one is kept', async () => {
    const generated = await server.api.get('/health');
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const kept = await server.api.get('/health', { headers: { 'x-request-id': 'trace-abc.123' } });
    assert.equal(kept.headers.get('x-request-id'), 'trace-abc.123');
    const replaced = await server.api.get('/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const onError = await server.pay.get('/missing', { headers: { 'x-request-id': 'pay-trace-1' } });
    assert.equal(onError.body.error.requestId, 'pay-trace-1');
  });

  test('a body that is not JSON answers 415 and one that does not parse answers 400', async () => {
    const plain = await server.api.post('/auth/login', undefined, {
      raw: 'email=a',
      headers: { 'content-type': 'text/plain' },
    });
    assertError(plain, 415, 'unsupported_media_type');
    const form = await server.api.post('/auth/login', undefined, {
      raw: 'email=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assertError(form, 415, 'unsupported_media_type');
    const broken = await server.api.post('/auth/login', undefined, {
      raw: '{"email":',
      headers: { 'content-type': 'application/json' },
    });
    assertError(broken, 400, 'invalid_json');
    const empty = await server.api.post('/auth/login', undefined, {
      raw: '',
      headers: { 'content-type': 'application/json' },
    });
    assertError(empty, 400, 'invalid_json');
    const poisoned = await server.api.post('/auth/login', undefined, {
      raw: '{"email":"a@b.co","password":"12345678","__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    assertError(poisoned, 400, 'invalid_json');
  });

  test('ids that are not plain UUIDs answer 400, never 500', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    for (const id of [`urn:uuid:${app.id}`, `{${app.id}}`, app.id.replace(/-/g, ''), 'not-a-uuid']) {
      const error = assertError(
        await server.api.get(`/apps/${encodeURIComponent(id)}`, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.equal(error.details?.[0]?.field, 'appId');
    }
  });

  test('NUL characters are refused in bodies, queries and paths, never stored', async () => {
    const seller = await signUp(server);
    const nameError = assertError(
      await server.api.post('/apps', { name: 'a\u0000b' }, { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.deepEqual(nameError.details, [{ field: 'name', message: 'must not contain NUL characters' }]);
    const nested = assertError(
      await server.api.post('/auth/login', { email: 'x\u0000@example.com', password: 'whatever' }),
      400,
      'validation_failed',
    );
    assert.equal(nested.details?.[0]?.field, 'email');
    const admin = await server.adminToken();
    const query = assertError(
      await server.api.get('/admin/users?email=%00', { token: admin }),
      400,
      'validation_failed',
    );
    assert.equal(query.details?.[0]?.field, 'email');
    assertError(await server.api.get('/apps/%00', { token: seller.token }), 400, 'validation_failed');
    const apps = (await server.api.get('/apps', { token: seller.token })).expect(200);
    assert.equal(apps.body.total, 0);
  });

  test('bodies nested deeper than 64 levels answer 400 naming the field on both hosts, never 500', async () => {
    const seller = await sellerWithApp(server);
    const deep = (depth: number) => `{"key":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const routes: [HttpClient, string, string | undefined][] = [
      [server.api, '/licenses/verify', undefined],
      [server.api, '/auth/login', undefined],
      [server.api, `/apps/${seller.appId}/licenses`, seller.token],
      [server.pay, '/api/checkout/mirror/validate', undefined],
    ];
    for (const [client, path, token] of routes) {
      for (const depth of [65, 8000, 100_000]) {
        const res = await client.post(path, undefined, {
          raw: deep(depth),
          token,
          headers: { 'content-type': 'application/json' },
        });
        const error = assertError(res, 400, 'validation_failed');
        assert.deepEqual(error.details, [{ field: 'key', message: 'must not nest deeper than 64 levels' }]);
      }
    }
    const metadata = (depth: number) => JSON.parse(`{"x":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    const refused = await server.api.post(
      `/apps/${seller.appId}/licenses`,
      { metadata: metadata(63) },
      { token: seller.token },
    );
    assert.equal(assertError(refused, 400, 'validation_failed').details?.[0]?.field, 'metadata');
    assert.equal(await licenseCount(seller), 0, 'nothing stored');
    // Up to the limit the database stores the value as sent.
    const kept = await issueLicense(server, seller, { metadata: metadata(62) });
    assert.deepEqual(kept.metadata, metadata(62));
  });

  test('lone surrogates in values or keys, and numbers that are not finite, answer 400 naming the field', async () => {
    const seller = await sellerWithApp(server);
    const cases: [string, string][] = [
      ['{"metadata":{"x":"\\ud800"}}', 'metadata.x'],
      ['{"metadata":{"x":"a\\udfffb"}}', 'metadata.x'],
      ['{"metadata":{"\\ud800":"x"}}', 'metadata'],
      ['{"email":"\\udc00@example.com"}', 'email'],
      ['{"metadata":{"x":1e400}}', 'metadata.x'],
      ['{"metadata":{"x":[1,-1e999]}}', 'metadata.x.1'],
      ['{"maxDevices":1e400}', 'maxDevices'],
      ['{"\\udfff":"x"}', 'body'],
    ];
    for (const [raw, field] of cases) {
      const res = await server.api.post(`/apps/${seller.appId}/licenses`, undefined, {
        raw,
        token: seller.token,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(assertError(res, 400, 'validation_failed').details?.[0]?.field, field, raw);
    }
    assert.equal(await licenseCount(seller), 0, 'nothing stored');
    const paired = await issueLicense(server, seller, { metadata: { x: 'a\ud83d\ude00b', big: 1e308 } });
    assert.deepEqual(
      paired.metadata,
      { x: 'a\ud83d\ude00b', big: 1e308 },
      'whole pairs and large finite numbers are kept',
    );
  });

  test('date-times JavaScript cannot hold answer 400 naming the field on every route that takes one', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const admin = await server.adminToken();
    for (const value of [
      '2030-06-30T23:59:60Z',
      '0000-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      '9999-12-31T23:59:59-05:00',
    ]) {
      const encoded = encodeURIComponent(value);
      const requests: [Promise<HttpResponse>, string][] = [
        [server.api.get(`/orders?from=${encoded}`, { token: seller.token }), 'from'],
        [server.api.get(`/orders?to=${encoded}`, { token: seller.token }), 'to'],
        [server.api.get(`/analytics/licenses?from=${encoded}`, { token: admin }), 'from'],
        [server.api.get(`/analytics/revenue?to=${encoded}`, { token: admin }), 'to'],
        [
          server.api.patch(
            `/apps/${seller.appId}/licenses/${license.id}`,
            { expiresAt: value },
            { token: seller.token },
          ),
          'expiresAt',
        ],
      ];
      for (const [request, field] of requests) {
        const error = assertError(await request, 400, 'validation_failed');
        assert.equal(error.details?.[0]?.field, field, value);
      }
    }
    const unchanged = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
    ).expect(200).body;
    assert.equal(unchanged.expiresAt, license.expiresAt);
    (
      await server.api.get('/orders?from=2030-06-30T23:59:59.999Z&to=2030-07-01T00:00:00%2B02:00', {
        token: seller.token,
      })
    ).expect(200);
  });

  test('a query parameter a route does not declare is refused, naming it, and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const created = await server.api.post(
      `/apps/${seller.appId}/licenses?foo=1`,
      {},
      { token: seller.token },
    );
    assert.deepEqual(assertError(created, 400, 'validation_failed').details, [
      { field: 'foo', message: 'is not a recognised field' },
    ]);
    assert.equal(await licenseCount(seller), 0, 'nothing stored');
    const me = await server.api.get('/auth/me?verbose=true', { token: seller.token });
    assert.equal(assertError(me, 400, 'validation_failed').details?.[0]?.field, 'verbose');
    const validate = await server.pay.post('/api/checkout/mirror/validate?debug=1', {
      license: 'x',
      email: 'a@b.co',
    });
    assert.equal(assertError(validate, 400, 'validation_failed').details?.[0]?.field, 'debug');
    // Routes that declare their query keep taking it.
    (await server.api.get('/apps?limit=5', { token: seller.token })).expect(200);
  });

  test('an HTTP/1.1 request without a Host header answers 400 in the error body', async () => {
    const raw = await rawExchange('GET /v1/health HTTP/1.1\r\n\r\n');
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    const requestId = /x-request-id: (\S+)/i.exec(head)?.[1];
    assert.ok(requestId);
    assert.deepEqual(JSON.parse(body), {
      error: { code: 'bad_request', message: 'An HTTP/1.1 request must send a Host header', requestId },
    });
    // HTTP/1.0 has no Host header to require.
    assert.match(await rawExchange('GET /v1/health HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /);
  });

  test('errors raised before routing keep the error body and request id', async () => {
    const badEncoding = await server.api.get('/apps/%E0%A4%A');
    assertError(badEncoding, 400, 'bad_request');
    const longSegment = await server.api.get(`/apps/${'a'.repeat(300)}`);
    assertError(longSegment, 414, 'uri_too_long');
  });

  test('malformed HTTP is answered in the error body too', async () => {
    const raw = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    const requestId = /x-request-id: (\S+)/i.exec(head)?.[1];
    assert.ok(requestId);
    assert.deepEqual(JSON.parse(body), {
      error: { code: 'bad_request', message: 'The request is not valid HTTP', requestId },
    });
  });

  test('a body over the limit answers 413', async () => {
    const res = await server.api.post('/auth/register', {
      email: 'big@example.com',
      password: 'x'.repeat(300 * 1024),
    });
    assertError(res, 413, 'payload_too_large');
  });

  test('a wrong type is refused rather than coerced', async () => {
    const res = await server.api.post('/auth/login', { email: 'a@example.com', password: 12345678 });
    const error = assertError(res, 400, 'validation_failed');
    assert.deepEqual(error.details, [{ field: 'password', message: 'must be string' }]);
  });

  test('a validation failure’s message names every problem its details list, and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const res = await server.api.post(
      '/products',
      { appId: seller.appId, name: '', price: -1, currency: 'XX', colour: 'red' },
      { token: seller.token },
    );
    const error = assertError(res, 400, 'validation_failed');
    assert.equal(error.details?.length, 4);
    assert.equal(
      error.message,
      `4 problems: ${error.details?.map((detail) => `${detail.field}: ${detail.message}`).join('; ')}`,
    );
    for (const field of ['colour', 'name', 'price', 'currency'])
      assert.ok(error.message.includes(`${field}: `));
    const products = (await server.api.get('/products', { token: seller.token })).expect(200).body;
    assert.equal(products.total, 0);
    // One problem reads as before: the field and what is wrong with it.
    const one = assertError(
      await server.api.post('/auth/login', { email: 'a@example.com', password: 12345678 }),
      400,
      'validation_failed',
    );
    assert.equal(one.message, 'password: must be string');
  });

  test('a validation message stays under 500 characters however many problems, saying how many more', async () => {
    const fields = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`unknown_field_number_${i}`, i]));
    const error = assertError(await server.api.post('/auth/login', fields), 400, 'validation_failed');
    assert.ok((error.details?.length ?? 0) >= 40);
    assert.ok(error.message.length <= 500, `${error.message.length} characters`);
    assert.match(error.message, new RegExp(`^${error.details?.length} problems: .*; and \\d+ more$`));
    const long = assertError(
      await server.api.post('/auth/login', { [`x${'y'.repeat(2000)}`]: 1 }),
      400,
      'validation_failed',
    );
    assert.ok(long.message.length <= 500, `${long.message.length} characters`);
  });

  test('timestamps are ISO 8601 UTC with milliseconds', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const got = (await server.api.get(`/apps/${app.id}`, { token: seller.token })).expect(200);
    for (const value of [got.body.createdAt, got.body.updatedAt]) {
      assert.match(value, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  test('readiness touches the database', async () => {
    const res = (await server.api.get('/health/ready')).expect(200);
    assert.deepEqual(res.body, { status: 'ready', database: 'ok' });
    (await server.pay.get('/health/ready')).expect(200);
  });

  test('logs never carry passwords, tokens or API keys', async () => {
    const seller = await signUp(server);
    const app = await createApp(server, seller.token);
    const { key } = await createApiKey(server, seller.token, app.id);
    await server.api.get('/auth/me', { token: key });
    await server.api.get('/auth/me', { token: `${key}x` });
    await server.api.post('/auth/login', { email: seller.user.email, password: 'a wrong password' });
    const log = logLines.join('');
    assert.ok(log.includes('http.request.completed'), 'request lines are logged');
    for (const secret of [TEST_PASSWORD, 'a wrong password', seller.token, key]) {
      assert.ok(!log.includes(secret), 'a secret reached the log');
    }
  });
});

describe('the access log', () => {
  const linesOf = (requestId: string | null) =>
    logLines.filter(
      (line) => requestId && line.includes(requestId) && line.includes('http.request.completed'),
    );

  test('a valid verify leaves the info-level access log; its refusals and other routes stay', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const answered = (await server.api.post('/licenses/verify', { key: license.key })).expect(200);
    const refused = await server.api.post('/licenses/verify', { key: license.key, extra: 1 });
    assertError(refused, 400, 'validation_failed');
    const read = (await server.api.get(`/apps/${seller.appId}`, { token: seller.token })).expect(200);
    assert.deepEqual(linesOf(answered.headers.get('x-request-id')), [], 'LOG_LEVEL info leaves it out');
    const refusals = linesOf(refused.headers.get('x-request-id'));
    assert.equal(refusals.length, 1, 'the refusal is logged once');
    // The request's logger is made only when a line is written, with the request's id bound.
    assert.equal(JSON.parse(refusals[0] as string).requestId, refused.headers.get('x-request-id'));
    assert.equal(linesOf(read.headers.get('x-request-id')).length, 1);
  });
});

describe('failures inside the service', () => {
  test('an unexpected failure answers 500 with a request id, and readiness reports 503', async () => {
    const broken = await startTestServer();
    const seller = await signUp(broken);
    await broken.service.modules.database.close();
    try {
      const res = await broken.api.get('/auth/me', { token: seller.token });
      const error = assertError(res, 500, 'internal_error');
      assert.ok(!error.message.toLowerCase().includes('pool'), 'no internals in the message');
      assertError(await broken.api.get('/health/ready'), 503, 'not_ready');
    } finally {
      await broken.stop();
    }
  });
});
