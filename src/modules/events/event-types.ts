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

export function isMerchantEvent(type: string): type is MerchantEventType {
  return (MERCHANT_EVENT_TYPES as readonly string[]).includes(type);
}
