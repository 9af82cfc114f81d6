import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What the store holds of one upload: its address (the SHA-256), its size and both digests. */
export interface StoredBlob {
  sha256: string;
  sha512: string;
  size: number;
}

/** An upload that passed its size limit; nothing of it is kept. */
export class ArtifactTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`larger than ${limit} bytes`);
  }
}

export type ArtifactStore = ReturnType<typeof createLocalArtifactStore>;

/**
 * Artifacts in a folder, content-addressed: `<dir>/<first two hex digits>/<sha256>`. An upload
 * streams through both hashes into `<dir>/tmp/<random>` and is renamed into place only once every
 * byte is written and synced, so a reader never sees half a file and an interrupted upload leaves
 * nothing but its temporary file, removed at once. Memory use is one chunk, whatever the size.
 */
export function createLocalArtifactStore(dir: string) {
  const tmpDir = path.join(dir, 'tmp');
  const pathOf = (sha256: string) => path.join(dir, sha256.slice(0, 2), sha256);

  return {
    pathOf,

    async put(source: Readable, maxBytes: number): Promise<StoredBlob> {
      await mkdir(tmpDir, { recursive: true });
      const tmp = path.join(tmpDir, randomUUID());
      const sha256 = createHash('sha256');
      const sha512 = createHash('sha512');
      let size = 0;
      const meter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          if (size > maxBytes) return done(new ArtifactTooLarge(maxBytes));
          sha256.update(chunk);
          sha512.update(chunk);
          done(null, chunk);
        },
      });
      try {
        await pipeline(source, meter, fs.createWriteStream(tmp, { flags: 'wx' }));
        const handle = await open(tmp, 'r+');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
        const blob = { sha256: sha256.digest('hex'), sha512: sha512.digest('hex'), size };
        await mkdir(path.dirname(pathOf(blob.sha256)), { recursive: true });
        // The same bytes under the same name: replacing an earlier copy changes nothing.
        await rename(tmp, pathOf(blob.sha256));
        return blob;
      } catch (error) {
        await rm(tmp, { force: true });
        throw error;
      }
    },

    /** Whether the store has the bytes of this digest. */
    has(sha256: string): boolean {
      return /^[0-9a-f]{64}$/.test(sha256) && fs.existsSync(pathOf(sha256));
    },
  };
}
