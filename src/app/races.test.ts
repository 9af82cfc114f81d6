import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import Stripe from 'stripe';
import { type FakeStripe, startFakeStripe } from '../testing/fake-stripe.js';
import {
  createApiKey,
  issueLicense,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../testing/harness.js';
import {
  buyWithSandbox,
  confirmPurchase,
  createMonthlyProduct,
  startPurchase,
} from '../testing/purchases.js';
import { type Receiver, startReceiver } from '../testing/receiver.js';
import { type TestClock, testClock } from '../testing/test-clock.js';

/**
 * Requests that race on one row, repeated until an interleaving that breaks an invariant would
 * have shown up. PGlite runs one statement at a time, so it needs fewer trials than PostgreSQL.
 * RACE_TRIALS overrides the count.
 */
const TRIALS = Number(process.env.RACE_TRIALS ?? (process.env.DATABASE_URL ? 200 : 30));
const DAY = 86_400_000;

let server: TestServer;
let clock: TestClock;
let receiver: Receiver;
before(async () => {
  clock = testClock(new Date());
  receiver = await startReceiver();
  // The file drives the delivery worker and moves its clock by weeks: it owns its database.
  server = await startTestServer({}, { clock, ownDatabase: true });
});
after(async () => {
  await server.stop();
  await receiver.close();
});

/** Runs `trial` `trials` times and lists every broken invariant, so one failure shows them all. */
async function repeat(trial: (index: number) => Promise<string[]>, trials = TRIALS): Promise<void> {
  const violations: string[] = [];
  for (let i = 0; i < trials; i++)
    violations.push(...(await trial(i)).map((violation) => `trial ${i}: ${violation}`));
  assert.deepEqual(violations.slice(0, 20), [], `${violations.length} violations in ${trials} trials`);
}

describe('device activation', () => {
  test('twenty new devices at once on a two-device license bind exactly two', async () => {
    const seller = await sellerWithApp(server);
    await repeat(
      async () => {
        const license = await issueLicense(server, seller, { maxDevices: 2 });
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            server.api.post('/licenses/verify', { key: license.key, hwuid: `device-${i}` }),
          ),
        );
        const violations: string[] = [];
        for (const res of answers) if (res.status !== 200) violations.push(`verify answered ${res.status}`);
        const valid = answers.filter((res) => res.body?.valid === true).length;
        if (valid !== 2) violations.push(`${valid} devices verified`);
        const refused = answers.filter((res) => res.body?.code === 'device_limit_reached').length;
        if (refused !== 18) violations.push(`${refused} refused with device_limit_reached`);
        const devices = (
          await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/devices`, {
            token: seller.token,
          })
        ).expect(200).body;
        if (devices.total !== 2) violations.push(`${devices.total} devices stored`);
        const stored = (
          await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
        ).expect(200).body;
        if (stored.deviceCount !== 2) violations.push(`deviceCount ${stored.deviceCount}`);
        return violations;
        // Twenty requests a trial: half as many trials give as many chances to interleave.
      },
      Math.ceil(TRIALS / 2),
    );
  });
});

describe('floating seats', () => {
  test('twenty devices checking out at once on a three-seat license hold exactly three', async () => {
    const seller = await sellerWithApp(server);
    await repeat(
      async () => {
        const license = await issueLicense(server, seller, { floating: true, maxSeats: 3 });
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            server.api.post('/licenses/checkout', { key: license.key, hwuid: `device-${i}` }),
          ),
        );
        const violations: string[] = [];
        for (const res of answers) if (res.status !== 200) violations.push(`checkout answered ${res.status}`);
        const valid = answers.filter((res) => res.body?.valid === true).length;
        if (valid !== 3) violations.push(`${valid} seats taken`);
        const refused = answers.filter((res) => res.body?.code === 'no_seat_available').length;
        if (refused !== 17) violations.push(`${refused} refused with no_seat_available`);
        const seats = (
          await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/seats`, { token: seller.token })
        ).expect(200).body;
        if (seats.total !== 3) violations.push(`${seats.total} seats stored`);
        return violations;
      },
      Math.ceil(TRIALS / 2),
    );
  });

  test('a lapsed seat is taken by exactly one of many devices at once', async () => {
    const seller = await sellerWithApp(server);
    await repeat(
      async () => {
        const license = await issueLicense(server, seller, { floating: true, maxSeats: 1, leaseSeconds: 60 });
        (await server.api.post('/licenses/checkout', { key: license.key, hwuid: 'holder' })).expect(200);
        clock.advance(61_000);
        const answers = await Promise.all(
          ['holder', ...Array.from({ length: 9 }, (_, i) => `device-${i}`)].map((hwuid) =>
            server.api.post('/licenses/checkout', { key: license.key, hwuid }),
          ),
        );
        const valid = answers.filter((res) => res.body?.valid === true).length;
        return valid === 1 ? [] : [`${valid} devices hold the one seat`];
      },
      Math.ceil(TRIALS / 4),
    );
  });
});

describe('usage quotas', () => {
  test('fifty consumes at once on a ten-use license take exactly ten uses, whatever their amounts', async () => {
    const seller = await sellerWithApp(server);
    await repeat(
      async (trial) => {
        const license = await issueLicense(server, seller, { maxUses: 10 });
        // Ones on even trials (exactly ten succeed); ones, twos and threes on odd ones.
        const amounts = Array.from({ length: 50 }, (_, i) => (trial % 2 === 0 ? 1 : 1 + (i % 3)));
        const answers = await Promise.all(
          amounts.map((amount) => server.api.post('/licenses/usage', { key: license.key, amount })),
        );
        const violations: string[] = [];
        for (const res of answers) if (res.status !== 200) violations.push(`usage answered ${res.status}`);
        const taken = answers.reduce(
          (sum, res, i) => sum + (res.body?.consumed ? (amounts[i] as number) : 0),
          0,
        );
        const usage = (
          await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/usage`, { token: seller.token })
        ).expect(200).body;
        if (usage.uses !== taken) violations.push(`${usage.uses} stored, ${taken} answered consumed`);
        if (taken > 10) violations.push(`${taken} uses of 10`);
        if (trial % 2 === 0 && taken !== 10) violations.push(`${taken} single uses consumed`);
        for (const res of answers)
          if (res.body && !res.body.consumed && res.body.code !== 'usage_exhausted')
            violations.push(`refused with ${res.body.code}`);
        return violations;
      },
      // Many requests a trial, beside the rest of the suite: a tenth of the trials.
      Math.ceil(TRIALS / 10),
    );
  });
});

describe('a product’s policy applied while its licenses verify', () => {
  test('no verify fails, no license passes the limit it had when it bound, and the new limit holds after', async () => {
    const seller = await sellerWithApp(server);
    await repeat(
      async () => {
        const product = (
          await server.api.post(
            '/products',
            {
              appId: seller.appId,
              name: 'Raced',
              price: 5,
              currency: 'USD',
              licensePolicy: { model: 'node_locked', maxDevices: 4 },
            },
            { token: seller.token },
          )
        ).expect(201).body;
        const license = await issueLicense(server, seller, { productId: product.id });
        (
          await server.api.patch(
            `/products/${product.id}`,
            { licensePolicy: { model: 'node_locked', maxDevices: 2, maxUses: 5 } },
            { token: seller.token },
          )
        ).expect(200);
        const [applied, ...answers] = await Promise.all([
          server.api.post(`/products/${product.id}/license-policy/apply`, {}, { token: seller.token }),
          ...Array.from({ length: 8 }, (_, i) =>
            server.api.post('/licenses/verify', { key: license.key, hwuid: `device-${i}` }),
          ),
        ]);
        const violations: string[] = [];
        if (applied?.status !== 200) violations.push(`apply answered ${applied?.status}`);
        for (const res of answers) if (res.status !== 200) violations.push(`verify answered ${res.status}`);
        const stored = (
          await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
        ).expect(200).body;
        if (stored.maxDevices !== 2 || stored.maxUses !== 5)
          violations.push(`limits ${stored.maxDevices}/${stored.maxUses}`);
        const valid = answers.filter((res) => res.body?.valid === true).length;
        if (stored.deviceCount !== valid)
          violations.push(`${stored.deviceCount} bound, ${valid} answered valid`);
        if (valid > 4) violations.push(`${valid} devices on a license that allowed 4`);
        // After the apply, a new device binds only below the new limit.
        const late = (await server.api.post('/licenses/verify', { key: license.key, hwuid: 'late' })).expect(
          200,
        ).body;
        if (late.valid !== stored.deviceCount < 2)
          violations.push(`a late device answered valid ${late.valid}`);
        return violations;
      },
      // Many requests a trial, beside the rest of the suite: a tenth of the trials.
      Math.ceil(TRIALS / 10),
    );
  });
});

describe('a seller releasing a seat while its device heartbeats', () => {
  test('the seat ends held or free as the answers say, never over the limit, with one release event per release', async () => {
    const seller = await sellerWithApp(server);
    await repeat(
      async () => {
        const license = await issueLicense(server, seller, { floating: true, maxSeats: 1 });
        (await server.api.post('/licenses/checkout', { key: license.key, hwuid: 'holder' })).expect(200);
        const [released, heartbeat, other] = await Promise.all([
          server.api.delete(`/apps/${seller.appId}/licenses/${license.id}/seats/holder`, {
            token: seller.token,
          }),
          server.api.post('/licenses/checkout', { key: license.key, hwuid: 'holder' }),
          server.api.post('/licenses/checkout', { key: license.key, hwuid: 'other' }),
        ]);
        const violations: string[] = [];
        if (released?.status !== 204) violations.push(`release answered ${released?.status}`);
        if (heartbeat?.status !== 200 || other?.status !== 200) violations.push('a checkout failed');
        const seats = (
          await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/seats`, { token: seller.token })
        ).expect(200).body;
        if (seats.total > 1) violations.push(`${seats.total} seats of 1`);
        const holders = seats.seats.map((seat: { hwuid: string }) => seat.hwuid);
        // Both told valid only in one order: the heartbeat, then the release, then the other's
        // checkout, which then holds the one seat.
        if (heartbeat?.body.valid && other?.body.valid && holders.join() !== 'other')
          violations.push(`both devices were told they hold the seat; held: ${holders.join()}`);
        if (other?.body.valid && !holders.includes('other'))
          violations.push('other was told it holds a seat it does not');
        const events = await server.db
          .selectFrom('events')
          .select(['type', 'data'])
          .where('user_id', '=', seller.user.id)
          .where('type', '=', 'license.seat.released')
          .execute();
        const mine = events.filter(
          (event) => (event.data as { licenseId?: string }).licenseId === license.id,
        );
        if (mine.length !== 1) violations.push(`${mine.length} release events`);
        return violations;
      },
      // Many requests a trial, beside the rest of the suite: a tenth of the trials.
      Math.ceil(TRIALS / 10),
    );
  });
});

describe('subscription cancel and renewal charge', () => {
  test('a renewal is never recorded after the cancel, and a refused one changes nothing', async (t) => {
    const seller = await sellerWithApp(server);
    // An API key does not expire while the clock moves a month per trial.
    const { key } = await createApiKey(server, seller.token, seller.appId);
    const product = await createMonthlyProduct(server, seller.appId, key);
    const outcomes = { charged: 0, refused: 0 };
    await repeat(async (i) => {
      const { intent } = await buyWithSandbox(server, product.id, `renewal-${i}@example.com`);
      const before = await server.db
        .selectFrom('orders as o')
        .innerJoin('subscriptions as s', 's.id', 'o.subscription_id')
        .select(['s.id', 's.current_period_end', 's.partner_subscription_id', 's.license_id'])
        .where('o.id', '=', intent.orderId)
        .executeTakeFirstOrThrow();
      // The renewal is due from a week before the period ends.
      clock.advance(25 * DAY);
      // One of the two starts a few milliseconds later, each in turn, so both orders of the two
      // come up on either store whichever path is faster.
      const lag = (i >> 1) % 6;
      const [cancel, charge] = await Promise.all([
        sleep(i % 2 ? lag : 0).then(() =>
          server.api.post(`/subscriptions/${before.id}/cancel`, undefined, { token: key }),
        ),
        sleep(i % 2 ? 0 : lag).then(() =>
          server.pay.post('/api/checkout/mirror/subscription/charge', {
            subscription_id: before.id,
            amount: 9.5,
            currency: 'EUR',
            callback_secret: product.callbackSecret,
          }),
        ),
      ]);
      const violations: string[] = [];
      if (cancel.status !== 200) violations.push(`cancel answered ${cancel.status} ${cancel.text}`);
      const refused = charge.status === 409 && charge.body?.error?.code === 'subscription_inactive';
      if (charge.status !== 200 && !refused)
        violations.push(`charge answered ${charge.status} ${charge.text}`);
      if (charge.status === 200) outcomes.charged++;
      if (refused) outcomes.refused++;

      const after = await server.db
        .selectFrom('subscriptions')
        .selectAll()
        .where('id', '=', before.id)
        .executeTakeFirstOrThrow();
      if (after.status !== 'canceled') violations.push(`subscription ${after.status}`);
      const canceledEvent = await server.db
        .selectFrom('events')
        .select('data')
        .where('type', '=', 'subscription.canceled')
        .where(sql`data->>'subscriptionId'`, '=', before.id)
        .execute();
      if (canceledEvent.length !== 1) violations.push(`${canceledEvent.length} subscription.canceled events`);
      // The cancel saw the period as it finally stands: nothing moved it after the cancel.
      const seenByCancel = canceledEvent[0]?.data.currentPeriodEnd;
      if (seenByCancel !== after.current_period_end.toISOString())
        violations.push(
          `period moved after the cancel (${seenByCancel} → ${after.current_period_end.toISOString()})`,
        );
      const renewals = await server.db
        .selectFrom('orders')
        .select(['status'])
        .where('subscription_id', '=', before.id)
        .where('renewal_period_end', 'is not', null)
        .execute();
      const paid = renewals.filter((order) => order.status === 'paid').length;
      if (paid !== (charge.status === 200 ? 1 : 0))
        violations.push(`${paid} paid renewals for a charge that answered ${charge.status}`);
      const moved = after.current_period_end.getTime() !== before.current_period_end.getTime();
      if (moved !== (paid === 1)) violations.push(`period moved: ${moved}, paid renewals: ${paid}`);
      // Every charge the partner made is recorded: nothing was taken from the card unseen.
      const partnerCharges = await server.db
        .selectFrom('sandbox_payments')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('customer_id', '=', before.partner_subscription_id)
        .where('status', '=', 'succeeded')
        .executeTakeFirstOrThrow();
      if (Number(partnerCharges.n) !== 1 + paid)
        violations.push(`${Number(partnerCharges.n) - 1} partner charges, ${paid} recorded`);
      return violations;
    });
    t.diagnostic(`renewals charged before the cancel ${outcomes.charged}, refused ${outcomes.refused}`);
    // Both orders of events happened at least once, or the race was not exercised.
    if (TRIALS >= 50) assert.ok(outcomes.charged > 0 && outcomes.refused > 0, JSON.stringify(outcomes));
  });
});

describe('webhook redeliver and the delivery worker', () => {
  test('a manual resend racing a scheduled attempt loses no delivery and sends it once per attempt', async () => {
    const seller = await sellerWithApp(server);
    // An API key does not expire while the clock moves hours per trial.
    const { key } = await createApiKey(server, seller.token, seller.appId);
    const backend = { appId: seller.appId, token: key };
    const work = () => server.service.modules.deliveryWorker.runOnce();
    // The first and second sends of each event fail, later ones succeed: the race is between a
    // failing and a succeeding send, whichever of the worker and the resend gets there first.
    receiver.answer((request) => {
      const sends = receiver.requests.filter((r) => r.json.id === request.json.id).length;
      return sends <= 2 ? { status: 500, body: 'not yet' } : { status: 200, body: 'ok' };
    });
    await repeat(async () => {
      // An endpoint per trial, so one trial's failures never count against the next one's.
      const webhook = (
        await server.api.post(
          '/webhooks',
          { url: `${receiver.url}/race`, events: ['license.created'] },
          { token: key },
        )
      ).expect(201).body;
      await issueLicense(server, backend);
      await work();
      const delivery = await server.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('endpoint_id', '=', webhook.id)
        .executeTakeFirst();
      if (!delivery) return ['no delivery for the event'];
      const violations: string[] = [];
      // The first retry is due: the worker and a resend by hand go for it together.
      clock.advance(60_000);
      const [manual] = await Promise.all([
        server.api.post(`/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`, undefined, {
          token: key,
        }),
        work(),
        work(),
      ]);
      if (manual.status !== 200) violations.push(`redeliver answered ${manual.status}`);
      // Whatever is left is retried until it succeeds.
      for (let round = 0; round < 3; round++) {
        clock.advance(60 * 60_000);
        await work();
      }
      const settled = await server.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('id', '=', delivery.id)
        .executeTakeFirstOrThrow();
      if (settled.status !== 'succeeded') violations.push(`delivery ${settled.status}`);
      const attempts = await server.db
        .selectFrom('webhook_attempts')
        .select(['attempt', 'trigger', 'success'])
        .where('delivery_id', '=', delivery.id)
        .execute();
      const sent = receiver.requests.filter((r) => r.json.id === delivery.event_id);
      if (sent.length !== attempts.length) violations.push(`${sent.length} sends, ${attempts.length} logged`);
      if (new Set(attempts.map((a) => a.attempt)).size !== attempts.length)
        violations.push(`attempt numbers repeat: ${attempts.map((a) => a.attempt).join(',')}`);
      if (settled.attempts !== attempts.length)
        violations.push(`delivery counts ${settled.attempts} attempts, ${attempts.length} logged`);
      // A scheduled delivery is sent by the worker until one send succeeds, never after.
      const autoSuccesses = attempts.filter((a) => a.trigger === 'auto' && a.success).length;
      if (autoSuccesses > 1) violations.push(`${autoSuccesses} successful scheduled sends`);
      if (!attempts.some((a) => a.success)) violations.push('never delivered');
      (await server.api.delete(`/webhooks/${webhook.id}`, { token: key })).expect(204);
      return violations;
    });
  });
});

describe('payment confirmation and the partner webhook', () => {
  const WEBHOOK_SECRET = 'whsec_race_secret_for_the_fake_partner';
  const signer = new Stripe('sk_test_signer');
  let stripeServer: TestServer;
  let fake: FakeStripe;
  before(async () => {
    fake = await startFakeStripe();
    stripeServer = await startTestServer(
      { STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: fake.url },
      { ownDatabase: true },
    );
  });
  after(async () => {
    await stripeServer.stop();
    await fake.close();
  });

  function succeeded(paymentIntentId: string) {
    const payload = JSON.stringify({
      id: `evt_${Math.random().toString(36).slice(2)}`,
      object: 'event',
      type: 'payment_intent.succeeded',
      data: { object: { id: paymentIntentId, object: 'payment_intent' } },
    });
    const header = signer.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    return stripeServer.api.post('/stripe/webhook', undefined, {
      raw: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
    });
  }

  test('together they issue one license, pay one order and queue one set of notices', async () => {
    const seller = await sellerWithApp(stripeServer, 'enterprise');
    const product = (
      await stripeServer.api.post(
        '/products',
        {
          appId: seller.appId,
          name: 'Pro',
          price: 19.99,
          currency: 'USD',
          sendLicenseToCustomer: true,
          licenseEmails: ['copies@example.com'],
        },
        { token: seller.token },
      )
    ).expect(201).body;
    await repeat(async (i) => {
      const intent = await startPurchase(stripeServer, product.id, `race-${i}@example.com`);
      fake.succeed(intent.paymentIntentId);
      const answers = await Promise.all([
        succeeded(intent.paymentIntentId),
        confirmPurchase(stripeServer, intent),
        succeeded(intent.paymentIntentId),
        confirmPurchase(stripeServer, intent),
      ]);
      const violations: string[] = [];
      for (const res of answers)
        if (res.status !== 200) violations.push(`answered ${res.status} ${res.text}`);
      const keys = answers.filter((res) => res.body?.licenseKey).length;
      if (keys > 1) violations.push(`${keys} confirmations carry a license key`);
      const order = await stripeServer.db
        .selectFrom('orders')
        .selectAll()
        .where('id', '=', intent.orderId)
        .executeTakeFirstOrThrow();
      if (order.status !== 'paid') violations.push(`order ${order.status}`);
      const licenses = await stripeServer.db
        .selectFrom('licenses')
        .select('id')
        .where('product_id', '=', product.id)
        .where('email', '=', `race-${i}@example.com`)
        .execute();
      if (licenses.length !== 1 || licenses[0]?.id !== order.license_id)
        violations.push(`${licenses.length} licenses issued`);
      const events = await stripeServer.db
        .selectFrom('events')
        .select('type')
        .where(sql`data->>'orderId'`, '=', intent.orderId)
        .execute();
      const paymentEvents = events.filter((e) => e.type === 'payment.succeeded').length;
      if (paymentEvents !== 1) violations.push(`${paymentEvents} payment.succeeded events`);
      const created = await stripeServer.db
        .selectFrom('events')
        .select('id')
        .where('type', '=', 'license.created')
        .where(sql`data->>'id'`, '=', order.license_id)
        .execute();
      if (created.length !== 1) violations.push(`${created.length} license.created events`);
      const notices = await stripeServer.db
        .selectFrom('notifications')
        .select('kind')
        .where(sql`data->>'orderId'`, '=', intent.orderId)
        .execute();
      const kinds = notices.map((n) => n.kind).sort();
      if (kinds.join() !== 'purchase.buyer,purchase.copy,purchase.seller')
        violations.push(`notices ${kinds.join()}`);
      return violations;
    });
  });
});

describe('a product changed while its order is open', () => {
  test('the seller switching a yearly product to monthly as the payment completes never changes what the buyer gets', async () => {
    const seller = await sellerWithApp(server);
    await repeat(
      async (round) => {
        const product = await createMonthlyProduct(server, seller.appId, seller.token, {
          name: `Yearly ${round}`,
          price: 120,
          interval: 'year',
          partnerPriceIdRecurring: 'price_yearly',
        });
        const intent = await startPurchase(server, product.id, `yearly-${round}@example.com`);
        // The change goes out first in one round and between the confirmations in the next.
        const change = () =>
          server.api.patch(
            `/products/${product.id}`,
            { interval: 'month', price: 10 },
            { token: seller.token },
          );
        const confirm = () => confirmPurchase(server, intent, '4242424242424242');
        const answers = await Promise.all(
          round % 2 ? [confirm(), change(), confirm()] : [change(), confirm(), confirm()],
        );
        const changed = answers[round % 2] as (typeof answers)[number];
        const violations: string[] = [];
        for (const paid of answers.filter((answer) => answer !== changed))
          if (paid.status !== 200 || paid.body.transactionStatus !== 'paid')
            violations.push(`confirm answered ${paid.status} ${paid.body?.transactionStatus}`);
        if (changed.status !== 200) violations.push(`the change answered ${changed.status}`);
        const order = (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).expect(
          200,
        ).body;
        if (order.amount !== 120) violations.push(`order amount ${order.amount}`);
        const license = (
          await server.api.get(`/apps/${seller.appId}/licenses/${order.licenseId}`, { token: seller.token })
        ).expect(200).body;
        const year = new Date(clock.now());
        year.setUTCFullYear(year.getUTCFullYear() + 1);
        if (license.expiresAt !== year.toISOString()) violations.push(`license expires ${license.expiresAt}`);
        const subscriptions = (
          await server.api.get(`/subscriptions?productId=${product.id}`, { token: seller.token })
        ).expect(200).body.subscriptions as { currentPeriodEnd: string }[];
        if (subscriptions.length !== 1 || subscriptions[0]?.currentPeriodEnd !== year.toISOString())
          violations.push(`subscriptions ${JSON.stringify(subscriptions)}`);
        return violations;
      },
      Math.ceil(TRIALS / 4),
    );
  });
});

describe('trials', () => {
  /** Twenty trial starts at once on a fresh product, each with `bodyOf(i)`; one license must come of them. */
  async function startTogether(bodyOf: (i: number) => { email: string; hwuid?: string }) {
    const seller = await sellerWithApp(server);
    await repeat(
      async (round) => {
        const product = (
          await server.api.post(
            '/products',
            { appId: seller.appId, name: `Trial ${round}`, price: 9, currency: 'USD', trialDays: 7 },
            { token: seller.token },
          )
        ).expect(201).body;
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            server.pay.post('/api/checkout/trials', { productId: product.id, ...bodyOf(i) }),
          ),
        );
        const violations: string[] = [];
        const started = answers.filter((res) => res.status === 201).length;
        if (started !== 1) violations.push(`${started} trials started`);
        const refused = answers.filter(
          (res) => res.status === 409 && res.body?.error?.code === 'trial_already_used',
        ).length;
        if (refused !== 19) violations.push(`${refused} refused with trial_already_used`);
        const { n } = await server.db
          .selectFrom('licenses')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('product_id', '=', product.id)
          .executeTakeFirstOrThrow();
        if (Number(n) !== 1) violations.push(`${n} licenses stored`);
        return violations;
      },
      Math.ceil(TRIALS / 4),
    );
  }

  test('twenty trial starts by e-mail at once for one address, in any case or +tag, make exactly one license', async () => {
    await startTogether((i) => ({ email: i % 2 ? `Same-Buyer+${i}@example.com` : 'same-buyer@example.com' }));
  });

  test('twenty trial starts at once with one device and different e-mails make exactly one license', async () => {
    await startTogether((i) => ({ email: `buyer-${i}@example.com`, hwuid: 'one-device' }));
  });
});
