/** Shapes the service answers with, as documented in its docs/ folder. */

export interface VerificationResult {
  valid: boolean;
  /** The app the key belongs to; null for an unknown key. */
  appId: string | null;
  code?:
    | 'license_not_found'
    | 'license_expired'
    | 'license_suspended'
    | 'license_revoked'
    | 'hwuid_required'
    | 'device_limit_reached'
    | 'device_not_bound'
    | 'not_floating'
    | 'seat_required'
    | 'no_seat_available'
    | 'seat_not_held'
    /** A trial license and a device that already had another trial of the product. */
    | 'trial_already_used'
    /** Past the license's check-in deadline (the call checked in unless it said checkIn: false). */
    | 'check_in_overdue';
  /** ACTIVE, TRIAL (a free trial until expiresAt), EXPIRED, SUSPENDED, REVOKED or NOT_FOUND. */
  status: string;
  expiresAt: string | null;
  email: string | null;
  verificationType: string | null;
  hw_bound: boolean;
  license_token?: string;
  license_token_expires_at?: string;
  license_jwks_uri?: string;
  /** Entitlements in force (the license's own, else its product's); on valid answers. */
  features?: string[];
  /** Floating licenses: when this device's seat lapses without a heartbeat (checkout again before). */
  lease_expires_at?: string;
  /** Past its expiry under expiry strategy maintain_access: valid, with status EXPIRED. */
  expired?: boolean;
  /** Licenses with checkInDays: verify online again by then. */
  check_in_by?: string;
  /** Licenses with a usage quota: uses left in the current period. */
  uses_remaining?: number;
}

/** POST /licenses/usage: what a consume did, and the count after it. */
export interface UsageResult {
  /** Whether the amount was consumed; false leaves the count as it was. */
  consumed: boolean;
  code?:
    | 'license_not_found'
    | 'license_expired'
    | 'license_suspended'
    | 'license_revoked'
    | 'hwuid_required'
    | 'device_not_bound'
    | 'seat_required'
    | 'check_in_overdue'
    | 'no_usage_quota'
    | 'usage_exhausted';
  uses: number | null;
  max_uses: number | null;
  uses_remaining: number | null;
  /** When the count starts again from zero (a day or month); null when never by time. */
  resets_at: string | null;
}

/** A license's quota and count, as its seller reads it (GET …/licenses/:licenseId/usage). */
export interface LicenseUsage {
  licenseId: string;
  maxUses: number | null;
  uses: number;
  usesRemaining: number | null;
  usesResetInterval: 'never' | 'day' | 'month' | 'renewal' | null;
  resetsAt: string | null;
}

/** POST /licenses/checkin: whether the device gave a live seat back, and why not. */
export interface SeatCheckin {
  released: boolean;
  code?: 'license_not_found' | 'not_floating' | 'seat_not_held';
}

/**
 * What client software may say about the device with its hwuid, to be shown to the seller and the
 * buyer: a name ("Ana's MacBook", 1–100 printable characters, no space at either end) and a
 * platform ("macOS 15", 1–50, the same).
 * Stored with the device or seat; a later call sending another value replaces it, one leaving a
 * field out keeps it.
 */
export interface DeviceLabel {
  name?: string;
  platform?: string;
}

/** A device bound to a license (GET …/licenses/:licenseId/devices). */
export interface Device {
  hwuid: string;
  /** As the client software last sent it; null until it sent one. */
  name: string | null;
  platform: string | null;
  activatedAt: string;
  /** Until when an offline license file holds the device (its buyer cannot release it); null when none does. */
  offlineUntil: string | null;
}

/** A seat held now on a floating license (GET …/licenses/:licenseId/seats). */
export interface Seat {
  hwuid: string;
  /** As the client software last sent it; null until it sent one. */
  name: string | null;
  platform: string | null;
  acquiredAt: string;
  leaseExpiresAt: string;
}

/** A public key set as GET /licenses/jwks answers it; store it as JSON for offline checks. */
export interface JsonWebKeySet {
  keys: JsonWebKeyEntry[];
}

/**
 * The algorithms the service signs with: RS256 by default, EdDSA (Ed25519) for apps that choose it
 * (the app's `tokenAlgorithm`). Each key of the set verifies its own `alg` only.
 */
export type LicenseSigningAlgorithm = 'RS256' | 'EdDSA';

/**
 * One public key of the set: RSA (`kty` RSA, `n`, `e`, `alg` RS256) or Ed25519 (`kty` OKP, `crv`
 * Ed25519, `x`, `alg` EdDSA); other members are kept as they are.
 */
export interface JsonWebKeyEntry {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  n?: string;
  e?: string;
  crv?: string;
  x?: string;
  /**
   * `token`: signs license tokens, replaced when keys rotate. `offline`: signs license files and
   * revocation lists, and stays (absent from sets copied before it existed).
   */
  purpose?: string;
  [member: string]: unknown;
}

export interface LicenseTokenClaims {
  iss: string;
  sub: string;
  aud?: string;
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  token_use: 'service_license_v1';
  svc_vt: 'basic' | 'advanced' | 'custom';
  seller_tier: string;
  status: string;
  hw_bound: boolean;
  plan?: string;
  features?: string[];
  license_exp?: number;
}

export interface Introspection {
  active: boolean;
  reason?: string;
  sub?: string;
  aud?: string;
  jti?: string;
  exp?: number;
  iat?: number;
  status?: string;
  license_exp?: number;
  svc_vt?: string;
  seller_tier?: string;
  hw_bound?: boolean;
}

/** A page of a list: the items under their own name, with total, limit and offset. */
export type Page<K extends string, T> = { [P in K]: T[] } & { total: number; limit: number; offset: number };

export interface User {
  id: string;
  email: string;
  name: string | null;
  role: 'SELLER' | 'ADMIN';
  tier: 'free' | 'pro' | 'business' | 'enterprise';
  createdAt: string;
  updatedAt: string;
}

export interface Session {
  token: string;
  expiresAt: string;
  user: User;
}

export interface App {
  id: string;
  userId: string;
  name: string;
  description: string;
  /**
   * How the app's license tokens, license files and revocation lists are signed: `RS256` (the
   * default) or `EdDSA` (Ed25519). LicenseTokenVerifier, verifyLicenseFile and checkRevocations
   * check both.
   */
  tokenAlgorithm: LicenseSigningAlgorithm;
  /** What license timelines keep of a client's address: all of it, truncated (the default), or none. */
  clientAddresses: 'full' | 'truncated' | 'none';
  createdAt: string;
  updatedAt: string;
}

/** What an app is created with; `update` takes any of it. */
export interface AppInput {
  name: string;
  description?: string;
  /** RS256 when omitted; a change applies to what is signed after it. */
  tokenAlgorithm?: LicenseSigningAlgorithm;
  /** What license timelines keep of a client's address; truncated when omitted. */
  clientAddresses?: App['clientAddresses'];
}

export interface ApiKey {
  id: string;
  appId: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Only in the create answer. */
  key?: string;
}

/**
 * A product's license policy: `node_locked` with `maxDevices`, `floating` with `maxSeats` and
 * `leaseSeconds` (600 by default), or `unlimited`; `validityDays` (one-time products; null:
 * perpetual). Fields the model does not take are null.
 */
export interface LicensePolicy {
  model: 'unlimited' | 'node_locked' | 'floating';
  maxDevices: number | null;
  maxSeats: number | null;
  leaseSeconds: number | null;
  validityDays: number | null;
  /** Licenses must verify online every this many days (null: never). */
  checkInDays: number | null;
  /** Days of grace past a missed check-in (null without checkInDays). */
  graceDays: number | null;
  /** restrict: stops at expiry; maintain_access: keeps verifying, as expired. */
  expiryStrategy: 'restrict' | 'maintain_access';
  /** Uses per period (POST /licenses/usage); null: no quota. */
  maxUses: number | null;
  usesResetInterval: 'never' | 'day' | 'month' | 'renewal' | null;
}

export interface Product {
  id: string;
  userId: string;
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
  productType: 'license' | 'api_access' | 'subscription';
  billingType: 'one_time' | 'recurring';
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
  /** Where the checkout host POSTs this product's merchant webhooks; null when off. */
  merchantWebhookUrl: string | null;
  /** Entitlements every license of the product grants unless it overrides them. */
  features: string[];
  /** Days of the free trial the hosted checkout offers (1 to 365); null: no trial. */
  trialDays: number | null;
  /** Days a license file the buyer downloads from the buyer portal is valid (1 to 3650; 30 by default). */
  portalLicenseFileDays: number;
  /** Device releases a buyer may make in the portal per license in any portalReleasePeriodDays (0 to 1000; 3). */
  portalDeviceReleases: number;
  /** The period, in days, portalDeviceReleases counts over (1 to 365; 30). */
  portalReleasePeriodDays: number;
  /** What every license sold, trialled or issued through the product starts from. */
  licensePolicy: LicensePolicy;
  /** The hosted checkout page that sells this product on the checkout host. */
  checkoutUrl: string;
  createdAt: string;
  updatedAt: string;
}

export type ProductInput = Partial<
  Omit<Product, 'id' | 'userId' | 'checkoutUrl' | 'createdAt' | 'updatedAt'>
>;

export interface License {
  id: string;
  key: string;
  appId: string;
  productId: string | null;
  userId: string;
  email: string | null;
  status: 'active' | 'trial' | 'suspended' | 'revoked' | 'expired';
  expiresAt: string | null;
  metadata: { plan?: string; features?: string[]; [key: string]: unknown };
  maxDevices: number | null;
  deviceCount: number;
  /** Entitlements overriding the product's; null inherits them. */
  features: string[] | null;
  floating: boolean;
  maxSeats: number | null;
  leaseSeconds: number | null;
  /** When the license began as a trial: that trial's end (kept after conversion); else null. */
  trialEndsAt: string | null;
  /** When a payment turned the trial into a paid license; null otherwise. */
  convertedAt: string | null;
  checkInDays: number | null;
  graceDays: number | null;
  /** The last online check-in (null without checkInDays). */
  lastCheckInAt: string | null;
  /** Past this without a check-in the license is overdue (null without checkInDays). */
  checkInBy: string | null;
  expiryStrategy: 'restrict' | 'maintain_access';
  maxUses: number | null;
  usesResetInterval: 'never' | 'day' | 'month' | 'renewal' | null;
  /** The last verification of the key, whatever the answer (written in batches; null: never). */
  lastVerifiedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The columns a license list sorts by. */
export type LicenseSort = 'createdAt' | 'lastVerifiedAt' | 'expiresAt' | 'status' | 'email';

/** Every kind of entry in a license's timeline (docs/licenses.md#license-timeline). */
export type TimelineType =
  | 'verification'
  | 'device.activated'
  | 'device.released'
  | 'seat.acquired'
  | 'seat.released'
  | 'seat.lapsed'
  | 'usage.consumed'
  | 'check_in'
  | 'license_file.issued'
  | 'license.created'
  | 'license.updated'
  | 'license.key_regenerated'
  | 'license.suspended'
  | 'license.reinstated'
  | 'license.revoked'
  | 'license.expired'
  | 'license.renewed'
  | 'email.sent'
  | 'email.failed'
  | 'webhook.event'
  | 'webhook.failed';

/** One thing that happened to a license. */
export interface TimelineEntry {
  id: string;
  type: TimelineType;
  /** A verification's answer (`valid` or its refusal code), `failed` for a failed delivery, else null. */
  outcome: string | null;
  hwuid: string | null;
  /** As the app's clientAddresses setting kept it: whole, its network, or null. */
  clientAddress: string | null;
  /** The X-App-Version the client sent (LicensingClientOptions.appVersion). */
  appVersion: string | null;
  /** Who made a change; null for the client's own calls. */
  actor: { kind: 'seller' | 'api_key' | 'buyer' | 'billing' | 'system'; id: string | null } | null;
  data: Record<string, unknown>;
  /** When it happened; for repeated identical calls, the first of them. */
  occurredAt: string;
  /** How many identical calls (same answer, device, address, version) within one flush it stands for. */
  repeats: number;
  /** The last of those calls; null for one call. */
  lastOccurredAt: string | null;
}

/** A page of a license's timeline, newest first. */
export interface TimelinePage {
  events: TimelineEntry[];
  /** Pass as `cursor` for the next page; null at the end. */
  nextCursor: string | null;
}

/** POST {pay_url}/api/checkout/trials: the trial license issued to the buyer. */
export interface StartedTrial {
  /** The trial license's id, as the seller's license routes know it. */
  trialId: string;
  /**
   * The key, for a trial on the device sent (bound to it); null for a trial by e-mail, whose key
   * goes to that address only.
   */
  licenseKey: string | null;
  productId: string;
  email: string;
  status: 'TRIAL';
  /** The trial's end: the license's expiry until the buyer pays. */
  expiresAt: string;
  trialDays: number;
  /** Whether the hwuid sent is bound as the license's device (a trial on a device). */
  hwBound: boolean;
}

export interface LicenseInput {
  productId?: string;
  email?: string | null;
  expiresAt?: string | null;
  metadata?: License['metadata'];
  maxDevices?: number | null;
  features?: string[] | null;
  /** On issue only: a floating license, with maxSeats (and leaseSeconds, 600 by default). */
  floating?: boolean;
  maxSeats?: number;
  leaseSeconds?: number;
  /** On issue only: a trial by hand, ending after this many days (1 to 365; not with expiresAt). */
  trialDays?: number;
  /** Check-in, expiry and quota: from the product's policy unless given. */
  checkInDays?: number | null;
  graceDays?: number | null;
  expiryStrategy?: 'restrict' | 'maintain_access';
  maxUses?: number | null;
  usesResetInterval?: 'never' | 'day' | 'month' | 'renewal' | null;
}

/**
 * PATCH …/licenses/:licenseId: any of these. A license keeps its product and whether it is
 * floating; `maxSeats`/`leaseSeconds` apply to a floating one, `maxDevices` to a node-locked one.
 */
export type LicenseUpdateInput = Omit<LicenseInput, 'productId' | 'floating' | 'trialDays'>;

/** GET …/licenses/:licenseId/seats: the live seats, oldest first; a node-locked license has none. */
export interface SeatList {
  seats: Seat[];
  total: number;
  maxSeats: number | null;
}

/** POST /licenses/offline-activations: an air-gapped machine's request, handed in by the seller. */
export interface OfflineActivationInput {
  /** The one-line request the machine wrote (`createOfflineActivationRequest(…).request`). */
  request: string;
  /** Days the file is valid (1–3650); a year by default, never past the license's expiry. */
  validDays?: number;
  /** Encrypt the file so only the license key opens it. */
  encrypt?: boolean;
}

/** The device is bound; send `licenseFile` back to the machine, which checks it with verifyLicenseFile. */
export interface OfflineActivation {
  licenseId: string;
  appId: string;
  hwuid: string;
  /** The request's nonce, also in the file. */
  nonce: string;
  /** True when this call bound the device; false when it was bound already. */
  activated: boolean;
  encrypted: boolean;
  licenseFile: string;
  issuedAt: string;
  expiresAt: string;
}

/** GET /licenses/revocations?appId=…: hand it to checkRevocations as it is. */
export interface RevocationList {
  appId: string;
  /** Grows whenever the list's entries change and never goes back: the greater version is the newer list. */
  version: number;
  /** Licenses on the list. */
  count: number;
  /** The signed list (JWS by the offline key, token_use service_revocation_list_v1). */
  revocationList: string;
  issuedAt: string;
  expiresAt: string;
}

/** POST /api/checkout/mirror/validate: a paid purchase matches the license and e-mail. */
export interface VerifiedPurchase {
  success: true;
  verified: true;
  status: 'successful';
  purchase: {
    /** The order. */
    id: string;
    productId: string;
    createdAt: string;
    transactionId: string;
    /** Null for one-time products. */
    subscriptionId: string | null;
  };
}

/**
 * `purchase_not_verified` for an unknown license, another e-mail and an unpaid order alike; the
 * `license_*` codes when the paid purchase's license is suspended, revoked or expired.
 */
export interface UnverifiedPurchase {
  success: false;
  verified: false;
  status: 'not_verified';
  code: 'purchase_not_verified' | 'license_suspended' | 'license_revoked' | 'license_expired';
  message: string;
}

export type PurchaseValidation = VerifiedPurchase | UnverifiedPurchase;

/** POST /api/checkout/mirror/subscription/charge: the period is paid (`duplicate` on repeats). */
export interface RenewalCharge {
  success: true;
  duplicate: boolean;
  status: 'paid';
  subscriptionId: string;
  orderId: string;
  transactionId: string;
  amount: number;
  currency: string;
  currentPeriodEnd: string;
  licenseExpiresAt: string;
}

export type MerchantEventType =
  | 'payment.succeeded'
  | 'payment.failed'
  | 'payment.refunded'
  | 'subscription.created'
  | 'subscription.renewed'
  | 'subscription.canceled'
  | 'dispute.created'
  | 'dispute.updated';

/** A checkout merchant webhook body; the id is the same on every attempt. */
export interface MerchantWebhookEvent<T = Record<string, unknown>> {
  id: string;
  type: MerchantEventType;
  data: T;
  timestamp: string;
}
