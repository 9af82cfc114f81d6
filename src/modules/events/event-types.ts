/** Every kind of event the outbox records; webhook subscriptions choose among these. */
export const EVENT_TYPES = [
  'license.created',
  'license.updated',
  'license.revoked',
  'license.expired',
  'user.registered',
  'app.created',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
