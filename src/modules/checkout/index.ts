export { sealMirrorPayload } from './mirror-payload.js';
export { verifyRedirect } from './mirror-signature.js';
export { registerCheckoutRoutes } from './routes.js';
export { type CheckoutService, createCheckoutService } from './service.js';
