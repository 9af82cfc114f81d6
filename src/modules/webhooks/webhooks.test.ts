import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { createLog } from '../../platform/log.js';
import { createApp, type Seller, signUp, startTestServer, type TestServer } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { createDeliveryWorker, SETTLE_BATCH } from './delivery-worker.js';
import { createSender } from './sender.js';
import { verifyBodySignature } from './webhook-signature.js';

/**
 * Webhooks against real local receivers. The worker's own interval is set long, and the tests
 * run its passes by hand with a clock they move, so retries are proven without sleeping.
 */
let server: TestServer;
let clock: TestClock;
let receiver: Receiver;
before(async () => {
  clock = testClock(new Date());
  // Sessions outlive the days the clock is moved forward.
  server = await startTestServer(
    { WEBHOOK_POLL_MS: '60000', USER_TOKEN_TTL: '2592000' },
    { clock, ownDatabase: true },
  );
  receiver = await startReceiver();
});
after(async () => {
  await server.stop();
  await receiver.close();
});

const work = () => server.service.modules.deliveryWorker.runOnce();

async function sellerWithEndpoint(events: string[], url = receiver.url, extra: Record<string, unknown> = {}) {
  const seller = await signUp(server);
  const app = await createApp(server, seller.token);
  const webhook = (
    await server.api.post('/webhooks', { url, events, ...extra }, { token: seller.token })
  ).expect(201).body;
  return { seller, appId: app.id, webhook };
}

async function issueLicense(seller: Seller, appId: string, body: Record<string, unknown> = {}) {
  return (await server.api.post(`/apps/${appId}/licenses`, body, { token: seller.token })).expect(201).body;
}

const logsOf = async (seller: Seller, id: string, query = '') =>
  (await server.api.get(`/webhooks/${id}/logs${query}`, { token: seller.token })).expect(200).body;

describe('registering endpoints', () => {
  test('creates an endpoint with a generated secret shown once', async () => {
    const { seller, webhook } = await sellerWithEndpoint(['license.created']);
    assert.match(webhook.secret, /^whsec_[A-Za-z0-9+/=]{44}$/);
    assert.equal(webhook.status, 'active');
    assert.deepEqual(webhook.events, ['license.created']);
    const got = (await server.api.get(`/webhooks/${webhook.id}`, { token: seller.token })).expect(200).body;
    assert.equal(got.secret, undefined);
    assert.ok(!JSON.stringify(got).includes(webhook.secret));
    const list = (await server.api.get('/webhooks?page=1&limit=10', { token: seller.token })).expect(
      200,
    ).body;
    assert.deepEqual([list.total, list.page, list.limit, list.webhooks.length], [1, 1, 10, 1]);
  });

  test('takes a chosen secret, and PUT changes url and events', async () => {
    const { seller, webhook } = await sellerWithEndpoint(['app.created'], receiver.url, {
      secret: 'my-own-secret-1234567',
    });
    assert.equal(webhook.secret, 'my-own-secret-1234567');
    const updated = (
      await server.api.put(
        `/webhooks/${webhook.id}`,
        { url: `${receiver.url}/v2`, events: ['license.revoked', 'license.expired'] },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(updated.url, `${receiver.url}/v2`);
    assert.deepEqual(updated.events, ['license.revoked', 'license.expired']);
    (await server.api.delete(`/webhooks/${webhook.id}`, { token: seller.token })).expect(204);
    assertError(await server.api.get(`/webhooks/${webhook.id}`, { token: seller.token }), 404, 'not_found');
  });

  test('refuses bad input naming the field, storing nothing', async () => {
    const seller = await signUp(server);
    const cases: [Record<string, unknown>, string][] = [
      [{ url: 'not a url', events: ['license.created'] }, 'url'],
      [{ url: 'ftp://example.com/x', events: ['license.created'] }, 'url'],
      [{ url: receiver.url, events: [] }, 'events'],
      [{ url: receiver.url, events: ['license.deleted'] }, 'events.0'],
      [{ url: receiver.url, events: ['license.created'], secret: 's'.repeat(300) }, 'secret'],
      [{ url: receiver.url, events: ['license.created'], extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const error = assertError(
        await server.api.post('/webhooks', body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${field}: ${JSON.stringify(error.details)}`,
      );
    }
    assert.equal((await server.api.get('/webhooks', { token: seller.token })).expect(200).body.total, 0);
  });
});

describe('delivery', () => {
  test('delivers a signed envelope that our check and the Standard Webhooks library both verify', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created']);
    const before = receiver.requests.length;
    const license = await issueLicense(seller, appId, { email: 'buyer@example.com' });
    await work();
    const [request] = (await receiver.waitFor(before + 1)).slice(before);
    assert.ok(request);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.ok(
      verifyBodySignature(webhook.secret, request.body, String(request.headers['x-webhook-signature'])),
    );
    assert.match(String(request.headers['x-webhook-signature']), /^sha256=[0-9a-f]{64}$/);
    assert.match(String(request.headers['x-webhook-timestamp']), /^\d{10}$/);
    const standard = new StandardWebhook(webhook.secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as { id: string };
    const envelope = request.json;
    assert.equal(standard.id, envelope.id);
    assert.deepEqual(Object.keys(envelope).sort(), ['data', 'id', 'signature', 'timestamp', 'type']);
    assert.equal(envelope.type, 'license.created');
    assert.equal(request.headers['x-webhook-id'], envelope.id);
    assert.deepEqual(envelope.data, {
      id: license.id,
      licenseKey: license.key,
      userId: seller.user.id,
      productId: null,
      status: 'active',
      expiresAt: null,
      createdAt: license.createdAt,
    });
    const expected = createHmac('sha256', webhook.secret)
      .update(`${envelope.id}.${envelope.timestamp}.${JSON.stringify(envelope.data)}`)
      .digest('hex');
    assert.equal(envelope.signature, expected);
    const logs = await logsOf(seller, webhook.id);
    assert.equal(logs.total, 1);
    assert.deepEqual(
      [
        logs.logs[0].statusCode,
        logs.logs[0].success,
        logs.logs[0].attempt,
        logs.logs[0].trigger,
        logs.logs[0].responseBody,
      ],
      [200, true, 1, 'auto', 'ok'],
    );
  });

  test('a pass with nothing to do is one read and writes nothing; a pass with work sends it', async () => {
    // What earlier tests left due is sent first; failures are rescheduled later, so this ends.
    while ((await work()) > 0) {}
    let statements = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        statements++;
        return args.result;
      },
    };
    const worker = createDeliveryWorker({
      db: server.db.withPlugin(counting),
      clock,
      log: createLog(server.config),
      sender: createSender({ allowPrivate: true, requireHttps: false }, clock),
    });
    assert.equal(await worker.runOnce(), 0);
    assert.equal(statements, 1, 'one read, no transaction, no claim');

    const { seller, appId } = await sellerWithEndpoint(['license.created'], `${receiver.url}/after-idle`);
    await issueLicense(seller, appId);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(arrivals('/after-idle'), 1);
    statements = 0;
    assert.equal(await worker.runOnce(), 0);
    assert.equal(statements, 1);
  });

  test('every license kind and app.created reach the seller; user.registered reaches admins', async () => {
    const all = [
      'license.created',
      'license.updated',
      'license.revoked',
      'license.expired',
      'app.created',
      'user.registered',
    ];
    const seller = await signUp(server);
    // Endpoints receive what happens after they exist; the seller's own registration came before.
    clock.advance(1);
    const hook = (
      await server.api.post('/webhooks', { url: `${receiver.url}/all`, events: all }, { token: seller.token })
    ).expect(201).body;
    const admin = await signUp(server, { role: 'ADMIN' });
    (
      await server.api.post(
        '/webhooks',
        { url: `${receiver.url}/admin`, events: ['user.registered'] },
        { token: admin.token },
      )
    ).expect(201);

    const appId = (await createApp(server, seller.token)).id;
    const license = await issueLicense(seller, appId, {
      expiresAt: new Date(clock.now().getTime() + 60_000).toISOString(),
    });
    const path = `/apps/${appId}/licenses/${license.id}`;
    (await server.api.patch(path, { email: 'x@example.com' }, { token: seller.token })).expect(200);
    (await server.api.post(`${path}/suspend`, undefined, { token: seller.token })).expect(200);
    (await server.api.post(`${path}/reinstate`, undefined, { token: seller.token })).expect(200);
    clock.advance(120_000);
    await server.service.modules.licenses.expireDue();
    const newcomer = await signUp(server);
    await work();

    const sellerTypes = receiver.requests
      .filter((r) => receiverPath(r) === '/all' && r.body.includes(seller.user.id))
      .map((r) => r.json.type);
    assert.deepEqual(
      sellerTypes.sort(),
      [
        'app.created',
        'license.created',
        'license.expired',
        'license.revoked',
        'license.updated',
        'license.updated',
      ].sort(),
    );
    const adminSaw = receiver.requests
      .filter((r) => receiverPath(r) === '/admin' && r.json.type === 'user.registered')
      .map((r) => r.json.data.id);
    assert.ok(adminSaw.includes(newcomer.user.id));
    const logs = await logsOf(seller, hook.id, '?limit=100');
    assert.ok(logs.logs.every((l: { success: boolean }) => l.success));
  });

  test('a failing receiver is retried on the schedule with the same event id, then given up', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/flaky`);
    receiver.answer((r) => (receiverPath(r) === '/flaky' ? { status: 500, body: 'boom' } : { status: 200 }));
    try {
      await issueLicense(seller, appId);
      await work();
      const delays = [
        5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
      ];
      let expected = 1;
      for (const delay of delays) {
        clock.advance(delay * 0.85);
        await work();
        assert.equal(arrivals('/flaky'), expected, 'nothing is due before the jittered delay');
        clock.advance(delay * 0.3);
        await work();
        assert.equal(arrivals('/flaky'), ++expected);
      }
      clock.advance(10 * 86_400_000);
      await work();
      assert.equal(arrivals('/flaky'), 10, 'given up after the last attempt');
      const flaky = receiver.requests.filter((r) => receiverPath(r) === '/flaky');
      assert.equal(flaky.length, 10);
      assert.equal(new Set(flaky.map((r) => r.json.id)).size, 1, 'one event id throughout');
      const logs = await logsOf(seller, webhook.id, '?limit=100');
      assert.deepEqual(
        logs.logs.map((l: { attempt: number }) => l.attempt).reverse(),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      assert.ok(
        logs.logs.every((l: { statusCode: number; success: boolean }) => l.statusCode === 500 && !l.success),
      );
      const status = (await server.api.get(`/webhooks/${webhook.id}`, { token: seller.token })).expect(
        200,
      ).body;
      assert.equal(status.status, 'failing');
      assert.equal(status.consecutiveFailures, 10);
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
  });

  test('429 with Retry-After waits as asked; 410 disables the endpoint', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/slow`);
    receiver.answer((r) =>
      receiverPath(r) === '/slow' ? { status: 429, headers: { 'retry-after': '600' } } : { status: 200 },
    );
    try {
      await issueLicense(seller, appId);
      await work();
      assert.equal(arrivals('/slow'), 1);
      clock.advance(590_000);
      await work();
      assert.equal(arrivals('/slow'), 1, 'Retry-After: 600 is honoured');
      clock.advance(20_000);
      receiver.answer((r) => (receiverPath(r) === '/slow' ? { status: 410 } : { status: 200 }));
      await work();
      assert.equal(arrivals('/slow'), 2);
      const status = (await server.api.get(`/webhooks/${webhook.id}`, { token: seller.token })).expect(
        200,
      ).body;
      assert.equal(status.status, 'disabled');
      assert.match(status.disabledReason, /410/);
      await issueLicense(seller, appId);
      clock.advance(3_600_000);
      await work();
      assert.equal(arrivals('/slow'), 2, 'a disabled endpoint gets nothing');
      const enabled = (
        await server.api.post(`/webhooks/${webhook.id}/enable`, undefined, { token: seller.token })
      ).expect(200).body;
      assert.equal(enabled.status, 'active');
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
  });

  test('an endpoint failing for five days is disabled, and a success in between resets the count', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/down`);
    receiver.answer((r) => (receiverPath(r) === '/down' ? { status: 503 } : { status: 200 }));
    try {
      await issueLicense(seller, appId);
      await work();
      for (let day = 0; day < 6; day++) {
        clock.advance(86_400_000);
        await work();
      }
      const status = (await server.api.get(`/webhooks/${webhook.id}`, { token: seller.token })).expect(
        200,
      ).body;
      assert.equal(status.status, 'disabled');
      assert.match(status.disabledReason, /5 days/);
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
  });

  test('redirects are not followed and huge answers are cut', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/moved`);
    receiver.answer((r) =>
      receiverPath(r) === '/moved'
        ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } }
        : { status: 200 },
    );
    try {
      await issueLicense(seller, appId);
      await work();
      assert.equal(receiver.requests.filter((r) => receiverPath(r) === '/elsewhere').length, 0);
      const [log] = (await logsOf(seller, webhook.id)).logs;
      assert.deepEqual([log.statusCode, log.success, log.error], [302, false, 'redirects are not followed']);
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
    const big = await sellerWithEndpoint(['license.created'], `${receiver.url}/big`);
    receiver.answer((r) => (receiverPath(r) === '/big' ? { hugeBody: 50 * 1024 * 1024 } : { status: 200 }));
    try {
      await issueLicense(big.seller, big.appId);
      await work();
      const [log] = (await logsOf(big.seller, big.webhook.id)).logs;
      assert.equal(log.success, true);
      assert.equal(log.responseBody.length, 4096);
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
  });

  test('a receiver that hangs or hangs up costs one timeout and holds up no other endpoint', async () => {
    // Accepts connections and never says a word: a TLS handshake with it never ends.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/handshake`;
    const hanging = await sellerWithEndpoint(['license.created'], `${receiver.url}/hang`);
    const handshake = await sellerWithEndpoint(['license.created'], silentUrl);
    const reset = await sellerWithEndpoint(['license.created'], `${receiver.url}/reset`);
    const healthy = await sellerWithEndpoint(['license.created'], `${receiver.url}/fine`);
    receiver.answer((r) =>
      r.path === '/hang' ? { hang: true } : r.path === '/reset' ? { reset: true } : { status: 200 },
    );
    try {
      await issueLicense(hanging.seller, hanging.appId);
      await issueLicense(handshake.seller, handshake.appId);
      await issueLicense(reset.seller, reset.appId);
      await issueLicense(healthy.seller, healthy.appId);
      await work();
      assert.equal(arrivals('/fine'), 1);
      const [hung] = (await logsOf(hanging.seller, hanging.webhook.id)).logs;
      assert.deepEqual([hung.statusCode, hung.success], [0, false]);
      assert.match(hung.error, /no complete answer within 5000 ms/);
      // The 5 s cover connecting too: a connection that never completes does not get longer.
      const [unconnected] = (await logsOf(handshake.seller, handshake.webhook.id)).logs;
      assert.deepEqual([unconnected.statusCode, unconnected.success], [0, false]);
      assert.match(unconnected.error, /no complete answer within 5000 ms|Connect Timeout/i);
      assert.ok(unconnected.durationMs < 9_000, `gave up after ${unconnected.durationMs} ms, not 5 s`);
      const [cut] = (await logsOf(reset.seller, reset.webhook.id)).logs;
      assert.deepEqual([cut.statusCode, cut.success], [0, false]);
      const [ok] = (await logsOf(healthy.seller, healthy.webhook.id)).logs;
      assert.ok(ok.durationMs < 5000, 'the healthy endpoint did not wait for the hanging one');
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
      silent.close();
    }
  });

  test('a delivery whose worker died is taken again after its lease, with the same event id', async () => {
    const { seller, appId } = await sellerWithEndpoint(['license.created'], `${receiver.url}/lease`);
    await issueLicense(seller, appId);
    const { fanOutEvents, claimDue } = await import('./store.js');
    await fanOutEvents(server.db, clock.now(), 100);
    const claimed = await claimDue(server.db, clock.now(), {
      ms: 15_000,
      limit: 100,
      perEndpoint: 50,
      skip: [],
    });
    assert.ok(claimed.length >= 1, 'a worker claimed it, then "crashed"');
    await work();
    assert.equal(arrivals('/lease'), 0, 'nobody else takes a leased delivery');
    clock.advance(16_000);
    await work();
    const arrived = receiver.requests.filter((r) => receiverPath(r) === '/lease');
    assert.equal(arrived.length, 1);
    assert.equal(arrived[0]?.json.id, claimed.find((d) => d.url?.endsWith('/lease'))?.event_id);
  });

  test('a delivery leased at fan-out by a worker that died is taken again after its lease', async () => {
    const { seller, appId } = await sellerWithEndpoint(['license.created'], `${receiver.url}/fanned`);
    await issueLicense(seller, appId);
    const { fanOutEvents, claimDue } = await import('./store.js');
    const fannedOut = await fanOutEvents(server.db, clock.now(), 100, { ms: 15_000, limit: 100 });
    const mine = fannedOut.leased.find((d) => d.endpoint_id && d.event_type === 'license.created');
    assert.ok(mine, 'the fan-out wrote the delivery leased, then its worker "crashed"');
    assert.equal(mine.attempts, 0, 'an attempt counts once it is made, not when it is leased');
    assert.deepEqual(
      (await claimDue(server.db, clock.now(), { ms: 15_000, limit: 100, perEndpoint: 50, skip: [] })).filter(
        (d) => d.id === mine.id,
      ),
      [],
      'a delivery leased at fan-out is not claimed again while the lease runs',
    );
    await work();
    assert.equal(arrivals('/fanned'), 0, 'nobody else takes it');
    clock.advance(16_000);
    await work();
    const arrived = receiver.requests.filter((r) => receiverPath(r) === '/fanned');
    assert.equal(arrived.length, 1);
    assert.equal(arrived[0]?.json.id, mine.event_id);
    const [log] = (await logsOf(seller, mine.endpoint_id)).logs;
    assert.equal(log.attempt, 1, 'a lease that ran out unsent is no attempt');
  });

  test('a burst larger than one settling chunk is sent once and settled in full', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/burst`);
    const burst = SETTLE_BATCH + 10;
    for (let i = 0; i < burst; i += 10) {
      await Promise.all(Array.from({ length: 10 }, () => issueLicense(seller, appId)));
    }
    await work();
    assert.equal(arrivals('/burst'), burst);
    const statuses = await server.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'leased_until'])
      .where('endpoint_id', '=', webhook.id)
      .execute();
    assert.equal(statuses.length, burst);
    assert.ok(statuses.every((d) => d.status === 'succeeded' && d.leased_until === null));
    assert.equal((await logsOf(seller, webhook.id)).total, burst);
  });

  test('a worker told to stop finishes the sends under way and hands the rest back at once', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(
      ['license.created'],
      `${receiver.url}/stopping`,
    );
    for (let i = 0; i < 10; i++) await issueLicense(seller, appId);
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.answer((r) =>
      receiverPath(r) === '/stopping' ? { status: 200, heldUntil: released } : { status: 200 },
    );
    try {
      const stopping = new AbortController();
      const pass = server.service.modules.deliveryWorker.runOnce(stopping.signal);
      const before = receiver.requests.length;
      // Four in flight to one endpoint, each held by the receiver; the other six wait their turn.
      await receiver.waitFor(before + 4);
      stopping.abort();
      release();
      await pass;
      assert.equal(arrivals('/stopping'), 4, 'nothing was sent after the stop');
      const rows = await server.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'attempts', 'leased_until'])
        .where('endpoint_id', '=', webhook.id)
        .execute();
      assert.equal(rows.length, 10, 'no delivery lost');
      assert.equal(rows.filter((d) => d.status === 'succeeded' && d.attempts === 1).length, 4);
      const handedBack = rows.filter((d) => d.status === 'pending');
      assert.equal(handedBack.length, 6);
      assert.ok(
        handedBack.every((d) => d.attempts === 0 && d.leased_until === null),
        'leased to nobody, their attempt not counted',
      );
      // Another node takes them at once, without waiting out a lease.
      await work();
      assert.equal(arrivals('/stopping'), 10);
      assert.equal((await logsOf(seller, webhook.id)).total, 10);
    } finally {
      release();
      receiver.answer({ status: 200, body: 'ok' });
    }
  });

  test('an outcome is on record while the rest of its pass is still being sent', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(
      ['license.created'],
      `${receiver.url}/prompt`,
    );
    for (let i = 0; i < 5; i++) await issueLicense(seller, appId);
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let answered = 0;
    // The first send is answered at once; the others are held until the test lets them go.
    receiver.answer((r) =>
      receiverPath(r) === '/prompt' && answered++ > 0
        ? { status: 200, heldUntil: released }
        : { status: 200 },
    );
    try {
      let passEnded = false;
      const pass = work().finally(() => {
        passEnded = true;
      });
      const settled = () =>
        server.db
          .selectFrom('webhook_deliveries')
          .select(['status', 'attempts'])
          .where('endpoint_id', '=', webhook.id)
          .where('status', '=', 'succeeded')
          .execute();
      // A node that died now would send again only what it had not heard back from.
      for (let tries = 0; (await settled()).length === 0; tries++) {
        assert.ok(tries < 200, 'the answered delivery was never settled while the others were held');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(passEnded, false, 'settled while the pass was still sending');
      assert.deepEqual(await settled(), [{ status: 'succeeded', attempts: 1 }]);
      release();
      await pass;
      assert.equal((await settled()).length, 5);
    } finally {
      release();
      receiver.answer({ status: 200, body: 'ok' });
    }
  });

  test('two workers at once never send the same delivery twice', async () => {
    const { seller, appId } = await sellerWithEndpoint(['license.created'], `${receiver.url}/pair`);
    for (let i = 0; i < 12; i++) await issueLicense(seller, appId);
    await Promise.all([work(), work(), work()]);
    const ids = receiver.requests.filter((r) => receiverPath(r) === '/pair').map((r) => r.json.id);
    assert.equal(ids.length, 12);
    assert.equal(new Set(ids).size, 12);
  });
});

describe('test sends, redelivery and operator controls', () => {
  test('the test route sends a sample right away, logs it and never retries it', async () => {
    const { seller, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/test`);
    receiver.answer((r) =>
      receiverPath(r) === '/test' ? { status: 503, body: 'not now' } : { status: 200 },
    );
    try {
      const outcome = (
        await server.api.post(`/webhooks/${webhook.id}/test`, undefined, { token: seller.token })
      ).expect(200).body;
      assert.deepEqual([outcome.success, outcome.statusCode, outcome.responseBody], [false, 503, 'not now']);
      const sent = receiver.requests.filter((r) => receiverPath(r) === '/test');
      assert.equal(sent.length, 1);
      assert.equal(sent[0]?.json.type, 'webhook.test');
      assert.equal(sent[0]?.json.data.test, true);
      clock.advance(7 * 86_400_000);
      await work();
      assert.equal(receiver.requests.filter((r) => receiverPath(r) === '/test').length, 1, 'no retry');
      const [log] = (await logsOf(seller, webhook.id)).logs;
      assert.deepEqual([log.trigger, log.statusCode, log.eventType], ['test', 503, 'webhook.test']);
    } finally {
      receiver.answer({ status: 200, body: 'ok' });
    }
  });

  test('a delivery can be sent again by hand, and the secret rotated', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/again`);
    await issueLicense(seller, appId);
    await work();
    const [first] = (await logsOf(seller, webhook.id)).logs;
    const { secret } = (
      await server.api.post(`/webhooks/${webhook.id}/rotate-secret`, undefined, { token: seller.token })
    ).expect(200).body;
    assert.notEqual(secret, webhook.secret);
    const outcome = (
      await server.api.post(`/webhooks/${webhook.id}/deliveries/${first.deliveryId}/redeliver`, undefined, {
        token: seller.token,
      })
    ).expect(200).body;
    assert.equal(outcome.success, true);
    const again = receiver.requests.filter((r) => receiverPath(r) === '/again');
    assert.equal(again.length, 2);
    assert.equal(again[1]?.json.id, again[0]?.json.id, 'same event id');
    assert.ok(
      verifyBodySignature(secret, again[1]?.body ?? '', String(again[1]?.headers['x-webhook-signature'])),
      'signed with the new secret',
    );
    const logs = (await logsOf(seller, webhook.id)).logs;
    assert.deepEqual(
      logs.map((l: { trigger: string }) => l.trigger),
      ['manual', 'auto'],
    );
    const other = await signUp(server);
    assertError(
      await server.api.post(`/webhooks/${webhook.id}/deliveries/${first.deliveryId}/redeliver`, undefined, {
        token: other.token,
      }),
      404,
      'not_found',
    );
  });

  test('logs older than the retention period are dropped', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/old`);
    await issueLicense(seller, appId);
    await work();
    assert.equal((await logsOf(seller, webhook.id)).total, 1);
    const { purgeAttempts } = await import('./store.js');
    await purgeAttempts(server.db, new Date(clock.now().getTime() - 30 * 86_400_000));
    assert.equal((await logsOf(seller, webhook.id)).total, 1, 'a fresh log is kept');
    await purgeAttempts(server.db, new Date(clock.now().getTime() + 1000));
    assert.equal((await logsOf(seller, webhook.id)).total, 0);
  });

  test('disabling stops deliveries', async () => {
    const { seller, appId, webhook } = await sellerWithEndpoint(['license.created'], `${receiver.url}/off`);
    (await server.api.post(`/webhooks/${webhook.id}/disable`, undefined, { token: seller.token })).expect(
      200,
    );
    await issueLicense(seller, appId);
    await work();
    assert.equal(receiver.requests.filter((r) => receiverPath(r) === '/off').length, 0);
  });
});

describe('the SSRF guard', () => {
  test('refuses private targets at registration and at each attempt', async () => {
    const strict = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_POLL_MS: '60000' });
    try {
      const seller = await signUp(strict);
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://[::1]/x',
        'http://169.254.169.254/latest/meta-data',
        'http://10.1.2.3/',
        'http://localhost:8080/',
        'http://[::ffff:10.0.0.1]/',
      ]) {
        const error = assertError(
          await strict.api.post('/webhooks', { url, events: ['license.created'] }, { token: seller.token }),
          400,
          'validation_failed',
        );
        assert.equal(error.details?.[0]?.field, 'url', url);
      }
      // A stored target that now points inside (changed behind the API's back) is refused when sending.
      const hook = (
        await strict.api.post(
          '/webhooks',
          { url: 'https://hooks.example.com/in', events: ['license.created'] },
          { token: seller.token },
        )
      ).expect(201).body;
      await strict.db
        .updateTable('webhook_endpoints')
        .set({ url: receiver.url })
        .where('id', '=', hook.id)
        .execute();
      const before = receiver.requests.length;
      const outcome = (
        await strict.api.post(`/webhooks/${hook.id}/test`, undefined, { token: seller.token })
      ).expect(200).body;
      assert.equal(outcome.statusCode, 0);
      assert.match(outcome.error, /non-public address/);
      assert.equal(receiver.requests.length, before);
    } finally {
      await strict.stop();
    }
  });
});

/** Requests the receiver got on one test's path (other files' deliveries may share the worker). */
function arrivals(path: string): number {
  return receiver.requests.filter((r) => r.path === path).length;
}

function receiverPath(request: { path: string }): string {
  return request.path;
}
