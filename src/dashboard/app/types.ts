/** The API's resources as the dashboard reads them (see docs/*.md for each). */

export type Role = 'SELLER' | 'ADMIN';
export type Tier = 'free' | 'pro' | 'business' | 'enterprise';

export interface User {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  tier: Tier;
  createdAt: string;
}

export interface Session {
  token: string;
  expiresAt: string;
  user: User;
}

export interface App {
  id: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKey {
  id: string;
  appId: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
export interface CreatedApiKey extends ApiKey {
  key: string;
}

export const PRODUCT_TYPES = ['license', 'api_access', 'subscription'] as const;
export const BILLING_TYPES = ['one_time', 'recurring'] as const;

export interface Product {
  id: string;
  appId: string;
  name: string;
  description: string;
  price: number;
  currency: string;
  active: boolean;
  successUrl: string | null;
  cancelUrl: string | null;
  helpUrl: string | null;
  supportUrl: string | null;
  termsUrl: string | null;
  privacyUrl: string | null;
  refundUrl: string | null;
  productType: (typeof PRODUCT_TYPES)[number];
  billingType: (typeof BILLING_TYPES)[number];
  interval: 'month' | 'year' | null;
  partnerPriceIdRecurring: string | null;
  partnerTaxEnabled: boolean;
  partnerIdentityRequired: boolean;
  cryptoPaymentsEnabled: boolean;
  hideEmail: boolean;
  autoRedirect: boolean;
  licenseEmails: string[];
  sendLicenseToCustomer: boolean;
  callbackSecret: string;
  merchantWebhookUrl: string | null;
  checkoutUrl: string;
  createdAt: string;
  updatedAt: string;
}

export const LICENSE_STATUSES = ['active', 'suspended', 'revoked', 'expired'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];

export interface License {
  id: string;
  key: string;
  appId: string;
  productId: string | null;
  email: string | null;
  status: LicenseStatus;
  expiresAt: string | null;
  metadata: Record<string, unknown>;
  maxDevices: number | null;
  deviceCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface Device {
  hwuid: string;
  activatedAt: string;
}

export const EVENT_TYPES = [
  'license.created',
  'license.updated',
  'license.revoked',
  'license.expired',
  'user.registered',
  'app.created',
] as const;

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
export type OffsetPage<K extends string, T> = { [key in K]: T[] } & {
  total: number;
  limit: number;
  offset: number;
};

export type Interval = 'day' | 'week' | 'month';
type ByTier = Record<Tier, number>;
type ByRole = Record<Role, number>;

export interface Stats {
  users: { total: number; byTier: ByTier; byRole: ByRole };
  apps: { total: number };
  products: { total: number; active: number };
  licenses: { total: number; byStatus: Record<LicenseStatus, number> };
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

export interface LicenseSeries
  extends Series<{ start: string; issued: number; revoked: number; expired: number; active: number }> {
  totals: Record<LicenseStatus, number>;
}

export interface UserSeries
  extends Series<{ start: string; registrations: number; total: number; byTier: ByTier }> {
  totals: { total: number; byTier: ByTier; byRole: ByRole };
}
