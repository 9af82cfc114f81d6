import type { Tier } from '../../platform/http/principal.js';

/** Plan tiers from lowest to highest; a feature gated at one tier is open to those above it. */
export const TIERS: readonly Tier[] = ['free', 'pro', 'business', 'enterprise'];

export function tierAtLeast(tier: Tier, required: Tier): boolean {
  return TIERS.indexOf(tier) >= TIERS.indexOf(required);
}
