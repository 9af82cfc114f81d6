import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type Answer, type Receiver, startReceiver } from '../../../src/testing/receiver.js';
import { LicensingApiError, LicensingClient, responseInfo } from './index.js';

/**
 * The retry policy against a loopback server that stands in for the service's HTTP boundary and
 * answers each attempt as the test scripts it. Attempts are counted, never timed.
 */
let host: Receiver;
let script: Answer[];

before(async () => {
  host = await startReceiver();
  // Each attempt takes the next scripted answer; the last one repeats.
  host.answer(() => (script.length > 1 ? script.shift() : script[0]) as Answer);
});
beforeEach(() => {
  host.requests.length = 0;
});
after(() => host.close());

const client = (options: { retries?: number; maxRetryDelayMs?: number } = {}) =>
  new LicensingClient({ baseUrl: `${host.url}/`, token: 'sk_test', retryDelayMs: 1, ...options });

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  body: JSON.stringify(value),
  headers: { 'content-type': 'application/json', ...headers },
});
const refusal = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { error: { code, message: code, requestId: 'req_1' } }, headers);
const license = { id: 'lic_1', key: 'AAAA-BBBB', status: 'active' };
const verification = { valid: true, appId: 'app_1', status: 'active' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const attempts = () => host.requests.length;
const isApiError = (status: number, code: string) => (error: unknown) =>
  error instanceof LicensingApiError && error.status === status && error.code === code;

describe('retrying refused and lost requests', () => {
  test('waits out 503 and 429 as Retry-After says, then returns the answer', async () => {
    script = [
      refusal(503, 'overloaded', { 'retry-after': '0' }),
      refusal(429, 'rate_limited', { 'retry-after': '0' }),
      json(200, verification),
    ];
    const answer = await client().verify({ key: 'AAAA-BBBB', appId: 'app_1' });
    assert.equal(answer.valid, true);
    assert.equal(attempts(), 3);
    assert.equal(responseInfo(answer)?.attempts, 3);
  });

  test('does not wait for a Retry-After longer than maxRetryDelayMs: the caller gets the 429', async () => {
    script = [refusal(429, 'rate_limited', { 'retry-after': '3600' }), json(200, verification)];
    await assert.rejects(
      client({ maxRetryDelayMs: 60_000 }).verify({ key: 'AAAA-BBBB', appId: 'app_1' }),
      isApiError(429, 'rate_limited'),
    );
    assert.equal(attempts(), 1);
  });

  test('makes `retries` retries at most, and `retries: 0` sends one request', async () => {
    script = [refusal(503, 'overloaded', { 'retry-after': '0' })];
    await assert.rejects(client().apps.list(), isApiError(503, 'overloaded'));
    assert.equal(attempts(), 3, 'the default is two retries');

    host.requests.length = 0;
    await assert.rejects(client({ retries: 0 }).apps.list(), isApiError(503, 'overloaded'));
    assert.equal(attempts(), 1);
  });

  test('repeats reads after a dropped connection and a gateway error', async () => {
    script = [{ reset: true }, refusal(504, 'gateway_timeout'), json(200, verification)];
    const answer = await client().verify({ key: 'AAAA-BBBB', appId: 'app_1' });
    assert.equal(answer.valid, true);
    assert.equal(attempts(), 3);
  });

  test('reports a request that never got an answer as network_error, with the cause', async () => {
    script = [{ reset: true }];
    await assert.rejects(client({ retries: 1 }).apps.list(), (error: unknown) => {
      assert.ok(isApiError(0, 'network_error')(error));
      assert.ok((error as Error).cause instanceof Error);
      return true;
    });
    assert.equal(attempts(), 2);
  });
});

describe('creating calls and idempotency keys', () => {
  test('repeats a creating POST with the same Idempotency-Key on every attempt', async () => {
    script = [{ reset: true }, refusal(502, 'bad_gateway'), json(201, license)];
    const issued = await client().licenses.issue('app_1', { email: 'ann@example.com' });
    assert.equal(issued.id, 'lic_1');
    const keys = host.requests.map((request) => request.headers['idempotency-key']);
    assert.equal(keys.length, 3);
    assert.match(String(keys[0]), UUID);
    assert.deepEqual(new Set(keys).size, 1, 'one key for the one logical call');
    assert.equal(responseInfo(issued)?.idempotencyKey, keys[0]);

    host.requests.length = 0;
    script = [json(201, license)];
    await client().licenses.issue('app_1', {});
    assert.notEqual(host.requests[0]?.headers['idempotency-key'], keys[0], 'a new call gets a new key');
  });

  test("sends the caller's own key, and exposes a replayed answer", async () => {
    script = [json(201, license, { 'idempotent-replayed': 'true', 'x-request-id': 'req_9' })];
    const issued = await client().licenses.issue('app_1', {}, { idempotencyKey: 'order-8812' });
    assert.equal(host.requests[0]?.headers['idempotency-key'], 'order-8812');
    assert.deepEqual(responseInfo(issued), {
      status: 201,
      requestId: 'req_9',
      idempotencyKey: 'order-8812',
      replayed: true,
      attempts: 1,
    });
    assert.deepEqual(JSON.parse(JSON.stringify(issued)), license, 'the answer itself stays plain data');
    await assert.rejects(
      client().licenses.issue('app_1', {}, { idempotencyKey: '' }),
      /idempotencyKey: must be a string of 1 to 255 characters/,
    );
  });

  test('waits while the first attempt with the key is still running (409), never repeats a reused key (422)', async () => {
    script = [refusal(409, 'idempotency_key_in_use'), json(201, license)];
    assert.equal((await client().products.create({ name: 'Pro', price: 9, currency: 'EUR' })).id, 'lic_1');
    assert.equal(attempts(), 2);

    host.requests.length = 0;
    script = [refusal(422, 'idempotency_key_reused'), json(201, license)];
    await assert.rejects(
      client().licenses.issue('app_1', {}, { idempotencyKey: 'order-1' }),
      isApiError(422, 'idempotency_key_reused'),
    );
    assert.equal(attempts(), 1);
  });

  test('does not repeat a state change that may have been done, but does after 429 and 503', async () => {
    script = [{ reset: true }, json(200, license)];
    await assert.rejects(client().licenses.suspend('app_1', 'lic_1'), isApiError(0, 'network_error'));
    assert.equal(attempts(), 1);
    assert.equal(host.requests[0]?.headers['idempotency-key'], undefined);

    host.requests.length = 0;
    script = [refusal(502, 'bad_gateway'), json(200, license)];
    await assert.rejects(client().licenses.suspend('app_1', 'lic_1'), isApiError(502, 'bad_gateway'));
    assert.equal(attempts(), 1);

    host.requests.length = 0;
    script = [refusal(503, 'database_unavailable', { 'retry-after': '0' }), json(200, license)];
    assert.equal((await client().licenses.suspend('app_1', 'lic_1')).id, 'lic_1');
    assert.equal(attempts(), 2, 'a 503 is answered before any work is done');
  });
});
