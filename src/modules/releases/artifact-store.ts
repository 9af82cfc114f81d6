import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
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

/**
 * How a download link's bytes reach the client: a file the service sends itself (ranges and all),
 * or an address elsewhere that serves them (an S3 presigned URL) to redirect the client to.
 */
export type BlobDownload = { kind: 'file'; path: string } | { kind: 'redirect'; url: string };

/** A stored blob as the purge sees it: its digest and when its bytes were last written. */
export interface BlobEntry {
  sha256: string;
  storedAt: Date;
}

/**
 * Where artifacts' bytes live, content-addressed by their SHA-256: a folder (below) or an S3
 * bucket (s3-artifact-store.ts). Whichever it is, an upload is stored whole or not at all, and
 * storing the same bytes again writes them anew, so their `storedAt` is the latest upload's.
 */
export interface ArtifactStore {
  readonly kind: 'local' | 's3';
  /** Streams `source` in, computing its size and digests on the way; at most `maxBytes`. */
  put(source: Readable, maxBytes: number): Promise<StoredBlob>;
  /** Whether the store has the bytes of this digest. */
  has(sha256: string): Promise<boolean>;
  /** A small stored file read whole as UTF-8 text (an updater's `.sig` beside its file). */
  readText(sha256: string): Promise<string>;
  /** How to hand these bytes to a client, saved under `filename`, for the next `validForSeconds`. */
  download(blob: { sha256: string; filename: string }, validForSeconds: number): Promise<BlobDownload>;
  /** Every stored blob, in batches. */
  blobs(): AsyncIterable<BlobEntry[]>;
  /**
   * Deletes the blob if it was last stored before `storedBefore` (checked again just before, so a
   * blob uploaded again meanwhile stays); whether it was deleted.
   */
  remove(sha256: string, storedBefore: Date): Promise<boolean>;
  /** Deletes what uploads that never finished left behind before `before`; how many. */
  removeLeftovers(before: Date): Promise<number>;
}

/**
 * A pass-through stream that counts and hashes what goes through it and fails with
 * ArtifactTooLarge at the first byte past `maxBytes`; `blob()` once it has ended.
 */
export function digestingMeter(maxBytes: number) {
  const sha256 = createHash('sha256');
  const sha512 = createHash('sha512');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new ArtifactTooLarge(maxBytes));
      sha256.update(chunk);
      sha512.update(chunk);
      done(null, chunk);
    },
  });
  return {
    stream,
    blob: (): StoredBlob => ({ sha256: sha256.digest('hex'), sha512: sha512.digest('hex'), size }),
  };
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Artifacts in a folder, content-addressed: `<dir>/<first two hex digits>/<sha256>`. An upload
 * streams through both hashes into `<dir>/tmp/<random>` and is renamed into place only once every
 * byte is written and synced, so a reader never sees half a file and an interrupted upload leaves
 * nothing but its temporary file, removed at once. Memory use is one chunk, whatever the size.
 */
export function createLocalArtifactStore(dir: string): ArtifactStore & { pathOf(sha256: string): string } {
  const tmpDir = path.join(dir, 'tmp');
  const pathOf = (sha256: string) => path.join(dir, sha256.slice(0, 2), sha256);
  const modifiedAt = (file: string): Promise<Date | null> =>
    stat(file).then(
      (stats) => stats.mtime,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      },
    );

  return {
    kind: 'local',
    pathOf,

    async put(source, maxBytes) {
      await mkdir(tmpDir, { recursive: true });
      const tmp = path.join(tmpDir, randomUUID());
      const meter = digestingMeter(maxBytes);
      try {
        await pipeline(source, meter.stream, fs.createWriteStream(tmp, { flags: 'wx' }));
        const handle = await open(tmp, 'r+');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
        const blob = meter.blob();
        await mkdir(path.dirname(pathOf(blob.sha256)), { recursive: true });
        // The same bytes under the same name: replacing an earlier copy changes nothing but its time.
        await rename(tmp, pathOf(blob.sha256));
        return blob;
      } catch (error) {
        await rm(tmp, { force: true });
        throw error;
      }
    },

    async has(sha256) {
      return SHA256.test(sha256) && fs.existsSync(pathOf(sha256));
    },

    readText: (sha256) => readFile(pathOf(sha256), 'utf8'),

    async download(blob) {
      return { kind: 'file', path: pathOf(blob.sha256) };
    },

    async *blobs() {
      const shards = await readdir(dir).catch(() => [] as string[]);
      for (const shard of shards.filter((name) => /^[0-9a-f]{2}$/.test(name))) {
        const names = await readdir(path.join(dir, shard)).catch(() => [] as string[]);
        const batch: BlobEntry[] = [];
        for (const sha256 of names.filter((name) => SHA256.test(name) && name.startsWith(shard))) {
          const storedAt = await modifiedAt(pathOf(sha256));
          if (storedAt) batch.push({ sha256, storedAt });
        }
        if (batch.length > 0) yield batch;
      }
    },

    async remove(sha256, storedBefore) {
      const storedAt = SHA256.test(sha256) ? await modifiedAt(pathOf(sha256)) : null;
      if (!storedAt || storedAt >= storedBefore) return false;
      await rm(pathOf(sha256), { force: true });
      return true;
    },

    async removeLeftovers(before) {
      let removed = 0;
      for (const name of await readdir(tmpDir).catch(() => [] as string[])) {
        // An upload still under way writes to its file all the time: only stale ones are old.
        const writtenAt = await modifiedAt(path.join(tmpDir, name));
        if (writtenAt && writtenAt < before) {
          await rm(path.join(tmpDir, name), { force: true });
          removed++;
        }
      }
      return removed;
    },
  };
}
