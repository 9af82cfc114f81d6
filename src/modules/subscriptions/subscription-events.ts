import type { Executor } from '../../platform/db/database.js';
import type { SubscriptionRow } from '../../platform/db/schema.js';
import { iso, isoOrNull } from '../../platform/http/schemas.js';
import { type MerchantEventType, recordEvent, recordForMerchant } from '../events/index.js';
import type { SubscriptionOpener } from '../payments/index.js';
import * as store from './store.js';

/*
 * The events of a subscription, each in the transaction of its change: the seller's own
 * (subscription.*), whose data is the documented allow-list, and the product's merchant events.
 */

/** The subscription as the seller's events carry it; no partner customer or card. */
export function subscriptionData(row: SubscriptionRow) {
  return {
    id: row.id,
    productId: row.product_id,
    licenseId: row.license_id,
    email: row.email,
    status: row.status,
    interval: row.interval,
    currency: row.currency,
    currentPeriodEnd: iso(row.current_period_end),
    canceledAt: isoOrNull(row.canceled_at),
    createdAt: iso(row.created_at),
  };
}

/** Whose a subscription's core event is: its seller's, and its app's (for app-bound endpoints). */
export function ownerOf(row: SubscriptionRow) {
  return { userId: row.user_id, appId: row.app_id };
}

/**
 * Opens the subscription a paid recurring purchase starts, in the fulfilment's transaction, with
 * subscription.created for the seller.
 */
export const openSubscription: SubscriptionOpener = async (trx, input) => {
  const row = await store.insertSubscription(trx, input);
  await recordEvent(trx, {
    ...ownerOf(row),
    occurredAt: input.now,
    type: 'subscription.created',
    data: { ...subscriptionData(row), orderId: input.order.id, transactionId: input.order.transaction_id },
  });
  return row;
};

/** A merchant event about a subscription, in the caller's transaction. */
export async function recordSubscriptionEvent(
  trx: Executor,
  type: MerchantEventType,
  subscription: SubscriptionRow,
  now: Date,
  extra: Record<string, unknown> = {},
) {
  await recordForMerchant(trx, {
    type,
    userId: subscription.user_id,
    appId: subscription.app_id,
    occurredAt: now,
    data: {
      subscriptionId: subscription.id,
      productId: subscription.product_id,
      licenseId: subscription.license_id,
      email: subscription.email,
      status: subscription.status,
      currentPeriodEnd: iso(subscription.current_period_end),
      canceledAt: isoOrNull(subscription.canceled_at),
      ...extra,
    },
  });
}
