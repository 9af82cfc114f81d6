import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Db, openDatabase } from '../platform/db/database.js';
import { crash, killAll, serve } from '../testing/cli-process.js';
import { type HttpClient, httpClient } from '../testing/http-client.js';
import { fillWithMigratedDatabase } from '../testing/memory-image.js';
import { confirmPurchase, GOOD_CARD, type StartedPurchase, startPurchase } from '../testing/purchases.js';
import { startReceiver } from '../testing/receiver.js';
import { scratchDatabase } from '../testing/scratch-database.js';
import { seatLane, seatLedger } from '../testing/seat-ledger.js';
import { startSmtpSink } from '../testing/smtp-sink.js';
import { trialLane, trialLedger } from '../testing/trial-ledger.js';

/**
 * The service as an operator runs it, killed with SIGKILL again and again while it delivers
 * webhooks, sends mail, fulfils purchases, lends floating seats and starts free trials, then
 * restarted on the same
 * storage: a PostgreSQL database of its own, or an embedded data folder that outlives the
 * process. CRASH_CYCLES sets how many times it is killed.
 */
const CYCLES = Number(process.env.CRASH_CYCLES ?? 5);
const scratch = await scratchDatabase();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-crash-'));
if (!scratch.url) await fillWithMigratedDatabase(dataDir);
const storage = scratch.url ? 'PostgreSQL' : 'PGlite';
const PASSWORD = 'crash me gently please';
const adminEmail = `ops-${randomBytes(4).toString('hex')}@example.com`;
/** Seats of the floating license, contended for by twice as many devices. */
const MAX_SEATS = 3;
/** Seat calls answered in each cycle before the kill, so seats are taken and given back in each. */
const SEAT_ANSWERS_PER_CYCLE = 12;
/** Trial starts answered in each cycle before the kill, repeats among them. */
const TRIAL_ANSWERS_PER_CYCLE = 6;
/** Usage consumes answered in each cycle before the kill. */
const USAGE_ANSWERS_PER_CYCLE = 10;
const DAY = 86_400_000;

after(async () => {
  killAll();
  await scratch.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The storage the processes share, opened by the test while no process runs. */
async function withDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl: scratch.url ?? null, dataDir });
  try {
    return await work(database.db);
  } finally {
    await database.close();
  }
}

/**
 * The receipts (`path event-id`) whose success is on record: what a node that died had settled.
 * A receipt of the dead node's run that is not among them was in flight when it died.
 */
async function settledReceipts(db: Db): Promise<Set<string>> {
  const rows = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .innerJoin('webhook_endpoints as w', 'w.id', 'a.endpoint_id')
    .select(['d.event_id', 'w.url'])
    .where('a.success', '=', true)
    .execute();
  return new Set(rows.map((row) => `${new URL(row.url).pathname.replace(/^\/hooks/, '')} ${row.event_id}`));
}

/** Resolves once `done()` holds; fails naming `what` if it does not within `ms`. */
async function until(what: string, done: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await sleep(25);
  }
}

test(`on ${storage}, kill -9 during deliveries, mail, purchases, seat checkouts, trial starts and usage consumes loses nothing, issues no license or trial twice, lends no seat too many, counts each use once and keeps each order's terms`, async (t) => {
  // Slow on purpose: each delivery and each mail is still unanswered when the process dies.
  // Seat events are many and small: a shorter wait keeps their endpoint from falling behind.
  const receiver = await startReceiver();
  receiver.answer((request) => ({
    status: 200,
    body: 'ok',
    delayMs: request.path === '/seats' ? 100 : 300,
  }));
  const sink = await startSmtpSink({ acceptAfterMs: 300 });
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: scratch.url,
    JWT_SECRET: 'c'.repeat(64),
    LOG_LEVEL: 'warn',
    JOBS: 'on',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_MS: '50',
    MAIL_POLL_MS: '50',
    SMTP_URL: sink.url,
    MAIL_FROM: 'Crash Store <sales@crash.example>',
    ADMIN_EMAIL: adminEmail,
    ADMIN_PASSWORD: PASSWORD,
    AUTH_RATE_LIMIT: '100000',
    CHECKOUT_RATE_LIMIT: '100000',
    VERIFY_RATE_LIMIT: '100000',
    VERIFY_KEY_RATE_LIMIT: '100000',
  };
  try {
    let node = await serve(env);
    let api = httpClient(`${node.api}/v1`);
    const adminToken = (await api.post('/auth/login', { email: adminEmail, password: PASSWORD })).expect(200)
      .body.token;
    const seller = (
      await api.post('/auth/register', {
        email: `seller-${randomBytes(4).toString('hex')}@example.com`,
        password: PASSWORD,
      })
    ).expect(201).body;
    // Enterprise: every sale mails the buyer, a copy and the seller.
    (await api.patch(`/admin/users/${seller.user.id}`, { tier: 'enterprise' }, { token: adminToken })).expect(
      200,
    );
    const token: string = seller.token;
    const app = (await api.post('/apps', { name: 'Crash' }, { token })).expect(201).body;
    (
      await api.post('/webhooks', { url: `${receiver.url}/core`, events: ['license.created'] }, { token })
    ).expect(201);
    const product = (
      await api.post(
        '/products',
        {
          appId: app.id,
          name: 'Crash Pro',
          price: 19.99,
          currency: 'USD',
          sendLicenseToCustomer: true,
          licenseEmails: ['copies@crash.example'],
          merchantWebhookUrl: `${receiver.url}/merchant`,
        },
        { token },
      )
    ).expect(201).body;
    (
      await api.post(
        '/webhooks',
        { url: `${receiver.url}/seats`, events: ['license.seat.acquired', 'license.seat.released'] },
        { token },
      )
    ).expect(201);
    const floating = (
      await api.post(
        `/apps/${app.id}/licenses`,
        { floating: true, maxSeats: MAX_SEATS, leaseSeconds: 3600 },
        { token },
      )
    ).expect(201).body;
    const trialProduct = (
      await api.post(
        '/products',
        { appId: app.id, name: 'Crash Trial', price: 9, currency: 'USD', trialDays: 14 },
        { token },
      )
    ).expect(201).body;
    // A yearly order left open through every kill (a buyer in a 3-D Secure challenge), paid at the
    // end after the seller made the product monthly: the buyer still gets the year.
    const yearly = (
      await api.post(
        '/products',
        {
          appId: app.id,
          name: 'Crash Yearly',
          price: 120,
          currency: 'USD',
          billingType: 'recurring',
          interval: 'year',
          partnerPriceIdRecurring: 'price_crash_yearly',
        },
        { token },
      )
    ).expect(201).body;
    const openYearly = await startPurchase({ api }, yearly.id, 'yearly-buyer@example.com');
    // A metered license consumed with an Idempotency-Key per use: retried after the kills, each
    // use counts once, whether its node died before or after committing it.
    const metered = (await api.post(`/apps/${app.id}/licenses`, { maxUses: 1_000_000 }, { token })).expect(
      201,
    ).body;
    const consumes: { key: string; amount: number; answered: boolean }[] = [];
    const consume = (client: HttpClient, use: { key: string; amount: number }) =>
      client.post(
        '/licenses/usage',
        { key: metered.key, amount: use.amount },
        { headers: { 'idempotency-key': use.key } },
      );
    const consumer = async (client: HttpClient, lane: string, alive: () => boolean) => {
      for (let i = 0; alive(); i++) {
        const use = { key: `use-${lane}-${i}`, amount: 1 + (i % 3), answered: false };
        consumes.push(use);
        try {
          const res = await consume(client, use);
          use.answered = res.status === 200 && res.body.consumed === true;
        } catch {
          return; // the process is gone
        }
        await sleep(5);
      }
    };
    const trials = trialLedger();
    const trialAnswers = () => trials.starts.filter((start) => start.status !== undefined).length;
    const seats = seatLedger();
    /** Seats held now, read through the API; never more than MAX_SEATS, whatever died when. */
    const seatsHeld = async (client: HttpClient) => {
      const list = (await client.get(`/apps/${app.id}/licenses/${floating.id}/seats`, { token })).expect(200)
        .body as { seats: { hwuid: string; leaseExpiresAt: string }[]; total: number };
      assert.ok(list.total <= MAX_SEATS, `${list.total} seats held of ${MAX_SEATS}`);
      return list.seats;
    };

    const started: StartedPurchase[] = [];
    const acknowledged = new Map<string, { licenseKey: string | null }>();
    /** Buyers paying one after another until the process dies under them. */
    const buyer = async (client: HttpClient, lane: string, alive: () => boolean) => {
      for (let i = 0; alive(); i++) {
        try {
          const intent = await startPurchase({ api: client }, product.id, `buyer-${lane}-${i}@example.com`);
          started.push(intent);
          const res = await confirmPurchase({ api: client }, intent, GOOD_CARD);
          if (res.status === 200 && res.body.transactionStatus === 'paid')
            acknowledged.set(intent.orderId, { licenseKey: res.body.licenseKey });
        } catch {
          return; // the process is gone
        }
      }
    };

    const receiptOf = (request: { path: string; json: { id: string } }) =>
      `${request.path} ${request.json.id}`;
    /** Receipts unsettled when a node died, and in how many deaths. */
    const inFlightAtDeath = new Map<string, number>();
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      if (cycle > 0) {
        node = await serve(env);
        api = httpClient(`${node.api}/v1`);
        await seatsHeld(api);
      }
      const seen = {
        deliveries: receiver.requests.length,
        mails: sink.started,
        seatAnswers: seats.calls.filter((call) => call.answer).length,
        trialAnswers: trialAnswers(),
        usageAnswers: consumes.filter((use) => use.answered).length,
      };
      let alive = true;
      const buyers = [0, 1, 2].map((lane) => buyer(api, `${cycle}-${lane}`, () => alive));
      const consumers = [0, 1].map((lane) => consumer(api, `${cycle}-${lane}`, () => alive));
      // The same devices every cycle (each always on one lane), so seats outlive the kills.
      const devices = [0, 1].map((lane) =>
        seatLane({
          api,
          key: floating.key,
          appId: app.id,
          hwuids: [0, 1, 2].map((n) => `desk-${lane}-${n}`),
          ledger: seats,
          alive: () => alive,
          pauseMs: 10,
        }),
      );
      const starter = trialLane({
        pay: httpClient(node.pay),
        productId: trialProduct.id,
        name: String(cycle),
        ledger: trials,
        alive: () => alive,
        // Each trial is one more mail and delivery to wait for at the end: a few per cycle do.
        pauseMs: 50,
      });
      // Die once a delivery and a mail of this run are on the wire, with purchases under way,
      // seats changing hands and trials starting.
      await until(
        'a delivery and a mail in flight, and seat calls and trial starts answered',
        () =>
          receiver.requests.length > seen.deliveries &&
          sink.started > seen.mails &&
          seats.calls.filter((call) => call.answer).length >= seen.seatAnswers + SEAT_ANSWERS_PER_CYCLE &&
          trialAnswers() >= seen.trialAnswers + TRIAL_ANSWERS_PER_CYCLE &&
          consumes.filter((use) => use.answered).length >= seen.usageAnswers + USAGE_ANSWERS_PER_CYCLE,
      );
      await crash(node.proc);
      alive = false;
      await Promise.all([...buyers, ...devices, starter, ...consumers]);
      // What this run sent and had not settled when it died: the only receipts that may repeat.
      const settled = await withDatabase(settledReceipts);
      const sentThisRun = new Set(receiver.requests.slice(seen.deliveries).map(receiptOf));
      for (const receipt of sentThisRun) {
        if (!settled.has(receipt)) inFlightAtDeath.set(receipt, (inFlightAtDeath.get(receipt) ?? 0) + 1);
      }
    }

    // While no node ran, the leases the killed nodes held ran out (15 s for a delivery, five
    // minutes for a mail); the test does not wait that long, it ends them.
    await withDatabase(async (db) => {
      await db
        .updateTable('webhook_deliveries')
        .set({ leased_until: null })
        .where('status', '=', 'pending')
        .execute();
      await db
        .updateTable('notifications')
        .set({ leased_until: null })
        .where('status', '=', 'pending')
        .execute();
      // And the Idempotency-Key claims a killed node left in progress, which no retry takes over
      // before they expire (a day): nothing of their work committed, as it commits with its answer.
      await db
        .updateTable('idempotency_keys')
        .set({ created_at: new Date(Date.now() - 25 * 60 * 60_000) })
        .where('state', '=', 'in_progress')
        .execute();
    });
    node = await serve(env);
    api = httpClient(`${node.api}/v1`);
    // Every use retried with its key: the ones answered replay, the others count now or replay
    // what their killed node committed; the count is then exactly every use sent.
    for (const use of consumes) {
      const res = (await consume(api, use)).expect(200);
      assert.equal(res.body.consumed, true, `${use.key}: ${res.text}`);
      if (use.answered) assert.equal(res.headers.get('idempotent-replayed'), 'true', use.key);
    }
    const usage = (await api.get(`/apps/${app.id}/licenses/${metered.id}/usage`, { token })).expect(200).body;
    assert.equal(
      usage.uses,
      consumes.reduce((sum, use) => sum + use.amount, 0),
      'each use counted once',
    );
    (await api.patch(`/products/${yearly.id}`, { interval: 'month', price: 12 }, { token })).expect(200);
    const yearlyPaid = (await confirmPurchase({ api }, openYearly, GOOD_CARD)).expect(200).body;
    assert.equal(yearlyPaid.transactionStatus, 'paid');
    const yearlyOrder = (await api.get(`/orders/${openYearly.orderId}`, { token })).expect(200).body;
    assert.equal(yearlyOrder.amount, 120);
    const yearlyLicense = (
      await api.get(`/apps/${app.id}/licenses/${yearlyOrder.licenseId}`, { token })
    ).expect(200).body;
    assert.ok(
      Date.parse(yearlyLicense.expiresAt) - Date.now() > 300 * DAY,
      `a year: ${yearlyLicense.expiresAt}`,
    );
    // A buyer whose confirmation got no answer confirms again, as a reloaded page would.
    for (const intent of started) {
      if (acknowledged.has(intent.orderId)) continue;
      const res = (await confirmPurchase({ api }, intent, GOOD_CARD)).expect(200);
      assert.equal(res.body.transactionStatus, 'paid');
    }
    const orders = await Promise.all(
      started.map(async (intent) => (await api.get(`/orders/${intent.orderId}`, { token })).expect(200).body),
    );
    const delivered = (kind: string, match: (data: Record<string, unknown>) => boolean) =>
      receiver.requests.some((r) => r.path === kind && match(r.json.data));
    const mailed = (transactionId: string) =>
      sink.messages.filter((m) => m.raw.replace(/=\r\n/g, '').includes(transactionId)).length;
    // Every trial answered 201 is the buyer's: its license.created and its key by mail arrive (the
    // key a trial by e-mail did not answer is the one its event carries).
    const trialsSeen = trials.expectations();
    assert.deepEqual(trialsSeen.violations, []);
    const trialKey = (trialId: string | undefined) =>
      receiver.requests.find((r) => r.path === '/core' && r.json.data.id === trialId)?.json.data.licenseKey as
        | string
        | undefined;
    const trialMailed = (email: string, licenseKey: string | undefined) =>
      licenseKey !== undefined &&
      sink.messages.some((m) => m.to.includes(email) && m.raw.replace(/=\r\n/g, '').includes(licenseKey));

    // What the devices were told binds the restarted service: a seat answered valid (whose
    // lease runs) is still held, a seat given back is free, and never more than MAX_SEATS.
    const expected = seats.expectations();
    assert.deepEqual(expected.violations, []);
    const held = new Map((await seatsHeld(api)).map((seat) => [seat.hwuid, seat.leaseExpiresAt]));
    for (const [hwuid, leaseExpiresAt] of expected.held) {
      if (Date.parse(leaseExpiresAt) <= Date.now()) continue;
      assert.ok(held.has(hwuid), `${hwuid} was told it holds a seat until ${leaseExpiresAt}`);
    }
    for (const hwuid of expected.free) assert.ok(!held.has(hwuid), `${hwuid} gave its seat back`);
    // Their events reach the receiver: a repeat under the same id is allowed, a loss is not.
    const seatEvents = (type: string) =>
      new Map(
        receiver.requests
          .filter((r) => r.path === '/seats' && r.json.type === type)
          .map((r) => [r.json.id, r.json.data]),
      );
    const seatEventsArrived = () => {
      const acquired = [...seatEvents('license.seat.acquired').values()];
      const released = [...seatEvents('license.seat.released').values()];
      return (
        expected.acquisitions.every((taken) =>
          acquired.some((data) => data.hwuid === taken.hwuid && data.leaseExpiresAt === taken.leaseExpiresAt),
        ) &&
        [...expected.releases].every(
          ([hwuid, count]) => released.filter((data) => data.hwuid === hwuid).length >= count,
        )
      );
    };

    await until(
      'every paid order delivered and mailed, and every seat event received',
      () =>
        orders.every(
          (order) =>
            delivered('/core', (data) => data.id === order.licenseId) &&
            delivered('/merchant', (data) => data.orderId === order.id) &&
            mailed(order.transactionId) >= 3,
        ) &&
        delivered('/core', (data) => data.id === yearlyOrder.licenseId) &&
        mailed(yearlyOrder.transactionId) >= 1 &&
        seatEventsArrived() &&
        trialsSeen.acknowledged.every((trial) => {
          const key = trialKey(trial.trialId);
          return (trial.licenseKey ?? key) === key && trialMailed(trial.email, key);
        }),
    );
    node.proc.child.kill('SIGTERM');
    assert.equal(await node.proc.exited, 0);
    const repeats = (ids: (string | undefined)[]) => ids.length - new Set(ids).size;
    // A delivery is sent again only when the node that sent it died before its outcome was on
    // record: at most once more for each such death.
    const receipts = new Map<string, number>();
    for (const request of receiver.requests)
      receipts.set(receiptOf(request), (receipts.get(receiptOf(request)) ?? 0) + 1);
    const beyond = [...receipts].filter(
      ([receipt, count]) => count - 1 > (inFlightAtDeath.get(receipt) ?? 0),
    );
    assert.deepEqual(beyond, [], 'receipts repeated beyond what was in flight when a node died');
    const inFlight = [...inFlightAtDeath.values()].reduce((a, b) => a + b, 0);
    const answered = seats.calls.filter((call) => call.answer).length;
    t.diagnostic(
      `${seats.calls.length} seat calls, ${answered} answered (${expected.acquisitions.length} seats taken, ` +
        `${[...expected.releases.values()].reduce((a, b) => a + b, 0)} given back, ${held.size} held at the end); ` +
        `${started.length} purchases started, ${acknowledged.size} confirmed before a kill; ` +
        `${trials.starts.length} trial starts, ${trialsSeen.acknowledged.length} answered 201; ` +
        `${consumes.length} usage consumes, ${consumes.filter((use) => use.answered).length} answered before a kill; ` +
        `${repeats(receiver.requests.map(receiptOf))} webhook repeats (${inFlight} in flight at a kill) and ` +
        `${repeats(sink.messages.map((m) => /^Message-ID: (\S+)/im.exec(m.raw)?.[1]))} mail repeats`,
    );

    await withDatabase(async (db) => {
      // Every acknowledged order is there and paid, with one license of its own.
      const rows = await db.selectFrom('orders').selectAll().where('product_id', '=', product.id).execute();
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const intent of started) assert.equal(byId.get(intent.orderId)?.status, 'paid', intent.orderId);
      const paid = rows.filter((row) => row.status === 'paid');
      const licenseIds = paid.map((row) => row.license_id);
      assert.ok(licenseIds.every((id) => id !== null));
      assert.equal(new Set(licenseIds).size, paid.length, 'a license per order');
      const licenses = await db
        .selectFrom('licenses')
        .select(['id', 'key'])
        .where('product_id', '=', product.id)
        .execute();
      assert.equal(licenses.length, paid.length, 'no license without its order');
      const keys = new Map(licenses.map((license) => [license.id, license.key]));
      for (const [orderId, answer] of acknowledged)
        if (answer.licenseKey) assert.equal(keys.get(byId.get(orderId)?.license_id ?? ''), answer.licenseKey);

      // Every acknowledged trial is there once, a trial on a device bound to it; no device of the
      // product, and no address of a trial by e-mail, has a second one, whatever died when.
      const trialRows = await db
        .selectFrom('licenses')
        .select(['id', 'key', 'email', 'status'])
        .where('product_id', '=', trialProduct.id)
        .execute();
      const trialDevices = await db
        .selectFrom('license_devices')
        .innerJoin('licenses', 'licenses.id', 'license_devices.license_id')
        .select(['license_devices.license_id', 'license_devices.hwuid'])
        .where('licenses.product_id', '=', trialProduct.id)
        .execute();
      for (const trial of trialsSeen.acknowledged) {
        const rows = trialRows.filter((row) => row.id === trial.trialId);
        assert.equal(rows.length, 1, `trial ${trial.trialId} exists once`);
        assert.equal(rows[0]?.status, 'trial');
        assert.equal(rows[0]?.email?.toLowerCase(), trial.email.toLowerCase());
        assert.deepEqual(
          trialDevices.filter((d) => d.license_id === trial.trialId).map((d) => d.hwuid),
          trial.hwuid === undefined ? [] : [trial.hwuid],
          `a trial ${trial.hwuid ? `bound to ${trial.hwuid}` : 'by e-mail, on no device yet'}`,
        );
      }
      const atMostOne = (values: string[], what: string) => {
        const twice = values.filter((value, i) => values.indexOf(value) !== i);
        assert.deepEqual(twice, [], `${what} with a second trial`);
      };
      const onDevices = new Set(trialDevices.map((d) => d.license_id));
      const byMail = new Set(trialRows.filter((row) => !onDevices.has(row.id)).map((row) => row.email));
      atMostOne(
        trialRows.filter((row) => byMail.has(row.email)).map((row) => (row.email ?? '').toLowerCase()),
        'addresses of trials by e-mail',
      );
      atMostOne(
        trialDevices.map((d) => d.hwuid),
        'devices',
      );

      // Every event reached its receiver at least once; a repeat carries the same envelope.
      const events = await db.selectFrom('events').select(['id', 'type', 'dispatched_at']).execute();
      assert.ok(
        events.every((event) => event.dispatched_at !== null),
        'every event dispatched',
      );
      const types = new Map(events.map((event) => [event.id, event.type]));
      const deliveries = await db.selectFrom('webhook_deliveries').select(['event_id', 'status']).execute();
      assert.ok(deliveries.length >= 2 * paid.length);
      const received = new Map<string, string>();
      for (const request of receiver.requests) {
        assert.equal(types.get(request.json.id), request.json.type, 'an envelope of a recorded event');
        const { signature: _signature, ...envelope } = request.json;
        const body = JSON.stringify(envelope);
        assert.equal(received.get(request.json.id) ?? body, body, 'a repeat is the same envelope');
        received.set(request.json.id, body);
      }
      for (const delivery of deliveries) {
        assert.equal(delivery.status, 'succeeded');
        assert.ok(received.has(delivery.event_id ?? ''), `event ${delivery.event_id} received`);
      }

      // Every notification was sent at least once; a repeat has the same Message-ID.
      const notices = await db.selectFrom('notifications').select(['id', 'status']).execute();
      // Three per sale, one (trial.buyer) per trial issued, and the seller's for the yearly sale.
      assert.equal(notices.length, 3 * paid.length + trialRows.length + 1);
      const messageIds = new Set(
        sink.messages.map((m) => /^Message-ID: <([^@>]+)@/im.exec(m.raw)?.[1]).filter(Boolean),
      );
      for (const notice of notices) {
        assert.equal(notice.status, 'sent');
        assert.ok(messageIds.has(notice.id), `notification ${notice.id} received`);
      }
    });
  } finally {
    await receiver.close();
    await sink.close();
  }
});
