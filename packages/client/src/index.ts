export { LicensingClient, type LicensingClientOptions } from './client.js';
export { LicenseTokenError, LicensingApiError } from './errors.js';
export { LicenseTokenVerifier, type LicenseTokenVerifierOptions } from './token-verifier.js';
export type * from './types.js';
export { verifyWebhook, type WebhookEnvelope, WebhookVerificationError } from './webhooks.js';
