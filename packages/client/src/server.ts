/**
 * `@licensing/client/server`: everything on the root entry plus the helpers that hold a seller's
 * secrets (webhook secrets, a product's callbackSecret), for Node, Deno, Bun and Electron's main
 * process. They use node:crypto, and keeping them off the root entry keeps them out of browser
 * bundles, where those secrets must never be. Its verifyArtifact (in place of the root entry's)
 * also takes a file path and hashes as it reads.
 */
export { verifyArtifact } from './artifact-file.js';
export { fingerprintOf, machineFingerprint } from './machine-fingerprint.js';
export { type MerchantWebhookOptions, verifyMerchantWebhook } from './merchant-webhooks.js';
export { type MirrorPayloadInput, sealMirrorPayload } from './mirror-payload.js';
export {
  type MirrorRedirect,
  MirrorRedirectError,
  type MirrorRedirectOptions,
  readMirrorRedirect,
  verifyMirrorRedirect,
} from './mirror-redirect.js';
export * from './universal.js';
export {
  type VerifyWebhookInput,
  verifyWebhook,
  type WebhookEnvelope,
  WebhookVerificationError,
} from './webhooks.js';
