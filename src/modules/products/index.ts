export { registerProductRoutes } from './routes.js';
export { createProductService, type ProductService } from './service.js';
