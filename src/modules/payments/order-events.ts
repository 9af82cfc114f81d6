import type { Executor } from '../../platform/db/database.js';
import type { DisputeRow, LicenseRow, OrderRow } from '../../platform/db/schema.js';
import { iso, isoOrNull } from '../../platform/http/schemas.js';
import { fromDecimalString } from '../../platform/money.js';
import { type MerchantEventType, recordEvent, recordForMerchant } from '../events/index.js';
import { CLOSED_DISPUTES } from './store.js';

/*
 * The events of an order and of its disputes, each in the transaction of its change: the
 * seller's own (order.paid, order.refunded, trial.converted, dispute.*), whose data is the
 * documented allow-list, and the product's merchant events, whose data is what a merchant
 * webhook has always carried.
 */

/** The order as the seller's events carry it: ids, money and times; no secret, no partner id. */
function orderFields(order: OrderRow, now: Date) {
  return {
    id: order.id,
    transactionId: order.transaction_id,
    productId: order.product_id,
    licenseId: order.license_id,
    subscriptionId: order.subscription_id,
    email: order.email,
    amount: fromDecimalString(order.amount),
    currency: order.currency,
    paymentProvider: order.payment_provider,
    renewal: order.renewal_period_end !== null,
    createdAt: iso(order.created_at),
    paidAt: iso(order.paid_at ?? now),
  };
}

/** order.paid for an order that just moved to paid (a purchase or a renewal charge). */
export async function recordOrderPaid(trx: Executor, order: OrderRow, now: Date) {
  await recordEvent(trx, {
    type: 'order.paid',
    userId: order.user_id,
    appId: order.app_id,
    occurredAt: now,
    data: { ...orderFields(order, now), status: 'paid' },
  });
}

/** order.refunded for a paid order that the refund just canceled. */
export async function recordOrderRefunded(trx: Executor, order: OrderRow, now: Date) {
  await recordEvent(trx, {
    type: 'order.refunded',
    userId: order.user_id,
    appId: order.app_id,
    occurredAt: now,
    data: { ...orderFields(order, now), status: 'canceled', refundedAt: iso(now) },
  });
}

/** trial.converted for a trial of the buyer's that the paid order's license just replaced. */
export async function recordTrialConverted(
  trx: Executor,
  trial: LicenseRow,
  order: OrderRow,
  licenseId: string,
  now: Date,
) {
  await recordEvent(trx, {
    type: 'trial.converted',
    userId: order.user_id,
    appId: order.app_id,
    occurredAt: now,
    data: {
      id: trial.id,
      licenseKey: trial.key,
      productId: order.product_id,
      email: trial.email ?? order.email,
      licenseId,
      orderId: order.id,
      transactionId: order.transaction_id,
      convertedAt: iso(now),
    },
  });
}

/**
 * The seller's event for a dispute as it now stands: dispute.created the first time it is seen,
 * then dispute.updated for a change that leaves it open, dispute.closed when it is decided. A
 * partner event that changes nothing (a repeat, funds_withdrawn after created) records none.
 */
export async function recordDisputeChange(
  trx: Executor,
  order: OrderRow,
  saved: DisputeRow,
  before: DisputeRow | null,
  now: Date,
) {
  const changed =
    before === null ||
    before.status !== saved.status ||
    before.reason !== saved.reason ||
    before.evidence_due_by?.getTime() !== saved.evidence_due_by?.getTime();
  if (!changed) return;
  const fields = {
    id: saved.id,
    orderId: order.id,
    transactionId: order.transaction_id,
    productId: order.product_id,
    licenseId: order.license_id,
    amount: fromDecimalString(saved.amount),
    currency: saved.currency,
    reason: saved.reason,
    evidenceDueBy: isoOrNull(saved.evidence_due_by),
    createdAt: iso(saved.created_at),
    updatedAt: iso(saved.updated_at),
  };
  const about = { userId: order.user_id, appId: order.app_id, occurredAt: now };
  if (before === null)
    await recordEvent(trx, { ...about, type: 'dispute.created', data: { ...fields, status: saved.status } });
  else if (!CLOSED_DISPUTES.includes(saved.status))
    await recordEvent(trx, { ...about, type: 'dispute.updated', data: { ...fields, status: saved.status } });
  // A dispute first seen already decided is created and closed at once.
  if (saved.status === 'won' || saved.status === 'lost')
    await recordEvent(trx, { ...about, type: 'dispute.closed', data: { ...fields, status: saved.status } });
}

/**
 * A checkout merchant event for the order's product, in the caller's transaction. Data carries
 * what a seller's backend needs to fulfil: the order, the buyer, the strict-mode token.
 */
export async function recordMerchantEvent(
  trx: Executor,
  type: MerchantEventType,
  order: OrderRow,
  now: Date,
  extra: Record<string, unknown>,
) {
  await recordForMerchant(trx, {
    type,
    userId: order.user_id,
    appId: order.app_id,
    occurredAt: now,
    data: {
      orderId: order.id,
      transactionId: order.transaction_id,
      productId: order.product_id,
      licenseId: order.license_id,
      subscriptionId: order.subscription_id,
      email: order.email,
      amount: fromDecimalString(order.amount),
      currency: order.currency,
      paymentProvider: order.payment_provider,
      token: order.mirror_token,
      ...extra,
    },
  });
}
