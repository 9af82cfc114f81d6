import type { HttpApp } from '../../platform/http/create-http-app.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { APP_SCOPED } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import type { Renewals } from './renew.js';
import {
  RenewalChargeBody,
  RenewalCharged,
  SubscriptionCanceled,
  SubscriptionList,
  SubscriptionListQuery,
  SubscriptionParams,
} from './schemas.js';
import type { SubscriptionService } from './service.js';

/** Core host: the seller's subscriptions. */
export function registerSubscriptionRoutes(app: HttpApp, subscriptions: SubscriptionService): void {
  app.get('/subscriptions', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List your subscriptions',
      tags: ['subscriptions'],
      querystring: SubscriptionListQuery,
      response: { 200: SubscriptionList },
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return subscriptions.list(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.post('/subscriptions/:id/cancel', {
    config: { auth: 'seller', idempotent: true },
    schema: {
      summary: 'Cancel a subscription',
      description:
        'No further renewals; the product’s merchant webhook and your webhook endpoints subscribed to it receive subscription.canceled.',
      tags: ['subscriptions'],
      params: SubscriptionParams,
      response: { 200: SubscriptionCanceled },
      errors: {
        ...APP_SCOPED,
        subscription_inactive: 'the subscription is already canceled',
      },
    },
    handler: (request) =>
      subscriptions.cancel(principalOf(request), request.params.id, idempotentAnswer(request)),
  });
}

/** Checkout host: renewal charges from the seller's backend, authenticated by the callback secret. */
export function registerRenewalRoutes(app: HttpApp, renewals: Renewals, limits: { rateLimit: number }): void {
  app.post('/api/checkout/mirror/subscription/charge', {
    config: { auth: 'public', rateLimit: perMinute(limits.rateLimit), idempotent: true },
    schema: {
      summary: 'Charge a subscription renewal',
      description:
        'Called by the seller’s backend with the product’s callback secret (server-side only). Charges the saved payment method and extends the license.',
      tags: ['checkout'],
      body: RenewalChargeBody,
      response: { 200: RenewalCharged },
      errors: {
        invalid_callback_secret: 'the subscription and the callback secret do not match',
        currency_mismatch: 'the currency is not the subscription’s',
        payment_declined: 'the payment partner declined the charge',
        subscription_inactive: 'the subscription is canceled',
        renewal_not_due: 'the current period ends more than 7 days from now',
      },
    },
    handler: (request) =>
      renewals.charge(
        {
          subscriptionId: request.body.subscription_id,
          amount: request.body.amount,
          currency: request.body.currency,
          callbackSecret: request.body.callback_secret,
        },
        idempotentAnswer(request),
      ),
  });
}
