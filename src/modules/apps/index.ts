export { registerAppRoutes } from './routes.js';
export { AppParams } from './schemas.js';
export { type AppService, createAppService } from './service.js';
