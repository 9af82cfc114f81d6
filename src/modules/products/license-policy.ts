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
}

/** What a product without a policy sells, as every product did before policies: no limit. */
export const UNLIMITED_POLICY: LicensePolicy = {
  model: 'unlimited',
  maxDevices: null,
  maxSeats: null,
  leaseSeconds: null,
  validityDays: null,
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

/** The policy as a seller writes it: the model, and the fields that model takes. */
export const LicensePolicyInput = Type.Object(
  {
    model: Type.Enum(LICENSE_MODELS, { errorMessage: 'must be unlimited, node_locked or floating' }),
    maxDevices: Type.Optional(Nullable(DeviceCount)),
    maxSeats: Type.Optional(Nullable(DeviceCount)),
    leaseSeconds: Type.Optional(Nullable(LeaseSeconds)),
    validityDays: Type.Optional(Nullable(ValidityDays)),
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
});

/** The written policy with every field present: a floating policy's lease defaults. */
export function completePolicy(input: LicensePolicyInputValue | LicensePolicy): LicensePolicy {
  return {
    model: input.model,
    maxDevices: input.maxDevices ?? null,
    maxSeats: input.maxSeats ?? null,
    leaseSeconds:
      input.model === 'floating'
        ? (input.leaseSeconds ?? DEFAULT_LEASE_SECONDS)
        : (input.leaseSeconds ?? null),
    validityDays: input.validityDays ?? null,
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

/**
 * The limits a license issued under the policy carries: a device limit (null: none), or seats
 * with their lease for a floating one.
 */
export function licenseLimits(policy: LicensePolicy): {
  maxDevices: number | null;
  seats: { maxSeats: number; leaseSeconds: number } | null;
} {
  if (policy.model === 'floating')
    return {
      maxDevices: null,
      seats: {
        maxSeats: policy.maxSeats ?? 1,
        leaseSeconds: policy.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
      },
    };
  return { maxDevices: policy.model === 'node_locked' ? policy.maxDevices : null, seats: null };
}
