import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  createApp,
  issueLicense,
  sellerWithApp,
  signUp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../testing/harness.js';
import { type Receiver, startReceiver } from '../testing/receiver.js';

/**
 * The Prometheus endpoint as an operator reads it: real traffic through the public API, then a
 * scrape of the metrics listener, and the counters compared before and after.
 */
let server: TestServer;
let receiver: Receiver;
before(async () => {
  server = await startTestServer({ WEBHOOK_POLL_MS: '60000' }, { ownDatabase: true });
  receiver = await startReceiver();
});
after(async () => {
  await server.stop();
  await receiver.close();
});

type Labels = Record<string, string>;
interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

async function scrape(url = server.service.metricsUrl): Promise<{ text: string; samples: Sample[] }> {
  assert.ok(url, 'the metrics listener is up');
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Labels = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return { text, samples };
}

/** The value of the one sample with this name and these labels (0 when absent). */
function sampleValue(samples: Sample[], name: string, labels: Labels = {}): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches one sample at most`);
  return found[0]?.value ?? 0;
}

const VERIFY = { route: '/v1/licenses/verify', method: 'POST', status: '200' };
const REQUESTS = 'licensing_http_request_duration_seconds_count';

describe('metrics endpoint', () => {
  test('counts verify requests by route and status, and their outcomes by code', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const before = (await scrape()).samples;

    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push((await server.api.post('/licenses/verify', { key: license.key })).expect(200).body);
    const unknown = (await server.api.post('/licenses/verify', { key: `NOPE-${uniqueSuffix()}` })).expect(
      200,
    ).body;
    assert.equal(unknown.code, 'license_not_found');

    const after = (await scrape()).samples;
    const delta = (name: string, labels: Labels = {}) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    assert.equal(delta(REQUESTS, VERIFY), 4);
    assert.ok(
      sampleValue(after, 'licensing_http_request_duration_seconds_bucket', { ...VERIFY, le: '+Inf' }) >= 4,
    );
    assert.equal(delta('licensing_license_verifications_total', { outcome: 'valid' }), 3);
    assert.equal(delta('licensing_license_verifications_total', { outcome: 'license_not_found' }), 1);
    const tokens = answers.filter((a) => typeof a.license_token === 'string').length;
    assert.equal(delta('licensing_license_tokens_issued_total'), tokens);
    assert.ok(tokens > 0, 'license tokens are on by default');
  });

  test('labels routes by their pattern, never by a path, key or address', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const marker = uniqueSuffix();
    (await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })).expect(
      200,
    );
    (await server.api.get(`/no-such-route-${marker}`)).expect(404);
    (await server.api.post('/licenses/verify', { key: license.key })).expect(200);

    const { text, samples } = await scrape();
    assert.ok(
      sampleValue(samples, REQUESTS, {
        route: '/v1/apps/:appId/licenses/:licenseId',
        method: 'GET',
        status: '200',
      }) >= 1,
    );
    assert.ok(sampleValue(samples, REQUESTS, { route: 'unmatched', method: 'GET', status: '404' }) >= 1);
    for (const secret of [marker, license.key, license.id, seller.appId, seller.user.email, seller.token])
      assert.ok(!text.includes(secret), `the scrape does not show ${secret}`);
  });

  test('a webhook delivery shows in the attempts, and the queues and endpoints are read', async () => {
    const seller = await signUp(server);
    (
      await server.api.post(
        '/webhooks',
        { url: receiver.url, events: ['app.created'] },
        { token: seller.token },
      )
    ).expect(201);
    const before = (await scrape()).samples;
    await createApp(server, seller.token);
    const attempted = await server.service.modules.deliveryWorker.runOnce();
    assert.ok(attempted >= 1);
    await receiver.waitFor(1);

    const after = (await scrape()).samples;
    const succeeded = { kind: 'core', outcome: 'succeeded' };
    assert.ok(
      sampleValue(after, 'licensing_webhook_attempts_total', succeeded) -
        sampleValue(before, 'licensing_webhook_attempts_total', succeeded) >=
        1,
    );
    // Read from the database (at most every 10 s): present, and nothing left pending here.
    const pending = after.find(
      (s) => s.name === 'licensing_queue_pending' && s.labels.queue === 'webhook_deliveries',
    );
    assert.ok(pending, 'the webhook backlog is reported');
    assert.ok(after.some((s) => s.name === 'licensing_queue_pending' && s.labels.queue === 'mail'));
    assert.ok(after.some((s) => s.name === 'licensing_webhook_endpoints' && s.labels.state === 'failing'));
  });

  test('reports process, database and job metrics', async () => {
    const { samples } = await scrape();
    for (const name of [
      'process_cpu_seconds_total',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      assert.ok(
        samples.some((s) => s.name === name),
        `${name} is reported`,
      );
    assert.ok(sampleValue(samples, 'licensing_db_query_duration_seconds_count') > 0);
    // Runs on every node, whatever JOBS says; its first run is at start-up.
    assert.ok(
      sampleValue(samples, 'licensing_job_run_duration_seconds_count', {
        job: 'license.verify.count_flush',
        outcome: 'succeeded',
      }) >= 1,
    );
    if (server.service.modules.database.kind === 'postgres') {
      assert.ok(sampleValue(samples, 'licensing_db_pool_total_connections', { pool: 'main' }) >= 1);
      assert.ok(
        samples.some((s) => s.name === 'licensing_db_pool_waiting_requests' && s.labels.pool === 'locks'),
      );
    }
  });

  test('is served on its own listener only, never on the public ports', async () => {
    const metricsUrl = server.service.metricsUrl as string;
    assert.notEqual(new URL(metricsUrl).port, new URL(server.service.coreUrl).port);
    for (const base of [server.service.coreUrl, `${server.service.coreUrl}/v1`, server.service.payUrl]) {
      const res = await fetch(`${base}/metrics`);
      assert.equal(res.status, 404, `${base}/metrics`);
      assert.ok(!(await res.text()).includes('licensing_http_request_duration_seconds'));
    }
    assert.equal((await fetch(new URL('/other', metricsUrl))).status, 404);
  });
});

describe('rate limits and switching metrics off', () => {
  test('counts refusals of the verify limits by route', async () => {
    const limited = await startTestServer({ VERIFY_RATE_LIMIT: '2', TRUST_PROXY: '1' });
    try {
      // An address of its own, so counters shared through Redis stay apart from other tests'.
      const [a, b, c] = randomBytes(3);
      const headers = { 'x-forwarded-for': `10.${a}.${b}.${c}` };
      const body = { key: `NOPE-${uniqueSuffix()}` };
      // Redis connects lazily and counting lets requests through meanwhile: go on until refused.
      const statuses: number[] = [];
      while (!statuses.includes(429) && statuses.length < 20)
        statuses.push((await limited.api.post('/licenses/verify', body, { headers })).status);
      const refused = statuses.filter((status) => status === 429).length;
      assert.equal(refused, 1);
      const { samples } = await scrape(limited.service.metricsUrl);
      assert.equal(
        sampleValue(samples, 'licensing_rate_limit_refusals_total', { route: VERIFY.route }),
        refused,
      );
      assert.equal(sampleValue(samples, REQUESTS, { ...VERIFY, status: '429' }), refused);
      assert.equal(sampleValue(samples, REQUESTS, VERIFY), statuses.length - refused);
    } finally {
      await limited.stop();
    }
  });

  test('a scrape answers while the database does not, and the queue readings follow once it does', async () => {
    const isolated = await startTestServer({}, { ownDatabase: true });
    try {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      // The backlog's table locked by another transaction: its query waits as on a stuck database.
      const transaction = isolated.db.transaction().execute(async (trx) => {
        await sql`lock table webhook_deliveries in access exclusive mode`.execute(trx);
        locked();
        await held;
      });
      await lockTaken;
      const during = (await scrape(isolated.service.metricsUrl)).samples;
      assert.ok(during.some((s) => s.name === 'process_cpu_seconds_total'));
      assert.ok(!during.some((s) => s.name === 'licensing_queue_pending'), 'no reading yet: absent');
      release();
      await transaction;
      const afterwards = (await scrape(isolated.service.metricsUrl)).samples;
      assert.equal(sampleValue(afterwards, 'licensing_queue_pending', { queue: 'webhook_deliveries' }), 0);
      assert.ok(afterwards.some((s) => s.name === 'licensing_queue_pending' && s.labels.queue === 'mail'));
    } finally {
      await isolated.stop();
    }
  });

  test('METRICS=off records nothing and opens no listener, and the API still answers', async () => {
    const quiet = await startTestServer({ METRICS: 'off' });
    try {
      assert.equal(quiet.service.metricsUrl, null);
      assert.equal(quiet.service.modules.metrics.registry, null);
      (await quiet.api.post('/licenses/verify', { key: `NOPE-${uniqueSuffix()}` })).expect(200);
    } finally {
      await quiet.stop();
    }
  });
});
