export { registerCheckoutRoutes } from './routes.js';
export { type CheckoutService, createCheckoutService } from './service.js';
