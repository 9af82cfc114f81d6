export { registerReleaseRoutes } from './routes.js';
export { createReleaseService, type ReleaseService, toRelease } from './service.js';
