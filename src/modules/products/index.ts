export {
  completePolicy,
  DEFAULT_LEASE_SECONDS,
  DeviceCount,
  LeaseSeconds,
  type LicensePolicy,
  licenseLimits,
  policyExpiry,
  storedPolicy,
  UNLIMITED_POLICY,
} from './license-policy.js';
export { registerProductRoutes } from './routes.js';
export { FeatureList, PORTAL_POLICY_DEFAULTS } from './schemas.js';
export { createProductService, type ProductService } from './service.js';
