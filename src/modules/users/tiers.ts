import { TIERS, type Tier } from '../../platform/http/principal.js';

export { TIERS };

export function tierAtLeast(tier: Tier, required: Tier): boolean {
  return TIERS.indexOf(tier) >= TIERS.indexOf(required);
}
