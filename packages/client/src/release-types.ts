/** How stable a release is; a license on a channel is offered that one and every more stable one. */
export type ReleaseChannel = 'stable' | 'rc' | 'beta' | 'alpha' | 'dev';

/** `GET /apps/:appId/releases/:releaseId`: one version of the seller's software. */
export interface Release {
  id: string;
  appId: string;
  /** Semantic version, as the service normalised it (no leading `v`). */
  version: string;
  channel: ReleaseChannel;
  status: 'draft' | 'published' | 'yanked';
  notes: string;
  /** Entitlements a license must grant, all of them, to receive it; empty: every license. */
  requiredFeatures: string[];
  publishedAt: string | null;
  yankedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** `POST /apps/:appId/releases`: a draft. The channel defaults from the version (`2.0.0-rc.1` → rc). */
export interface ReleaseInput {
  version: string;
  channel?: ReleaseChannel;
  notes?: string;
  requiredFeatures?: string[];
}

/** `PATCH`: notes, channel and required features; the version only while a draft. */
export type ReleaseUpdateInput = Partial<ReleaseInput>;

/** `GET /apps/:appId/releases/:releaseId/artifacts/:filename`: one file of a release. */
export interface Artifact {
  id: string;
  releaseId: string;
  /** What buyers download it as: letters, digits, `.`, `_`, `+` and `-`. */
  filename: string;
  /** null: the file suits every platform (architecture). */
  platform: string | null;
  arch: string | null;
  /** From the name: `exe`, `dmg`, `tar.gz`…; empty for a name without an extension. */
  filetype: string;
  /**
   * Bytes, counted by the service as it stored them; for an external file, as its seller declared
   * them (null when they did not).
   */
  size: number | null;
  /**
   * Hex digests the service computed while it received the bytes; for an external file, the
   * seller's word (null when they gave none).
   */
  sha256: string | null;
  sha512: string | null;
  /** An external file: the https address the seller hosts it at. Null for a file the service stores. */
  url: string | null;
  /** Downloads served through license-gated links (a resumed download counts once). */
  downloads: number;
  createdAt: string;
}

/** One UTC day's downloads: `start` is its midnight (UTC). */
export interface DownloadDay {
  start: string;
  downloads: number;
}

/**
 * `GET /apps/:appId/releases/:releaseId/downloads`: downloads per UTC day over a period, for the
 * release and for each of its files; every day is present, zero when none.
 */
export interface ReleaseDownloads {
  releaseId: string;
  /** The start of the first day, and the `to` asked for (now by default). */
  from: string;
  to: string;
  days: number;
  /** The release's downloads in the period, and per day. */
  downloads: number;
  points: DownloadDay[];
  artifacts: {
    id: string;
    filename: string;
    platform: string | null;
    arch: string | null;
    downloads: number;
    points: DownloadDay[];
  }[];
}

/** Which artifact of a release: its file name, and its platform and architecture when it names them. */
export interface ArtifactAddress {
  filename: string;
  platform?: string;
  arch?: string;
}

/**
 * `releases.addExternalArtifact`: a file the seller hosts at an https address. The service never
 * fetches it; its size and digests are what the seller declares here. A signed manifest needs all
 * three, electron-updater's feed `size` and `sha512`.
 */
export interface ExternalArtifactInput extends ArtifactAddress {
  url: string;
  size?: number;
  /** Hex. */
  sha256?: string;
  /** Hex, or base64 as electron-builder writes it in `latest.yml`. */
  sha512?: string;
}

/**
 * `checkForUpdate`: the license, what the client runs, and what it can install. The license is
 * its key (with the device, as verify takes it), or a license token verify answered
 * (`license_token`), which stands for its license and device.
 */
export type UpdateCheckInput = (
  | {
      key: string;
      /** The device, as verify takes it: required when the license binds devices. */
      hwuid?: string;
      token?: never;
    }
  | {
      /** A license token from verify, in place of the key; refused once expired or revoked. */
      token: string;
      key?: never;
      hwuid?: never;
    }
) & {
  appId: string;
  /** The version the client runs (semantic versioning). */
  currentVersion: string;
  /** The channel it follows (default stable); it also receives every more stable one. */
  channel?: ReleaseChannel;
  /** Only releases with a file for this platform and architecture (or for every one). */
  platform?: string;
  arch?: string;
};

/** A file of an offered release, with an hour-long link to its bytes and its signed manifest. */
export interface ReleaseFile {
  filename: string;
  platform: string | null;
  arch: string | null;
  filetype: string;
  /** Bytes; null for a file the seller hosts and declared no size of. */
  size: number | null;
  /**
   * Hex digests, as the service computed them on upload; for a file the seller hosts, as they
   * declared them (null when they gave none).
   */
  sha256: string | null;
  sha512: string | null;
  /** The bytes for an hour; for a file the seller hosts, a redirect to their address. */
  downloadUrl: string;
  downloadUrlExpiresAt: string;
  /**
   * The signed manifest (compact JWS) for `verifyArtifact`; null when the service signs nothing,
   * and for a file the seller hosts unless they declared its size, sha256 and sha512.
   */
  manifest: string | null;
}

/** `POST /releases/upgrade`: the newest release the license may have, and its files. */
export interface AvailableUpdate {
  release: {
    id: string;
    version: string;
    channel: ReleaseChannel;
    notes: string;
    publishedAt: string;
  };
  artifacts: ReleaseFile[];
}
