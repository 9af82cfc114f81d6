export { normalizeLicenseKey } from './license-key.js';
export { registerLicenseRoutes, registerVerificationRoutes } from './routes.js';
export { createLicenseService, type LicenseService } from './service.js';
export { createVerification, type Verification } from './verification.js';
