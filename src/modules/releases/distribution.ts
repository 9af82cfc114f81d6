import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { ReleaseArtifactRow, ReleaseChannel, ReleaseRow } from '../../platform/db/schema.js';
import { AppError, type ErrorCode, invalidField, notFound } from '../../platform/errors.js';
import { iso } from '../../platform/http/schemas.js';
import type { Log } from '../../platform/log.js';
import type { Verification } from '../licenses/index.js';
import type { ClientCall } from '../timeline/index.js';
import type { ArtifactStore } from './artifact-store.js';
import { type DownloadLinks, MIN_REDIRECT_SECONDS } from './download-links.js';
import { RELEASE_CHANNELS } from './schemas.js';
import * as store from './store.js';
import { parseVersion } from './version-order.js';

/** What a client says about itself when it asks for a release. */
export interface LicensedClient {
  appId: string;
  key: string;
  hwuid?: string;
  platform?: string;
  arch?: string;
}

/** What the license check leaves for the release rules: the license's entitlements and expiry. */
interface Grant {
  features: readonly string[];
  /** Set when the license is past its expiry and keeps access: releases published by then only. */
  publishedBy: Date | null;
}

/** An entitlement `channel:<name>` opens that channel (and the more stable ones) to a license. */
const CHANNEL_ENTITLEMENT = 'channel:';

/**
 * The channels a client following `channel` receives: that one and every more stable one
 * (beta receives rc and stable), in RELEASE_CHANNELS's order from the most stable.
 */
export function channelsFor(channel: ReleaseChannel): ReleaseChannel[] {
  return RELEASE_CHANNELS.slice(0, RELEASE_CHANNELS.indexOf(channel) + 1);
}

/**
 * Whether the license may follow `channel`. A license with no `channel:` entitlement may follow
 * any; one with some follows the least stable channel they name, and the more stable ones.
 */
export function channelGranted(features: readonly string[], channel: ReleaseChannel): boolean {
  const named = features
    .filter((feature) => feature.startsWith(CHANNEL_ENTITLEMENT))
    .map((feature) => RELEASE_CHANNELS.indexOf(feature.slice(CHANNEL_ENTITLEMENT.length) as ReleaseChannel));
  if (named.length === 0) return true;
  return RELEASE_CHANNELS.indexOf(channel) <= Math.max(...named);
}

export type Distribution = ReturnType<typeof createDistribution>;

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
}: {
  db: Db;
  clock: Clock;
  log: Log;
  verification: Pick<Verification, 'verify'>;
  blobs: Pick<ArtifactStore, 'download'>;
  links: DownloadLinks;
}) {
  /** The license's grant, or the verification's refusal as an error carrying its code. */
  async function licensed(client: LicensedClient, call: ClientCall | undefined): Promise<Grant> {
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

  function offered(artifact: ReleaseArtifactRow, now: Date) {
    const link = links.link(artifact, now);
    return {
      filename: artifact.filename,
      platform: artifact.platform || null,
      arch: artifact.arch || null,
      filetype: artifact.filetype,
      size: Number(artifact.size),
      sha256: artifact.sha256,
      sha512: artifact.sha512,
      downloadUrl: link.url,
      downloadUrlExpiresAt: iso(link.expiresAt),
    };
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
      log.info({ appId: input.appId, releaseId: release.id }, 'release.upgrade.offered');
      return {
        release: {
          id: release.id,
          version: release.version,
          channel: release.channel,
          notes: release.notes,
          publishedAt: iso(release.published_at),
        },
        artifacts: artifacts.map((artifact) => offered(artifact, now)),
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
      return offered(artifact, clock.now());
    },

    /**
     * What a download link leads to, once its signature and expiry hold and its release is still
     * published (a yanked release's links stop at once): the stored file, or on S3 a presigned
     * URL valid for the rest of the link's hour (and at least MIN_REDIRECT_SECONDS, so a redirect
     * followed at once always works). Counts a download when the request starts at the first
     * byte (a resumed download is not counted again).
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
      const validFor = Math.max(MIN_REDIRECT_SECONDS, link.expires - Math.floor(now.getTime() / 1000));
      const download = await blobs.download(artifact, validFor);
      if (startsAtZero) await store.countDownload(db, artifactId);
      return { download, filename: artifact.filename, sha256: artifact.sha256 };
    },
  };
}

/** What a refused client is told, by the verification's code. */
function refusalMessage(code: ErrorCode): string {
  switch (code) {
    case 'license_not_found':
      return 'No license of this app has this key';
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
