import type { ReleaseArtifactRow, ReleaseRow, SigningAlgorithm } from '../../platform/db/schema.js';
import type { KeyRing } from '../license-tokens/index.js';

/** token_use of a release manifest: never a license token, license file or revocation list. */
export const RELEASE_MANIFEST_USE = 'service_release_manifest_v1';

/** What a manifest says about one published file; the SDKs check the bytes they hold against it. */
export interface ManifestClaims {
  iss: string;
  /** When the release was published (seconds): the same on every node, so the JWS is too. */
  iat: number;
  token_use: typeof RELEASE_MANIFEST_USE;
  /** The app id. */
  app: string;
  /** The release id. */
  release: string;
  version: string;
  filename: string;
  platform: string | null;
  arch: string | null;
  size: number;
  /**
   * Hex digests of the bytes: as the service computed them while receiving them, or for a file the
   * seller hosts, as the seller declared them (the service never reads those bytes).
   */
  sha256: string;
  sha512: string;
}

/** Manifests kept signed: a few hundred bytes each, so the bound costs a few megabytes. */
const CACHE_ENTRIES = 10_000;

export type ManifestSigner = ReturnType<typeof createManifestSigner>;

/**
 * Signed manifests: `{app, release, version, filename, platform, arch, size, sha256, sha512}` of a
 * published artifact, a compact JWS made by the offline key of the app's algorithm (the key that
 * signs license files and revocation lists, published at /licenses/jwks with purpose offline), so
 * client software checks a downloaded file against a key set it ships with. A file the seller
 * hosts has one only when they declared its size and both digests, which it then states as their
 * word: a manifest never states a digest the service was not given.
 *
 * Signed when asked for, not stored: the claims of a published artifact never change and `iat`
 * is its release's publication, so a key signs one manifest per file (RS256 and EdDSA both sign
 * deterministically) and every node answers the same bytes. A rotation of the offline keys gives
 * new answers the new key's manifest; one signed before checks as long as its key stays in the key
 * set (a day after the new key starts signing, longer while license files it signed are valid).
 *
 * The cache holds signed manifests by key, artifact and content, at most CACHE_ENTRIES, the
 * oldest dropped first. Nothing invalidates it: an entry is found again only for the same key and
 * the same bytes, which is the same manifest.
 */
export function createManifestSigner({
  keys,
  issuer,
}: {
  /** Null when the service signs nothing (LICENSE_TOKENS=off): manifests are then null. */
  keys: Pick<KeyRing, 'signingKey'> | null;
  issuer: string;
}) {
  const cache = new Map<string, string>();

  return {
    async sign(
      algorithm: SigningAlgorithm,
      release: Pick<ReleaseRow, 'id' | 'app_id' | 'version' | 'published_at'>,
      artifact: ReleaseArtifactRow,
    ): Promise<string | null> {
      // An external file is signed only with everything the claims state, as its seller declared it.
      const { size, sha256, sha512 } = artifact;
      if (!keys || !release.published_at || size === null || sha256 === null || sha512 === null) return null;
      const key = await keys.signingKey('offline', algorithm);
      if (!key) return null;
      const name = `${key.kid}\n${artifact.id}\n${sha256}\n${release.version}`;
      const cached = cache.get(name);
      if (cached !== undefined) return cached;
      const claims: ManifestClaims = {
        iss: issuer,
        iat: Math.floor(release.published_at.getTime() / 1000),
        token_use: RELEASE_MANIFEST_USE,
        app: release.app_id,
        release: release.id,
        version: release.version,
        filename: artifact.filename,
        platform: artifact.platform || null,
        arch: artifact.arch || null,
        size: Number(size),
        sha256,
        sha512,
      };
      const manifest = await key.sign(claims);
      if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      cache.set(name, manifest);
      return manifest;
    },
  };
}
