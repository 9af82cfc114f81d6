import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED } from '../../platform/http/responses.js';
import {
  LicenseSeries,
  NoQuery,
  OverviewQuery,
  RevenueQuery,
  RevenueSeries,
  SellerOverview,
  SeriesQuery,
  Stats,
  UserSeries,
} from './schemas.js';
import type { AnalyticsService } from './service.js';

const SERIES =
  'UTC buckets of `interval` (day, week from Monday, month) from the bucket holding `from` (default: 30 days, 12 weeks or 12 months before `to`) to the one holding `to` (default: now), at most 366; every bucket is present, zero when empty.';

/**
 * Core host: platform-wide figures, for the ADMIN role only (user token or an admin's API key),
 * and the seller overview, any seller's own figures.
 */
export function registerAnalyticsRoutes(app: HttpApp, analytics: AnalyticsService): void {
  app.get('/overview', {
    config: { auth: 'seller' },
    schema: {
      summary: "The seller's overview",
      description:
        "The caller's own figures: revenue and paid orders per currency over the last 30 days (daily) and 12 months (monthly), licenses by status, verifications and device activations per day over 30 days, webhook endpoints failing or disabled, open disputes and the latest orders. `period` holds revenue, verifications and activations per UTC day over the days from the one holding `from` to the one holding `to` (default: today and the 29 days before; at most 366 days), and their totals over as many days immediately before. A user token sees the whole account, or the app named by `appId`; an API key sees its own app only.",
      tags: ['analytics'],
      querystring: OverviewQuery,
      response: { 200: SellerOverview },
      errors: {
        ...APP_SCOPED,
        not_found: '`appId` names no app of the caller',
        validation_failed:
          'A malformed `appId`, `from` or `to`, `from` not before `to`, more than 366 days, or another parameter; the detail names the field',
      },
    },
    handler: (request) => analytics.overview(principalOf(request), request.query),
  });

  app.get('/analytics/stats', {
    config: { auth: 'admin' },
    schema: {
      summary: 'Platform totals',
      description:
        'Accounts, apps, products, licenses, orders, subscriptions and disputes counted now, and revenue (paid orders) per currency.',
      tags: ['analytics'],
      querystring: NoQuery,
      response: { 200: Stats },
    },
    handler: () => analytics.stats(),
  });

  app.get('/analytics/revenue', {
    config: { auth: 'admin' },
    schema: {
      summary: 'Revenue over time, per currency',
      description: `Paid orders by payment time, one series per currency that had any in the range. ${SERIES}`,
      tags: ['analytics'],
      querystring: RevenueQuery,
      response: { 200: RevenueSeries },
    },
    handler: (request) => analytics.revenue(request.query),
  });

  app.get('/analytics/licenses', {
    config: { auth: 'admin' },
    schema: {
      summary: 'Licenses over time',
      description: `Licenses issued, suspended, revoked and expired per bucket, and active at each bucket's end. ${SERIES}`,
      tags: ['analytics'],
      querystring: SeriesQuery,
      response: { 200: LicenseSeries },
    },
    handler: (request) => analytics.licenses(request.query),
  });

  app.get('/analytics/users', {
    config: { auth: 'admin' },
    schema: {
      summary: 'Accounts over time',
      description: `Registrations (by current tier) and deletions per bucket, and accounts existing at each bucket's end. ${SERIES}`,
      tags: ['analytics'],
      querystring: SeriesQuery,
      response: { 200: UserSeries },
    },
    handler: (request) => analytics.users(request.query),
  });
}
