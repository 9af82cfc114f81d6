export { createTokenDenylist, type TokenDenylist } from './denylist.js';
export { parseJti } from './jti.js';
export { ACTIVATION_DELAY_MS, createKeyRing, KEY_CACHE_MS, type KeyRing } from './key-ring.js';
export { registerKeySetRoutes } from './routes.js';
export { MAX_TOKEN_LIFETIME_SECONDS, type VerificationTier, verificationTierOf } from './token-lifetime.js';
export {
  CLOCK_TOLERANCE_SECONDS,
  createTokenSigner,
  type LicenseTokenClaims,
  TOKEN_USE,
  type TokenCheck,
  type TokenSigner,
} from './token-signer.js';
