export { registerPaymentRoutes } from './routes.js';
export { createSandboxPartner, SANDBOX_CARDS } from './sandbox-partner.js';
export { createPaymentService, type PaymentService } from './service.js';
export { createStripePartner } from './stripe-partner.js';
