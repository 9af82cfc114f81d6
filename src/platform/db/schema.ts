import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type { Role as UserRole, Tier as UserTier } from '../http/principal.js';

/**
 * Kysely's view of the tables the migrations create. Timestamps go in as Date and come out
 * as Date on both drivers; numeric columns come out as exact strings.
 */
type Timestamp = ColumnType<Date, Date | undefined, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;

export type { Role as UserRole, Tier as UserTier } from '../http/principal.js';

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  password_hash: string;
  role: ColumnType<UserRole, UserRole | undefined, UserRole>;
  tier: ColumnType<UserTier, UserTier | undefined, UserTier>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface AppsTable {
  id: string;
  user_id: string;
  name: string;
  description: ColumnType<string, string | undefined, string>;
  /** What signs the app's license tokens, license files and revocation lists (migration 0027). */
  token_algorithm: ColumnType<SigningAlgorithm, SigningAlgorithm | undefined, SigningAlgorithm>;
  /** What license timelines keep of a client's address (migration 0031). */
  client_addresses: ColumnType<ClientAddressPolicy, ClientAddressPolicy | undefined, ClientAddressPolicy>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** What a license's timeline keeps of a client's address: all, its network, or nothing. */
export type ClientAddressPolicy = 'full' | 'truncated' | 'none';

/** Who made a change recorded in a license's timeline; none for the client's own calls. */
export type TimelineActorKind = 'seller' | 'api_key' | 'buyer' | 'billing' | 'system';

export interface LicenseEventsTable {
  id: string;
  license_id: string;
  user_id: string;
  app_id: string;
  type: string;
  outcome: string | null;
  hwuid: string | null;
  client_address: string | null;
  app_version: string | null;
  actor_kind: TimelineActorKind | null;
  actor_id: string | null;
  data: ColumnType<Record<string, unknown>, string | undefined, string>;
  occurred_at: Timestamp;
  /** The calls this entry stands for (identical answers to one client within one flush). */
  repeats: Generated<number>;
  /** The last of those calls; null when the entry is one call. */
  last_occurred_at: NullableTimestamp;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  app_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: Timestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface EventsTable {
  id: string;
  seq: Generated<number>;
  type: string;
  user_id: string | null;
  app_id: string | null;
  data: ColumnType<Record<string, unknown>, string, string>;
  /** Whose endpoints hear it: the seller's (and admins') own, or the product's merchant webhook. */
  audience: ColumnType<EventAudience, EventAudience | undefined, never>;
  created_at: Timestamp;
  dispatched_at: NullableTimestamp;
}

export type EventAudience = 'core' | 'merchant';

export type ProductType = 'license' | 'api_access' | 'subscription';
export type BillingType = 'one_time' | 'recurring';
export type BillingInterval = 'month' | 'year';

export interface ProductsTable {
  id: string;
  user_id: string;
  app_id: string;
  name: string;
  description: string;
  /** numeric(14,4): exact decimal string. */
  price: string;
  currency: string;
  active: boolean;
  success_url: string | null;
  cancel_url: string | null;
  help_url: string | null;
  support_url: string | null;
  terms_url: string | null;
  privacy_url: string | null;
  refund_url: string | null;
  product_type: ProductType;
  billing_type: BillingType;
  interval: BillingInterval | null;
  partner_price_id_recurring: string | null;
  partner_tax_enabled: boolean;
  partner_identity_required: boolean;
  crypto_payments_enabled: boolean;
  hide_email: boolean;
  auto_redirect: boolean;
  license_emails: string[];
  send_license_to_customer: boolean;
  callback_secret: string;
  merchant_webhook_url: string | null;
  /** Entitlements the product grants (migration 0016). */
  features: string[];
  /** Days of the free trial the hosted checkout offers; null: no trial (migration 0018). */
  trial_days: number | null;
  /** What buyers may do in the portal: file validity, releases per period (migration 0022). */
  portal_license_file_days: number;
  portal_device_releases: number;
  portal_release_period_days: number;
  /** The license policy (modules/products/license-policy.ts), as JSON (migration 0025). */
  license_policy: ColumnType<unknown, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type SubscriptionStatus = 'active' | 'canceled';

export interface SubscriptionsTable {
  id: string;
  user_id: string;
  app_id: string;
  product_id: string;
  license_id: string | null;
  email: string;
  status: ColumnType<SubscriptionStatus, SubscriptionStatus | undefined, SubscriptionStatus>;
  payment_provider: string;
  partner_subscription_id: string;
  partner_payment_method: string;
  interval: BillingInterval;
  currency: string;
  current_period_end: Timestamp;
  canceled_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type LicenseStatus = 'active' | 'trial' | 'suspended' | 'revoked' | 'expired';

export interface LicensesTable {
  id: string;
  key: string;
  app_id: string;
  product_id: string | null;
  user_id: string;
  email: string | null;
  status: ColumnType<LicenseStatus, LicenseStatus | undefined, LicenseStatus>;
  expires_at: Date | null;
  metadata: ColumnType<LicenseMetadata, string | undefined, string>;
  max_devices: number | null;
  device_count: ColumnType<number, number | undefined, number>;
  /** Entitlements overriding the product's; null inherits them (migration 0016). */
  features: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** Floating: up to max_seats devices at once, each on a lease of lease_seconds. */
  floating: ColumnType<boolean, boolean | undefined, boolean>;
  max_seats: ColumnType<number | null, number | null | undefined, number | null>;
  lease_seconds: ColumnType<number | null, number | null | undefined, number | null>;
  /** Set when the license began as a trial: its trial's end (migration 0018). */
  trial_ends_at: NullableTimestamp;
  /** When a payment turned the trial into a paid license, or (since migration 0020) ended it. */
  converted_at: NullableTimestamp;
  /** On a trial a payment ended: the paid license issued in its place (migration 0020). */
  replaced_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** Online check-in every check_in_days (+ grace_days); checked_in_at the last one (migration 0026). */
  check_in_days: ColumnType<number | null, number | null | undefined, number | null>;
  grace_days: ColumnType<number | null, number | null | undefined, number | null>;
  checked_in_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The last verification that found the license, as the batched counts flush wrote it (migration 0030). */
  last_verified_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  expiry_strategy: ColumnType<'restrict' | 'maintain_access', 'restrict' | 'maintain_access' | undefined>;
  /** A usage quota per period (null: none); uses counts the period begun at uses_period_start. */
  max_uses: ColumnType<number | null, number | null | undefined, number | null>;
  uses: ColumnType<number, number | undefined, number>;
  uses_reset_interval: ColumnType<
    'never' | 'day' | 'month' | 'renewal' | null,
    'never' | 'day' | 'month' | 'renewal' | null | undefined
  >;
  uses_period_start: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One trial of a product per e-mail and per device (digests of either), and the license it went to. */
export interface TrialClaimsTable {
  product_id: string;
  kind: 'email' | 'device';
  digest: string;
  license_id: string;
  claimed_at: Date;
}

export interface LicenseMetadata {
  plan?: string;
  features?: string[];
  [key: string]: unknown;
}

export interface LicenseDevicesTable {
  license_id: string;
  hwuid: string;
  activated_at: Timestamp;
  /** The latest expiry of the offline license files signed for the device (migration 0022). */
  offline_until: Generated<Date | null>;
  /** What the client says the device is, and runs on (migration 0028); null until it says. */
  name: Generated<string | null>;
  platform: Generated<string | null>;
}

/** A device release a buyer made in the portal, counted against the product's allowance. */
export interface BuyerDeviceReleasesTable {
  license_id: string;
  released_at: Date;
}

/** A seat held on a floating license; it counts only while its lease has not lapsed. */
export interface LicenseSeatsTable {
  license_id: string;
  hwuid: string;
  acquired_at: Date;
  lease_expires_at: Date;
  /** As on license_devices (migration 0028). */
  name: Generated<string | null>;
  platform: Generated<string | null>;
}

export interface SigningKeysTable {
  kid: string;
  /** Sealed (license-tokens/key-sealing.ts); PEM on rows from before migration 0023 until a start seals them. */
  sealed_private_key: string;
  /** What the key signs: license tokens, or license files and revocation lists (migration 0023). */
  purpose: SigningKeyPurpose;
  /** The JWS algorithm the key signs with: an RSA key (RS256) or an Ed25519 key (EdDSA), migration 0027. */
  algorithm: SigningAlgorithm;
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  published_at: Date;
  activates_at: Date;
  unpublish_at: Date | null;
}

export type SigningKeyPurpose = 'token' | 'offline';
export type SigningAlgorithm = 'RS256' | 'EdDSA';

/** Each app's revocation list version, which only grows (migration 0023). */
export interface RevocationListVersionsTable {
  app_id: string;
  version: number;
  /** SHA-256 of the list's entries the version was given to. */
  digest: string;
}

export interface RevokedTokensTable {
  jti: string;
  license_id: string;
  expires_at: Date;
  revoked_at: Timestamp;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';
export type DeliveryTrigger = 'auto' | 'manual' | 'test';

export interface WebhookEndpointsTable {
  id: string;
  user_id: string;
  app_id: string | null;
  url: string;
  events: string[];
  secret: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_reason: string | null;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  failing_since: NullableTimestamp;
  last_success_at: NullableTimestamp;
  last_failure_at: NullableTimestamp;
  kind: ColumnType<'core' | 'merchant', 'core' | 'merchant' | undefined, 'core' | 'merchant'>;
  product_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string | null;
  event_type: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  event_time: Date;
  trigger: DeliveryTrigger;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Date | null;
  leased_until: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  attempt: number;
  trigger: DeliveryTrigger;
  status_code: number;
  response_body: string;
  success: boolean;
  duration_ms: number;
  error: string | null;
  created_at: Timestamp;
}

export type OrderStatus = 'pending' | 'paid' | 'canceled' | 'rejected';

export interface OrdersTable {
  id: string;
  transaction_id: string;
  user_id: string;
  product_id: string;
  app_id: string;
  license_id: string | null;
  email: string;
  amount: string;
  currency: string;
  status: ColumnType<OrderStatus, OrderStatus | undefined, OrderStatus>;
  status_reason: ColumnType<string, string | undefined, string>;
  payment_provider: string;
  partner_payment_id: string;
  client_secret: string;
  paid_at: NullableTimestamp;
  checkout_key: ColumnType<string | null, string | null | undefined, string | null>;
  mirror_token: ColumnType<string | null, string | null | undefined, string | null>;
  subscription_id: ColumnType<string | null, string | null | undefined, string | null>;
  renewal_period_end: NullableTimestamp;
  /**
   * The billing the order was opened with, which its fulfilment follows (migration 0020); null
   * on renewal orders, whose terms are their subscription's.
   */
  billing_type: ColumnType<BillingType | null, BillingType | null | undefined, BillingType | null>;
  billing_interval: ColumnType<
    BillingInterval | null,
    BillingInterval | null | undefined,
    BillingInterval | null
  >;
  /** The product's license policy when the order was opened (migration 0025); null on renewals. */
  license_policy: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SandboxPaymentsTable {
  id: string;
  idempotency_key: string;
  amount_minor: number;
  currency: string;
  status: string;
  failure_message: ColumnType<string | null, string | null | undefined, string | null>;
  client_secret: string;
  card: ColumnType<string | null, string | null | undefined, string | null>;
  customer_id: ColumnType<string | null, string | null | undefined, string | null>;
  saved_released_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PartnerEventsTable {
  id: string;
  provider: string;
  type: string;
  received_at: Timestamp;
}

export interface DisputesTable {
  id: string;
  partner_dispute_id: string;
  order_id: string;
  user_id: string;
  app_id: string;
  status: string;
  amount: string;
  currency: string;
  reason: ColumnType<string, string | undefined, string>;
  evidence_due_by: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface NotificationsTable {
  id: string;
  kind: string;
  to_email: string | null;
  to_user_id: string | null;
  data: ColumnType<Record<string, unknown>, string, string>;
  status: ColumnType<
    'pending' | 'sent' | 'failed',
    'pending' | 'sent' | 'failed' | undefined,
    'pending' | 'sent' | 'failed'
  >;
  created_at: Timestamp;
  sent_at: NullableTimestamp;
  attempts: ColumnType<number, number | undefined, number>;
  /** Null: due now (never tried). */
  next_attempt_at: NullableTimestamp;
  leased_until: NullableTimestamp;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
}

export type IdempotencyState = 'in_progress' | 'done';

/** The first answer to a request sent with an Idempotency-Key (src/platform/http/idempotency.ts). */
/** A buyer portal sign-in link (migration 0019): the SHA-256 of its token, never the token. */
export interface PortalSignInLinksTable {
  token_hash: string;
  email: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/** A signed-in buyer portal browser: the SHA-256 of its cookie's token. */
export interface PortalSessionsTable {
  token_hash: string;
  email: string;
  created_at: Date;
  expires_at: Date;
}

export interface IdempotencyKeysTable {
  scope: string;
  key_hash: string;
  fingerprint: string;
  app_id: string | null;
  state: IdempotencyState;
  claim_id: string;
  status_code: number | null;
  content_type: string | null;
  /** Sealed under IDEMPOTENCY_SECRET, the scope and the Idempotency-Key (AES-256-GCM, base64url). */
  response_body: string | null;
  request_id: string | null;
  created_at: Date;
}

export type ReleaseChannel = 'stable' | 'rc' | 'beta' | 'alpha' | 'dev';
export type ReleaseStatus = 'draft' | 'published' | 'yanked';

/** A version of the seller's software (migration 0032). */
export interface ReleasesTable {
  id: string;
  user_id: string;
  app_id: string;
  version: string;
  /** Semantic versioning's precedence as a byte-ordered string (releases/version-order.ts). */
  version_order: string;
  channel: ReleaseChannel;
  status: ColumnType<ReleaseStatus, ReleaseStatus | undefined, ReleaseStatus>;
  notes: ColumnType<string, string | undefined, string>;
  required_features: ColumnType<string[], string[] | undefined, string[]>;
  published_at: NullableTimestamp;
  yanked_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A file of a release; its bytes are in the artifact store under `sha256` (migration 0033). */
export interface ReleaseArtifactsTable {
  id: string;
  release_id: string;
  user_id: string;
  app_id: string;
  filename: string;
  platform: ColumnType<string, string | undefined, string>;
  arch: ColumnType<string, string | undefined, string>;
  filetype: string;
  /**
   * bigint: read it through Number() (a string from pg, a number from PGlite). Null only for an
   * external file whose seller declared no size.
   */
  size: ColumnType<string | number | null, number | null, number | null>;
  /** Hex; computed by the service for a stored file, the seller's word (or null) for an external one. */
  sha256: string | null;
  sha512: string | null;
  /** The https address of a file the seller hosts (migration 0037); null for a stored file. */
  url: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  /** Downloads served through license-gated links (bigint: read through Number()). */
  downloads: ColumnType<string | number, never, never>;
}

/** Downloads per artifact and UTC day (migration 0038), added to with release_artifacts.downloads. */
export interface ReleaseArtifactDownloadsTable {
  artifact_id: string;
  /** The UTC day: a date, written and read as `YYYY-MM-DD` text (select it as `day::text`). */
  day: ColumnType<string, string, never>;
  /** bigint: read it through Number(). */
  downloads: ColumnType<string | number, number, never>;
}

/** What the seller's checkout pages, portal entries and buyers' e-mails show of them (migration 0034). */
export interface SellerBrandsTable {
  user_id: string;
  /** What the logo's public address names (not the account's id). */
  public_id: string;
  display_name: string | null;
  /** `#rrggbb`, lower case. */
  accent_color: string | null;
  overlay_origins: ColumnType<string[], string[] | undefined, string[]>;
  /** The re-encoded logo: a Buffer from pg, a Uint8Array from PGlite. */
  logo: Uint8Array | null;
  logo_type: 'image/png' | 'image/jpeg' | null;
  logo_sha256: string | null;
  logo_width: number | null;
  logo_height: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface Schema {
  users: UsersTable;
  apps: AppsTable;
  api_keys: ApiKeysTable;
  events: EventsTable;
  products: ProductsTable;
  licenses: LicensesTable;
  license_events: LicenseEventsTable;
  license_devices: LicenseDevicesTable;
  buyer_device_releases: BuyerDeviceReleasesTable;
  license_seats: LicenseSeatsTable;
  trial_claims: TrialClaimsTable;
  signing_keys: SigningKeysTable;
  revocation_list_versions: RevocationListVersionsTable;
  revoked_tokens: RevokedTokensTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  orders: OrdersTable;
  subscriptions: SubscriptionsTable;
  sandbox_payments: SandboxPaymentsTable;
  partner_events: PartnerEventsTable;
  disputes: DisputesTable;
  notifications: NotificationsTable;
  idempotency_keys: IdempotencyKeysTable;
  portal_sign_in_links: PortalSignInLinksTable;
  portal_sessions: PortalSessionsTable;
  releases: ReleasesTable;
  release_artifacts: ReleaseArtifactsTable;
  release_artifact_downloads: ReleaseArtifactDownloadsTable;
  seller_brands: SellerBrandsTable;
}

export type UserRow = Selectable<UsersTable>;
export type AppRow = Selectable<AppsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ProductRow = Selectable<ProductsTable>;
export type NewProductRow = Insertable<ProductsTable>;
export type LicenseRow = Selectable<LicensesTable>;
export type ReleaseRow = Selectable<ReleasesTable>;
export type ReleaseArtifactRow = Selectable<ReleaseArtifactsTable>;
export type SigningKeyRow = Selectable<SigningKeysTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
export type OrderRow = Selectable<OrdersTable>;
export type DisputeRow = Selectable<DisputesTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
