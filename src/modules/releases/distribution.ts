import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type {
  LicenseStatus,
  ReleaseArtifactRow,
  ReleaseChannel,
  ReleaseRow,
} from '../../platform/db/schema.js';
import { AppError, type ErrorCode, invalidField, notFound } from '../../platform/errors.js';
import { iso } from '../../platform/http/schemas.js';
import type { Log } from '../../platform/log.js';
import type { AppService } from '../apps/index.js';
import {
  effectiveFeatures,
  effectiveStatus,
  grantsUse,
  keepsAccess,
  REASON_OF_STATUS,
  type Verification,
} from '../licenses/index.js';
import type { ClientCall } from '../timeline/index.js';
import type { ArtifactStore, BlobDownload } from './artifact-store.js';
import { type DownloadLinks, MIN_REDIRECT_SECONDS } from './download-links.js';
import { sourceOf } from './external-artifacts.js';
import {
  channelGranted,
  channelsFor,
  type Grant,
  type HeldLicense,
  holderGrant,
  type LicensedClient,
} from './grants.js';
import type { ManifestSigner } from './manifests.js';
import { RELEASE_CHANNELS } from './schemas.js';
import * as store from './store.js';
import { parseVersion } from './version-order.js';

export type Distribution = ReturnType<typeof createDistribution>;
/** What a held license may download now (Distribution.forHolder). */
export type HolderDownloads = Awaited<ReturnType<Distribution['forHolder']>>;

/**
 * Releases as client software receives them: the update check and license-gated downloads. A
 * license is checked as verify checks it (one verify call, without a check-in: status, expiry,
 * the device bound or bound now while there is room, a floating license's seat), then by the
 * release's rules: its channel, the entitlements it requires, and for a license keeping access
 * past its expiry, a publication date no later than that expiry. What passes gets links to the
 * bytes that work for an hour (download-links.ts).
 */
export function createDistribution({
  db,
  clock,
  log,
  verification,
  blobs,
  links,
  apps,
  manifests,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  verification: Pick<Verification, 'verify' | 'tokenHolder'>;
  blobs: Pick<ArtifactStore, 'download'>;
  links: DownloadLinks;
  apps: Pick<AppService, 'findAnyApp'>;
  manifests: ManifestSigner;
}) {
  /** The license's grant, or the verification's refusal as an error carrying its code. */
  async function licensed(client: LicensedClient, call: ClientCall | undefined): Promise<Grant> {
    if ('token' in client) return tokenGrant(client.token, client.appId);
    const answer = await verification.verify(
      {
        key: client.key,
        appId: client.appId,
        checkIn: false,
        ...(client.hwuid ? { hwuid: client.hwuid } : {}),
      },
      undefined,
      call,
    );
    if (!answer.valid) {
      const code = (answer.code ?? 'license_not_found') as ErrorCode;
      throw new AppError(code, refusalMessage(code));
    }
    return {
      features: answer.features ?? [],
      publishedBy: answer.expired && answer.expiresAt ? new Date(answer.expiresAt) : null,
    };
  }

  /**
   * A token's grant: the token checked as introspection checks it (signature, expiry, the
   * denylist), then its license as it is now, from the store: status, expiry, entitlements. The
   * device was checked when verify signed the token, which lives minutes (on a floating license,
   * no longer than its seat); the call is no verification, so nothing is bound or counted.
   */
  async function tokenGrant(token: string, appId: string): Promise<Grant> {
    const held = await verification.tokenHolder(token);
    if (!held.ok) throw new AppError(held.reason, refusalMessage(held.reason));
    // A token of another app answers as a key of another app does.
    if (held.license.app_id !== appId) {
      throw new AppError('license_not_found', 'This license token is not of this app');
    }
    const grant = holderGrant(held.license, clock.now());
    if ('refused' in grant) throw new AppError(grant.refused, refusalMessage(grant.refused));
    return grant;
  }

  function offered(artifact: ReleaseArtifactRow, now: Date, manifest: string | null) {
    const link = links.link(artifact, now);
    return {
      filename: artifact.filename,
      platform: artifact.platform || null,
      arch: artifact.arch || null,
      filetype: artifact.filetype,
      size: sizeOf(artifact),
      sha256: artifact.sha256,
      sha512: artifact.sha512,
      downloadUrl: link.url,
      downloadUrlExpiresAt: iso(link.expiresAt),
      manifest,
    };
  }

  /** The signed manifests of a release's artifacts, in the app's algorithm. */
  async function manifestsOf(release: ReleaseRow, artifacts: ReleaseArtifactRow[]) {
    const app = await apps.findAnyApp(release.app_id);
    if (!app) return artifacts.map(() => null);
    return Promise.all(artifacts.map((artifact) => manifests.sign(app.token_algorithm, release, artifact)));
  }

  const suits = (client: LicensedClient) => (artifact: ReleaseArtifactRow) =>
    (!client.platform || artifact.platform === '' || artifact.platform === client.platform) &&
    (!client.arch || artifact.arch === '' || artifact.arch === client.arch);

  /** The refusal for a release the license may not have, else nothing. */
  function releaseRule(release: ReleaseRow, grant: Grant): AppError | null {
    if (!channelGranted(grant.features, release.channel)) {
      return new AppError('channel_not_granted', `This license does not receive ${release.channel} releases`);
    }
    const missing = release.required_features.filter((feature) => !grant.features.includes(feature));
    if (missing.length > 0) {
      return new AppError('feature_not_granted', `This release needs the entitlements ${missing.join(', ')}`);
    }
    if (grant.publishedBy && release.published_at && release.published_at > grant.publishedBy) {
      return new AppError(
        'license_expired',
        'The license expired before this release was published; renew it to receive it',
      );
    }
    return null;
  }

  return {
    /**
     * The newest release the license may have that is newer than `currentVersion` on `channel`
     * (and the more stable ones), with its artifacts for the platform and architecture; null when
     * the client is up to date. Yanked and draft releases are never offered.
     */
    async upgrade(
      input: LicensedClient & { currentVersion: string; channel?: ReleaseChannel },
      call?: ClientCall,
    ) {
      const current = parseVersion(input.currentVersion);
      if (!current) throw invalidField('currentVersion', 'must be a semantic version, like 1.4.0');
      const channel = input.channel ?? 'stable';
      const grant = await licensed(input, call);
      if (!channelGranted(grant.features, channel)) {
        throw new AppError('channel_not_granted', `This license does not receive ${channel} releases`);
      }
      const release = await store.newestRelease(db, {
        appId: input.appId,
        after: current.order,
        channels: channelsFor(channel),
        features: grant.features,
        publishedBy: grant.publishedBy,
        platform: input.platform ?? null,
        arch: input.arch ?? null,
      });
      if (!release?.published_at) return null;
      const now = clock.now();
      const artifacts = (await store.listArtifacts(db, release.id)).filter(suits(input));
      const signed = await manifestsOf(release, artifacts);
      log.info({ appId: input.appId, releaseId: release.id }, 'release.upgrade.offered');
      return {
        release: {
          id: release.id,
          version: release.version,
          channel: release.channel,
          notes: release.notes,
          publishedAt: iso(release.published_at),
        },
        artifacts: artifacts.map((artifact, i) => offered(artifact, now, signed[i] ?? null)),
      };
    },

    /** A link to one artifact of a release the license may have, by the release's version. */
    async download(input: LicensedClient & { version: string; filename: string }, call?: ClientCall) {
      const version = parseVersion(input.version);
      if (!version) throw invalidField('version', 'must be a semantic version, like 1.4.0');
      const grant = await licensed(input, call);
      const release = await store.publishedRelease(db, input.appId, version.order);
      if (!release) throw notFound('Release');
      const refused = releaseRule(release, grant);
      if (refused) throw refused;
      const artifact = await store.findArtifact(db, release.id, {
        filename: input.filename,
        platform: input.platform ?? '',
        arch: input.arch ?? '',
      });
      if (!artifact) throw notFound('Artifact');
      const [manifest] = await manifestsOf(release, [artifact]);
      return offered(artifact, clock.now(), manifest ?? null);
    },

    /** The license check of the update check, for the updater feeds (feeds.ts). */
    grant: licensed,

    /**
     * Which published releases a held license may have, as its holder's page shows them: for each
     * channel it may follow, the newest release a client following that channel would be offered
     * (once, when several channels lead to the same release), newest version first, with all its
     * artifacts. A license that may have none says why, when the app has published releases at
     * all: its status (`refused`), or the rule that keeps the newest of them from it (`withheld`).
     * Yanked releases and drafts never appear.
     */
    async forHolder(license: HeldLicense) {
      const grant = holderGrant(license, clock.now());
      if ('refused' in grant) {
        // Said only where there is something to download: a seller may publish no releases at all.
        const any = await store.newestPublished(db, license.app_id);
        return { refused: any ? grant.refused : null, withheld: null, releases: [] };
      }
      const newest = await store.newestPerChannel(db, {
        appId: license.app_id,
        features: grant.features,
        publishedBy: grant.publishedBy,
      });
      const chosen: ReleaseRow[] = [];
      for (const channel of RELEASE_CHANNELS.filter((c) => channelGranted(grant.features, c))) {
        const followed = channelsFor(channel);
        const best = newest
          .filter((release) => followed.includes(release.channel))
          .reduce<ReleaseRow | null>(
            (top, release) => (top && top.version_order > release.version_order ? top : release),
            null,
          );
        if (best && !chosen.some((release) => release.id === best.id)) chosen.push(best);
      }
      chosen.sort((a, b) => (a.version_order < b.version_order ? 1 : -1));
      let withheld: { version: string; code: ErrorCode } | null = null;
      if (chosen.length === 0) {
        const latest = await store.newestPublished(db, license.app_id);
        const rule = latest ? releaseRule(latest, grant) : null;
        if (latest && rule) withheld = { version: latest.version, code: rule.code };
      }
      const artifacts = await store.artifactsOfReleases(
        db,
        chosen.map((release) => release.id),
      );
      return {
        refused: null,
        withheld,
        releases: chosen.map((release) => ({
          id: release.id,
          version: release.version,
          channel: release.channel,
          notes: release.notes,
          publishedAt: release.published_at as Date,
          artifacts: artifacts
            .filter((artifact) => artifact.release_id === release.id)
            .map((artifact) => ({
              id: artifact.id,
              filename: artifact.filename,
              platform: artifact.platform || null,
              arch: artifact.arch || null,
              size: sizeOf(artifact),
              sha256: artifact.sha256,
            })),
        })),
      };
    },

    /**
     * A fresh link to an artifact of a release the held license may have (any published one the
     * rules allow, as a download request would), or the refusal: the license's status, the
     * release's rules, or not found (another app's artifact, a draft's, a yanked release's).
     */
    async holderLink(license: HeldLicense, artifactId: string) {
      const grant = holderGrant(license, clock.now());
      if ('refused' in grant) throw new AppError(grant.refused, refusalMessage(grant.refused));
      const artifact = await store.artifactWithRelease(db, artifactId);
      if (!artifact || artifact.app_id !== license.app_id || artifact.release_status !== 'published') {
        throw notFound('Artifact');
      }
      const release = await store.findRelease(db, license.app_id, artifact.release_id);
      if (!release) throw notFound('Artifact');
      const refused = releaseRule(release, grant);
      if (refused) throw refused;
      log.info({ licenseId: license.id, artifactId }, 'release.holder.link');
      // A buyer's browser follows the link: no program checks a manifest, so none is signed.
      return offered(artifact, clock.now(), null);
    },

    /**
     * What a download link leads to, once its signature and expiry hold and its release is still
     * published (a yanked release's links stop at once): the stored file, or on S3 a presigned
     * URL valid for the rest of the link's hour (and at least MIN_REDIRECT_SECONDS, so a redirect
     * followed at once always works), or for a file the seller hosts, their address (never
     * fetched by the service). Counts a download when the request starts at the first byte (a
     * resumed download is not counted again).
     */
    async file(artifactId: string, link: { expires: number; signature: string }, startsAtZero: boolean) {
      const now = clock.now();
      const checked = links.check(artifactId, link.expires, link.signature, now);
      if (checked === 'invalid') {
        throw new AppError('download_link_invalid', 'This download link is not one the service made');
      }
      if (checked === 'expired') {
        throw new AppError(
          'download_link_expired',
          'This download link has expired; ask for the update again',
        );
      }
      const artifact = await store.artifactWithRelease(db, artifactId);
      if (artifact?.release_status !== 'published') throw notFound('Artifact');
      const source = sourceOf(artifact);
      const validFor = Math.max(MIN_REDIRECT_SECONDS, link.expires - Math.floor(now.getTime() / 1000));
      const download: BlobDownload =
        source.kind === 'external'
          ? { kind: 'redirect', url: source.url }
          : await blobs.download({ sha256: source.sha256, filename: artifact.filename }, validFor);
      if (startsAtZero) await store.countDownload(db, artifactId, iso(now).slice(0, 10));
      return { download, filename: artifact.filename };
    },
  };
}

/** An artifact's size in bytes; null for an external file whose seller declared none. */
function sizeOf(artifact: Pick<ReleaseArtifactRow, 'size'>): number | null {
  return artifact.size === null ? null : Number(artifact.size);
}

/** What a refused client is told, by the verification's code. */
function refusalMessage(code: ErrorCode): string {
  switch (code) {
    case 'license_not_found':
      return 'No license of this app has this key';
    case 'token_expired':
      return 'The license token has expired: verify again for a fresh one';
    case 'token_revoked':
      return 'The license token was revoked';
    case 'invalid_signature':
    case 'invalid_token':
      return 'The license token is not one this service signed';
    case 'hwuid_required':
      return 'This license binds devices: send the device’s hwuid';
    case 'device_limit_reached':
      return 'Every device place of this license is taken; release a device first';
    case 'seat_required':
      return 'This floating license needs a seat held by this device: check one out first';
    default:
      return `The license does not allow downloads: ${code}`;
  }
}
