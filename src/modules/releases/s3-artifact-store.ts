import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  paginateListObjectsV2,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ArtifactStoreSettings } from '../../platform/config.js';
import { AppError } from '../../platform/errors.js';
import type { Log } from '../../platform/log.js';
import { type ArtifactStore, type BlobEntry, digestingMeter } from './artifact-store.js';

/**
 * The bytes of each multipart upload's part. Two parts are sent at once and a third fills, so an
 * upload holds about 3 × 8 MiB whatever the file's size; a 2 GiB file is 256 parts (S3 allows 10,000).
 */
const PART_BYTES = 8 * 1024 ** 2;
const PARTS_AT_ONCE = 2;
const SHA256 = /^[0-9a-f]{64}$/;

type S3Settings = Extract<ArtifactStoreSettings, { kind: 's3' }>;

/**
 * Artifacts in an S3 bucket (AWS, or a compatible service at ARTIFACT_S3_ENDPOINT), under
 * `<prefix><sha256>`. An upload streams through both hashes into a multipart upload to
 * `<prefix>tmp/<random>` (the digest is known only at the end), is copied to its content address
 * once complete, and its temporary object deleted: a dropped connection aborts the multipart
 * upload, so nothing half-stored is ever visible. Downloads are presigned GET URLs, which S3
 * serves with ranges itself. The SDK is loaded only on a node configured for S3.
 */
export function createS3ArtifactStore(settings: S3Settings, log: Log): ArtifactStore {
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    // A store that does not answer fails the request in seconds, not at the OS's TCP timeout;
    // requestTimeout is the longest silence on an open connection.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });
  const { bucket, prefix } = settings;
  const keyOf = (sha256: string) => `${prefix}${sha256}`;
  const tmpPrefix = `${prefix}tmp/`;

  /** A failure of the store itself (unreachable, refusing our credentials) as a 503. */
  function unavailable(error: unknown, doing: string): AppError {
    log.warn(
      { err: { message: (error as Error).message, name: (error as Error).name }, bucket, doing },
      'release.artifact_store.failed',
    );
    return new AppError(
      'artifact_store_unavailable',
      'The artifact store cannot be reached right now; retry shortly',
    );
  }

  async function storedAt(key: string): Promise<Date | null> {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).LastModified ?? null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw unavailable(error, 'head');
    }
  }

  async function deleteObject(key: string): Promise<void> {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  return {
    kind: 's3',

    async put(source: Readable, maxBytes: number) {
      const tmpKey = `${tmpPrefix}${randomUUID()}`;
      const meter = digestingMeter(maxBytes);
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: tmpKey, Body: meter.stream, ContentType: 'application/octet-stream' },
        partSize: PART_BYTES,
        queueSize: PARTS_AT_ONCE,
      });
      // The store failing while the body is still fine: the reading stops too, or it would wait
      // forever; the request is answered 503. The body failing (a dropped connection, the size
      // limit) ends the upload, which aborts its multipart upload, and says what happened.
      let storeFailure: unknown = null;
      const sent = upload.done().catch((error: unknown) => {
        if (!meter.stream.errored) {
          storeFailure = error;
          meter.stream.destroy(error as Error);
        }
      });
      const [, read] = await Promise.allSettled([sent, pipeline(source, meter.stream)]);
      if (storeFailure !== null || read.status === 'rejected') {
        // A body too small for a multipart upload went in one PUT, and may have landed.
        await deleteObject(tmpKey).catch(() => {});
        if (storeFailure !== null) throw unavailable(storeFailure, 'upload');
        throw (read as PromiseRejectedResult).reason;
      }
      const blob = meter.blob();
      try {
        // The same bytes again are copied again: the blob's time is the latest upload's (the purge reads it).
        await client.send(
          new CopyObjectCommand({
            Bucket: bucket,
            Key: keyOf(blob.sha256),
            CopySource: `${bucket}/${tmpKey}`,
          }),
        );
      } catch (error) {
        throw unavailable(error, 'copy');
      } finally {
        await deleteObject(tmpKey).catch((error: unknown) =>
          log.warn(
            { err: { message: (error as Error).message }, key: tmpKey },
            'release.artifact_store.tmp_left',
          ),
        );
      }
      return blob;
    },

    async has(sha256) {
      return SHA256.test(sha256) && (await storedAt(keyOf(sha256))) !== null;
    },

    async readText(sha256) {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: keyOf(sha256) }));
        return (await object.Body?.transformToString('utf8')) ?? '';
      } catch (error) {
        throw unavailable(error, 'read');
      }
    },

    async download(blob, validForSeconds) {
      try {
        const url = await getSignedUrl(
          client,
          new GetObjectCommand({
            Bucket: bucket,
            Key: keyOf(blob.sha256),
            ResponseContentDisposition: `attachment; filename="${blob.filename}"`,
            ResponseContentType: 'application/octet-stream',
          }),
          { expiresIn: validForSeconds },
        );
        return { kind: 'redirect', url };
      } catch (error) {
        throw unavailable(error, 'presign');
      }
    },

    async *blobs() {
      // Blobs sit right under the prefix; the delimiter leaves tmp/ (and anything else) out.
      const pages = paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix, Delimiter: '/' });
      try {
        for await (const page of pages) {
          const batch: BlobEntry[] = [];
          for (const object of page.Contents ?? []) {
            const sha256 = object.Key?.slice(prefix.length) ?? '';
            if (SHA256.test(sha256) && object.LastModified)
              batch.push({ sha256, storedAt: object.LastModified });
          }
          if (batch.length > 0) yield batch;
        }
      } catch (error) {
        throw unavailable(error, 'list');
      }
    },

    async remove(sha256, storedBefore) {
      const at = SHA256.test(sha256) ? await storedAt(keyOf(sha256)) : null;
      if (!at || at >= storedBefore) return false;
      await deleteObject(keyOf(sha256)).catch((error: unknown) => {
        throw unavailable(error, 'delete');
      });
      return true;
    },

    async removeLeftovers(before) {
      let removed = 0;
      try {
        // A temporary object outlives its upload only when a node stopped between the copy and the delete.
        for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: tmpPrefix })) {
          for (const object of page.Contents ?? []) {
            if (object.Key && object.LastModified && object.LastModified < before) {
              await deleteObject(object.Key);
              removed++;
            }
          }
        }
        // A node that stopped mid-upload (killed, or lost its store) leaves its multipart upload open.
        for (const upload of await openUploads()) {
          if (upload.Key && upload.UploadId && upload.Initiated && upload.Initiated < before) {
            await client.send(
              new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }),
            );
            removed++;
          }
        }
      } catch (error) {
        throw unavailable(error, 'remove leftovers');
      }
      return removed;
    },
  };

  async function openUploads(): Promise<NonNullable<ListMultipartUploadsCommandOutput['Uploads']>> {
    const uploads: NonNullable<ListMultipartUploadsCommandOutput['Uploads']> = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await client.send(
        new ListMultipartUploadsCommand({
          Bucket: bucket,
          Prefix: tmpPrefix,
          ...(keyMarker ? { KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker } : {}),
        }),
      );
      uploads.push(...(page.Uploads ?? []));
      if (!page.IsTruncated) return uploads;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }
}

function isMissing(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)
  );
}
