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
import { confirmPurchase, GOOD_CARD, type StartedPurchase, startPurchase } from '../testing/purchases.js';
import { startReceiver } from '../testing/receiver.js';
import { scratchDatabase } from '../testing/scratch-database.js';
import { startSmtpSink } from '../testing/smtp-sink.js';

/**
 * The service as an operator runs it, killed with SIGKILL again and again while it delivers
 * webhooks, sends mail and fulfils purchases, then restarted on the same storage: a PostgreSQL
 * database of its own, or an embedded data folder that outlives the process. CRASH_CYCLES sets
 * how many times it is killed.
 */
const CYCLES = Number(process.env.CRASH_CYCLES ?? 5);
const scratch = await scratchDatabase();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-crash-'));
const storage = scratch.url ? 'PostgreSQL' : 'PGlite';
const PASSWORD = 'crash me gently please';
const adminEmail = `ops-${randomBytes(4).toString('hex')}@example.com`;

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

/** Resolves once `done()` holds; fails naming `what` if it does not within `ms`. */
async function until(what: string, done: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await sleep(25);
  }
}

test(`on ${storage}, kill -9 during deliveries, mail and purchases loses nothing and issues no license twice`, async (t) => {
  // Slow on purpose: each delivery and each mail is still unanswered when the process dies.
  const receiver = await startReceiver();
  receiver.answer({ status: 200, body: 'ok', delayMs: 300 });
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

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      if (cycle > 0) {
        node = await serve(env);
        api = httpClient(`${node.api}/v1`);
      }
      const seen = { deliveries: receiver.requests.length, mails: sink.started };
      let alive = true;
      const buyers = [0, 1, 2].map((lane) => buyer(api, `${cycle}-${lane}`, () => alive));
      // Die once a delivery and a mail of this run are on the wire, with purchases under way.
      await until(
        'a delivery and a mail in flight',
        () => receiver.requests.length > seen.deliveries && sink.started > seen.mails,
      );
      await crash(node.proc);
      alive = false;
      await Promise.all(buyers);
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
    });
    node = await serve(env);
    api = httpClient(`${node.api}/v1`);
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
    await until('every paid order delivered and mailed', () =>
      orders.every(
        (order) =>
          delivered('/core', (data) => data.id === order.licenseId) &&
          delivered('/merchant', (data) => data.orderId === order.id) &&
          mailed(order.transactionId) >= 3,
      ),
    );
    node.proc.child.kill('SIGTERM');
    assert.equal(await node.proc.exited, 0);
    const repeats = (ids: (string | undefined)[]) => ids.length - new Set(ids).size;
    t.diagnostic(
      `${started.length} purchases started, ${acknowledged.size} confirmed before a kill; ` +
        `${repeats(receiver.requests.map((r) => r.json.id))} webhook and ` +
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
      assert.equal(notices.length, 3 * paid.length);
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
