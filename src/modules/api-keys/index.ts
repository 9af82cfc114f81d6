export { registerApiKeyRoutes } from './routes.js';
export { type ApiKeyService, createApiKeyService } from './service.js';
