export { registerAnalyticsRoutes } from './routes.js';
export { type AnalyticsService, createAnalyticsService } from './service.js';
