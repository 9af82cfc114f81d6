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
  /** Bytes, counted by the service as it stored them. */
  size: number;
  /** Hex digests the service computed while it received the bytes. */
  sha256: string;
  sha512: string;
  /** Downloads served through license-gated links (a resumed download counts once). */
  downloads: number;
  createdAt: string;
}

/** Which artifact of a release: its file name, and its platform and architecture when it names them. */
export interface ArtifactAddress {
  filename: string;
  platform?: string;
  arch?: string;
}
