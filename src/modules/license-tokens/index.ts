export { createTokenDenylist, type TokenDenylist } from './denylist.js';
export { parseJti } from './jti.js';
export {
  createKeyRing,
  DEFAULT_SIGNING_ALGORITHM,
  type KeyListing,
  type KeyRing,
  type KeyState,
  SIGNING_ALGORITHMS,
} from './key-ring.js';
export { createKeySealer } from './key-sealing.js';
export {
  createLicenseFileSigner,
  LICENSE_FILE_USE,
  type LicenseFileSigner,
  licenseFileKey,
  REVOCATION_LIST_USE,
  revocationListPeriod,
} from './license-file-signer.js';
export { registerKeySetRoutes } from './routes.js';
export { verificationTierOf } from './token-lifetime.js';
export {
  createTokenSigner,
  type LicenseTokenClaims,
  type TokenCheck,
  type TokenSigner,
} from './token-signer.js';
