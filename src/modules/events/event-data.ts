import Type, { type Static, type TSchema } from 'typebox';
import { Nullable, NullableTimestamp, Timestamp, Uuid } from '../../platform/http/schemas.js';
import type { CoreEventType } from './event-types.js';

/*
 * The `data` of every core event, once: recordEvent takes nothing else (the compiler holds each
 * payload to its shape, an allow-list), and the core API's OpenAPI document describes each
 * delivery from the same schemas (its `webhooks`). Ids, amounts and times only: no secrets, no
 * card details, no partner payment ids.
 */

const Amount = Type.Number({
  description: 'In the currency’s units (19.99), as the order and dispute routes answer it',
});
const Currency = Type.String({ description: 'ISO 4217, upper case' });

const License = Type.Object(
  {
    id: Uuid,
    licenseKey: Type.String(),
    userId: Uuid,
    productId: Nullable(Uuid),
    status: Type.Enum(['active', 'trial', 'suspended', 'revoked', 'expired']),
    expiresAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { description: 'The license as it is after the change' },
);

const Release = Type.Object(
  {
    id: Uuid,
    appId: Uuid,
    version: Type.String({ description: 'Semantic version' }),
    channel: Type.Enum(['stable', 'rc', 'beta', 'alpha', 'dev']),
    status: Type.Enum(['draft', 'published', 'yanked']),
    notes: Type.String(),
    requiredFeatures: Type.Array(Type.String()),
    publishedAt: NullableTimestamp,
    yankedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { description: 'The release as it is after the change' },
);

const SeatAcquired = Type.Object({
  licenseId: Uuid,
  licenseKey: Type.String(),
  productId: Nullable(Uuid),
  hwuid: Type.String(),
  name: Nullable(Type.String({ description: 'As the checkout sent it' })),
  platform: Nullable(Type.String({ description: 'As the checkout sent it' })),
  acquiredAt: Timestamp,
  leaseExpiresAt: Timestamp,
});

const SeatReleased = Type.Object({
  licenseId: Uuid,
  licenseKey: Type.String(),
  productId: Nullable(Uuid),
  hwuid: Type.String(),
  releasedAt: Timestamp,
  reason: Type.Enum(['checkin', 'seller', 'buyer']),
});

const Usage = Type.Object({
  id: Uuid,
  licenseKey: Type.String(),
  uses: Type.Integer(),
  maxUses: Type.Integer(),
  usesRemaining: Type.Integer(),
  usesResetInterval: Nullable(Type.String({ description: 'never, day, month or renewal' })),
});

const UserRegistered = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Nullable(Type.String()),
  createdAt: Timestamp,
});

const AppCreated = Type.Object({
  id: Uuid,
  userId: Uuid,
  name: Type.String(),
  description: Type.String(),
  tokenAlgorithm: Type.Enum(['RS256', 'EdDSA']),
  clientAddresses: Type.Enum(['full', 'truncated', 'none'], {
    description: 'What the app’s license timelines keep of client addresses',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** An order as the sale's events carry it; `id` is the order's (as in GET /orders/:id). */
const orderFields = {
  id: Uuid,
  transactionId: Type.String(),
  productId: Uuid,
  licenseId: Nullable(Uuid),
  subscriptionId: Nullable(Uuid),
  email: Type.String({ description: 'The buyer’s' }),
  amount: Amount,
  currency: Currency,
  paymentProvider: Type.String({ description: 'stripe, sandbox or the crypto partner’s name' }),
  renewal: Type.Boolean({ description: 'A subscription’s renewal charge rather than a purchase' }),
  createdAt: Timestamp,
  paidAt: Timestamp,
};

const OrderPaid = Type.Object({ ...orderFields, status: Type.Literal('paid') });
const OrderRefunded = Type.Object({
  ...orderFields,
  status: Type.Literal('canceled'),
  refundedAt: Timestamp,
});

/** A subscription as its events carry it; `id` is the subscription's (as in GET /subscriptions). */
const subscriptionFields = {
  id: Uuid,
  productId: Uuid,
  licenseId: Nullable(Uuid),
  email: Type.String({ description: 'The buyer’s' }),
  status: Type.Enum(['active', 'canceled']),
  interval: Type.Enum(['month', 'year']),
  currency: Currency,
  currentPeriodEnd: Timestamp,
  canceledAt: NullableTimestamp,
  createdAt: Timestamp,
};

/** The order that paid a subscription's period (or was declined for it). */
const chargeFields = {
  orderId: Uuid,
  transactionId: Type.String(),
  amount: Amount,
};

const SubscriptionCreated = Type.Object({
  ...subscriptionFields,
  orderId: Uuid,
  transactionId: Type.String(),
});
const SubscriptionRenewed = Type.Object({
  ...subscriptionFields,
  ...chargeFields,
  previousPeriodEnd: Timestamp,
});
const SubscriptionCanceled = Type.Object(subscriptionFields);
const SubscriptionPastDue = Type.Object({
  ...subscriptionFields,
  ...chargeFields,
  reason: Type.String({ description: 'Why the charge was declined, as the partner said' }),
});

/** A dispute as its events carry it; `id` is the dispute's (as in GET /disputes/:id). */
const disputeFields = {
  id: Uuid,
  orderId: Uuid,
  transactionId: Type.String(),
  productId: Uuid,
  licenseId: Nullable(Uuid),
  amount: Amount,
  currency: Currency,
  reason: Type.String({ description: 'The partner’s reason code (fraudulent, product_not_received…)' }),
  evidenceDueBy: NullableTimestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
const DisputeOpen = Type.Object({
  ...disputeFields,
  status: Type.String({ description: 'The partner’s status: needs_response, under_review, won, lost…' }),
});
const DisputeClosed = Type.Object({ ...disputeFields, status: Type.Enum(['won', 'lost']) });

const TrialStarted = Type.Object({
  id: Uuid,
  licenseKey: Type.String(),
  productId: Uuid,
  email: Type.String({ description: 'The address the trial was started with' }),
  hwuid: Nullable(Type.String({ description: 'The device of a trial started on one, else null' })),
  trialDays: Type.Integer(),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

const TrialConverted = Type.Object({
  id: Uuid,
  licenseKey: Type.String({ description: 'The trial’s key, which stopped verifying' }),
  productId: Uuid,
  email: Type.String(),
  licenseId: Uuid,
  orderId: Uuid,
  transactionId: Type.String(),
  convertedAt: Timestamp,
});

/** Each core event's `data`, and when it is recorded (the document's words). */
export const EVENT_DATA = {
  'license.created': {
    schema: License,
    when: 'A license was issued (by the seller, a purchase or a trial).',
  },
  'license.updated': { schema: License, when: 'A license was changed, or reinstated.' },
  'license.revoked': { schema: License, when: 'A license was revoked or suspended.' },
  'license.expired': { schema: License, when: 'A license expired, or a trial ended for a purchase.' },
  'license.seat.acquired': { schema: SeatAcquired, when: 'A device took a seat on a floating license.' },
  'license.seat.released': { schema: SeatReleased, when: 'A seat was given back.' },
  'license.usage.threshold': {
    schema: Usage,
    when: 'A consume took the count of the period across 80 % of the quota.',
  },
  'license.usage.exhausted': {
    schema: Usage,
    when: 'A consume took the count of the period up to the quota.',
  },
  'user.registered': { schema: UserRegistered, when: 'An account was created (to admins’ endpoints).' },
  'app.created': { schema: AppCreated, when: 'The seller created an app.' },
  'release.published': {
    schema: Release,
    when: 'A release was published: clients on its channel (and less stable ones) are offered it.',
  },
  'release.yanked': {
    schema: Release,
    when: 'A published release was yanked: it is offered to no client again.',
  },
  'order.paid': {
    schema: OrderPaid,
    when: 'An order was paid: a purchase (card, sandbox or crypto) or a subscription’s renewal charge.',
  },
  'order.refunded': {
    schema: OrderRefunded,
    when: 'A paid order was refunded at the card partner; its license is revoked.',
  },
  'subscription.created': {
    schema: SubscriptionCreated,
    when: 'A paid recurring purchase opened a subscription.',
  },
  'subscription.renewed': {
    schema: SubscriptionRenewed,
    when: 'A renewal charge was paid and moved the period on.',
  },
  'subscription.canceled': {
    schema: SubscriptionCanceled,
    when: 'The subscription was canceled (by the seller or the buyer).',
  },
  'subscription.past_due': {
    schema: SubscriptionPastDue,
    when: 'The first renewal charge of the current period was declined. The subscription stays active and its license runs to currentPeriodEnd; a later paid charge renews it.',
  },
  'dispute.created': {
    schema: DisputeOpen,
    when: 'The card partner opened a dispute (chargeback) on an order.',
  },
  'dispute.updated': {
    schema: DisputeOpen,
    when: 'An open dispute changed (status, reason or evidence deadline) and is still open.',
  },
  'dispute.closed': { schema: DisputeClosed, when: 'A dispute was decided: won or lost.' },
  'trial.started': { schema: TrialStarted, when: 'A buyer started a product’s free trial.' },
  'trial.converted': {
    schema: TrialConverted,
    when: 'The buyer paid for the product; their trial ended for the new license.',
  },
} as const satisfies Record<CoreEventType, { schema: TSchema; when: string }>;

/** The `data` of a core event of type T, as recordEvent takes it. */
export type EventData<T extends CoreEventType> = Static<(typeof EVENT_DATA)[T]['schema']>;
