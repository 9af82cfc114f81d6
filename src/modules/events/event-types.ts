/**
 * What happens to the seller's money, for the seller's own endpoints: some share a name with a
 * merchant event, but each is recorded apart (the outbox row's audience) with a payload of its own.
 */
export const COMMERCE_EVENT_TYPES = [
  'order.paid',
  'order.refunded',
  'subscription.created',
  'subscription.renewed',
  'subscription.canceled',
  'subscription.past_due',
  'dispute.created',
  'dispute.updated',
  'dispute.closed',
  'trial.started',
  'trial.converted',
] as const;

/** Every kind of core event the outbox records; core webhook subscriptions choose among these. */
export const EVENT_TYPES = [
  'license.created',
  'license.updated',
  'license.revoked',
  'license.expired',
  'license.seat.acquired',
  'license.seat.released',
  'license.usage.threshold',
  'license.usage.exhausted',
  'user.registered',
  'app.created',
  'release.published',
  'release.yanked',
  ...COMMERCE_EVENT_TYPES,
] as const;

/**
 * Checkout merchant events: recorded in the same outbox, but delivered only to the merchant
 * webhook of the product they concern (data.productId), signed with its callback secret.
 */
export const MERCHANT_EVENT_TYPES = [
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'subscription.created',
  'subscription.renewed',
  'subscription.canceled',
  'dispute.created',
  'dispute.updated',
] as const;

export type CoreEventType = (typeof EVENT_TYPES)[number];
export type MerchantEventType = (typeof MERCHANT_EVENT_TYPES)[number];
export type EventType = CoreEventType | MerchantEventType;
