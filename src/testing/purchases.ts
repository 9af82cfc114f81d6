import assert from 'node:assert/strict';
import Stripe from 'stripe';
import type { FakeStripe } from './fake-stripe.js';
import type { HttpClient, HttpResponse, RequestOptions } from './http-client.js';

/** The card number the sandbox partner pays with (see the sandbox partner for the declining ones). */
export const GOOD_CARD = '4242424242424242';

export interface StartedPurchase {
  paymentIntentId: string;
  clientSecret: string;
  orderId: string;
  transactionId: string;
  // biome-ignore lint/suspicious/noExplicitAny: the rest of the intent is asserted field by field
  [field: string]: any;
}

/** The core API's checkout (`POST /v1/stripe/create-payment-intent`); the 201 intent. */
export async function startPurchase(
  server: { api: HttpClient },
  productId: string,
  email = 'buyer@example.com',
): Promise<StartedPurchase> {
  return (await server.api.post('/stripe/create-payment-intent', { productId, email })).expect(201).body;
}

/** `POST /v1/stripe/confirm-payment` for a started intent; testCard only means something to the sandbox. */
export function confirmPurchase(
  server: { api: HttpClient },
  intent: { paymentIntentId: string; clientSecret: string },
  testCard?: string,
  options?: RequestOptions,
): Promise<HttpResponse> {
  return server.api.post(
    '/stripe/confirm-payment',
    {
      paymentIntentId: intent.paymentIntentId,
      clientSecret: intent.clientSecret,
      ...(testCard ? { testCard } : {}),
    },
    options,
  );
}

/** A purchase paid with the sandbox partner's good card: the intent and the 200 confirmation body. */
export async function buyWithSandbox(
  server: { api: HttpClient },
  productId: string,
  email = 'buyer@example.com',
  card = GOOD_CARD,
) {
  const intent = await startPurchase(server, productId, email);
  // biome-ignore lint/suspicious/noExplicitAny: the confirmation is asserted field by field
  const paid: any = (await confirmPurchase(server, intent, card)).expect(200).body;
  return { intent, paid };
}

/**
 * One purchase as the seller's routes show it. The status lookup, the batch, the order detail and
 * the order list must agree (the test fails when they do not); answers their common status and
 * reason, the transaction's timestamp, and whether the default order list (paid and pending) has it.
 */
export async function purchaseAsSeen(
  server: { api: HttpClient },
  token: string,
  purchase: { orderId: string; transactionId: string },
) {
  const transaction = purchase.transactionId;
  const lookup = (await server.api.post('/transaction/status', { transaction }, { token })).expect(200).body;
  const batch = (
    await server.api.post('/transactions', { transactionsId: [transaction], limits: 'all' }, { token })
  ).expect(200).body;
  const order = (await server.api.get(`/orders/${purchase.orderId}`, { token })).expect(200).body;
  const listed = async (query: string) =>
    (await server.api.get(`/orders?limit=100${query}`, { token }))
      .expect(200)
      .body.orders.find((o: { id: string }) => o.id === purchase.orderId);
  const inItsList = await listed(`&status=${order.status}`);
  const status = lookup.transactionStatus;
  const reason = lookup.transactionStatusReason;
  assert.deepEqual(
    {
      lookup: [lookup.transaction.transactionStatus, lookup.transaction.statusReason],
      batch: [batch.transactions[0]?.transactionStatus, batch.transactions[0]?.statusReason],
      order: order.status,
      list: inItsList?.status,
      timestamps: [batch.transactions[0]?.timestamp, order.updatedAt],
    },
    {
      lookup: [status, reason],
      batch: [status, reason],
      order: status,
      list: status,
      timestamps: [lookup.transaction.timestamp, lookup.transaction.timestamp],
    },
  );
  return {
    status,
    reason,
    timestamp: lookup.transaction.timestamp as string,
    inDefaultList: (await listed('')) !== undefined,
  };
}

/** A monthly EUR 9.50 product of the seller's app, made through the API with `token`. */
export async function createMonthlyProduct(
  server: { api: HttpClient },
  appId: string,
  token: string,
  extra: Record<string, unknown> = {},
) {
  const body = {
    appId,
    name: 'Monthly',
    price: 9.5,
    currency: 'EUR',
    billingType: 'recurring',
    interval: 'month',
    partnerPriceIdRecurring: 'price_monthly',
    ...extra,
  };
  return (await server.api.post('/products', body, { token })).expect(201).body;
}

const stripeSigner = new Stripe('sk_test_signer');

/** A card-partner event, signed as Stripe signs it with `secret`, posted to `POST /v1/stripe/webhook`. */
export function sendStripeEvent(
  server: { api: HttpClient },
  secret: string,
  type: string,
  object: Record<string, unknown>,
): Promise<HttpResponse> {
  const payload = JSON.stringify({
    id: `evt_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type,
    data: { object },
  });
  const header = stripeSigner.webhooks.generateTestHeaderString({ payload, secret });
  return server.api.post('/stripe/webhook', undefined, {
    raw: payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
  });
}

/** A purchase the fake card partner pays, confirmed: the started intent. */
export async function paidPurchase(
  server: { api: HttpClient },
  fake: Pick<FakeStripe, 'succeed'>,
  productId: string,
): Promise<StartedPurchase> {
  const intent = await startPurchase(server, productId);
  fake.succeed(intent.paymentIntentId);
  (await confirmPurchase(server, intent)).expect(200);
  return intent;
}
