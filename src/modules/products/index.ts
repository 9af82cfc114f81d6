export { registerProductRoutes } from './routes.js';
export { FeatureList } from './schemas.js';
export { createProductService, type ProductService } from './service.js';
