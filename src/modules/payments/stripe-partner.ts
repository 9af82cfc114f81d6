import Stripe from 'stripe';
import type { IntentStatus, PartnerIntent, PaymentPartner } from './partner.js';

/** Stripe, through its official SDK. `apiUrl` points it elsewhere (a local fake in tests). */
export function createStripePartner(options: {
  secretKey: string;
  apiUrl: string | null;
}): PaymentPartner & { client: Stripe } {
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
    async createIntent({ amountMinor, currency, idempotencyKey, email }) {
      const intent = await client.paymentIntents.create(
        {
          amount: amountMinor,
          currency: currency.toLowerCase(),
          receipt_email: email,
          automatic_payment_methods: { enabled: true },
          metadata: { orderId: idempotencyKey },
        },
        { idempotencyKey },
      );
      return toIntent(intent);
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
  };
}
