import Type from 'typebox';
import { Nullable, PageQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';

export const SUBSCRIPTION_STATUSES = ['active', 'canceled'] as const;

export const Subscription = Type.Object({
  id: Uuid,
  productId: Uuid,
  email: Type.String(),
  status: Type.Enum(SUBSCRIPTION_STATUSES),
  partnerSubscriptionId: Type.String(),
  currentPeriodEnd: Timestamp,
  canceledAt: Nullable(Timestamp),
  createdAt: Timestamp,
});

export const SubscriptionListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Type.Enum(SUBSCRIPTION_STATUSES)),
    productId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const SubscriptionList = Type.Object({
  subscriptions: Type.Array(Subscription),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const SubscriptionParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const SubscriptionCanceled = Type.Object({
  id: Uuid,
  status: Type.Literal('canceled'),
  canceledAt: Timestamp,
});

export const RenewalChargeBody = Type.Object(
  {
    subscription_id: Type.String({ minLength: 1, maxLength: 64 }),
    amount: Type.Number({ exclusiveMinimum: 0, maximum: 9_999_999_999 }),
    currency: Type.String({
      pattern: '^[A-Za-z]{3}$',
      errorMessage: 'must be a three-letter ISO 4217 currency code',
    }),
    callback_secret: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

export const RenewalCharged = Type.Object({
  success: Type.Literal(true),
  duplicate: Type.Boolean(),
  status: Type.Literal('paid'),
  subscriptionId: Uuid,
  orderId: Uuid,
  transactionId: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  currentPeriodEnd: Timestamp,
  licenseExpiresAt: Nullable(Timestamp),
});
