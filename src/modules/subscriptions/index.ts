export { createRenewals, type Renewals } from './renew.js';
export { registerRenewalRoutes, registerSubscriptionRoutes } from './routes.js';
export { createSubscriptionService, type SubscriptionService } from './service.js';
export { openSubscription } from './subscription-events.js';
