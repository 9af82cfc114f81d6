export { registerProductRoutes } from './routes.js';
export { FeatureList, PORTAL_POLICY_DEFAULTS } from './schemas.js';
export { createProductService, type ProductService } from './service.js';
