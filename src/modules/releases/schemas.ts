import Type from 'typebox';
import { Nullable, PageQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { FeatureList } from '../products/schemas.js';

export const RELEASE_CHANNELS = ['stable', 'rc', 'beta', 'alpha', 'dev'] as const;
export const RELEASE_STATUSES = ['draft', 'published', 'yanked'] as const;

const Channel = Type.Enum(RELEASE_CHANNELS, {
  description:
    'Who is offered the release: a license on a channel receives that channel and every more stable one (beta receives rc and stable). When omitted, a release version is stable and a pre-release takes the channel its tag names (2.0.0-rc.1 → rc).',
  errorMessage: 'must be one of stable, rc, beta, alpha, dev',
});
const Version = Type.String({
  minLength: 5,
  maxLength: 128,
  description: 'A semantic version (1.4.0, 2.0.0-beta.3); a leading v is dropped',
});
const Notes = Type.String({
  maxLength: 20_000,
  description: 'Release notes (Markdown or plain text), shown to buyers',
});
const RequiredFeatures = Type.Unsafe<string[]>({
  ...FeatureList,
  description:
    'Entitlements a license must grant, all of them, to receive this release; empty: every license',
});

export const Release = Type.Object({
  id: Uuid,
  appId: Uuid,
  version: Type.String(),
  channel: Type.Enum(RELEASE_CHANNELS),
  status: Type.Enum(RELEASE_STATUSES),
  notes: Type.String(),
  requiredFeatures: Type.Array(Type.String()),
  publishedAt: Nullable(Timestamp),
  yankedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ReleaseCreate = Type.Object(
  {
    version: Version,
    channel: Type.Optional(Channel),
    notes: Type.Optional(Notes),
    requiredFeatures: Type.Optional(RequiredFeatures),
  },
  { additionalProperties: false },
);

export const ReleaseUpdate = Type.Object(
  {
    version: Type.Optional(Version),
    channel: Type.Optional(Channel),
    notes: Type.Optional(Notes),
    requiredFeatures: Type.Optional(RequiredFeatures),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ReleaseParams = Type.Object({ appId: Uuid, releaseId: Uuid }, { additionalProperties: false });

export const ReleaseListQuery = Type.Object(
  {
    ...PageQuery,
    channel: Type.Optional(
      Type.Enum(RELEASE_CHANNELS, { errorMessage: 'must be one of stable, rc, beta, alpha, dev' }),
    ),
    status: Type.Optional(
      Type.Enum(RELEASE_STATUSES, { errorMessage: 'must be one of draft, published, yanked' }),
    ),
  },
  { additionalProperties: false },
);

export const ReleaseList = Type.Object({
  releases: Type.Array(Release),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const Artifact = Type.Object({
  id: Uuid,
  releaseId: Uuid,
  filename: Type.String(),
  platform: Nullable(Type.String({ description: 'null: every platform' })),
  arch: Nullable(Type.String({ description: 'null: every architecture' })),
  filetype: Type.String({
    description: 'From the file name: exe, dmg, zip, tar.gz, appimage…; empty when it has none',
  }),
  size: Type.Integer({ description: 'Bytes' }),
  sha256: Type.String({ description: 'Hex, computed by the service while it received the bytes' }),
  sha512: Type.String({ description: 'Hex, computed by the service while it received the bytes' }),
  createdAt: Timestamp,
});

export const ArtifactList = Type.Object({ artifacts: Type.Array(Artifact), total: Type.Integer() });

export const ArtifactParams = Type.Object(
  { appId: Uuid, releaseId: Uuid, filename: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);

export const ArtifactQuery = Type.Object(
  {
    platform: Type.Optional(
      Type.String({ maxLength: 32, description: 'linux, macos, windows…; omitted: every platform' }),
    ),
    arch: Type.Optional(
      Type.String({ maxLength: 32, description: 'x64, arm64, universal…; omitted: every architecture' }),
    ),
  },
  { additionalProperties: false },
);
