import { dump } from 'js-yaml';
import type { Db } from '../../platform/db/database.js';
import type { ReleaseArtifactRow, ReleaseChannel } from '../../platform/db/schema.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { iso } from '../../platform/http/schemas.js';
import type { Log } from '../../platform/log.js';
import type { ClientCall } from '../timeline/index.js';
import type { Distribution } from './distribution.js';
import { sourceOf } from './external-artifacts.js';
import { channelGranted, channelsFor, type LicenseCredential } from './grants.js';
import * as store from './store.js';
import { parseVersion } from './version-order.js';

/**
 * Release feeds in the formats of two common updaters, each answer for one license and device
 * (checked as the update check checks them, distribution.ts):
 *
 * - electron-updater's generic provider: `latest.yml`, `latest-mac.yml`, `latest-linux.yml`,
 *   `latest-linux-arm64.yml`… and the same for a channel (`beta.yml`, `beta-mac.yml`), written as
 *   electron-builder writes them (js-yaml, as electron-builder and electron-updater use it).
 * - Tauri's updater (v2), its dynamic format: the newest release past the current version for a
 *   target and architecture, with the seller's Tauri signature of the file, or 204.
 *
 * The files are named by a feed address (`files/<version>/<filename>`) that checks the license
 * again and sends the updater on to an hour-long download link, so a feed read long before the
 * download still works. Yanked releases are never in a feed. A file the seller hosts appears
 * only with what the updater checks it by: electron-updater its size and SHA-512 as the seller
 * declared them, Tauri a `.sig` the service stores beside it.
 */

/** The license (and device) of an updater's request (headers, feed-routes.ts). */
export type FeedClient = LicenseCredential & { appId: string };

/**
 * The names each platform and architecture may carry on an artifact: the service's (`windows`,
 * `macos`, `linux`; `x64`, `arm64`, `ia32`, `armv7l`) and the updaters' and build tools' own.
 */
const PLATFORM_NAMES = {
  windows: ['windows', 'win', 'win32'],
  macos: ['macos', 'mac', 'darwin', 'osx'],
  linux: ['linux'],
} as const;
const ARCH_NAMES: readonly (readonly string[])[] = [
  ['x64', 'x86_64', 'amd64'],
  ['arm64', 'aarch64'],
  ['ia32', 'x86', 'i686', 'i386'],
  ['armv7l', 'armv7', 'arm'],
];
/** A universal macOS build runs on every Mac. */
const UNIVERSAL = 'universal';

function archNames(name: string, platform: keyof typeof PLATFORM_NAMES): string[] {
  const names = [...(ARCH_NAMES.find((group) => group.includes(name)) ?? [name])];
  return platform === 'macos' ? [...names, UNIVERSAL] : names;
}

/**
 * What electron-updater installs on each platform (a release must have one) and what its
 * channel file lists, the preferred first: a Mac updates from the zip, the dmg is listed after.
 */
const ELECTRON_FILES = {
  windows: { installs: ['.exe'], lists: ['.exe'] },
  macos: { installs: ['.zip'], lists: ['.zip', '.dmg'] },
  linux: {
    installs: ['.appimage', '.deb', '.rpm', '.pacman'],
    lists: ['.appimage', '.deb', '.rpm', '.pacman'],
  },
} as const;

/**
 * A channel file electron-updater asks for: `<channel>[-mac|-linux[-<arch>]].yml`. `latest` is
 * electron-builder's name for the stable channel; Linux's file names the architecture unless x64.
 */
export const ELECTRON_CHANNEL_FILE =
  /^(latest|stable|rc|beta|alpha|dev)(?:-(mac)|-(linux)(?:-([a-z0-9_]{1,32}))?)?\.yml$/;

/** Tauri's `{{bundle_type}}`: the files each kind of installation updates from. */
const TAURI_BUNDLES: Record<string, readonly string[]> = {
  nsis: ['.exe', '.nsis.zip'],
  msi: ['.msi', '.msi.zip'],
  appimage: ['.appimage', '.appimage.tar.gz'],
  deb: ['.deb'],
  rpm: ['.rpm'],
  app: ['.app.tar.gz'],
};
/** Without a bundle type: what Tauri's bundler makes for the updater on each target, preferred first. */
const TAURI_FILES = {
  windows: ['.exe', '.msi', '.nsis.zip', '.msi.zip'],
  macos: ['.app.tar.gz'],
  linux: ['.appimage', '.appimage.tar.gz', '.deb', '.rpm'],
} as const;
export const TAURI_TARGETS = { windows: 'windows', darwin: 'macos', linux: 'linux' } as const;
/** A `.sig` longer than this is not a Tauri signature (minisign's are a few hundred bytes). */
const SIGNATURE_MAX_BYTES = 4096;
/** Signatures read from the store, by the content address of the `.sig`: they never change. */
const SIGNATURE_CACHE_ENTRIES = 1_000;

/** Tauri's dynamic update format. */
export interface TauriUpdate {
  version: string;
  notes: string;
  pub_date: string;
  url: string;
  signature: string;
}

export type UpdaterFeeds = ReturnType<typeof createUpdaterFeeds>;

export function createUpdaterFeeds({
  db,
  log,
  distribution,
  apiBaseUrl,
  signatureOf,
}: {
  db: Db;
  log: Log;
  distribution: Pick<Distribution, 'grant' | 'download'>;
  apiBaseUrl: string;
  /** The text of a stored `.sig`, by its SHA-256. */
  signatureOf: (sha256: string) => Promise<string>;
}) {
  const signatures = new Map<string, string>();

  /** The license's grant, refused when it may not follow `channel`. */
  async function granted(client: FeedClient, channel: ReleaseChannel, call: ClientCall | undefined) {
    const grant = await distribution.grant(client, call);
    if (!channelGranted(grant.features, channel)) {
      throw new AppError('channel_not_granted', `This license does not receive ${channel} releases`);
    }
    return grant;
  }

  /** The feed address of a file: the license is checked again when the updater fetches it. */
  function fileUrl(appId: string, version: string, artifact: ReleaseArtifactRow): string {
    const query = new URLSearchParams({
      ...(artifact.platform ? { platform: artifact.platform } : {}),
      ...(artifact.arch ? { arch: artifact.arch } : {}),
    }).toString();
    const path = `${apiBaseUrl}/releases/feeds/${appId}/files/${encodeURIComponent(version)}/${encodeURIComponent(artifact.filename)}`;
    return query ? `${path}?${query}` : path;
  }

  /** The text of a stored `.sig` (the feed's search never picks an external one). */
  async function signatureText(sig: ReleaseArtifactRow): Promise<string> {
    const source = sourceOf(sig);
    if (source.kind !== 'stored') throw new Error('A Tauri signature the service does not store');
    const held = signatures.get(source.sha256);
    if (held !== undefined) return held;
    const text = (await signatureOf(source.sha256)).trim();
    if (signatures.size >= SIGNATURE_CACHE_ENTRIES)
      signatures.delete(signatures.keys().next().value as string);
    signatures.set(source.sha256, text);
    return text;
  }

  return {
    /**
     * An electron-updater channel file: the newest release on the channel (and the more stable
     * ones) with a file electron-updater installs on that platform and architecture.
     */
    async electron(input: FeedClient & { channelFile: string }, call?: ClientCall): Promise<string> {
      const named = ELECTRON_CHANNEL_FILE.exec(input.channelFile);
      if (!named)
        throw invalidField('channelFile', 'must be a channel file, like latest.yml or beta-mac.yml');
      const [, channelName, mac, linux, linuxArch] = named;
      const channel = (channelName === 'latest' ? 'stable' : channelName) as ReleaseChannel;
      const platform = mac ? 'macos' : linux ? 'linux' : 'windows';
      const { installs, lists } = ELECTRON_FILES[platform];
      const grant = await granted(input, channel, call);
      const search = {
        appId: input.appId,
        after: '',
        channels: channelsFor(channel),
        features: grant.features,
        publishedBy: grant.publishedBy,
        platforms: PLATFORM_NAMES[platform],
        arches: linux ? archNames(linuxArch ?? 'x64', platform) : null,
        signedWithin: null,
        // electron-updater checks every download against the listed sha512 and size.
        withSizeAndSha512: true,
      };
      const release = await store.newestFeedRelease(db, { ...search, suffixes: installs });
      if (!release?.published_at) throw notFound('Release');
      const { files } = await store.feedFiles(db, release.id, { ...search, suffixes: lists });
      // electron-updater installs the first .exe: on Windows an x64 one (or one for every
      // architecture) comes first, as electron-builder's single installer for both would.
      const preferred = search.arches ?? (platform === 'windows' ? archNames('x64', platform) : null);
      const ordered = sortBy(files, lists, preferred);
      // The search found only files with both (a stored file always has them).
      const entries = ordered.flatMap((file) =>
        file.sha512 === null || file.size === null
          ? []
          : [
              {
                url: fileUrl(input.appId, release.version, file),
                sha512: Buffer.from(file.sha512, 'hex').toString('base64'),
                size: Number(file.size),
              },
            ],
      );
      const [first] = entries;
      if (!first) throw notFound('Release');
      log.info({ appId: input.appId, releaseId: release.id, feed: 'electron' }, 'release.feed.offered');
      // The fields and their order as electron-builder writes them (release notes before the date).
      return dump(
        {
          version: release.version,
          files: entries,
          path: first.url,
          sha512: first.sha512,
          ...(release.notes ? { releaseNotes: release.notes } : {}),
          releaseDate: iso(release.published_at),
        },
        { lineWidth: 8000, noRefs: true },
      );
    },

    /**
     * Tauri's dynamic format: the newest release past `currentVersion` with a signed file for the
     * target and architecture (and the bundle type, when Tauri names it); null when up to date.
     */
    async tauri(
      input: FeedClient & {
        target: keyof typeof TAURI_TARGETS;
        arch: string;
        currentVersion: string;
        channel?: ReleaseChannel;
        bundleType?: string;
      },
      call?: ClientCall,
    ): Promise<TauriUpdate | null> {
      const current = parseVersion(input.currentVersion);
      if (!current) throw invalidField('currentVersion', 'must be a semantic version, like 1.4.0');
      const channel = input.channel ?? 'stable';
      const platform = TAURI_TARGETS[input.target];
      const suffixes = TAURI_BUNDLES[input.bundleType ?? ''] ?? TAURI_FILES[platform];
      const grant = await granted(input, channel, call);
      const search = {
        appId: input.appId,
        after: current.order,
        channels: channelsFor(channel),
        features: grant.features,
        publishedBy: grant.publishedBy,
        platforms: PLATFORM_NAMES[platform],
        arches: archNames(input.arch, platform),
        suffixes,
        signedWithin: SIGNATURE_MAX_BYTES,
        // Tauri checks the file by the seller's signature alone: an external file needs no digest.
        withSizeAndSha512: false,
      };
      const release = await store.newestFeedRelease(db, search);
      if (!release?.published_at) return null;
      const { files, all } = await store.feedFiles(db, release.id, search);
      const sigOf = (file: ReleaseArtifactRow) => {
        const named = all.filter(
          (sig) =>
            sig.filename === `${file.filename}.sig` &&
            sig.url === null &&
            Number(sig.size) <= SIGNATURE_MAX_BYTES,
        );
        return named.find((sig) => sig.platform === file.platform && sig.arch === file.arch) ?? named[0];
      };
      const [file] = sortBy(
        files.filter((candidate) => sigOf(candidate) !== undefined),
        suffixes,
        search.arches,
      );
      const sig = file && sigOf(file);
      if (!file || !sig) return null;
      log.info({ appId: input.appId, releaseId: release.id, feed: 'tauri' }, 'release.feed.offered');
      return {
        version: release.version,
        notes: release.notes,
        pub_date: iso(release.published_at),
        url: fileUrl(input.appId, release.version, file),
        signature: await signatureText(sig),
      };
    },

    /** Where a feed's file is, once the license passes: an hour-long download link. */
    async fileLink(
      input: FeedClient & { version: string; filename: string; platform?: string; arch?: string },
      call?: ClientCall,
    ): Promise<string> {
      return (await distribution.download(input, call)).downloadUrl;
    },
  };
}

/**
 * Files in the order an updater should prefer them: by the position of their ending in
 * `suffixes`, then a file for this platform before one for every platform, then one for `arches`
 * before a universal one, one for any and one for another, then by name.
 */
function sortBy(files: ReleaseArtifactRow[], suffixes: readonly string[], arches: readonly string[] | null) {
  const archRank = (arch: string) => {
    if (arches === null) return 0;
    if (arch === UNIVERSAL) return 1;
    if (arches.includes(arch)) return 0;
    return arch === '' ? 2 : 3;
  };
  const rank = (file: ReleaseArtifactRow) => {
    const name = file.filename.toLowerCase();
    const ending = suffixes.findIndex((suffix) => name.endsWith(suffix));
    return [ending, file.platform === '' ? 1 : 0, archRank(file.arch)] as const;
  };
  return [...files].sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || a.filename.localeCompare(b.filename);
  });
}
