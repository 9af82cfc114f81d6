import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { type FakeStripe, startFakeStripe } from '../../testing/fake-stripe.js';
import {
  createApp,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import {
  confirmPurchase,
  createMonthlyProduct,
  type StartedPurchase,
  sendStripeEvent,
  startPurchase,
} from '../../testing/purchases.js';
import { type ReceivedRequest, type Receiver, startReceiver } from '../../testing/receiver.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { COMMERCE_EVENT_TYPES } from '../events/index.js';
import { verifyMerchantSignature } from './merchant-signature.js';

/**
 * Commerce events on the seller's own endpoints: sales, refunds, subscriptions, disputes and
 * trials, each through its real path (the card partner faked at its HTTP boundary), delivered
 * once per change in the Standard Webhooks envelope, and each delivery checked against its
 * schema in the core API's OpenAPI document.
 */

// biome-ignore lint/suspicious/noExplicitAny: the document is walked generically
type Json = any;

const PARTNER_SECRET = 'whsec_partner_secret_of_the_fake_stripe';
const DAY = 86_400_000;
const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;

let server: TestServer;
let fake: FakeStripe;
let clock: TestClock;
let receiver: Receiver;
let webhooks: Record<string, Json>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

before(async () => {
  fake = await startFakeStripe();
  receiver = await startReceiver();
  clock = testClock(new Date());
  server = await startTestServer(
    {
      STRIPE_SECRET_KEY: 'sk_test_fake',
      STRIPE_WEBHOOK_SECRET: PARTNER_SECRET,
      STRIPE_API_URL: fake.url,
      WEBHOOK_POLL_MS: '60000',
      // Sessions outlive the days the clock is moved forward.
      USER_TOKEN_TTL: '2592000',
    },
    { clock, ownDatabase: true },
  );
  webhooks = (await server.api.get('/openapi.json')).expect(200).body.webhooks;
});
after(async () => {
  await server.stop();
  await receiver.close();
  await fake.close();
});

interface Endpoint {
  path: string;
  secret: string;
}

/** A webhook endpoint of the seller's, posting to its own path of the receiver. */
async function endpoint(
  seller: SellerWithApp,
  events: readonly string[] = COMMERCE_EVENT_TYPES,
  appId?: string,
): Promise<Endpoint> {
  const path = `/seller-${uniqueSuffix()}`;
  const body = { url: `${receiver.url}${path}`, events, ...(appId ? { appId } : {}) };
  const created = (await server.api.post('/webhooks', body, { token: seller.token })).expect(201).body;
  return { path, secret: created.secret };
}

/**
 * Sends what is due, then what the endpoint has received, each delivery checked: signed for
 * Standard Webhooks with the endpoint's secret, and valid against its event's schema in the
 * OpenAPI document, with no field the schema does not list.
 */
async function received(target: Endpoint): Promise<ReceivedRequest[]> {
  await server.service.modules.deliveryWorker.runOnce();
  const requests = receiver.requests.filter((r) => r.path === target.path);
  for (const request of requests) {
    assertStandardSignature(request, target.secret);
    assertDocumented(request);
  }
  return requests;
}

function assertStandardSignature(request: ReceivedRequest, secret: string) {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  const sentAt = Number(headers['webhook-timestamp']) * 1000;
  const library = new StandardWebhook(secret);
  assert.equal(headers['webhook-id'], request.json.id);
  // The library also refuses a send time 5 minutes off the real clock; a delivery sent after the
  // service's clock was moved by days is held to the library's own signature of it instead.
  if (Math.abs(Date.now() - sentAt) < 60_000) library.verify(request.body, headers);
  else
    assert.equal(
      headers['webhook-signature'],
      library.sign(headers['webhook-id'], new Date(sentAt), request.body),
    );
}

function assertDocumented(request: ReceivedRequest) {
  const { type, data } = request.json;
  const schema = webhooks[type]?.post?.requestBody?.content?.['application/json']?.schema;
  assert.ok(schema, `${type} is described in the document's webhooks`);
  const validate = ajv.compile(schema);
  assert.ok(validate(request.json), `${type}: ${JSON.stringify(validate.errors)} in ${request.body}`);
  assert.deepEqual(
    Object.keys(data).sort(),
    Object.keys(schema.properties.data.properties).sort(),
    `${type} carries exactly the fields its schema lists`,
  );
}

const typesOf = (requests: ReceivedRequest[]) => requests.map((r) => r.json.type).sort();
const ofType = (requests: ReceivedRequest[], type: string) => requests.filter((r) => r.json.type === type);

async function product(seller: SellerWithApp, extra: Record<string, unknown> = {}, appId = seller.appId) {
  return (
    await server.api.post(
      '/products',
      { appId, name: 'Pro', price: 19.99, currency: 'USD', ...extra },
      { token: seller.token },
    )
  ).expect(201).body as { id: string; callbackSecret: string };
}

/** A purchase the fake partner pays, confirmed by the buyer. */
async function buy(productId: string, email = 'buyer@example.com'): Promise<StartedPurchase> {
  const intent = await startPurchase(server, productId, email);
  fake.succeed(intent.paymentIntentId);
  (await confirmPurchase(server, intent)).expect(200);
  return intent;
}

const partnerEvent = (type: string, object: Record<string, unknown>) =>
  sendStripeEvent(server, PARTNER_SECRET, type, object);

describe('a sale, its dispute and a refund', () => {
  test('order.paid, then dispute.created, .updated and .closed, each once per change', async () => {
    const seller = await sellerWithApp(server);
    const target = await endpoint(seller);
    const { id: productId } = await product(seller);
    const sale = await buy(productId);
    const paid = ofType(await received(target), 'order.paid');
    assert.equal(paid.length, 1);
    const order = paid[0]?.json.data ?? {};
    assert.deepEqual(
      [order.id, order.transactionId, order.productId, order.amount, order.currency, order.status],
      [sale.orderId, sale.transactionId, productId, 19.99, 'USD', 'paid'],
    );
    assert.deepEqual([order.renewal, order.subscriptionId, order.paymentProvider], [false, null, 'stripe']);
    const detail = (await server.api.get(`/orders/${sale.orderId}`, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(order.licenseId, detail.licenseId);

    const dispute = (status: string) => ({
      id: `dp_${sale.paymentIntentId}`,
      object: 'dispute',
      payment_intent: sale.paymentIntentId,
      amount: 1999,
      currency: 'usd',
      reason: 'fraudulent',
      status,
      evidence_details: { due_by: Math.floor(Date.UTC(2031, 0, 15) / 1000) },
    });
    (await partnerEvent('charge.dispute.created', dispute('needs_response'))).expect(200);
    // The partner tells of the same state again (another event id): nothing changed.
    (await partnerEvent('charge.dispute.funds_withdrawn', dispute('needs_response'))).expect(200);
    (await partnerEvent('charge.dispute.updated', dispute('under_review'))).expect(200);
    (await partnerEvent('charge.dispute.closed', dispute('lost'))).expect(200);
    // A late update of the decided dispute changes nothing.
    (await partnerEvent('charge.dispute.updated', dispute('under_review'))).expect(200);

    const all = await received(target);
    assert.deepEqual(typesOf(all), ['dispute.closed', 'dispute.created', 'dispute.updated', 'order.paid']);
    const stored = (await server.api.get('/disputes', { token: seller.token })).expect(200).body.disputes[0];
    const byType = (type: string) => ofType(all, type)[0]?.json.data ?? {};
    assert.deepEqual(
      ['dispute.created', 'dispute.updated', 'dispute.closed'].map((type) => [
        byType(type).id,
        byType(type).status,
      ]),
      [
        [stored.id, 'needs_response'],
        [stored.id, 'under_review'],
        [stored.id, 'lost'],
      ],
    );
    const closed = byType('dispute.closed');
    assert.deepEqual(
      [closed.orderId, closed.transactionId, closed.amount, closed.currency, closed.evidenceDueBy],
      [sale.orderId, sale.transactionId, 19.99, 'USD', '2031-01-15T00:00:00.000Z'],
    );
  });

  test('a refund is order.refunded once, however often the partner says it', async () => {
    const seller = await sellerWithApp(server);
    const target = await endpoint(seller, ['order.refunded']);
    const sale = await buy((await product(seller)).id);
    const refund = { id: `ch_${uniqueSuffix()}`, object: 'charge', payment_intent: sale.paymentIntentId };
    (await partnerEvent('charge.refunded', refund)).expect(200);
    (await partnerEvent('charge.refunded', refund)).expect(200);
    const refunds = await received(target);
    assert.deepEqual(typesOf(refunds), ['order.refunded'], 'only the kinds subscribed to, once');
    const data = refunds[0]?.json.data ?? {};
    assert.deepEqual(
      [data.id, data.transactionId, data.status, data.amount],
      [sale.orderId, sale.transactionId, 'canceled', 19.99],
    );
    assert.equal(data.refundedAt, refunds[0]?.json.timestamp);
  });
});

describe('a subscription', () => {
  test('created, past due once for a declined period, renewed, canceled; the merchant webhook hears its own', async () => {
    const seller = await sellerWithApp(server);
    const target = await endpoint(seller);
    const merchantPath = `/merchant-${uniqueSuffix()}`;
    const monthly = await createMonthlyProduct(server, seller.appId, seller.token, {
      merchantWebhookUrl: `${receiver.url}${merchantPath}`,
    });
    const purchase = await buy(monthly.id, 'sub@example.com');
    const subscription = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body
      .subscriptions[0];
    const charge = () =>
      server.pay.post('/api/checkout/mirror/subscription/charge', {
        subscription_id: subscription.id,
        amount: 9.5,
        currency: 'EUR',
        callback_secret: monthly.callbackSecret,
      });

    clock.advance(28 * DAY);
    const card = fake.intents.get(purchase.paymentIntentId)?.payment_method as string;
    fake.declining.add(card);
    assertError(await charge(), 402, 'payment_declined');
    // Tried again and declined again: still the one past_due of this period.
    assertError(await charge(), 402, 'payment_declined');
    fake.declining.delete(card);
    const renewed = (await charge()).expect(200).body;
    (
      await server.api.post(`/subscriptions/${subscription.id}/cancel`, undefined, { token: seller.token })
    ).expect(200);

    const all = await received(target);
    assert.deepEqual(typesOf(all), [
      'order.paid',
      'order.paid',
      'subscription.canceled',
      'subscription.created',
      'subscription.past_due',
      'subscription.renewed',
    ]);
    const data = (type: string) => ofType(all, type)[0]?.json.data ?? {};
    assert.deepEqual(
      [
        data('subscription.created').id,
        data('subscription.created').orderId,
        data('subscription.created').interval,
      ],
      [subscription.id, purchase.orderId, 'month'],
    );
    const renewal = ofType(all, 'order.paid').find((r) => r.json.data.renewal === true)?.json.data;
    assert.deepEqual(
      [renewal?.id, renewal?.subscriptionId, renewal?.amount, renewal?.currency],
      [renewed.orderId, subscription.id, 9.5, 'EUR'],
    );
    assert.deepEqual(
      [
        data('subscription.renewed').orderId,
        data('subscription.renewed').previousPeriodEnd,
        data('subscription.renewed').currentPeriodEnd,
      ],
      [renewed.orderId, subscription.currentPeriodEnd, renewed.currentPeriodEnd],
    );
    assert.deepEqual(
      [data('subscription.past_due').status, data('subscription.past_due').reason],
      ['active', 'Your card was declined.'],
    );
    assert.deepEqual(
      [data('subscription.canceled').status, typeof data('subscription.canceled').canceledAt],
      ['canceled', 'string'],
    );

    // The product's merchant webhook: its own kinds and payloads, as before, signed with its secret.
    const merchant = receiver.requests.filter((r) => r.path === merchantPath);
    assert.deepEqual(typesOf(merchant), [
      'payment.failed',
      'payment.failed',
      'payment.succeeded',
      'payment.succeeded',
      'subscription.canceled',
      'subscription.created',
      'subscription.renewed',
    ]);
    for (const request of merchant)
      assert.ok(
        verifyMerchantSignature(
          monthly.callbackSecret,
          request.headers['x-svc-pay-signature'] as string,
          request.body,
          clock.now(),
        ),
      );
    const merchantCreated = ofType(merchant, 'subscription.created')[0]?.json;
    assert.equal(merchantCreated?.data.subscriptionId, subscription.id, 'the merchant payload, unchanged');
    assert.notEqual(merchantCreated?.id, ofType(all, 'subscription.created')[0]?.json.id);
  });
});

describe('a trial', () => {
  test('trial.started, then trial.converted when the buyer pays', async () => {
    const seller = await sellerWithApp(server);
    const target = await endpoint(seller, ['trial.started', 'trial.converted', 'order.paid']);
    const { id: productId } = await product(seller, { trialDays: 14 });
    const buyer = `trial-${uniqueSuffix()}@example.com`;
    const trial = (
      await server.pay.post('/api/checkout/trials', { productId, email: buyer, hwuid: 'device-1' })
    ).expect(201).body;
    const started = ofType(await received(target), 'trial.started');
    assert.equal(started.length, 1);
    assert.deepEqual(
      [started[0]?.json.data.id, started[0]?.json.data.licenseKey, started[0]?.json.data.hwuid],
      [trial.trialId, trial.licenseKey, 'device-1'],
    );
    assert.deepEqual(
      [started[0]?.json.data.trialDays, started[0]?.json.data.expiresAt],
      [14, trial.expiresAt],
    );

    const sale = await buy(productId, buyer);
    const all = await received(target);
    assert.deepEqual(typesOf(all), ['order.paid', 'trial.converted', 'trial.started']);
    const converted = ofType(all, 'trial.converted')[0]?.json.data ?? {};
    const paid = ofType(all, 'order.paid')[0]?.json.data ?? {};
    assert.deepEqual(
      [converted.id, converted.licenseKey, converted.orderId, converted.licenseId],
      [trial.trialId, trial.licenseKey, sale.orderId, paid.licenseId],
    );
  });
});

describe('who hears a sale', () => {
  test('an endpoint bound to an app hears that app’s sales only; one for all apps hears both', async () => {
    const seller = await sellerWithApp(server);
    const other = await createApp(server, seller.token, 'Other app');
    const bound = await endpoint(seller, ['order.paid'], seller.appId);
    const everything = await endpoint(seller, ['order.paid']);
    const stranger = await sellerWithApp(server);
    const strangers = await endpoint(stranger, ['order.paid']);

    const mine = await buy((await product(seller)).id);
    const elsewhere = await buy((await product(seller, {}, other.id)).id);
    await buy((await product(stranger)).id);

    const ids = async (target: Endpoint) => (await received(target)).map((r) => r.json.data.id).sort();
    assert.deepEqual(await ids(bound), [mine.orderId]);
    assert.deepEqual(await ids(everything), [mine.orderId, elsewhere.orderId].sort());
    assert.equal((await ids(strangers)).length, 1, 'another seller hears only their own sale');
    assert.ok(!(await ids(strangers)).includes(mine.orderId));
  });
});
