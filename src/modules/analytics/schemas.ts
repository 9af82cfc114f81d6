import Type, { type TSchema } from 'typebox';
import type { LicenseStatus, OrderStatus, SubscriptionStatus } from '../../platform/db/schema.js';
import { ROLES, TIERS } from '../../platform/http/principal.js';
import { DateTime, Timestamp } from '../../platform/http/schemas.js';

export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

// Every key of these enums is always present in answers (0 when none). Listed as records so
// that a status added to the schema types and not here fails to compile.
const keysOf = <K extends string>(all: Record<K, true>) => Object.keys(all) as K[];
export const LICENSE_STATUSES = keysOf<LicenseStatus>({
  active: true,
  suspended: true,
  revoked: true,
  expired: true,
});
export const ORDER_STATUSES = keysOf<OrderStatus>({
  pending: true,
  paid: true,
  canceled: true,
  rejected: true,
});
export const SUBSCRIPTION_STATUSES = keysOf<SubscriptionStatus>({ active: true, canceled: true });

const Count = Type.Integer({ minimum: 0 });
/** A money amount in the currency's units (19.99 USD), rounded to its minor unit. */
const Amount = Type.Number();

function countsOf<K extends string>(keys: readonly K[]) {
  return Type.Object(Object.fromEntries(keys.map((key) => [key, Count])) as { [P in K]: typeof Count });
}

export const SeriesQueryFields = {
  from: Type.Optional(DateTime),
  to: Type.Optional(DateTime),
  interval: Type.Enum(INTERVALS, { default: 'day' }),
};
export const SeriesQuery = Type.Object(SeriesQueryFields, { additionalProperties: false });
export const RevenueQuery = Type.Object(
  {
    ...SeriesQueryFields,
    currency: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z]{3}$',
        errorMessage: 'must be a three-letter ISO 4217 currency code',
      }),
    ),
  },
  { additionalProperties: false },
);
export const NoQuery = Type.Object({}, { additionalProperties: false });

export interface SeriesInput {
  from?: string;
  to?: string;
  interval?: Interval;
}

/** Accounts that are not deleted, and how many were deleted (soft delete keeps them). */
const UserCounts = Type.Object({
  total: Count,
  byTier: countsOf(TIERS),
  byRole: countsOf(ROLES),
  deleted: Count,
});

/**
 * License verifications (verify and validate-hardware) that found their license: valid ones and
 * those answered valid: false. Counted per UTC day; each node writes its counts every few seconds.
 */
const verifications = (description: string) => Type.Object({ valid: Count, invalid: Count }, { description });

const CurrencyRevenue = Type.Object({ currency: Type.String(), amount: Amount, orders: Count });

export const Stats = Type.Object(
  {
    users: UserCounts,
    apps: Type.Object({ total: Count }),
    products: Type.Object({ total: Count, active: Count }),
    licenses: Type.Object({
      total: Count,
      byStatus: countsOf(LICENSE_STATUSES),
      verificationsLast30Days: verifications(
        'Verifications that found their license, today and the 29 UTC days before',
      ),
    }),
    orders: Type.Object({ total: Count, byStatus: countsOf(ORDER_STATUSES), refunded: Count }),
    subscriptions: Type.Object({ total: Count, byStatus: countsOf(SUBSCRIPTION_STATUSES) }),
    disputes: Type.Object({ total: Count, open: Count }),
    revenue: Type.Array(CurrencyRevenue),
    generatedAt: Timestamp,
  },
  { description: 'Totals now; every status key is present' },
);

function series<T extends Record<string, TSchema>>(fields: T) {
  return { from: Timestamp, to: Timestamp, interval: Type.Enum(INTERVALS), ...fields };
}

export const RevenueSeries = Type.Object(
  series({
    series: Type.Array(
      Type.Object({
        currency: Type.String(),
        amount: Amount,
        orders: Count,
        points: Type.Array(Type.Object({ start: Timestamp, amount: Amount, orders: Count })),
      }),
    ),
  }),
  { description: 'One series per currency, sorted by currency' },
);

export const LicenseSeries = Type.Object(
  series({
    totals: countsOf(LICENSE_STATUSES),
    verifications: verifications('Verifications that found their license: the sum of the points'),
    points: Type.Array(
      Type.Object({
        start: Timestamp,
        issued: Count,
        revoked: Count,
        suspended: Count,
        expired: Count,
        active: Count,
        verifications: verifications("Verifications that found their license, over the bucket's UTC days"),
      }),
    ),
  }),
  { description: 'Totals now, verifications over the range, and one point per bucket' },
);

export const UserSeries = Type.Object(
  series({
    totals: UserCounts,
    points: Type.Array(
      Type.Object({
        start: Timestamp,
        registrations: Count,
        deleted: Count,
        total: Count,
        byTier: countsOf(TIERS),
      }),
    ),
  }),
  { description: 'Totals now, and one point per bucket' },
);
