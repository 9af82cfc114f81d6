/**
 * `@licensing/client`: runs in Node 20+, browsers, Deno, Bun and Electron (main and renderer
 * alike), so nothing here imports a Node built-in (browser-entry.test.ts bundles it for the browser
 * to hold that). The helpers that take a seller's secret are on `@licensing/client/server`.
 */
export {
  type ArtifactBytes,
  ArtifactVerificationError,
  type ArtifactVerificationErrorCode,
  RELEASE_MANIFEST_USE,
  type ReleaseManifest,
  type VerifyArtifactOptions,
  verifyArtifact,
} from './artifact-manifest.js';
export { CheckoutClient, type CheckoutClientOptions } from './checkout-client.js';
export {
  type CreateOptions,
  LicensingClient,
  type LicensingClientOptions,
  type RequestOptions,
} from './client.js';
export type { ClockState, StateStore } from './clock-guard.js';
export { LicenseTokenError, LicensingApiError } from './errors.js';
export type { RetryOptions } from './http.js';
export {
  canonicalLicenseKey,
  checkRevocations,
  createOfflineActivationRequest,
  LICENSE_FILE_USE,
  type LicenseFileClaims,
  LicenseFileError,
  type LicenseFileErrorCode,
  REVOCATION_LIST_USE,
  type RevocationSnapshot,
  type VerifyLicenseFileOptions,
  verifyLicenseFile,
} from './license-file.js';
export type * from './release-types.js';
export { type ResponseInfo, responseInfo } from './response-info.js';
export { fetchKeySet, LicenseTokenVerifier, type LicenseTokenVerifierOptions } from './token-verifier.js';
export type * from './types.js';
