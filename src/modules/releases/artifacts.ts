import type { Readable } from 'node:stream';
import type { Insertable } from 'kysely';
import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import type { ReleaseArtifactRow, ReleaseArtifactsTable } from '../../platform/db/schema.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import type { Principal, Tier } from '../../platform/http/principal.js';
import { iso } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import type { AppService } from '../apps/index.js';
import { type ArtifactStore, ArtifactTooLarge } from './artifact-store.js';
import { checkExternalUrl, sha512Hex } from './external-artifacts.js';
import type { ExternalArtifactCreate } from './schemas.js';
import type { ReleaseService } from './service.js';
import * as store from './store.js';

const MiB = 1024 ** 2;
/** The largest artifact each tier may upload, below the operator's ARTIFACT_MAX_BYTES. */
const TIER_LIMITS: Record<Tier, number> = {
  free: 100 * MiB,
  pro: 512 * MiB,
  business: 1024 * MiB,
  enterprise: 2048 * MiB,
};

/**
 * A file name as it will be downloaded: letters, digits and `._+-`, starting with a letter or a
 * digit, no `..`: nothing that names a folder, climbs out of one, hides a file or needs quoting.
 */
const FILENAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$/;
const PLATFORM_OR_ARCH = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const COMPOUND_EXTENSIONS = ['.tar.gz', '.tar.xz', '.tar.bz2', '.tar.zst'];

export interface ArtifactAddress {
  filename: string;
  platform?: string;
  arch?: string;
}

/** A file the seller hosts, as they declare it (POST …/artifacts). */
export type ExternalArtifactInput = Static<typeof ExternalArtifactCreate>;

export interface ArtifactServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  apps: Pick<AppService, 'requireOwnedApp'>;
  releases: Pick<ReleaseService, 'requireRelease'>;
  blobs: ArtifactStore;
  maxBytes: number;
}

export type ArtifactService = ReturnType<typeof createArtifactService>;
export type Artifact = ReturnType<typeof toArtifact>;

export function createArtifactService({
  db,
  clock,
  log,
  apps,
  releases,
  blobs,
  maxBytes,
}: ArtifactServiceDeps) {
  const { requireRelease } = releases;
  function checkAddress(address: ArtifactAddress) {
    const { filename, platform = '', arch = '' } = address;
    if (!FILENAME.test(filename) || filename.includes('..')) {
      throw invalidField(
        'filename',
        'must be 1 to 255 letters, digits, ., _, + and -, starting with a letter or digit, without ..',
      );
    }
    if (platform && !PLATFORM_OR_ARCH.test(platform)) {
      throw invalidField(
        'platform',
        'must be 1 to 32 lower-case letters, digits, _ and - (linux, macos, windows)',
      );
    }
    if (arch && !PLATFORM_OR_ARCH.test(arch)) {
      throw invalidField(
        'arch',
        'must be 1 to 32 lower-case letters, digits, _ and - (x64, arm64, universal)',
      );
    }
    return { filename, platform, arch };
  }

  /**
   * Records the file at `where` in the release, under the release's lock, by the rules every
   * artifact follows: a yanked release takes none; an artifact already at that address that
   * `isSame` calls the same is answered as it is; another one is replaced on a draft, and refused
   * on a published release, whose artifacts do not change.
   */
  async function place(
    trx: Executor,
    at: { appId: string; releaseId: string; where: Required<ArtifactAddress> },
    file: Pick<Insertable<ReleaseArtifactsTable>, 'size' | 'sha256' | 'sha512' | 'url'>,
    isSame: (existing: ReleaseArtifactRow) => boolean,
  ): Promise<{ row: ReleaseArtifactRow; created: boolean }> {
    const { appId, releaseId, where } = at;
    const current = await store.findRelease(trx, appId, releaseId, { forUpdate: true });
    if (!current) throw notFound('Release');
    if (current.status === 'yanked')
      throw new AppError('release_yanked', 'A yanked release takes no artifact');
    const existing = await store.findArtifact(trx, releaseId, where);
    if (existing && isSame(existing)) return { row: existing, created: false };
    if (existing && current.status !== 'draft') {
      throw new AppError(
        'artifact_exists',
        'A published release’s artifacts do not change; publish a new release for another file',
      );
    }
    if (existing) await store.deleteArtifact(trx, existing.id);
    const row = await store.insertArtifact(trx, {
      id: newId(),
      release_id: releaseId,
      user_id: current.user_id,
      app_id: appId,
      filename: where.filename,
      platform: where.platform,
      arch: where.arch,
      filetype: filetypeOf(where.filename),
      ...file,
      created_at: clock.now(),
    });
    return { row, created: !existing };
  }

  return {
    /** The most this caller may upload: their tier's limit, within the operator's. */
    limitFor(principal: Principal): number {
      return Math.min(TIER_LIMITS[principal.tier], maxBytes);
    },

    /**
     * Stores the bytes and records the artifact, replacing one of the same name, platform and
     * architecture on a draft. The same bytes again answer the artifact as it is; a published
     * release's artifacts do not change, so other bytes there answer 409 artifact_exists. Everything that can refuse
     * the upload is checked before a byte is read.
     */
    async upload(
      principal: Principal,
      appId: string,
      releaseId: string,
      address: ArtifactAddress,
      body: { stream: Readable; declaredLength: number | null },
    ): Promise<{ artifact: Artifact; created: boolean }> {
      const where = checkAddress(address);
      const release = await requireRelease(principal, appId, releaseId);
      if (release.status === 'yanked')
        throw new AppError('release_yanked', 'A yanked release takes no artifact');
      const limit = this.limitFor(principal);
      if (body.declaredLength !== null && body.declaredLength > limit) throw tooLarge(limit);

      let blob: Awaited<ReturnType<ArtifactStore['put']>>;
      try {
        blob = await blobs.put(body.stream, limit);
      } catch (error) {
        if (error instanceof ArtifactTooLarge) throw tooLarge(limit);
        throw error;
      }
      const outcome = await db.transaction().execute((trx) =>
        place(
          trx,
          { appId, releaseId, where },
          { size: blob.size, sha256: blob.sha256, sha512: blob.sha512, url: null },
          // The same bytes again (a retried upload) answer the artifact as it is.
          (existing) => existing.url === null && existing.sha256 === blob.sha256,
        ),
      );
      log.info({ appId, releaseId, filename: where.filename, size: blob.size }, 'release.artifact.stored');
      return { artifact: toArtifact(outcome.row), created: outcome.created };
    },

    /**
     * Records a file the seller hosts at an https address: the service neither stores nor fetches
     * it, and its size and digests are what the seller declares (each may be left out). The same
     * address and placement rules as an upload; the same declaration again answers the artifact
     * as it is, so a retry is safe with or without an Idempotency-Key.
     */
    async addExternal(
      principal: Principal,
      appId: string,
      releaseId: string,
      input: ExternalArtifactInput,
      answer?: IdempotentAnswer<Artifact>,
    ): Promise<Artifact> {
      // Whose release it is comes first: another seller learns nothing from what the body says.
      await requireRelease(principal, appId, releaseId);
      const where = checkAddress(input);
      const file = {
        url: checkExternalUrl(input.url),
        size: input.size ?? null,
        sha256: input.sha256?.toLowerCase() ?? null,
        sha512: input.sha512 === undefined ? null : sha512Hex(input.sha512),
      };
      const artifact = await transactionWithAnswer(db, answer, async (trx) => {
        const { row } = await place(
          trx,
          { appId, releaseId, where },
          file,
          (existing) =>
            existing.url === file.url &&
            (existing.size === null ? null : Number(existing.size)) === file.size &&
            existing.sha256 === file.sha256 &&
            existing.sha512 === file.sha512,
        );
        return toArtifact(row);
      });
      log.info({ appId, releaseId, filename: where.filename }, 'release.artifact.linked');
      return artifact;
    },

    async list(principal: Principal, appId: string, releaseId: string) {
      await requireRelease(principal, appId, releaseId);
      const rows = await store.listArtifacts(db, releaseId);
      return { artifacts: rows.map(toArtifact), total: rows.length };
    },

    async get(principal: Principal, appId: string, releaseId: string, address: ArtifactAddress) {
      const where = checkAddress(address);
      await requireRelease(principal, appId, releaseId);
      const row = await store.findArtifact(db, releaseId, where);
      if (!row) throw notFound('Artifact');
      return toArtifact(row);
    },

    /** Removes a draft's artifact; a published release keeps its files (yank the release). */
    async remove(principal: Principal, appId: string, releaseId: string, address: ArtifactAddress) {
      const where = checkAddress(address);
      await apps.requireOwnedApp(principal, appId);
      await db.transaction().execute(async (trx) => {
        const release = await store.findRelease(trx, appId, releaseId, { forUpdate: true });
        if (!release) throw notFound('Release');
        const row = await store.findArtifact(trx, releaseId, where);
        if (!row) throw notFound('Artifact');
        if (release.status !== 'draft') {
          throw new AppError(
            'release_not_draft',
            'Only a draft’s artifacts are removed; yank a published release',
          );
        }
        await store.deleteArtifact(trx, row.id);
      });
    },
  };
}

function tooLarge(limit: number): AppError {
  return new AppError('payload_too_large', `An artifact may be at most ${limit} bytes on your plan`);
}

/** The file's type from its name: `tar.gz` and the like whole, else the last extension; '' for none. */
export function filetypeOf(filename: string): string {
  const lower = filename.toLowerCase();
  const compound = COMPOUND_EXTENSIONS.find((extension) => lower.endsWith(extension));
  if (compound) return compound.slice(1);
  const dot = lower.lastIndexOf('.');
  return dot > 0 ? lower.slice(dot + 1) : '';
}

/** The artifact's path under the core API, as Location and its GET name it. */
export function artifactPath(
  row: Pick<ReleaseArtifactRow, 'app_id' | 'release_id' | 'filename' | 'platform' | 'arch'>,
) {
  const query = new URLSearchParams({
    ...(row.platform ? { platform: row.platform } : {}),
    ...(row.arch ? { arch: row.arch } : {}),
  }).toString();
  return `/apps/${row.app_id}/releases/${row.release_id}/artifacts/${encodeURIComponent(row.filename)}${query ? `?${query}` : ''}`;
}

export function toArtifact(row: ReleaseArtifactRow) {
  return {
    id: row.id,
    releaseId: row.release_id,
    filename: row.filename,
    platform: row.platform || null,
    arch: row.arch || null,
    filetype: row.filetype,
    size: row.size === null ? null : Number(row.size),
    sha256: row.sha256,
    sha512: row.sha512,
    url: row.url,
    downloads: Number(row.downloads),
    createdAt: iso(row.created_at),
  };
}
