import type { Tier } from '../../platform/http/principal.js';

/**
 * The verification tier (svc_vt) follows the seller's plan and sets how long a license token
 * lives; a client calls verify again before exp for a fresh one.
 */
export type VerificationTier = 'basic' | 'advanced' | 'custom';

const TIER_OF_PLAN: Record<Tier, VerificationTier> = {
  free: 'basic',
  pro: 'basic',
  business: 'advanced',
  enterprise: 'custom',
};

export const TOKEN_LIFETIME_SECONDS: Record<VerificationTier, number> = {
  basic: 15 * 60,
  advanced: 60 * 60,
  custom: 24 * 60 * 60,
};

/** No token lives longer than this, whatever the tier. */
export const MAX_TOKEN_LIFETIME_SECONDS = Math.max(...Object.values(TOKEN_LIFETIME_SECONDS));

export function verificationTierOf(plan: Tier): VerificationTier {
  return TIER_OF_PLAN[plan];
}
