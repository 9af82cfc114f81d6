import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import type { LicenseStatus } from '../../platform/db/schema.js';
import { ROLES, TIERS } from '../../platform/http/principal.js';
import { iso } from '../../platform/http/schemas.js';
import { currencySeries, money, OPEN_DISPUTE_STATUSES } from './figures.js';
import { LICENSE_STATUSES, ORDER_STATUSES, type SeriesInput, SUBSCRIPTION_STATUSES } from './schemas.js';
import { createSellerOverview } from './seller-overview.js';
import { type SeriesRange, seriesRange } from './series-range.js';
import * as store from './store.js';

export type AnalyticsService = ReturnType<typeof createAnalyticsService>;

/** Platform-wide figures for admins; every number is an aggregate computed by the database. */
export function createAnalyticsService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    /** The caller's own figures (GET /v1/overview): any seller, scoped to their rows. */
    overview: createSellerOverview({ db, clock }),

    async stats() {
      const now = clock.now();
      return store.inSnapshot(db, async (trx) => {
        const users = await userCounts(trx);
        const apps = await store.countApps(trx);
        const products = await store.countProducts(trx);
        const licenses = await licenseCounts(trx, now);
        const orders = await store.countOrders(trx);
        const subscriptions = await store.countSubscriptions(trx);
        const disputes = await store.countDisputes(trx, OPEN_DISPUTE_STATUSES);
        const revenue = await store.revenueByCurrency(trx);
        const verifications = await store.countVerifications(trx, isoDay(now, -29), isoDay(now));
        const orderCounts = countsBy(ORDER_STATUSES, orders);
        const refunded = orders.find((row) => row.status === 'canceled')?.paid ?? 0;
        const subscriptionCounts = countsBy(SUBSCRIPTION_STATUSES, subscriptions);
        return {
          users,
          apps: { total: apps },
          products: { total: products.total, active: products.active },
          licenses: {
            total: sum(licenses),
            byStatus: licenses,
            verificationsLast30Days: { valid: verifications.valid, invalid: verifications.invalid },
          },
          orders: { total: sum(orderCounts), byStatus: orderCounts, refunded },
          subscriptions: { total: sum(subscriptionCounts), byStatus: subscriptionCounts },
          disputes: { total: disputes.total, open: disputes.open },
          revenue: revenue.map((row) => ({
            currency: row.currency,
            amount: money(row.amount, row.currency),
            orders: row.orders,
          })),
          generatedAt: iso(now),
        };
      });
    },

    async revenue(query: SeriesInput & { currency?: string }) {
      const now = clock.now();
      const range = seriesRange(query, now);
      const currency = query.currency?.toUpperCase() ?? null;
      const rows = await store.inSnapshot(db, (trx) => store.revenueSeries(trx, range, now, currency));
      return { ...echo(range), series: currencySeries(rows) };
    },

    async licenses(query: SeriesInput) {
      const now = clock.now();
      const range = seriesRange(query, now);
      return store.inSnapshot(db, async (trx) => {
        const totals = await licenseCounts(trx, now);
        const points = await store.licenseSeries(trx, range, now, totals.active);
        return {
          ...echo(range),
          totals,
          verifications: {
            valid: points.reduce((total, point) => total + point.valid_verifications, 0),
            invalid: points.reduce((total, point) => total + point.invalid_verifications, 0),
          },
          points: points.map((point) => ({
            start: iso(point.start),
            issued: point.issued,
            revoked: point.revoked,
            suspended: point.suspended,
            expired: point.expired,
            active: point.active,
            verifications: { valid: point.valid_verifications, invalid: point.invalid_verifications },
          })),
        };
      });
    },

    async users(query: SeriesInput) {
      const now = clock.now();
      const range = seriesRange(query, now);
      return store.inSnapshot(db, async (trx) => {
        const totals = await userCounts(trx);
        const points = await store.userSeries(trx, range, now, totals.total);
        return {
          ...echo(range),
          totals,
          points: points.map((point) => ({
            start: iso(point.start),
            registrations: point.registrations,
            deleted: point.deleted,
            total: point.total,
            byTier: zeros(TIERS, (tier) => point.by_tier[tier] ?? 0),
          })),
        };
      });
    },
  };
}

/** Accounts that are not deleted, by tier and role; deleted ones are only counted. */
async function userCounts(trx: Executor) {
  const rows = await store.countUsers(trx);
  const byTier = zeros(TIERS);
  const byRole = zeros(ROLES);
  let deleted = 0;
  for (const row of rows) {
    byTier[row.tier] += row.live;
    byRole[row.role] += row.live;
    deleted += row.deleted;
  }
  return { total: sum(byTier), byTier, byRole, deleted };
}

/** Licenses by status as verification sees them: an active one or a trial past its expiry is expired. */
async function licenseCounts(trx: Executor, now: Date): Promise<Record<LicenseStatus, number>> {
  const { byStatus, lapsed } = await store.countLicenses(trx, now);
  const counts = countsBy(LICENSE_STATUSES, byStatus);
  return {
    ...counts,
    active: counts.active - lapsed.active,
    trial: counts.trial - lapsed.trial,
    expired: counts.expired + lapsed.active + lapsed.trial,
  };
}

/** A count for every key, so an answer always names each one. */
function zeros<K extends string>(keys: readonly K[], count: (key: K) => number = () => 0): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, count(key)])) as Record<K, number>;
}

function countsBy<K extends string>(keys: readonly K[], rows: { status: K; count: number }[]) {
  const counts = zeros(keys);
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((total, count) => total + count, 0);
}

/** The UTC day (YYYY-MM-DD) `days` days from the instant's. */
function isoDay(at: Date, days = 0): string {
  return new Date(at.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}

function echo(range: SeriesRange) {
  return { from: iso(range.from), to: iso(range.to), interval: range.interval };
}
