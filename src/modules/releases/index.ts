export { registerArtifactRoutes } from './artifact-routes.js';
export type { ArtifactStore } from './artifact-store.js';
export { type ArtifactService, createArtifactService } from './artifacts.js';
export { type BlobPurge, createBlobPurge } from './blob-purge.js';
export {
  createDistribution,
  type Distribution,
  type HeldLicense,
  type HolderDownloads,
  type HolderRefusal,
} from './distribution.js';
export { registerDistributionRoutes } from './distribution-routes.js';
export { createDownloadLinks } from './download-links.js';
export { registerFeedRoutes } from './feed-routes.js';
export { createUpdaterFeeds, type UpdaterFeeds } from './feeds.js';
export { createManifestSigner, RELEASE_MANIFEST_USE } from './manifests.js';
export { openArtifactStore } from './open-artifact-store.js';
export { registerReleaseRoutes } from './routes.js';
export { createReleaseService, type ReleaseService, toRelease } from './service.js';
