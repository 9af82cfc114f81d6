import Type, { type Static } from 'typebox';
import type { ErrorDetail } from '../../platform/errors.js';
import { Nullable } from '../../platform/http/schemas.js';

/**
 * The licensing policy a product sells: what every license sold, trialled or issued through it
 * starts from (docs/products.md, "License policy"). A license keeps a copy of it, taken when it is
 * issued (its device limit, seats, lease and expiry), so editing the product changes later
 * licenses only, until the seller applies the policy to the existing ones.
 */
export const LICENSE_MODELS = ['unlimited', 'node_locked', 'floating'] as const;
export type LicenseModel = (typeof LICENSE_MODELS)[number];

/** How long a seat is held without a heartbeat (floating licenses), unless the policy says. */
export const DEFAULT_LEASE_SECONDS = 600;

/**
 * What a license does once its expiry passes: `restrict` stops it (valid false, license_expired);
 * `maintain_access` keeps what it already had ("a year of updates, yours forever"): it goes on
 * verifying, answered as expired.
 */
export const EXPIRY_STRATEGIES = ['restrict', 'maintain_access'] as const;
export type ExpiryStrategy = (typeof EXPIRY_STRATEGIES)[number];

/**
 * When a usage count starts again from zero: never, at each UTC day or month, or at each paid
 * renewal of the subscription the license belongs to.
 */
export const USES_RESET_INTERVALS = ['never', 'day', 'month', 'renewal'] as const;
export type UsesResetInterval = (typeof USES_RESET_INTERVALS)[number];

export interface LicensePolicy {
  model: LicenseModel;
  /** node_locked: devices that may be bound at once. */
  maxDevices: number | null;
  /** floating: devices that may hold a seat at once. */
  maxSeats: number | null;
  /** floating: how long a seat is held without a heartbeat. */
  leaseSeconds: number | null;
  /** Days a one-time purchase's license lasts; null: perpetual. Subscriptions follow their period. */
  validityDays: number | null;
  /** A license must verify online at least every this many days (null: never required). */
  checkInDays: number | null;
  /** Days past a missed check-in before the license stops; null without checkInDays. */
  graceDays: number | null;
  expiryStrategy: ExpiryStrategy;
  /** Uses a license may consume (POST /v1/licenses/usage) per period; null: no quota. */
  maxUses: number | null;
  /** When the count starts again; null without maxUses. */
  usesResetInterval: UsesResetInterval | null;
}

/** What a product without a policy sells, as every product did before policies: no limit. */
export const UNLIMITED_POLICY: LicensePolicy = {
  model: 'unlimited',
  maxDevices: null,
  maxSeats: null,
  leaseSeconds: null,
  validityDays: null,
  checkInDays: null,
  graceDays: null,
  expiryStrategy: 'restrict',
  maxUses: null,
  usesResetInterval: null,
};

/** A number of devices or seats, on a policy or a license. */
export const DeviceCount = Type.Integer({
  minimum: 1,
  maximum: 100_000,
  errorMessage: 'must be a whole number from 1 to 100000',
});
/** How long a seat is held without a heartbeat, on a policy or a license. */
export const LeaseSeconds = Type.Integer({
  minimum: 60,
  maximum: 86_400,
  errorMessage: 'must be a whole number of seconds from 60 to 86400',
});
const ValidityDays = Type.Integer({
  minimum: 1,
  maximum: 36_500,
  errorMessage: 'must be a whole number of days from 1 to 36500, or null for perpetual',
});
/** How often a license must verify online, on a policy or a license. */
export const CheckInDays = Type.Integer({
  minimum: 1,
  maximum: 3_650,
  errorMessage: 'must be a whole number of days from 1 to 3650, or null for no check-in',
});
/** Days of grace after a missed check-in, on a policy or a license. */
export const GraceDays = Type.Integer({
  minimum: 0,
  maximum: 365,
  errorMessage: 'must be a whole number of days from 0 to 365',
});
/** A usage quota, on a policy or a license. */
export const MaxUses = Type.Integer({
  minimum: 1,
  maximum: 1_000_000_000,
  errorMessage: 'must be a whole number from 1 to 1000000000, or null for no quota',
});
export const ExpiryStrategySchema = Type.Enum(EXPIRY_STRATEGIES, {
  errorMessage: 'must be restrict or maintain_access',
});
export const UsesResetIntervalSchema = Type.Enum(USES_RESET_INTERVALS, {
  errorMessage: 'must be never, day, month or renewal',
});

/** The policy as a seller writes it: the model, and the fields that model takes. */
export const LicensePolicyInput = Type.Object(
  {
    model: Type.Enum(LICENSE_MODELS, { errorMessage: 'must be unlimited, node_locked or floating' }),
    maxDevices: Type.Optional(Nullable(DeviceCount)),
    maxSeats: Type.Optional(Nullable(DeviceCount)),
    leaseSeconds: Type.Optional(Nullable(LeaseSeconds)),
    validityDays: Type.Optional(Nullable(ValidityDays)),
    checkInDays: Type.Optional(Nullable(CheckInDays)),
    graceDays: Type.Optional(Nullable(GraceDays)),
    expiryStrategy: Type.Optional(ExpiryStrategySchema),
    maxUses: Type.Optional(Nullable(MaxUses)),
    usesResetInterval: Type.Optional(Nullable(UsesResetIntervalSchema)),
  },
  { additionalProperties: false },
);
export type LicensePolicyInputValue = Static<typeof LicensePolicyInput>;

/** The policy as products answer it: every field, null where the model does not take it. */
export const LicensePolicySchema = Type.Object({
  model: Type.Enum(LICENSE_MODELS),
  maxDevices: Nullable(Type.Integer()),
  maxSeats: Nullable(Type.Integer()),
  leaseSeconds: Nullable(Type.Integer()),
  validityDays: Nullable(Type.Integer()),
  checkInDays: Nullable(Type.Integer()),
  graceDays: Nullable(Type.Integer()),
  expiryStrategy: Type.Enum(EXPIRY_STRATEGIES),
  maxUses: Nullable(Type.Integer()),
  usesResetInterval: Nullable(Type.Enum(USES_RESET_INTERVALS)),
});

/**
 * The written policy with every field present: a floating policy's lease defaults, as do the
 * grace of a check-in (none) and the reset of a quota (never).
 */
export function completePolicy(input: LicensePolicyInputValue | LicensePolicy): LicensePolicy {
  const checkInDays = input.checkInDays ?? null;
  const maxUses = input.maxUses ?? null;
  return {
    model: input.model,
    maxDevices: input.maxDevices ?? null,
    maxSeats: input.maxSeats ?? null,
    leaseSeconds:
      input.model === 'floating'
        ? (input.leaseSeconds ?? DEFAULT_LEASE_SECONDS)
        : (input.leaseSeconds ?? null),
    validityDays: input.validityDays ?? null,
    checkInDays,
    graceDays: input.graceDays ?? (checkInDays === null ? null : 0),
    expiryStrategy: input.expiryStrategy ?? 'restrict',
    maxUses,
    usesResetInterval: input.usesResetInterval ?? (maxUses === null ? null : 'never'),
  };
}

/**
 * Why a policy is refused, each detail naming its field (`licensePolicy.maxDevices`…): a device
 * limit belongs to node_locked, seats and lease to floating, neither to unlimited; validity to
 * one-time products (a subscription's licenses follow its period).
 */
export function policyProblems(policy: LicensePolicy, billingType: 'one_time' | 'recurring'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const field = (name: keyof LicensePolicy) => `licensePolicy.${name}`;
  if (policy.model === 'node_locked' && policy.maxDevices === null)
    problems.push({
      field: field('maxDevices'),
      message: 'is required for a node_locked policy (devices per license)',
    });
  if (policy.model !== 'node_locked' && policy.maxDevices !== null)
    problems.push({ field: field('maxDevices'), message: `does not apply to a ${policy.model} policy` });
  if (policy.model === 'floating' && policy.maxSeats === null)
    problems.push({
      field: field('maxSeats'),
      message: 'is required for a floating policy (seats per license)',
    });
  if (policy.model !== 'floating') {
    for (const name of ['maxSeats', 'leaseSeconds'] as const)
      if (policy[name] !== null)
        problems.push({ field: field(name), message: 'applies only to a floating policy' });
  }
  if (billingType === 'recurring' && policy.validityDays !== null)
    problems.push({
      field: field('validityDays'),
      message: 'does not apply to a recurring product: its licenses last as long as the subscription',
    });
  problems.push(...termProblems(policy, billingType, field));
  return problems;
}

/**
 * The check-in, expiry and quota fields that go together, on a policy or a license: grace
 * needs a check-in, a reset interval a quota, a reset at renewal a subscription.
 */
export function termProblems(
  terms: Pick<LicensePolicy, 'checkInDays' | 'graceDays' | 'maxUses' | 'usesResetInterval'>,
  billingType: 'one_time' | 'recurring' | null,
  field: (name: 'graceDays' | 'usesResetInterval') => string,
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (terms.checkInDays === null && terms.graceDays !== null && terms.graceDays !== 0)
    problems.push({ field: field('graceDays'), message: 'applies only with checkInDays' });
  if (terms.maxUses === null && terms.usesResetInterval !== null && terms.usesResetInterval !== 'never')
    problems.push({ field: field('usesResetInterval'), message: 'applies only with maxUses' });
  if (billingType === 'one_time' && terms.usesResetInterval === 'renewal')
    problems.push({
      field: field('usesResetInterval'),
      message: 'renewal applies only to a recurring product (a one-time purchase never renews)',
    });
  return problems;
}

/** A stored policy (products.license_policy, orders.license_policy), read back. */
export function storedPolicy(value: unknown): LicensePolicy {
  if (value === null || typeof value !== 'object') return UNLIMITED_POLICY;
  const stored = value as Partial<LicensePolicy>;
  if (!LICENSE_MODELS.includes(stored.model as LicenseModel)) return UNLIMITED_POLICY;
  return completePolicy(stored as LicensePolicy);
}

/** When a license issued now under the policy ends: validityDays from now, or never (null). */
export function policyExpiry(policy: LicensePolicy, now: Date): Date | null {
  return policy.validityDays === null ? null : new Date(now.getTime() + policy.validityDays * 86_400_000);
}

/** What a license carries of check-in, expiry and quota (its own copy, taken when issued). */
export interface LicenseTerms {
  checkIn: { days: number; graceDays: number } | null;
  expiryStrategy: ExpiryStrategy;
  usage: { maxUses: number; resetInterval: UsesResetInterval } | null;
}

/** The terms of a license without any: no check-in, no quota, stopped at expiry. */
export const NO_TERMS: LicenseTerms = { checkIn: null, expiryStrategy: 'restrict', usage: null };

/** The check-in, expiry and quota a license issued under the policy carries. */
export function policyTerms(policy: LicensePolicy): LicenseTerms {
  return {
    checkIn:
      policy.checkInDays === null ? null : { days: policy.checkInDays, graceDays: policy.graceDays ?? 0 },
    expiryStrategy: policy.expiryStrategy,
    usage:
      policy.maxUses === null
        ? null
        : { maxUses: policy.maxUses, resetInterval: policy.usesResetInterval ?? 'never' },
  };
}

/**
 * The limits a license issued under the policy carries: a device limit (null: none), or seats
 * with their lease for a floating one; and its terms.
 */
export function licenseLimits(policy: LicensePolicy): {
  maxDevices: number | null;
  seats: { maxSeats: number; leaseSeconds: number } | null;
  terms: LicenseTerms;
} {
  const terms = policyTerms(policy);
  if (policy.model === 'floating')
    return {
      maxDevices: null,
      seats: {
        maxSeats: policy.maxSeats ?? 1,
        leaseSeconds: policy.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
      },
      terms,
    };
  return { maxDevices: policy.model === 'node_locked' ? policy.maxDevices : null, seats: null, terms };
}
