import Type, { type TSchema } from 'typebox';
import type { LicenseStatus, OrderStatus, SubscriptionStatus } from '../../platform/db/schema.js';
import { ROLES, TIERS } from '../../platform/http/principal.js';
import { DateTime, NullableTimestamp, Timestamp, Uuid } from '../../platform/http/schemas.js';

export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

// Every key of these enums is always present in answers (0 when none). Listed as records so
// that a status added to the schema types and not here fails to compile.
const keysOf = <K extends string>(all: Record<K, true>) => Object.keys(all) as K[];
export const LICENSE_STATUSES = keysOf<LicenseStatus>({
  active: true,
  trial: true,
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

/**
 * The seller overview: the caller's whole account, or one of its apps (an API key: its own app),
 * and the period of its `period` figures (whole UTC days; the last 30 by default).
 */
export const OverviewQuery = Type.Object(
  {
    appId: Type.Optional(Uuid),
    from: Type.Optional(
      Type.String({
        ...DateTime,
        description: '`period` starts with the UTC day holding this instant (default: 29 days before `to`)',
      }),
    ),
    to: Type.Optional(
      Type.String({
        ...DateTime,
        description:
          '`period` ends with the UTC day holding this instant (default: now); at most 366 days in all',
      }),
    ),
  },
  { additionalProperties: false },
);

export interface OverviewInput {
  appId?: string;
  from?: string;
  to?: string;
}

const CurrencyPoints = Type.Array(
  Type.Object({
    currency: Type.String(),
    amount: Amount,
    orders: Count,
    points: Type.Array(Type.Object({ start: Timestamp, amount: Amount, orders: Count })),
  }),
  { description: 'One series per currency that had revenue in the range, sorted by currency' },
);

const Window = <T extends Record<string, TSchema>>(fields: T) =>
  Type.Object({ from: Timestamp, to: Timestamp, ...fields });

const ActivityTotals = Type.Object({ valid: Count, invalid: Count, activations: Count });

const Period = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    days: Type.Integer({ minimum: 1, description: 'How many UTC days the period holds' }),
    revenue: CurrencyPoints,
    activity: Type.Object({
      totals: ActivityTotals,
      points: Type.Array(Type.Object({ start: Timestamp, valid: Count, invalid: Count, activations: Count })),
    }),
    previous: Type.Object(
      {
        from: Timestamp,
        to: Timestamp,
        revenue: Type.Array(Type.Object({ currency: Type.String(), amount: Amount, orders: Count }), {
          description: 'One entry per currency that had revenue, sorted by currency',
        }),
        activity: ActivityTotals,
      },
      {
        description:
          "As many whole UTC days, immediately before the period: from its first day's start to the period's (not included); totals only",
      },
    ),
  },
  {
    description:
      "The UTC days from the one holding `from` to the one holding `to` (default: today and the 29 days before); `from` is its first day's start, `to` as asked or now; one point per day",
  },
);

export const SellerOverview = Type.Object(
  {
    appId: Type.Union([Uuid, Type.Null()], { description: 'The app the figures are limited to, or null' }),
    period: Period,
    revenue: Type.Object({
      last30Days: Window({ series: CurrencyPoints }),
      last12Months: Window({ series: CurrencyPoints }),
    }),
    licenses: Type.Object({ total: Count, byStatus: countsOf(LICENSE_STATUSES) }),
    activity: Window({
      totals: ActivityTotals,
      points: Type.Array(Type.Object({ start: Timestamp, valid: Count, invalid: Count, activations: Count })),
    }),
    webhooks: Type.Object({
      failing: Count,
      disabled: Count,
      endpoints: Type.Array(
        Type.Object({
          id: Uuid,
          kind: Type.Enum(['core', 'merchant']),
          url: Type.String(),
          appId: Type.Union([Uuid, Type.Null()]),
          productId: Type.Union([Uuid, Type.Null()]),
          status: Type.Enum(['failing', 'disabled']),
          disabledReason: Type.Union([Type.String(), Type.Null()]),
          consecutiveFailures: Count,
          failingSince: NullableTimestamp,
          lastFailureAt: NullableTimestamp,
        }),
        { description: 'Disabled endpoints first, then the longest failing; at most 20' },
      ),
    }),
    disputes: Type.Object({
      open: Count,
      latest: Type.Array(
        Type.Object({
          id: Uuid,
          orderId: Uuid,
          status: Type.String(),
          amount: Amount,
          currency: Type.String(),
          reason: Type.String(),
          evidenceDueBy: NullableTimestamp,
          createdAt: Timestamp,
        }),
        { description: 'The open disputes, newest first; at most 5' },
      ),
    }),
    orders: Type.Object({
      latest: Type.Array(
        Type.Object({
          id: Uuid,
          transactionId: Type.String(),
          productId: Uuid,
          productName: Type.String(),
          email: Type.String(),
          amount: Amount,
          currency: Type.String(),
          status: Type.Enum(ORDER_STATUSES),
          createdAt: Timestamp,
        }),
        { description: 'Orders of any status, newest first; at most 5' },
      ),
    }),
    generatedAt: Timestamp,
  },
  { description: "The seller's figures now; every status key is present" },
);
