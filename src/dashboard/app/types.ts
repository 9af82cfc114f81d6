/**
 * The API's resources as the dashboard reads them (see docs/*.md for each). Those the client SDK
 * already describes come from its sources (types only, so nothing of it reaches the bundle); the
 * event kinds come from the service's own list, a file of constants alone.
 */
import type { Release, ReleaseChannel } from '../../../packages/client/src/release-types';
import type { ApiKey, License, Page, Product, User } from '../../../packages/client/src/types';

export type {
  Artifact,
  Release,
  ReleaseChannel,
  ReleaseDownloads,
} from '../../../packages/client/src/release-types';
export type {
  ApiKey,
  App,
  License,
  Product,
  Session,
  TimelineEntry,
  TimelinePage,
  User,
} from '../../../packages/client/src/types';
export { EVENT_TYPES } from '../../modules/events/event-types';

export type Role = User['role'];
export type Tier = User['tier'];
export const ROLES = ['SELLER', 'ADMIN'] as const satisfies readonly Role[];
export const TIERS = ['free', 'pro', 'business', 'enterprise'] as const satisfies readonly Tier[];

/** The create answer: the only time the whole key is shown. */
export type CreatedApiKey = ApiKey & { key: string };

export const PRODUCT_TYPES = [
  'license',
  'api_access',
  'subscription',
] as const satisfies readonly Product['productType'][];
export const BILLING_TYPES = ['one_time', 'recurring'] as const satisfies readonly Product['billingType'][];

export type LicenseStatus = License['status'];
export const LICENSE_STATUSES = [
  'active',
  'trial',
  'suspended',
  'revoked',
  'expired',
] as const satisfies readonly LicenseStatus[];

export interface Device {
  hwuid: string;
  /** What the client software said the device is, and runs on; null until it said. */
  name: string | null;
  platform: string | null;
  activatedAt: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  appId: string | null;
  enabled: boolean;
  status: 'active' | 'failing' | 'disabled';
  disabledReason: string | null;
  consecutiveFailures: number;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  createdAt: string;
}
export interface WebhookWithSecret extends Webhook {
  secret: string;
}

export interface DeliveryLog {
  id: string;
  deliveryId: string;
  eventType: string;
  attempt: number;
  trigger: 'auto' | 'manual' | 'test';
  statusCode: number;
  responseBody: string;
  success: boolean;
  durationMs: number;
  error: string | null;
  createdAt: string;
}

export interface SendOutcome {
  deliveryId: string;
  success: boolean;
  statusCode: number;
  responseBody: string;
  error: string | null;
}

export const ORDER_STATUSES = ['pending', 'paid', 'canceled', 'rejected'] as const;

export interface Order {
  id: string;
  productId: string;
  email: string;
  amount: number;
  currency: string;
  status: (typeof ORDER_STATUSES)[number];
  paymentProvider: string;
  transactionId: string;
  createdAt: string;
}
export interface OrderDetail extends Order {
  licenseId: string | null;
  updatedAt: string;
}

export interface Subscription {
  id: string;
  productId: string;
  email: string;
  status: 'active' | 'canceled';
  partnerSubscriptionId: string;
  currentPeriodEnd: string;
  canceledAt: string | null;
  createdAt: string;
}

export interface Dispute {
  id: string;
  orderId: string;
  status: string;
  amount: number;
  currency: string;
  reason: string;
  createdAt: string;
}
export interface DisputeDetail extends Dispute {
  evidenceDueBy: string | null;
  updatedAt: string;
}

/** A page of an offset-paginated list, under the list's own name. */
export type OffsetPage<K extends string, T> = Page<K, T>;

/** A page of a list numbered from 1 (webhooks and their delivery logs). */
export type NumberedPage<K extends string, T> = { [key in K]: T[] } & {
  total: number;
  page: number;
  limit: number;
};

export type Interval = 'day' | 'week' | 'month';
type ByTier = Record<Tier, number>;
type ByRole = Record<Role, number>;

export interface Stats {
  users: { total: number; byTier: ByTier; byRole: ByRole };
  apps: { total: number };
  products: { total: number; active: number };
  licenses: {
    total: number;
    byStatus: Record<LicenseStatus, number>;
    /** Today and the 29 UTC days before it. */
    verificationsLast30Days: Verifications;
  };
  orders: { total: number; byStatus: Record<string, number> };
  subscriptions: { total: number; byStatus: Record<string, number> };
  disputes: { total: number; open: number };
  revenue: { currency: string; amount: number; orders: number }[];
  generatedAt: string;
}

interface Series<P> {
  from: string;
  to: string;
  interval: Interval;
  points: P[];
}

export interface RevenueSeries {
  from: string;
  to: string;
  interval: Interval;
  series: {
    currency: string;
    amount: number;
    orders: number;
    points: { start: string; amount: number; orders: number }[];
  }[];
}

/** License verifications that found their license, by outcome. */
export interface Verifications {
  valid: number;
  invalid: number;
}

export interface LicenseSeries
  extends Series<{
    start: string;
    issued: number;
    suspended: number;
    revoked: number;
    expired: number;
    active: number;
    verifications: Verifications;
  }> {
  totals: Record<LicenseStatus, number>;
  /** The sum of the points' verifications. */
  verifications: Verifications;
}

export interface UserSeries
  extends Series<{ start: string; registrations: number; total: number; byTier: ByTier }> {
  totals: { total: number; byTier: ByTier; byRole: ByRole };
}

/** GET /v1/overview: the seller's own figures (docs/analytics.md). */
export interface CurrencyRevenue {
  currency: string;
  amount: number;
  orders: number;
  points: { start: string; amount: number; orders: number }[];
}

export interface ActivityTotals {
  valid: number;
  invalid: number;
  activations: number;
}

export interface ActivityPoint extends ActivityTotals {
  start: string;
}

export interface Overview {
  appId: string | null;
  /** The period asked with from and to (the last 30 days by default), and as many days before it. */
  period: {
    from: string;
    to: string;
    days: number;
    revenue: CurrencyRevenue[];
    activity: { totals: ActivityTotals; points: ActivityPoint[] };
    previous: {
      from: string;
      to: string;
      revenue: { currency: string; amount: number; orders: number }[];
      activity: ActivityTotals;
    };
  };
  revenue: {
    last30Days: { from: string; to: string; series: CurrencyRevenue[] };
    last12Months: { from: string; to: string; series: CurrencyRevenue[] };
  };
  licenses: { total: number; byStatus: Record<LicenseStatus, number> };
  activity: { from: string; to: string; totals: ActivityTotals; points: ActivityPoint[] };
  webhooks: {
    failing: number;
    disabled: number;
    endpoints: {
      id: string;
      kind: 'core' | 'merchant';
      url: string;
      appId: string | null;
      productId: string | null;
      status: 'failing' | 'disabled';
      disabledReason: string | null;
      consecutiveFailures: number;
      failingSince: string | null;
      lastFailureAt: string | null;
    }[];
  };
  disputes: {
    open: number;
    latest: {
      id: string;
      orderId: string;
      status: string;
      amount: number;
      currency: string;
      reason: string;
      evidenceDueBy: string | null;
      createdAt: string;
    }[];
  };
  orders: {
    latest: {
      id: string;
      transactionId: string;
      productId: string;
      productName: string;
      email: string;
      amount: number;
      currency: string;
      status: string;
      createdAt: string;
    }[];
  };
  generatedAt: string;
}

/** GET /v1/brand: what buyers see of the seller, and the sites that may open the overlay. */
export interface Brand {
  id: string | null;
  displayName: string | null;
  accentColor: string | null;
  accentTextColor: string | null;
  logo: {
    url: string;
    contentType: string;
    width: number;
    height: number;
    bytes: number;
    sha256: string;
  } | null;
  overlayOrigins: string[];
  overlayScriptUrl: string;
  updatedAt: string | null;
}

/** Most stable first: a license following a channel receives it and every one before it. */
export const RELEASE_CHANNELS = [
  'stable',
  'rc',
  'beta',
  'alpha',
  'dev',
] as const satisfies readonly ReleaseChannel[];
export const RELEASE_STATUSES = [
  'draft',
  'published',
  'yanked',
] as const satisfies readonly Release['status'][];
