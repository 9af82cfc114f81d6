export { registerAnalyticsRoutes } from './routes.js';
export { overviewPeriod } from './seller-overview.js';
export { type AnalyticsService, createAnalyticsService } from './service.js';
export { createVerificationCounter, type VerificationCounter } from './verification-counts.js';
