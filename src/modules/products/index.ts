export {
  CheckInDays,
  completePolicy,
  DEFAULT_LEASE_SECONDS,
  DeviceCount,
  EXPIRY_STRATEGIES,
  type ExpiryStrategy,
  ExpiryStrategySchema,
  GraceDays,
  LeaseSeconds,
  type LicensePolicy,
  type LicenseTerms,
  licenseLimits,
  MaxUses,
  NO_TERMS,
  policyExpiry,
  policyTerms,
  storedPolicy,
  termProblems,
  UNLIMITED_POLICY,
  USES_RESET_INTERVALS,
  type UsesResetInterval,
  UsesResetIntervalSchema,
} from './license-policy.js';
export { registerProductRoutes } from './routes.js';
export { FeatureList, PORTAL_POLICY_DEFAULTS } from './schemas.js';
export { createProductService, type ProductService } from './service.js';
