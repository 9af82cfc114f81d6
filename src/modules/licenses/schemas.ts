import Type, { type Static } from 'typebox';
import { Email, Nullable, PageQuery, SortQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';
import {
  CheckInDays,
  DEFAULT_LEASE_SECONDS,
  DeviceCount,
  EXPIRY_STRATEGIES,
  ExpiryStrategySchema,
  FeatureList,
  GraceDays,
  LeaseSeconds,
  MaxUses,
  USES_RESET_INTERVALS,
  UsesResetIntervalSchema,
} from '../products/index.js';

export const LICENSE_STATUSES = ['active', 'trial', 'suspended', 'revoked', 'expired'] as const;

/** plan and features travel in license tokens; other keys are the seller's own notes. */
export const Metadata = Type.Object(
  {
    plan: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    features: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, uniqueItems: true }),
    ),
  },
  { additionalProperties: true, maxProperties: 50 },
);

const ExpiresAt = Nullable(
  Type.String({
    format: 'date-time',
    errorMessage: 'must be an ISO 8601 date-time with a time zone, between 1970 and 9999, or null',
  }),
);
const MaxDevices = Nullable(DeviceCount);
const MaxSeats = DeviceCount;

export { DEFAULT_LEASE_SECONDS };

/** Entitlements of one license; null inherits its product's. */
const LicenseFeatures = Nullable(FeatureList);

export const License = Type.Object({
  id: Uuid,
  key: Type.String(),
  appId: Uuid,
  productId: Nullable(Uuid),
  userId: Uuid,
  email: Nullable(Type.String()),
  status: Type.Enum(LICENSE_STATUSES),
  expiresAt: Nullable(Timestamp),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  maxDevices: Nullable(Type.Integer()),
  deviceCount: Type.Integer(),
  /** Entitlements overriding the product's, or null to inherit them. */
  features: Nullable(Type.Array(Type.String())),
  floating: Type.Boolean(),
  maxSeats: Nullable(Type.Integer()),
  leaseSeconds: Nullable(Type.Integer()),
  /** When the license began as a trial: the end of that trial (kept after it converts); else null. */
  trialEndsAt: Nullable(Timestamp),
  /** When a payment turned the trial into a paid license; null otherwise. */
  convertedAt: Nullable(Timestamp),
  checkInDays: Nullable(
    Type.Integer({ description: 'The license must verify online every this many days; null: never' }),
  ),
  graceDays: Nullable(Type.Integer({ description: 'Days past a missed check-in before it stops' })),
  lastCheckInAt: Nullable(
    Type.String({
      format: 'date-time',
      description: 'The last online check-in (its issue until the first); null without checkInDays',
    }),
  ),
  checkInBy: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'Past this moment without a check-in, verify answers check_in_overdue; null without checkInDays',
    }),
  ),
  expiryStrategy: Type.Enum(EXPIRY_STRATEGIES, {
    description: 'restrict: stops at its expiry; maintain_access: keeps verifying, answered as expired',
  }),
  maxUses: Nullable(
    Type.Integer({ description: 'Uses per period (POST /v1/licenses/usage); null: no quota' }),
  ),
  usesResetInterval: Nullable(Type.Enum(USES_RESET_INTERVALS)),
  lastVerifiedAt: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'The last time client software verified the key, whatever the answer; written in batches, at most once a minute for a license verified steadily, so up to a minute and VERIFICATION_FLUSH_MS (10 s) behind; null: never',
    }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type LicenseResource = Static<typeof License>;

export const LicenseCreate = Type.Object(
  {
    productId: Type.Optional(Uuid),
    email: Type.Optional(Email),
    expiresAt: Type.Optional(ExpiresAt),
    metadata: Type.Optional(Metadata),
    maxDevices: Type.Optional(MaxDevices),
    features: Type.Optional(LicenseFeatures),
    floating: Type.Optional(Type.Boolean()),
    maxSeats: Type.Optional(MaxSeats),
    leaseSeconds: Type.Optional(LeaseSeconds),
    /** A trial by hand (a sales-led pilot): status trial, ending after this many days. */
    trialDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 365,
        errorMessage: 'must be a whole number of days from 1 to 365',
      }),
    ),
    checkInDays: Type.Optional(Nullable(CheckInDays)),
    graceDays: Type.Optional(Nullable(GraceDays)),
    expiryStrategy: Type.Optional(ExpiryStrategySchema),
    maxUses: Type.Optional(Nullable(MaxUses)),
    usesResetInterval: Type.Optional(Nullable(UsesResetIntervalSchema)),
  },
  { additionalProperties: false },
);
export type LicenseCreateInput = Static<typeof LicenseCreate>;

export const LicenseUpdate = Type.Object(
  {
    email: Type.Optional(Nullable(Email)),
    expiresAt: Type.Optional(ExpiresAt),
    metadata: Type.Optional(Metadata),
    maxDevices: Type.Optional(MaxDevices),
    features: Type.Optional(LicenseFeatures),
    maxSeats: Type.Optional(MaxSeats),
    leaseSeconds: Type.Optional(LeaseSeconds),
    checkInDays: Type.Optional(Nullable(CheckInDays)),
    graceDays: Type.Optional(Nullable(GraceDays)),
    expiryStrategy: Type.Optional(ExpiryStrategySchema),
    maxUses: Type.Optional(Nullable(MaxUses)),
    usesResetInterval: Type.Optional(Nullable(UsesResetIntervalSchema)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type LicenseUpdateInput = Static<typeof LicenseUpdate>;

export const ProductPolicyParams = Type.Object({ id: Uuid }, { additionalProperties: false });
/** What applying a product's policy to its existing licenses did. */
export const PolicyApplied = Type.Object({
  /** Licenses whose limits changed (each with license.updated). */
  updated: Type.Integer(),
  /** Licenses of the other kind (floating against node-locked), left as they are. */
  skipped: Type.Integer(),
});

export const LicenseParams = Type.Object({ appId: Uuid, licenseId: Uuid }, { additionalProperties: false });
export const DeviceParams = Type.Object(
  { appId: Uuid, licenseId: Uuid, hwuid: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const LICENSE_SORTS = ['createdAt', 'lastVerifiedAt', 'expiresAt', 'status', 'email'] as const;
export type LicenseSortColumn = (typeof LICENSE_SORTS)[number];

const LicenseFilterFields = {
  status: Type.Optional(Type.Enum(LICENSE_STATUSES)),
  productId: Type.Optional(Uuid),
  email: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 254,
      description: 'Matches any part of the buyer’s address, ignoring case (% and _ are plain characters)',
    }),
  ),
  /** One exact key, typed the way people type keys (case, spaces and dashes forgiven). */
  key: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  sort: SortQuery(LICENSE_SORTS, '-createdAt (newest first)'),
};

export const LicenseListQuery = Type.Object(
  { ...PageQuery, ...LicenseFilterFields },
  { additionalProperties: false },
);
export type LicenseFilter = Omit<Static<typeof LicenseListQuery>, 'limit' | 'offset'>;

const AppFilter = {
  appId: Type.Optional(
    Type.String({
      format: 'uuid',
      description: 'Only this app’s licenses (an API key may name its own app only)',
    }),
  ),
};
/** The seller's licenses across their apps (an API key: its own app's), optionally of one app. */
export const AllLicensesQuery = Type.Object(
  { ...PageQuery, ...LicenseFilterFields, ...AppFilter },
  { additionalProperties: false },
);
export type AllLicensesFilter = Omit<Static<typeof AllLicensesQuery>, 'limit' | 'offset'>;
/** The same filters and sort as the list, without paging: the export has every row. */
export const LicenseExportQuery = Type.Object(
  { ...LicenseFilterFields, ...AppFilter },
  { additionalProperties: false },
);

export const LicenseList = Type.Object({
  licenses: Type.Array(License),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const Device = Type.Object({
  hwuid: Type.String(),
  /** What the client software last said the device is, and runs on; null until it said. */
  name: Nullable(Type.String()),
  platform: Nullable(Type.String()),
  activatedAt: Timestamp,
  offlineUntil: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'Until when an offline license file holds the device (the buyer cannot release it before); null when none does',
    }),
  ),
});
export const Seat = Type.Object({
  hwuid: Type.String(),
  name: Nullable(Type.String()),
  platform: Nullable(Type.String()),
  acquiredAt: Timestamp,
  leaseExpiresAt: Timestamp,
});
export const SeatList = Type.Object({
  seats: Type.Array(Seat),
  total: Type.Integer(),
  maxSeats: Nullable(Type.Integer()),
});
export const DeviceList = Type.Object({ devices: Type.Array(Device), total: Type.Integer() });

/** Device ids are whatever the client software derives; bounded, and never blank. */
export const Hwuid = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  errorMessage: 'must be 1 to 200 characters, not blank',
});

/** Whether the call is the client's online check-in (licenses with checkInDays). */
const CheckIn = Type.Optional(
  Type.Boolean({
    description:
      'Default true: this call is the client’s online check-in. A license past its check-in deadline answers check_in_overdue, and the check-in is recorded so the next call succeeds; false asks without checking in',
  }),
);
/**
 * Printable text with no space at either end: what a person reads in a device list. The pattern
 * matches in linear time whatever the length sent (it is tested before maxLength refuses).
 */
const deviceText = (max: number) =>
  Type.String({
    minLength: 1,
    maxLength: max,
    pattern: '^[^\\s\\x00-\\x1f\\x7f](?:[^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f])?$',
    errorMessage: `must be 1 to ${max} printable characters, with no space at either end`,
  });
/**
 * What the client says the device is ("Ana's MacBook") and runs on ("macOS 15"), sent with the
 * hwuid; stored with the device or seat and replaced when a later call sends another.
 */
export const DeviceLabel = {
  name: Type.Optional(deviceText(100)),
  platform: Type.Optional(deviceText(50)),
};
export interface DeviceLabelInput {
  name?: string;
  platform?: string;
}

export const VerifyBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 100 }),
    hwuid: Type.Optional(Hwuid),
    appId: Type.Optional(Uuid),
    checkIn: CheckIn,
    ...DeviceLabel,
  },
  { additionalProperties: false },
);
export const ValidateHardwareBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 100 }),
    hwuid: Hwuid,
    appId: Type.Optional(Uuid),
    checkIn: CheckIn,
    ...DeviceLabel,
  },
  { additionalProperties: false },
);
/**
 * Checkout (take or keep a seat) and checkin (give it back) name the device the same way; checkin
 * takes the label too, so a client may send one body to both, and ignores it.
 */
export const SeatBody = ValidateHardwareBody;

export const VERIFY_CODES = [
  'license_not_found',
  'license_expired',
  'license_suspended',
  'license_revoked',
  'hwuid_required',
  'device_limit_reached',
  'device_not_bound',
  'not_floating',
  'seat_required',
  'no_seat_available',
  'seat_not_held',
  'trial_already_used',
  'check_in_overdue',
] as const;
export type VerifyCode = (typeof VERIFY_CODES)[number];

export const VerificationResult = Type.Object({
  valid: Type.Boolean(),
  /** The app the key belongs to (null when unknown), so a client can refuse another app's key. */
  appId: Nullable(Uuid),
  code: Type.Optional(Type.Enum(VERIFY_CODES)),
  status: Type.String(),
  expiresAt: Nullable(Type.String()),
  email: Nullable(Type.String()),
  verificationType: Nullable(Type.String()),
  hw_bound: Type.Boolean(),
  license_token: Type.Optional(Type.String()),
  license_token_expires_at: Type.Optional(Timestamp),
  license_jwks_uri: Type.Optional(Type.String()),
  /** Entitlements in force (the license's own, else its product's); on valid answers. */
  features: Type.Optional(Type.Array(Type.String())),
  /** Floating licenses: when the seat this device holds lapses without a heartbeat. */
  lease_expires_at: Type.Optional(Timestamp),
  /** Past its expiry under expiry strategy maintain_access: still valid, with status EXPIRED. */
  expired: Type.Optional(Type.Boolean()),
  /** Licenses with checkInDays: the client must verify online again by then. */
  check_in_by: Type.Optional(Timestamp),
  /** Licenses with a usage quota: uses left in the current period. */
  uses_remaining: Type.Optional(Type.Integer()),
});
export type VerificationResultType = Static<typeof VerificationResult>;

export const UsageBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 100 }),
    hwuid: Type.Optional(Hwuid),
    appId: Type.Optional(Uuid),
    amount: Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      errorMessage: 'must be a whole number from 1 to 1000000',
      description: 'Uses to consume, all or none',
    }),
  },
  { additionalProperties: false },
);

export const USAGE_CODES = [
  'license_not_found',
  'license_expired',
  'license_suspended',
  'license_revoked',
  'hwuid_required',
  'device_not_bound',
  'seat_required',
  'check_in_overdue',
  'no_usage_quota',
  'usage_exhausted',
] as const;
export type UsageCode = (typeof USAGE_CODES)[number];

export const UsageResult = Type.Object({
  /** Whether the amount was consumed; false leaves the count as it was. */
  consumed: Type.Boolean(),
  /** Why nothing was consumed. */
  code: Type.Optional(Type.Enum(USAGE_CODES)),
  /** Uses counted in the current period, after this call (null: unknown key, or no quota). */
  uses: Nullable(Type.Integer()),
  max_uses: Nullable(Type.Integer()),
  uses_remaining: Nullable(Type.Integer()),
  /** When the count starts again from zero (day or month); null when never by time. */
  resets_at: Nullable(Timestamp),
});
export type UsageResultType = Static<typeof UsageResult>;

/** A license's usage, as its seller reads it. */
export const LicenseUsage = Type.Object({
  licenseId: Uuid,
  maxUses: Nullable(Type.Integer()),
  uses: Type.Integer({ description: 'Uses counted in the current period' }),
  usesRemaining: Nullable(Type.Integer()),
  usesResetInterval: Nullable(Type.Enum(USES_RESET_INTERVALS)),
  resetsAt: Nullable(Timestamp),
});
export const LicenseUsageSet = Type.Object(
  {
    uses: Type.Integer({
      minimum: 0,
      maximum: 1_000_000_000,
      errorMessage: 'must be a whole number from 0 to 1000000000',
      description: 'The count of the current period',
    }),
  },
  { additionalProperties: false },
);

export const CheckinResult = Type.Object({
  released: Type.Boolean(),
  /** Why nothing was released: license_not_found, not_floating or seat_not_held. */
  code: Type.Optional(Type.Enum(['license_not_found', 'not_floating', 'seat_not_held'])),
});

export const IntrospectBody = Type.Object(
  { license_token: Type.String({ minLength: 1, maxLength: 8192 }) },
  { additionalProperties: false },
);
export const IntrospectResult = Type.Object({
  active: Type.Boolean(),
  reason: Type.Optional(Type.String()),
  sub: Type.Optional(Type.String()),
  aud: Type.Optional(Type.String()),
  jti: Type.Optional(Type.String()),
  exp: Type.Optional(Type.Integer()),
  iat: Type.Optional(Type.Integer()),
  status: Type.Optional(Type.String()),
  license_exp: Type.Optional(Type.Integer()),
  svc_vt: Type.Optional(Type.String()),
  seller_tier: Type.Optional(Type.String()),
  hw_bound: Type.Optional(Type.Boolean()),
});

export const RevokeTokenBody = Type.Object(
  { jti: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
export const RevokeTokenResult = Type.Object({
  jti: Type.String(),
  revoked: Type.Literal(true),
  expiresAt: Timestamp,
});
