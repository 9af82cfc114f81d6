import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError, notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import { iso, isoOrNull, requestInstant } from '../../platform/http/schemas.js';
import { fromDecimalString } from '../../platform/money.js';
import { currencySeries, money, OPEN_DISPUTE_STATUSES } from './figures.js';
import type { OverviewInput } from './schemas.js';
import * as overviewStore from './seller-overview-store.js';
import { type SeriesRange, seriesRange } from './series-range.js';
import * as store from './store.js';

const DAY_MS = 86_400_000;
/** At most this many troubled webhook endpoints, open disputes and latest orders are listed. */
const ENDPOINTS_LISTED = 20;
const DISPUTES_LISTED = 5;
const ORDERS_LISTED = 5;

/**
 * The seller overview (GET /v1/overview): the caller's own figures, for the dashboard's first
 * page. A user token sees the whole account, or one app when asked; an API key sees its own app
 * only, as every other seller read does. All numbers come from one read-only snapshot.
 */
export function createSellerOverview({ db, clock }: { db: Db; clock: Clock }) {
  /** The app the figures are limited to, or null for the whole account. */
  async function scope(principal: Principal, appId: string | undefined): Promise<string | null> {
    const keyApp = apiKeyAppId(principal);
    if (!appId) return keyApp;
    if (!(await overviewStore.ownsApp(db, principal.userId, appId))) throw notFound('App');
    if (keyApp && keyApp !== appId)
      throw new AppError('app_scope_mismatch', 'This API key belongs to another app');
    return appId;
  }

  return async function overview(principal: Principal, query: OverviewInput) {
    const now = clock.now();
    const period = overviewPeriod(query, now);
    const owner = { userId: principal.userId, appId: await scope(principal, query.appId) };
    const days = lastDays(now);
    const months = lastMonths(now);
    // Without from and to the period is the last 30 days: those figures are read once.
    const periodIsLast30Days =
      period.range.from.getTime() === days.from.getTime() && period.range.to.getTime() === days.to.getTime();
    return store.inSnapshot(db, async (trx) => {
      const daily = await store.revenueSeries(trx, days, now, null, owner);
      const monthly = await store.revenueSeries(trx, months, now, null, owner);
      const licenses = await overviewStore.countLicenses(trx, owner, now);
      const activity = await overviewStore.activitySeries(trx, owner, days, now);
      const periodDaily = periodIsLast30Days
        ? daily
        : await store.revenueSeries(trx, period.range, now, null, owner);
      const periodActivity = periodIsLast30Days
        ? activity
        : await overviewStore.activitySeries(trx, owner, period.range, now);
      const { from: before, until } = period.previous;
      const previousRevenue = await overviewStore.revenueTotals(trx, owner, before, until, now);
      const previousActivity = await overviewStore.activityTotals(trx, owner, before, until, now);
      const endpoints = await overviewStore.troubledEndpoints(trx, owner, ENDPOINTS_LISTED);
      const disputes = await overviewStore.openDisputes(trx, owner, OPEN_DISPUTE_STATUSES, DISPUTES_LISTED);
      const orders = await overviewStore.latestOrders(trx, owner, ORDERS_LISTED);
      return {
        appId: owner.appId,
        period: {
          from: iso(period.first),
          to: iso(period.range.to),
          days: period.days,
          revenue: currencySeries(periodDaily),
          activity: activityFigures(periodActivity),
          previous: {
            from: iso(before),
            to: iso(until),
            revenue: previousRevenue.map((row) => ({
              currency: row.currency,
              amount: money(row.amount, row.currency),
              orders: row.orders,
            })),
            activity: previousActivity,
          },
        },
        revenue: {
          last30Days: { ...window(days, now), series: currencySeries(daily) },
          last12Months: { ...window(months, now), series: currencySeries(monthly) },
        },
        licenses: {
          total: licenses.active + licenses.trial + licenses.suspended + licenses.revoked + licenses.expired,
          byStatus: licenses,
        },
        activity: { ...window(days, now), ...activityFigures(activity) },
        webhooks: {
          failing: endpoints.counts.failing,
          disabled: endpoints.counts.disabled,
          endpoints: endpoints.rows.map((row) => ({
            id: row.id,
            kind: row.kind,
            url: row.url,
            appId: row.app_id,
            productId: row.product_id,
            status: row.enabled ? ('failing' as const) : ('disabled' as const),
            disabledReason: row.disabled_reason,
            consecutiveFailures: row.consecutive_failures,
            failingSince: isoOrNull(row.failing_since),
            lastFailureAt: isoOrNull(row.last_failure_at),
          })),
        },
        disputes: {
          open: disputes.open,
          latest: disputes.rows.map((row) => ({
            id: row.id,
            orderId: row.order_id,
            status: row.status,
            amount: fromDecimalString(row.amount),
            currency: row.currency,
            reason: row.reason,
            evidenceDueBy: isoOrNull(row.evidence_due_by),
            createdAt: iso(row.created_at),
          })),
        },
        orders: {
          latest: orders.map((row) => ({
            id: row.id,
            transactionId: row.transaction_id,
            productId: row.product_id,
            productName: row.product_name,
            email: row.email,
            amount: fromDecimalString(row.amount),
            currency: row.currency,
            status: row.status,
            createdAt: iso(row.created_at),
          })),
        },
        generatedAt: iso(now),
      };
    });
  };
}

export type SellerOverview = ReturnType<typeof createSellerOverview>;

/** Daily activity points and their sums. */
function activityFigures(points: overviewStore.ActivityPoint[]) {
  const total = (key: 'valid' | 'invalid' | 'activations') =>
    points.reduce((sum, point) => sum + point[key], 0);
  return {
    totals: { valid: total('valid'), invalid: total('invalid'), activations: total('activations') },
    points: points.map((point) => ({
      start: iso(point.start),
      valid: point.valid,
      invalid: point.invalid,
      activations: point.activations,
    })),
  };
}

/**
 * The period of the overview's `period` figures: the UTC days from the one holding `from` to the
 * one holding `to` (default: now, and the 29 days before), checked as the admin series check
 * theirs (from before to, at most 366 days). The previous period is as many whole days, ending
 * where this one begins, so both sums cover the same stored daily verification counts.
 */
export function overviewPeriod(query: { from?: string; to?: string }, now: Date) {
  const to = query.to ? requestInstant(query.to, 'to') : now;
  const from = query.from ?? iso(new Date(startOfDay(to) - 29 * DAY_MS));
  const range = seriesRange({ from, to: query.to, interval: 'day' }, now);
  const first = startOfDay(range.from);
  const days = Math.round((startOfDay(range.to) - first) / DAY_MS) + 1;
  return {
    range,
    first: new Date(first),
    days,
    previous: { from: new Date(first - days * DAY_MS), until: new Date(first) },
  };
}

function startOfDay(at: Date): number {
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
}

/** Today and the 29 UTC days before: 30 daily buckets, the admin analytics' default range. */
function lastDays(now: Date): SeriesRange {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { from: new Date(today - 29 * DAY_MS), to: now, interval: 'day' };
}

/** This UTC month and the 11 before: 12 monthly buckets. */
function lastMonths(now: Date): SeriesRange {
  return {
    from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1)),
    to: now,
    interval: 'month',
  };
}

/** What a window covers: from its first bucket's start to now. */
function window(range: SeriesRange, now: Date) {
  return { from: iso(range.from), to: iso(now) };
}
