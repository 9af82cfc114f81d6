import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver, { type S3rverContext } from '@20minutes/s3rver';

/** The bucket and key prefix the tests' S3 stores use. */
const BUCKET = 'releases';
const PREFIX = 'artifacts/';

export interface S3Emulator {
  /** The service's settings for an artifact store in the emulator. */
  env: Record<string, string>;
  /** The bytes of an object, or null. */
  object(key: string): Buffer | null;
  /** The keys of the objects under `prefix` (the store's own by default). */
  keys(prefix?: string): Promise<string[]>;
  /** Multipart uploads begun and neither completed nor aborted, by key. */
  openUploads(): string[];
  /** How many multipart uploads have been aborted. */
  aborted(): number;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server on loopback, in this process (s3rver: objects in a temporary folder),
 * with one bucket. What it lacks for the AWS SDK v3 is added in front of its routes: the SDK signs
 * a bucket's own address with a trailing slash (`/releases/`), as S3 does, where s3rver's
 * signature check leaves it out; and AbortMultipartUpload and ListMultipartUploads, which it does
 * not have (these two answer without checking the signature).
 */
export async function startS3Emulator(): Promise<S3Emulator> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET }],
  });
  const uploadsDir = () => server.store.getResourcePath(BUCKET, undefined, 'uploads');
  const openUploads = () =>
    fs.existsSync(uploadsDir())
      ? fs.readdirSync(uploadsDir()).map((id) => ({
          id,
          key: fs.readFileSync(path.join(uploadsDir(), id, 'key'), 'utf8'),
          initiated: fs.statSync(path.join(uploadsDir(), id, 'key')).mtime,
        }))
      : [];
  let aborted = 0;

  const additions = async (context: S3rverContext, next: () => Promise<void>) => {
    const bucketOnly = /^\/([^/]+)\/?$/.exec(context.path);
    const object = /^\/([^/]+)\/(.+)$/.exec(context.path);
    if (context.method === 'DELETE' && object && typeof context.query.uploadId === 'string') {
      fs.rmSync(path.join(uploadsDir(), path.basename(context.query.uploadId)), {
        recursive: true,
        force: true,
      });
      aborted++;
      context.status = 204;
      return;
    }
    if (context.method === 'GET' && bucketOnly && 'uploads' in context.query) {
      const prefix = typeof context.query.prefix === 'string' ? context.query.prefix : '';
      const uploads = openUploads().filter((upload) => upload.key.startsWith(prefix));
      context.type = 'application/xml';
      context.body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${BUCKET}</Bucket><IsTruncated>false</IsTruncated>${uploads
        .map(
          (upload) =>
            `<Upload><Key>${upload.key}</Key><UploadId>${upload.id}</UploadId><Initiated>${upload.initiated.toISOString()}</Initiated></Upload>`,
        )
        .join('')}</ListMultipartUploadsResult>`;
      return;
    }
    // s3rver checks a path-style bucket address as if it were virtual-hosted with this mount path.
    if (bucketOnly && context.path.endsWith('/') && !context.state.vhost) {
      context.state.vhost = true;
      context.mountPath = '/';
    }
    await next();
  };
  // Its routes are the last middleware it installs: the additions go right before them.
  server.middleware.splice(server.middleware.length - 1, 0, additions);
  const { port } = await server.run();

  return {
    env: {
      ARTIFACT_STORE: `s3://${BUCKET}/${PREFIX.replace(/\/$/, '')}`,
      ARTIFACT_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      ARTIFACT_S3_REGION: 'us-east-1',
      // s3rver's one account.
      ARTIFACT_S3_ACCESS_KEY_ID: 'S3RVER',
      ARTIFACT_S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    object(key) {
      const file = server.store.getResourcePath(BUCKET, key, 'object');
      return fs.existsSync(file) ? fs.readFileSync(file) : null;
    },
    async keys(prefix = PREFIX) {
      return (await server.store.listObjects(BUCKET, { prefix })).objects.map((object) => object.key);
    },
    openUploads: () => openUploads().map((upload) => upload.key),
    aborted: () => aborted,
    async stop() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
