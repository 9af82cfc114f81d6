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

async function purchase(seller: SellerWithApp, price = 19.99, currency = 'USD') {
  const product = (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Pro', price, currency },
      { token: seller.token },
    )
  ).expect(201).body;
  return (
    await server.api.post('/stripe/create-payment-intent', {
      productId: product.id,
      email: 'buyer@example.com',
    })
  ).expect(201).body;
}

function webhook(
  type: string,
  paymentIntentId: string,
  options: { id?: string; timestamp?: number; secret?: string } = {},
) {
  const payload = JSON.stringify({
    id: options.id ?? `evt_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type,
    data: { object: { id: paymentIntentId, object: 'payment_intent' } },
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

const licenses = async (seller: SellerWithApp) =>
  (await server.api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).expect(200).body.total;

describe('with the Stripe SDK', () => {
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

    const early = (
      await server.api.post('/stripe/confirm-payment', {
        paymentIntentId: intent.paymentIntentId,
        clientSecret: intent.clientSecret,
      })
    ).expect(200).body;
    assert.equal(early.transactionStatus, 'pending', 'the buyer’s word is not enough');
    assertError(
      await server.api.post('/stripe/confirm-payment', {
        paymentIntentId: intent.paymentIntentId,
        clientSecret: intent.clientSecret,
        testCard: '4242424242424242',
      }),
      400,
      'validation_failed',
    );

    fake.succeed(intent.paymentIntentId);
    const paid = (
      await server.api.post('/stripe/confirm-payment', {
        paymentIntentId: intent.paymentIntentId,
        clientSecret: intent.clientSecret,
      })
    ).expect(200).body;
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
      server.api.post('/stripe/confirm-payment', {
        paymentIntentId: intent.paymentIntentId,
        clientSecret: intent.clientSecret,
      }),
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
