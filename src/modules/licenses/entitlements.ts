import type { LicenseMetadata } from '../../platform/db/schema.js';

/**
 * The entitlements a license grants, from one place: the license's own `features` when set
 * (null inherits), else `metadata.features` as sellers wrote it before entitlements existed,
 * else its product's. Undefined when none of them says anything (no claim, as before).
 */
export function effectiveFeatures(license: {
  features: string[] | null;
  metadata: unknown;
  product_features: string[] | null;
}): string[] | undefined {
  if (license.features !== null) return license.features;
  const legacy = (license.metadata as LicenseMetadata | null)?.features;
  if (Array.isArray(legacy)) return legacy;
  return license.product_features?.length ? license.product_features : undefined;
}
