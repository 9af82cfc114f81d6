export { registerArtifactRoutes } from './artifact-routes.js';
export { createLocalArtifactStore } from './artifact-store.js';
export { type ArtifactService, createArtifactService } from './artifacts.js';
export { registerReleaseRoutes } from './routes.js';
export { createReleaseService, type ReleaseService, toRelease } from './service.js';
