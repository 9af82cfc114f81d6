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
