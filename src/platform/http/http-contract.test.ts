import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  createApiKey,
  createApp,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

let server: TestServer;
const logLines: string[] = [];
before(async () => {
  server = await startTestServer({ LOG_LEVEL: 'info' }, { logLines });
});
after(() => server.stop());

describe('the HTTP contract shared by both hosts', () => {
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

  test('errors raised before routing keep the error body and request id', async () => {
    const badEncoding = await server.api.get('/apps/%E0%A4%A');
    assertError(badEncoding, 400, 'bad_request');
    const longSegment = await server.api.get(`/apps/${'a'.repeat(300)}`);
    assertError(longSegment, 414, 'uri_too_long');
  });

  test('malformed HTTP is answered in the error body too', async () => {
    const url = new URL(server.api.baseUrl);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () =>
        socket.write('NOT HTTP AT ALL\r\n\r\n'),
      );
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk;
      });
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
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
