import type { ArtifactStoreSettings } from '../../platform/config.js';
import type { Log } from '../../platform/log.js';
import { type ArtifactStore, createLocalArtifactStore } from './artifact-store.js';

/**
 * The artifact store the settings name. The S3 one is imported only here and only when
 * configured: the AWS SDK is a large module a node keeping files in a folder never loads.
 */
export async function openArtifactStore(settings: ArtifactStoreSettings, log: Log): Promise<ArtifactStore> {
  if (settings.kind === 'local') return createLocalArtifactStore(settings.dir);
  const { createS3ArtifactStore } = await import('./s3-artifact-store.js');
  return createS3ArtifactStore(settings, log);
}
