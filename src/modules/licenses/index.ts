export {
  type BuyerReleaseOutcome,
  LONGEST_RELEASE_PERIOD_DAYS,
  type ReleaseAllowance,
  releaseAllowance,
} from './buyer-release.js';
export { effectiveFeatures } from './entitlements.js';
export { normalizeLicenseKey } from './license-key.js';
export { effectiveStatus, grantsUse, keepsAccess, REASON_OF_STATUS } from './license-status.js';
export {
  createOfflineActivation,
  type OfflineActivation,
  parseActivationRequest,
} from './offline-activation.js';
export { registerOfflineLicenseRoutes } from './offline-routes.js';
export { offlineLicenses } from './offline-store.js';
export { registerLicenseRoutes } from './routes.js';
export { Hwuid } from './schemas.js';
export { createLicenseService, type LicenseService } from './service.js';
export type { TokenHolder, TokenRefusal } from './token-introspection.js';
export { createVerification, type Verification } from './verification.js';
export { createVerificationCache, type VerificationCache } from './verification-cache.js';
export { registerVerificationRoutes } from './verification-routes.js';
export { recordLastVerified } from './verification-store.js';
