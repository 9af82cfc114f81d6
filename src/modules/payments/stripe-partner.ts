import Stripe from 'stripe';
import type { IntentStatus, PartnerIntent, PaymentPartner } from './partner.js';

export type StripePartner = PaymentPartner & { client: Stripe };

/**
 * Stripe, through its official SDK. `apiUrl` points it elsewhere (a local fake in tests).
 * Imported only where Stripe is configured (service.ts): the SDK is the largest module the
 * service loads, and a node on the built-in sandbox has no use for it.
 */
export function createStripePartner(options: { secretKey: string; apiUrl: string | null }): StripePartner {
  const url = options.apiUrl ? new URL(options.apiUrl) : null;
  const client = new Stripe(options.secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    ...(url
      ? {
          host: url.hostname,
          port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
          protocol: url.protocol.replace(':', '') as 'http' | 'https',
        }
      : {}),
  });
  return {
    name: 'stripe',
    testMode: options.secretKey.startsWith('sk_test_'),
    client,
    async createIntent({ amountMinor, currency, idempotencyKey, email, keepCard }) {
      // A card kept for renewals lives on a customer; the key makes a retry find the same one.
      const customer = keepCard
        ? await client.customers.create({ email }, { idempotencyKey: `${idempotencyKey}:customer` })
        : null;
      const intent = await client.paymentIntents.create(
        {
          amount: amountMinor,
          currency: currency.toLowerCase(),
          receipt_email: email,
          automatic_payment_methods: { enabled: true },
          metadata: { orderId: idempotencyKey },
          ...(customer ? { customer: customer.id, setup_future_usage: 'off_session' as const } : {}),
        },
        { idempotencyKey },
      );
      return toIntent(intent);
    },
    async chargeSavedCard({ card, amountMinor, currency, idempotencyKey }) {
      try {
        const intent = await client.paymentIntents.create(
          {
            amount: amountMinor,
            currency: currency.toLowerCase(),
            customer: card.customerId,
            payment_method: card.paymentMethodId,
            off_session: true,
            confirm: true,
            metadata: { orderId: idempotencyKey },
          },
          { idempotencyKey },
        );
        return toIntent(intent);
      } catch (error) {
        // A declined off-session charge is an answer, not a failure: Stripe sends the intent along.
        const declined = error as { type?: string; raw?: { payment_intent?: Stripe.PaymentIntent } };
        if (declined.type === 'StripeCardError' && declined.raw?.payment_intent)
          return toIntent(declined.raw.payment_intent);
        throw error;
      }
    },
    async releaseSavedCard(card) {
      await client.paymentMethods.detach(card.paymentMethodId);
    },
    async retrieveIntent(id) {
      try {
        return toIntent(await client.paymentIntents.retrieve(id));
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) return null;
        throw error;
      }
    },
  };
}

function toIntent(intent: Stripe.PaymentIntent): PartnerIntent {
  // Every other Stripe state (requires_action, requires_confirmation, …) is still in progress.
  const settled: readonly string[] = ['succeeded', 'canceled', 'requires_payment_method'];
  const status = (settled.includes(intent.status) ? intent.status : 'processing') as IntentStatus;
  return {
    id: intent.id,
    clientSecret: intent.client_secret ?? '',
    status,
    amountMinor: intent.amount,
    currency: intent.currency.toUpperCase(),
    failureMessage: intent.last_payment_error?.message ?? null,
    savedCard:
      intent.status === 'succeeded' &&
      intent.setup_future_usage === 'off_session' &&
      typeof intent.customer === 'string' &&
      typeof intent.payment_method === 'string'
        ? { customerId: intent.customer, paymentMethodId: intent.payment_method }
        : null,
  };
}
