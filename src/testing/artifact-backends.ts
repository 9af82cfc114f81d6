import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateMultipartUploadCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Emulator } from './s3-emulator.js';

// The AWS SDK's notice, on Node 20, that its releases from 2027 on will need Node 22: true, and
// nothing these tests are about.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** The artifact stores the releases tests run against, each in turn. */
export const ARTIFACT_STORES = ['local', 's3'] as const;
export type ArtifactStoreKind = (typeof ARTIFACT_STORES)[number];

/** An artifact store for a test server, and what the tests read of it from outside the service. */
export interface ArtifactBackend {
  kind: ArtifactStoreKind;
  /** The service's settings for it. */
  env: Record<string, string>;
  /** The bytes stored under this digest, or null. */
  stored(sha256: string): Promise<Buffer | null>;
  /** What uploads left unfinished: temporary files or objects, multipart uploads still open. */
  leftovers(): Promise<string[]>;
  /**
   * Leaves what a node killed mid-upload would: a temporary file; on S3 an open multipart upload,
   * and a temporary object (a node stopped between the copy to its content address and the delete).
   */
  leaveUnfinishedUpload(): Promise<void>;
  /** How many multipart uploads were aborted (always 0 for a folder). */
  aborted(): number;
  close(): Promise<void>;
}

/** A fresh folder, or an S3 emulator with an empty bucket. */
export async function openArtifactBackend(kind: ArtifactStoreKind): Promise<ArtifactBackend> {
  if (kind === 'local') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-artifacts-test-'));
    const tmp = path.join(dir, 'tmp');
    return {
      kind,
      env: { ARTIFACT_DIR: dir },
      async stored(sha256) {
        const file = path.join(dir, sha256.slice(0, 2), sha256);
        return fs.existsSync(file) ? fs.readFileSync(file) : null;
      },
      async leftovers() {
        return fs.existsSync(tmp) ? fs.readdirSync(tmp) : [];
      },
      async leaveUnfinishedUpload() {
        fs.mkdirSync(tmp, { recursive: true });
        fs.writeFileSync(path.join(tmp, randomUUID()), 'half a file');
      },
      aborted: () => 0,
      async close() {
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const emulator = await startS3Emulator();
  const { env } = emulator;
  const bucket = new URL(env.ARTIFACT_STORE as string).hostname;
  const prefix = `${new URL(env.ARTIFACT_STORE as string).pathname.slice(1)}/`;
  return {
    kind,
    env: emulator.env,
    async stored(sha256) {
      return emulator.object(`${prefix}${sha256}`);
    },
    async leftovers() {
      return [...(await emulator.keys(`${prefix}tmp/`)), ...emulator.openUploads()];
    },
    async leaveUnfinishedUpload() {
      const client = new S3Client({
        endpoint: env.ARTIFACT_S3_ENDPOINT as string,
        region: env.ARTIFACT_S3_REGION as string,
        forcePathStyle: true,
        credentials: {
          accessKeyId: env.ARTIFACT_S3_ACCESS_KEY_ID as string,
          secretAccessKey: env.ARTIFACT_S3_SECRET_ACCESS_KEY as string,
        },
      });
      await client.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}tmp/${randomUUID()}` }),
      );
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: `${prefix}tmp/${randomUUID()}`, Body: 'half a file' }),
      );
      client.destroy();
    },
    aborted: emulator.aborted,
    close: emulator.stop,
  };
}
