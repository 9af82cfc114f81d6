import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import type { ArtifactStore } from './artifact-store.js';
import * as store from './store.js';

/**
 * How long a stored blob no artifact names is kept. An upload stores its bytes first and writes
 * the artifact's row a moment later; a blob this old that no row names is no upload's in flight.
 */
export const UNREFERENCED_BLOB_GRACE_MS = 60 * 60 * 1000;

export type BlobPurge = ReturnType<typeof createBlobPurge>;

/**
 * Deletes the stored bytes no artifact refers to any more (a draft's replaced or removed file, a
 * deleted draft) once they are older than the grace period, and what interrupted uploads left
 * behind. Each blob's age is read again just before it is deleted, so bytes uploaded again
 * meanwhile stay. Safe on several nodes at once: a blob deleted twice is deleted once.
 */
export function createBlobPurge({
  db,
  clock,
  log,
  blobs,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  blobs: ArtifactStore;
}) {
  return {
    async purge(stopping?: AbortSignal): Promise<{ blobs: number; leftovers: number }> {
      const before = new Date(clock.now().getTime() - UNREFERENCED_BLOB_GRACE_MS);
      let removed = 0;
      for await (const batch of blobs.blobs()) {
        const old = batch.filter((blob) => blob.storedAt < before);
        const referenced = await store.referencedBlobs(
          db,
          old.map((blob) => blob.sha256),
        );
        for (const blob of old) {
          if (!referenced.has(blob.sha256) && (await blobs.remove(blob.sha256, before))) removed++;
        }
        if (stopping?.aborted) break;
      }
      const leftovers = await blobs.removeLeftovers(before);
      if (removed > 0 || leftovers > 0) log.info({ blobs: removed, leftovers }, 'release.artifact.purged');
      return { blobs: removed, leftovers };
    },
  };
}
