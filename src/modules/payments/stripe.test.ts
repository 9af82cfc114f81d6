import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { type FakeStripe, startFakeStripe } from '../../testing/fake-stripe.js';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import {
  confirmPurchase,
  purchaseAsSeen,
  type StartedPurchase,
  startPurchase,
} from '../../testing/purchases.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { verifyMerchantSignature } from '../webhooks/merchant-signature.js';

/** Purchases through the official Stripe SDK, pointed at a local fake of the partner. */
const WEBHOOK_SECRET = 'whsec_test_secret_for_the_fake_partner';
let server: TestServer;
let fake: FakeStripe;
const signer = new Stripe('sk_test_signer');

before(async () => {
  fake = await startFakeStripe();
  server = await startTestServer(
    { STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: fake.url },
    { ownDatabase: true },
  );
});
after(async () => {
  await server.stop();
  await fake.close();
});

async function purchase(
  seller: SellerWithApp,
  price = 19.99,
  currency = 'USD',
  extra: Record<string, unknown> = {},
) {
  const product = (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Pro', price, currency, ...extra },
      { token: seller.token },
    )
  ).expect(201).body;
  return startPurchase(server, product.id);
}

/** A payment-intent event for `paymentIntentId`, signed as the partner signs it. */
function webhook(type: string, paymentIntentId: string, options: EventOptions = {}) {
  return partnerEvent(type, { id: paymentIntentId, object: 'payment_intent' }, options);
}

interface EventOptions {
  id?: string;
  timestamp?: number;
  secret?: string;
}

/** Any partner event with the given object, signed as the partner signs it (or not, if asked). */
function partnerEvent(type: string, object: Record<string, unknown>, options: EventOptions = {}) {
  const payload = JSON.stringify({
    id: options.id ?? `evt_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type,
    data: { object },
  });
  const header = signer.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? WEBHOOK_SECRET,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  });
  return server.api.post('/stripe/webhook', undefined, {
    raw: payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
  });
}

async function paidPurchase(seller: SellerWithApp) {
  const intent = await purchase(seller);
  fake.succeed(intent.paymentIntentId);
  const paid = (await confirmPurchase(server, intent)).expect(200).body;
  return { ...intent, licenseKey: paid.licenseKey as string };
}

const verify = async (key: string) => (await server.api.post('/licenses/verify', { key })).expect(200).body;

const licenses = async (seller: SellerWithApp) =>
  (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).expect(200).body.total;

describe('with the Stripe SDK', () => {
  test('a paid card purchase carries the product’s license policy: two devices, then device_limit_reached', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller, 29, 'USD', {
      licensePolicy: { model: 'node_locked', maxDevices: 2, validityDays: 90 },
    });
    fake.succeed(intent.paymentIntentId);
    const key = (await confirmPurchase(server, intent)).expect(200).body.licenseKey as string;
    const license = (
      await server.api.get(`/apps/${seller.appId}/licenses?key=${key}`, { token: seller.token })
    ).expect(200).body.licenses[0];
    assert.equal(license.maxDevices, 2);
    assert.ok(license.expiresAt, 'a 90-day license has an expiry');
    const check = async (hwuid: string) =>
      (await server.api.post('/licenses/verify', { key, hwuid })).expect(200).body;
    assert.equal((await check('one')).valid, true);
    assert.equal((await check('two')).valid, true);
    assert.equal((await check('three')).code, 'device_limit_reached');
  });

  test('creates the payment intent in minor units with an idempotency key, and confirms only what the partner says', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller);
    assert.deepEqual([intent.paymentProvider, intent.testMode], ['stripe', true]);
    const remote = fake.intents.get(intent.paymentIntentId);
    assert.deepEqual(
      [remote?.amount, remote?.currency, remote?.metadata.orderId],
      [1999, 'usd', intent.orderId],
    );
    assert.equal(fake.idempotencyKeys.get(intent.orderId), intent.paymentIntentId);

    const early = (await confirmPurchase(server, intent)).expect(200).body;
    assert.equal(early.transactionStatus, 'pending', 'the buyer’s word is not enough');
    assertError(await confirmPurchase(server, intent, '4242424242424242'), 400, 'validation_failed');

    fake.succeed(intent.paymentIntentId);
    const paid = (await confirmPurchase(server, intent)).expect(200).body;
    assert.equal(paid.transactionStatus, 'paid');
    assert.ok(paid.licenseKey);
    assert.equal(await licenses(seller), 1);
  });

  test('JPY reaches the partner without decimals', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller, 1500, 'JPY');
    assert.deepEqual(
      [fake.intents.get(intent.paymentIntentId)?.amount, fake.intents.get(intent.paymentIntentId)?.currency],
      [1500, 'jpy'],
    );
  });

  test('the partner webhook fulfils; racing the confirmation, one license is issued', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller);
    fake.succeed(intent.paymentIntentId);
    const results = await Promise.all([
      webhook('payment_intent.succeeded', intent.paymentIntentId),
      confirmPurchase(server, intent),
      webhook('payment_intent.succeeded', intent.paymentIntentId),
    ]);
    for (const res of results) res.expect(200);
    assert.equal(await licenses(seller), 1);
    const order = (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(order.status, 'paid');
  });

  test('a late or out-of-order event cannot move a paid order back', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller);
    fake.succeed(intent.paymentIntentId);
    (await webhook('payment_intent.succeeded', intent.paymentIntentId)).expect(200);
    // A failure event from earlier arrives late; the partner's current state is what counts.
    (await webhook('payment_intent.payment_failed', intent.paymentIntentId)).expect(200);
    assert.equal(
      (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).body.status,
      'paid',
    );
  });

  test('a failed payment rejects the transaction with the partner’s reason', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller);
    fake.fail(intent.paymentIntentId, 'Your card was declined.');
    (await webhook('payment_intent.payment_failed', intent.paymentIntentId)).expect(200);
    const status = (
      await server.api.post(
        '/transaction/status',
        { transaction: intent.transactionId },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.deepEqual(
      [status.transactionStatus, status.transactionStatusReason],
      ['rejected', 'Your card was declined.'],
    );
  });

  test('a payment canceled at the partner cancels the transaction', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller);
    const remote = fake.intents.get(intent.paymentIntentId);
    assert.ok(remote);
    remote.status = 'canceled';
    (await webhook('payment_intent.canceled', intent.paymentIntentId)).expect(200);
    const status = (
      await server.api.post(
        '/transaction/status',
        { transaction: intent.transactionId },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.deepEqual(
      [status.transactionStatus, status.transactionStatusReason],
      ['canceled', 'The payment was canceled'],
    );
    assert.equal(await licenses(seller), 0);
  });

  test('a bad or stale signature is refused and changes nothing; a replayed event changes nothing twice', async () => {
    const seller = await sellerWithApp(server);
    const intent = await purchase(seller);
    fake.succeed(intent.paymentIntentId);
    assertError(
      await webhook('payment_intent.succeeded', intent.paymentIntentId, { secret: 'whsec_wrong' }),
      400,
      'bad_request',
    );
    assertError(
      await webhook('payment_intent.succeeded', intent.paymentIntentId, {
        timestamp: Math.floor(Date.now() / 1000) - 400,
      }),
      400,
      'bad_request',
    );
    assert.equal(
      (await server.api.get(`/orders/${intent.orderId}`, { token: seller.token })).body.status,
      'pending',
    );

    const first = (
      await webhook('payment_intent.succeeded', intent.paymentIntentId, { id: 'evt_replayed_once' })
    ).expect(200).body;
    const again = (
      await webhook('payment_intent.succeeded', intent.paymentIntentId, { id: 'evt_replayed_once' })
    ).expect(200).body;
    assert.deepEqual([first.duplicate, again.duplicate], [false, true]);
    assert.equal(await licenses(seller), 1);
  });
});

describe('refunds and disputes', () => {
  test('a refund cancels the transaction and revokes the license', async () => {
    const seller = await sellerWithApp(server);
    const paid = await paidPurchase(seller);
    (
      await partnerEvent('charge.refunded', {
        id: 'ch_1',
        object: 'charge',
        payment_intent: paid.paymentIntentId,
        refunded: true,
      })
    ).expect(200);
    const status = (
      await server.api.post(
        '/transaction/status',
        { transaction: paid.transactionId },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.deepEqual(
      [status.transactionStatus, status.transactionStatusReason],
      ['canceled', 'The payment was refunded'],
    );
    const result = await verify(paid.licenseKey);
    assert.deepEqual([result.valid, result.code], [false, 'license_revoked']);
  });

  test('a dispute suspends the license while open, gives it back when won, and revokes it when lost', async () => {
    const seller = await sellerWithApp(server);
    const won = await paidPurchase(seller);
    const due = Math.floor(Date.UTC(2031, 0, 15) / 1000);
    const dispute = (status: string) => ({
      id: 'dp_won_case',
      object: 'dispute',
      payment_intent: won.paymentIntentId,
      amount: 1999,
      currency: 'usd',
      reason: 'fraudulent',
      status,
      evidence_details: { due_by: due },
    });
    (await partnerEvent('charge.dispute.created', dispute('needs_response'))).expect(200);
    assert.equal((await verify(won.licenseKey)).code, 'license_suspended');
    const list = (await server.api.get('/disputes', { token: seller.token })).expect(200).body;
    assert.equal(list.total, 1);
    assert.deepEqual(
      [list.disputes[0].status, list.disputes[0].amount, list.disputes[0].currency, list.disputes[0].reason],
      ['needs_response', 19.99, 'USD', 'fraudulent'],
    );
    const detail = (await server.api.get(`/disputes/${list.disputes[0].id}`, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(detail.evidenceDueBy, '2031-01-15T00:00:00.000Z');
    assert.equal(detail.orderId, won.orderId);

    (await partnerEvent('charge.dispute.closed', dispute('won'))).expect(200);
    assert.equal((await verify(won.licenseKey)).valid, true);
    // A late update from before the decision does not reopen it.
    (await partnerEvent('charge.dispute.updated', dispute('under_review'))).expect(200);
    assert.equal(
      (await server.api.get(`/disputes/${detail.id}`, { token: seller.token })).body.status,
      'won',
    );
    assert.equal((await verify(won.licenseKey)).valid, true);

    const lost = await paidPurchase(seller);
    const lostCase = {
      id: 'dp_lost_case',
      object: 'dispute',
      payment_intent: lost.paymentIntentId,
      amount: 1999,
      currency: 'usd',
      reason: 'product_not_received',
    };
    (await partnerEvent('charge.dispute.created', { ...lostCase, status: 'needs_response' })).expect(200);
    (await partnerEvent('charge.dispute.closed', { ...lostCase, status: 'lost' })).expect(200);
    assert.equal((await verify(lost.licenseKey)).code, 'license_revoked');

    const stranger = await sellerWithApp(server);
    assertError(await server.api.get(`/disputes/${detail.id}`, { token: stranger.token }), 404, 'not_found');
    assert.equal((await server.api.get('/disputes', { token: stranger.token })).body.total, 0);
  });
});

describe('a transaction after a chargeback or a refund', () => {
  test('reads canceled while a dispute holds the license, paid when it is won, canceled when it is lost', async () => {
    const seller = await sellerWithApp(server);
    const validate = async (licenseKey: string) =>
      (
        await server.pay.post('/api/checkout/mirror/validate', {
          license: licenseKey,
          email: 'buyer@example.com',
        })
      ).expect(200).body.code ?? 'verified';
    const seen = async (purchase: StartedPurchase) => {
      const { status, reason, inDefaultList } = await purchaseAsSeen(server, seller.token, purchase);
      return [status, reason, inDefaultList];
    };
    const dispute = (purchase: StartedPurchase, status: string) =>
      partnerEvent(`charge.dispute.${status === 'needs_response' ? 'created' : 'closed'}`, {
        id: `dp_${purchase.paymentIntentId}`,
        object: 'dispute',
        payment_intent: purchase.paymentIntentId,
        amount: 1999,
        currency: 'usd',
        reason: 'fraudulent',
        status,
      });

    const won = await paidPurchase(seller);
    (await dispute(won, 'needs_response')).expect(200);
    assert.deepEqual(await seen(won), ['canceled', 'The license is suspended', false]);
    assert.equal(await validate(won.licenseKey), 'license_suspended');
    (await dispute(won, 'won')).expect(200);
    assert.deepEqual(await seen(won), ['paid', '', true]);
    assert.equal(await validate(won.licenseKey), 'verified');

    const lost = await paidPurchase(seller);
    (await dispute(lost, 'needs_response')).expect(200);
    (await dispute(lost, 'lost')).expect(200);
    assert.deepEqual(await seen(lost), ['canceled', 'The payment was charged back (dispute lost)', false]);
    assert.equal(await validate(lost.licenseKey), 'license_revoked');

    const refunded = await paidPurchase(seller);
    (
      await partnerEvent('charge.refunded', {
        id: 'ch_refunded',
        object: 'charge',
        payment_intent: refunded.paymentIntentId,
        refunded: true,
      })
    ).expect(200);
    assert.deepEqual(await seen(refunded), ['canceled', 'The payment was refunded', false]);
    assert.equal(await validate(refunded.licenseKey), 'purchase_not_verified');
  });
});

describe('merchant webhooks from card partner events', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  test('a declined payment, a refund and a dispute reach the product’s merchant webhook, signed', async () => {
    const seller = await sellerWithApp(server);
    const product = (
      await server.api.post(
        '/products',
        {
          appId: seller.appId,
          name: 'Pro',
          price: 19.99,
          currency: 'USD',
          merchantWebhookUrl: `${receiver.url}/m`,
        },
        { token: seller.token },
      )
    ).expect(201).body;
    const start = () => startPurchase(server, product.id, 'b@example.com');
    const confirm = (intent: StartedPurchase) => confirmPurchase(server, intent);
    const declined = await start();
    fake.fail(declined.paymentIntentId, 'Your card was declined.');
    (await confirm(declined)).expect(200);
    const paid = await start();
    fake.succeed(paid.paymentIntentId);
    (await confirm(paid)).expect(200);
    (
      await partnerEvent('charge.dispute.created', {
        id: 'dp_merchant',
        object: 'dispute',
        payment_intent: paid.paymentIntentId,
        amount: 1999,
        currency: 'usd',
        reason: 'fraudulent',
        status: 'needs_response',
      })
    ).expect(200);
    (
      await partnerEvent('charge.refunded', {
        id: 'ch_merchant',
        object: 'charge',
        payment_intent: paid.paymentIntentId,
        refunded: true,
      })
    ).expect(200);
    await server.service.modules.deliveryWorker.runOnce();
    const arrived = receiver.requests.filter((r) => r.json.data.productId === product.id);
    assert.deepEqual(arrived.map((r) => r.json.type).sort(), [
      'dispute.created',
      'payment.failed',
      'payment.refunded',
      'payment.succeeded',
    ]);
    for (const request of arrived)
      assert.ok(
        verifyMerchantSignature(
          product.callbackSecret,
          request.headers['x-svc-pay-signature'] as string,
          request.body,
          new Date(),
        ),
      );
    const failed = arrived.find((r) => r.json.type === 'payment.failed');
    assert.equal(failed?.json.data.transactionId, declined.transactionId);
    assert.equal(failed?.json.data.reason, 'Your card was declined.');
    const dispute = arrived.find((r) => r.json.type === 'dispute.created');
    assert.equal(dispute?.json.data.status, 'needs_response');
    assert.equal(dispute?.json.data.transactionId, paid.transactionId);
  });
});
