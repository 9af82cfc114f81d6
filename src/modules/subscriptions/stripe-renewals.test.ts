import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FakeStripe, startFakeStripe } from '../../testing/fake-stripe.js';
import { sellerWithApp, startTestServer, type TestServer } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { confirmPurchase, startPurchase } from '../../testing/purchases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/** Renewals charged off-session through the official Stripe SDK, pointed at a local fake. */
let server: TestServer;
let fake: FakeStripe;
let clock: TestClock;
before(async () => {
  fake = await startFakeStripe();
  clock = testClock(new Date());
  server = await startTestServer(
    {
      STRIPE_SECRET_KEY: 'sk_test_fake',
      STRIPE_PUBLISHABLE_KEY: 'pk_test_fake',
      STRIPE_API_URL: fake.url,
      USER_TOKEN_TTL: '2592000',
    },
    { clock, ownDatabase: true },
  );
});
after(async () => {
  await server.stop();
  await fake.close();
});

const DAY = 86_400_000;

/** A monthly product bought by card at the fake partner; the card is kept for renewals. */
async function subscribe() {
  const seller = await sellerWithApp(server);
  const product = (
    await server.api.post(
      '/products',
      {
        appId: seller.appId,
        name: 'Monthly',
        price: 12,
        currency: 'USD',
        billingType: 'recurring',
        interval: 'month',
        partnerPriceIdRecurring: 'price_monthly',
      },
      { token: seller.token },
    )
  ).expect(201).body;
  const intent = await startPurchase(server, product.id, 'sub@example.com');
  fake.succeed(intent.paymentIntentId);
  (await confirmPurchase(server, intent)).expect(200);
  const subscription = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body
    .subscriptions[0];
  const first = fake.intents.get(intent.paymentIntentId);
  return { seller, product, subscription, first };
}

const charge = (s: Awaited<ReturnType<typeof subscribe>>) =>
  server.pay.post('/api/checkout/mirror/subscription/charge', {
    subscription_id: s.subscription.id,
    amount: 12,
    currency: 'USD',
    callback_secret: s.product.callbackSecret,
  });

const offSessionCharges = (customer: string, first: string) =>
  [...fake.intents.values()].filter((i) => i.customer === customer && i.id !== first);

describe('renewals with Stripe', () => {
  test('the first payment keeps the card on a customer, and concurrent renewals charge it off-session once', async () => {
    const s = await subscribe();
    assert.equal(s.first?.setup_future_usage, 'off_session');
    assert.equal(s.subscription.partnerSubscriptionId, s.first?.customer);
    assert.match(s.subscription.partnerSubscriptionId, /^cus_/);
    clock.advance(28 * DAY);
    const answers = (await Promise.all(Array.from({ length: 5 }, () => charge(s)))).map(
      (r) => r.expect(200).body,
    );
    assert.equal(new Set(answers.map((a) => a.transactionId)).size, 1);
    const charges = offSessionCharges(s.subscription.partnerSubscriptionId, s.first?.id as string);
    assert.equal(charges.length, 1, 'one charge at the partner');
    assert.equal(charges[0]?.amount, 1200);
    assert.equal(charges[0]?.payment_method, s.first?.payment_method);
    assert.equal(charges[0]?.status, 'succeeded');
  });

  test('a card the partner declines off-session answers 402 and leaves the transaction rejected', async () => {
    const s = await subscribe();
    fake.declining.add(s.first?.payment_method as string);
    clock.advance(28 * DAY);
    const error = assertError(await charge(s), 402, 'payment_declined');
    assert.match(error.message, /declined/);
    const status = (
      await server.api.post(
        '/transaction/status',
        { transaction: error.details?.[0]?.message },
        { token: s.seller.token },
      )
    ).expect(200).body;
    assert.equal(status.transactionStatus, 'rejected');
  });

  test('cancel detaches the card at the partner, so nothing more can be charged', async () => {
    const s = await subscribe();
    (
      await server.api.post(`/subscriptions/${s.subscription.id}/cancel`, undefined, {
        token: s.seller.token,
      })
    ).expect(200);
    assert.ok(fake.detached.has(s.first?.payment_method as string));
    clock.advance(28 * DAY);
    assertError(await charge(s), 409, 'subscription_inactive');
  });
});

describe('the hosted checkout with Stripe', () => {
  test('embeds Stripe Elements, and the return address shows the license once Stripe says paid', async () => {
    const s = await subscribe();
    const page = await (await fetch(`${server.service.payUrl}/checkout/${s.product.id}`)).text();
    assert.match(page, /<script src="https:\/\/js.stripe.com\/v3\/" defer>/);
    assert.match(page, /id="payment-element" data-publishable-key="pk_test_fake"\s+data-amount-minor="1200"/);
    assert.ok(!page.includes('name="card"'), 'no sandbox card field');
    const started = (
      await server.pay.post('/api/checkout/payment-intent', {
        productId: s.product.id,
        email: 'elements@example.com',
        attempt: 'elements-attempt-0001',
      })
    ).expect(201).body;
    const intentId = started.clientSecret.split('_secret_')[0];
    assert.equal(fake.intents.get(intentId)?.amount, 1200);
    const back = new URL(started.returnUrl);
    const pending = await fetch(`${server.service.payUrl}${back.pathname}${back.search}`);
    assert.match(await pending.text(), /Payment in progress/);
    fake.succeed(intentId);
    const done = await fetch(
      `${server.service.payUrl}${back.pathname}${back.search}&payment_intent=${intentId}`,
    );
    assert.equal(done.status, 200);
    assert.match(await done.text(), /id="license-key" class="license" readonly value="[0-9A-Z-]{35}"/);
  });
});
