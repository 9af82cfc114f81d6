export { CheckoutClient, type CheckoutClientOptions } from './checkout-client.js';
export { LicensingClient, type LicensingClientOptions } from './client.js';
export { LicenseTokenError, LicensingApiError } from './errors.js';
export { type MerchantWebhookOptions, verifyMerchantWebhook } from './merchant-webhooks.js';
export { type MirrorPayloadInput, sealMirrorPayload } from './mirror-payload.js';
export {
  type MirrorRedirect,
  MirrorRedirectError,
  type MirrorRedirectOptions,
  readMirrorRedirect,
  verifyMirrorRedirect,
} from './mirror-redirect.js';
export { LicenseTokenVerifier, type LicenseTokenVerifierOptions } from './token-verifier.js';
export type * from './types.js';
export { verifyWebhook, type WebhookEnvelope, WebhookVerificationError } from './webhooks.js';
