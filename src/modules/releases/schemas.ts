import Type from 'typebox';
import { DateTime, Nullable, PageQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { FeatureList } from '../products/schemas.js';
import { AppVersionHeader } from '../timeline/index.js';
import { EXTERNAL_URL_MAX_LENGTH } from './external-artifacts.js';

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
  size: Nullable(
    Type.Integer({
      description:
        'Bytes: counted by the service for a stored file; as the seller declared for an external one (null when they did not)',
    }),
  ),
  sha256: Nullable(
    Type.String({
      description:
        'Hex: computed by the service while it received the bytes of a stored file; the seller’s word for an external one (null when they gave none)',
    }),
  ),
  sha512: Nullable(Type.String({ description: 'Hex, as sha256' })),
  url: Nullable(
    Type.String({
      description:
        'An external file: the https address the seller hosts it at, where license-gated download links send the client. Null for a file the service stores',
    }),
  ),
  downloads: Type.Integer({
    description: 'Downloads served through license-gated links (a resumed download counts once)',
  }),
  createdAt: Timestamp,
});

export const DownloadsQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        ...DateTime,
        description: 'The days start with the UTC day holding this instant (default: 29 days before `to`)',
      }),
    ),
    to: Type.Optional(
      Type.String({
        ...DateTime,
        description:
          'The days end with the UTC day holding this instant (default: now); at most 366 days in all',
      }),
    ),
  },
  { additionalProperties: false },
);

const DayPoints = Type.Array(
  Type.Object({
    start: Timestamp,
    downloads: Type.Integer({ minimum: 0 }),
  }),
  { description: 'One point per UTC day of the period, in order; zero on a day without downloads' },
);

export const ReleaseDownloads = Type.Object({
  releaseId: Uuid,
  from: Timestamp,
  to: Timestamp,
  days: Type.Integer({ minimum: 1, description: 'How many UTC days the period holds' }),
  downloads: Type.Integer({ minimum: 0, description: 'The release’s downloads in the period' }),
  points: DayPoints,
  artifacts: Type.Array(
    Type.Object({
      id: Uuid,
      filename: Type.String(),
      platform: Nullable(Type.String()),
      arch: Nullable(Type.String()),
      downloads: Type.Integer({ minimum: 0, description: 'The artifact’s downloads in the period' }),
      points: DayPoints,
    }),
    { description: 'Each artifact of the release, as the artifact list orders them' },
  ),
});

export const ArtifactList = Type.Object({ artifacts: Type.Array(Artifact), total: Type.Integer() });

const ArtifactPlatform = Type.String({
  maxLength: 32,
  description: 'linux, macos, windows…; omitted: every platform',
});
const ArtifactArch = Type.String({
  maxLength: 32,
  description: 'x64, arm64, universal…; omitted: every architecture',
});

export const ExternalArtifactCreate = Type.Object(
  {
    filename: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'What buyers download it as: letters, digits, ., _, + and -, starting with a letter or digit, without ..',
    }),
    platform: Type.Optional(ArtifactPlatform),
    arch: Type.Optional(ArtifactArch),
    url: Type.String({
      minLength: 1,
      maxLength: EXTERNAL_URL_MAX_LENGTH,
      format: 'uri',
      errorMessage: `must be an absolute https URL of at most ${EXTERNAL_URL_MAX_LENGTH} characters`,
      description:
        'Where the seller hosts the file: an absolute https URL without credentials. The service never fetches it; download links send licensed clients there',
    }),
    size: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Bytes, as the seller declares them; needed for signed manifests and electron-updater',
      }),
    ),
    sha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-fA-F]{64}$',
        description: 'Hex, as the seller declares it; needed for signed manifests',
        errorMessage: 'must be 64 hexadecimal digits',
      }),
    ),
    sha512: Type.Optional(
      Type.String({
        pattern: '^(?:[0-9a-fA-F]{128}|[A-Za-z0-9+/]{86}==)$',
        description:
          'Hex, or base64 as electron-builder writes it in latest.yml; as the seller declares it; needed for signed manifests and electron-updater',
        errorMessage: 'must be 128 hexadecimal digits, or 88 characters of base64',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ArtifactParams = Type.Object(
  { appId: Uuid, releaseId: Uuid, filename: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);

export const ArtifactQuery = Type.Object(
  { platform: Type.Optional(ArtifactPlatform), arch: Type.Optional(ArtifactArch) },
  { additionalProperties: false },
);

const Key = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'The license key; or send `token` instead',
});
/** A compact JWS: three base64url parts (the last empty for an unsigned one, which is refused later). */
const JWS_SHAPE = '[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*';
const LicenseToken = Type.String({
  minLength: 1,
  maxLength: 8192,
  pattern: `^${JWS_SHAPE}$`,
  errorMessage: 'must be a license token (the license_token verify answers)',
  description:
    'A license token verify signed (license_token), in place of `key` and `hwuid`: it stands for its license and device. Checked as introspection checks it (signature, expiry, revocation), then the license as it is now',
});
const DeviceId = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The device, as verify takes it, with `key`: required when the license binds devices',
});
const Platform = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'linux, macos, windows…: only releases with an artifact for it (or for every platform)',
});
const Arch = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'x64, arm64…: only releases with an artifact for it (or for every architecture)',
});

export const UpgradeBody = Type.Object(
  {
    appId: Uuid,
    key: Type.Optional(Key),
    token: Type.Optional(LicenseToken),
    hwuid: Type.Optional(DeviceId),
    currentVersion: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'The version the client runs (semantic versioning)',
    }),
    channel: Type.Optional(
      Type.Enum(RELEASE_CHANNELS, {
        default: 'stable',
        description: 'The channel the client follows; it also receives every more stable one',
        errorMessage: 'must be one of stable, rc, beta, alpha, dev',
      }),
    ),
    platform: Type.Optional(Platform),
    arch: Type.Optional(Arch),
  },
  { additionalProperties: false },
);

export const DownloadableArtifact = Type.Object({
  filename: Type.String(),
  platform: Nullable(Type.String()),
  arch: Nullable(Type.String()),
  filetype: Type.String(),
  size: Nullable(
    Type.Integer({ description: 'Bytes; null for a file the seller hosts and declared no size of' }),
  ),
  sha256: Nullable(
    Type.String({
      description:
        'Hex; computed by the service for a stored file, declared by the seller for one they host (null when they gave none)',
    }),
  ),
  sha512: Nullable(Type.String({ description: 'Hex, as sha256' })),
  downloadUrl: Type.String({
    description:
      'The bytes, with range requests; works for an hour without further credentials. For a file the seller hosts, it redirects to their address',
  }),
  downloadUrlExpiresAt: Timestamp,
  manifest: Nullable(
    Type.String({
      description:
        'The signed manifest of the file (compact JWS, token_use service_release_manifest_v1): app, release, version, filename, platform, arch, size, sha256 and sha512, signed by the offline key of the app’s algorithm (GET /licenses/jwks). Check the downloaded bytes against it; null when the service signs nothing (LICENSE_TOKENS=off), and for a file the seller hosts unless they declared its size, sha256 and sha512 (the manifest then signs what they declared)',
    }),
  ),
});

export const Upgrade = Type.Object({
  release: Type.Object({
    id: Uuid,
    version: Type.String(),
    channel: Type.Enum(RELEASE_CHANNELS),
    notes: Type.String(),
    publishedAt: Timestamp,
  }),
  artifacts: Type.Array(DownloadableArtifact, {
    description: 'The release’s artifacts for the platform and architecture asked for (all when none was)',
  }),
});

export const DownloadBody = Type.Object(
  {
    appId: Uuid,
    key: Type.Optional(Key),
    token: Type.Optional(LicenseToken),
    hwuid: Type.Optional(DeviceId),
    version: Type.String({ minLength: 1, maxLength: 128, description: 'The release’s version' }),
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    platform: Type.Optional(Platform),
    arch: Type.Optional(Arch),
  },
  { additionalProperties: false },
);

export const FileParams = Type.Object(
  { artifactId: Uuid, filename: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);

export const FileQuery = Type.Object(
  {
    expires: Type.Integer({ minimum: 0, description: 'When the link stops working (Unix seconds)' }),
    signature: Type.String({ minLength: 1, maxLength: 100 }),
  },
  { additionalProperties: false },
);

/**
 * How an updater presents the license: headers, which electron-updater (`requestHeaders`) and
 * Tauri's updater (`headers`) send with the feed and with each file, and which stay out of
 * logged addresses.
 */
export const FeedHeaders = Type.Object({
  authorization: Type.String({
    maxLength: 8300,
    pattern: `^(?:[Ll][Ii][Cc][Ee][Nn][Ss][Ee] +[^\\s]{1,100}|[Bb][Ee][Aa][Rr][Ee][Rr] +${JWS_SHAPE})$`,
    description:
      'License <license key>, or Bearer <license token> (a token verify signed, standing for its license and device)',
    errorMessage: 'must be License followed by the license key, or Bearer followed by a license token',
  }),
  'x-device-id': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'The device’s hwuid, as verify takes it, with a license key: required when the license binds devices; not sent with a token',
      errorMessage: 'must be the device’s hwuid, 1 to 200 characters',
    }),
  ),
  ...AppVersionHeader.properties,
});

const FeedChannel = Type.Enum(RELEASE_CHANNELS, {
  description:
    'The channel the updater follows (it also receives every more stable one); stable when omitted',
  errorMessage: 'must be one of stable, rc, beta, alpha, dev',
});

export const ElectronFeedParams = Type.Object(
  {
    appId: Uuid,
    channelFile: Type.String({
      maxLength: 64,
      pattern: '^(latest|stable|rc|beta|alpha|dev)(-mac|-linux(-[a-z0-9_]{1,32})?)?\\.yml$',
      description:
        'The channel file electron-updater asks for: latest.yml (Windows), latest-mac.yml, latest-linux.yml, latest-linux-arm64.yml…; beta.yml, beta-mac.yml… for a channel (latest is stable)',
      errorMessage: 'must be a channel file, like latest.yml, latest-mac.yml or beta-linux-arm64.yml',
    }),
  },
  { additionalProperties: false },
);

export const ElectronFeedQuery = Type.Object(
  {
    noCache: Type.Optional(
      Type.String({
        maxLength: 32,
        description:
          'electron-updater’s cache buster (sent when its request headers hold no Authorization); ignored: feeds are never cached',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TauriFeedParams = Type.Object(
  {
    appId: Uuid,
    target: Type.Enum(['linux', 'windows', 'darwin'], {
      description: 'Tauri’s {{target}}: the operating system',
      errorMessage: 'must be one of linux, windows, darwin',
    }),
    arch: Type.String({
      pattern: '^[a-z0-9_]{1,32}$',
      description: 'Tauri’s {{arch}}: x86_64, aarch64, i686, armv7',
      errorMessage: 'must be an architecture, like x86_64 or aarch64',
    }),
    currentVersion: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Tauri’s {{current_version}}: the version the app runs',
    }),
  },
  { additionalProperties: false },
);

export const TauriFeedQuery = Type.Object(
  {
    channel: Type.Optional(FeedChannel),
    bundleType: Type.Optional(
      Type.String({
        pattern: '^[a-z]{1,16}$',
        description:
          'Tauri’s {{bundle_type}} (plugin 2.10 and later): nsis, msi, appimage, deb, rpm or app, to offer the file that installation updates from; unknown or omitted: the target’s usual updater file',
        errorMessage: 'must be a bundle type, like nsis or appimage',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TauriUpdate = Type.Object(
  {
    version: Type.String(),
    notes: Type.String(),
    pub_date: Timestamp,
    url: Type.String({ description: 'The file, through the feed: the license is checked again' }),
    signature: Type.String({ description: 'The content of the `.sig` uploaded beside the file' }),
  },
  { description: 'Tauri’s dynamic update format' },
);

export const FeedFileParams = Type.Object(
  {
    appId: Uuid,
    version: Type.String({ minLength: 1, maxLength: 128, description: 'The release’s version' }),
    filename: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);

export const FeedFileQuery = Type.Object(
  {
    platform: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    arch: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
  },
  { additionalProperties: false },
);
