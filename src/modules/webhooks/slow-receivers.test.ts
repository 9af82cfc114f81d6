import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueLicense, sellerWithApp, startTestServer, type TestServer } from '../../testing/harness.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { LEASE_MS, PER_ENDPOINT_CONCURRENCY } from './delivery-worker.js';

/**
 * Receivers that take most of the 5 s they are given, under a node's own background delivery
 * (as in production, on the real clock): each endpoint's queue takes longer to send than a
 * lease lasts, and events keep arriving while it is sent. Every envelope must arrive once, and
 * every delivery end succeeded after one attempt.
 */
const EVENTS_PER_DELAY = 200;
const ENDPOINTS_PER_DELAY = 8;
// The slower one leaves 300 ms of the 5 s: on a machine running the whole suite on two cores, a
// node starved of CPU that long timed out answers that had come (seen at 4,900 ms).
const DELAYS_MS = [3_000, 4_700];

let server: TestServer;
/**
 * The 3 s endpoints share one receiver (one origin: a seller's several endpoints on one host,
 * 32 sends to it at once); each 4.9 s endpoint has a receiver of its own.
 */
const receivers: Receiver[] = [];
const targets: string[] = [];
before(async () => {
  server = await startTestServer({ JOBS: 'on' }, { ownDatabase: true });
  const [sharedDelay, ownDelay] = DELAYS_MS as [number, number];
  const shared = await startReceiver();
  shared.answer({ status: 200, body: 'ok', delayMs: sharedDelay });
  receivers.push(shared);
  for (let n = 0; n < ENDPOINTS_PER_DELAY; n++) targets.push(`${shared.url}/slow-${n}`);
  for (let n = 0; n < ENDPOINTS_PER_DELAY; n++) {
    const own = await startReceiver();
    own.answer({ status: 200, body: 'ok', delayMs: ownDelay });
    receivers.push(own);
    targets.push(`${own.url}/slow`);
  }
});
after(async () => {
  await server.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

test(`receivers answering in ${DELAYS_MS.join(' and ')} ms get each of ${EVENTS_PER_DELAY} events once, settled after one attempt`, async (t) => {
  const endpoints = await Promise.all(
    targets.map(async (url) => {
      const seller = await sellerWithApp(server);
      const webhook = (
        await server.api.post('/webhooks', { url, events: ['license.created'] }, { token: seller.token })
      ).expect(201).body;
      return { seller, webhookId: webhook.id as string };
    }),
  );
  // Each endpoint's share, the first ones one more so each delay gets EVENTS_PER_DELAY in all.
  const share = (n: number) =>
    Math.floor(EVENTS_PER_DELAY / ENDPOINTS_PER_DELAY) +
    (n % ENDPOINTS_PER_DELAY < EVENTS_PER_DELAY % ENDPOINTS_PER_DELAY ? 1 : 0);
  // More than a lease's worth of sending for each endpoint, so a lease must be renewed.
  assert.ok(Math.floor(share(0) / PER_ENDPOINT_CONCURRENCY) * Math.min(...DELAYS_MS) > LEASE_MS);
  // The events arrive over the first seconds of sending, one endpoint after another, as sales do.
  const licenses: string[] = [];
  for (let round = 0; round < share(0); round++) {
    for (const [n, { seller }] of endpoints.entries()) {
      if (round < share(n)) licenses.push((await issueLicense(server, seller)).id);
    }
  }
  const expected = licenses.length;
  const deliveries = () =>
    server.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'status', 'attempts'])
      .where(
        'endpoint_id',
        'in',
        endpoints.map((e) => e.webhookId),
      )
      .execute();
  const deadline = Date.now() + 180_000;
  for (;;) {
    const rows = await deliveries();
    if (rows.length === expected && rows.every((row) => row.status !== 'pending')) break;
    assert.ok(Date.now() < deadline, `still pending: ${rows.filter((r) => r.status === 'pending').length}`);
    await sleep(250);
  }
  const rows = await deliveries();
  const receipts = new Map<string, number>();
  for (const request of receivers.flatMap((r) => r.requests))
    receipts.set(request.json.id, (receipts.get(request.json.id) ?? 0) + 1);
  const repeated = [...receipts.values()].filter((n) => n > 1).length;
  t.diagnostic(
    `${expected} events, ${receivers.reduce((n, r) => n + r.requests.length, 0)} receipts, ${receipts.size} envelopes`,
  );
  const failed = await server.db
    .selectFrom('webhook_attempts')
    .select(['status_code', 'error', 'duration_ms'])
    .where('success', '=', false)
    .where(
      'endpoint_id',
      'in',
      endpoints.map((e) => e.webhookId),
    )
    .execute();
  assert.deepEqual(failed, [], 'no attempt failed');
  assert.equal(repeated, 0, 'no envelope arrived twice');
  assert.equal(receipts.size, expected, 'every envelope arrived');
  assert.deepEqual(
    rows.filter((row) => row.status !== 'succeeded' || row.attempts !== 1),
    [],
    'every delivery succeeded at its first attempt',
  );
  const logged = await server.db
    .selectFrom('webhook_attempts')
    .select(['delivery_id', 'attempt', 'success'])
    .where(
      'endpoint_id',
      'in',
      endpoints.map((e) => e.webhookId),
    )
    .execute();
  assert.equal(logged.length, expected, 'one attempt logged for each delivery');
  assert.ok(logged.every((a) => a.attempt === 1 && a.success));
});
