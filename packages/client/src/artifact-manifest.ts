import type { LicenseTokenError } from './errors.js';
import { LICENSE_SIGNING_ALGORITHMS, offlineKeysOf } from './license-file.js';
import { fetchKeySet } from './token-verifier.js';
import type { JsonWebKeySet } from './types.js';

/**
 * Release manifests, checked on the machine: the service signs `{app, release, version, filename,
 * platform, arch, size, sha256, sha512}` of each published file with its offline key, and the
 * update check and download answers carry it. verifyArtifact checks the signature against a key
 * set (offline, or fetched), then the bytes against the size and SHA-256. Everything here runs
 * in browsers too (WebCrypto, no Node built-ins); `@licensing/client/server` adds file paths and
 * hashes as it reads.
 */

export const RELEASE_MANIFEST_USE = 'service_release_manifest_v1';

/** What a manifest says about one file, once checked. */
export interface ReleaseManifest {
  iss: string;
  /** When the release was published (seconds). */
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
  /** Hex. */
  sha256: string;
  sha512: string;
}

export type ArtifactVerificationErrorCode =
  | 'invalid_manifest'
  | 'invalid_signature'
  | 'wrong_token_use'
  | 'wrong_app'
  | 'wrong_version'
  | 'wrong_file'
  | 'size_mismatch'
  | 'digest_mismatch'
  | 'key_set_unavailable';

/** A file (or its manifest) that must not be trusted, with the reason. */
export class ArtifactVerificationError extends Error {
  constructor(
    readonly code: ArtifactVerificationErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ArtifactVerificationError';
  }
}

export interface VerifyArtifactOptions {
  /** Your app id: a manifest of another app's file is refused. */
  appId: string;
  /** The key set shipped with your software or stored from `GET /licenses/jwks`. */
  keySet?: JsonWebKeySet;
  /** The key set address (`client.jwksUri`): fetched when there is no `keySet`, or it lacks the manifest's key. */
  jwksUri?: string;
  /** The version you expect (the one the update check offered): another release's file is refused. */
  version?: string;
  /** The file name you expect: another file of the release is refused. */
  filename?: string;
  /** Expected iss (the service's `…/v1` address); not checked when absent. */
  issuer?: string;
  fetch?: typeof fetch;
}

/** The bytes of a file: in memory, a Blob, a web stream, or any async iterable of chunks (a Node stream). */
export type ArtifactBytes =
  | Uint8Array
  | ArrayBuffer
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>;

/**
 * Checks a downloaded file against its signed manifest: the signature (an offline key of the key
 * set), token_use, app, the version and file name when you give them, then the size and SHA-256 of
 * the bytes. Throws ArtifactVerificationError with the reason; answers the manifest. Here the bytes
 * are held in memory to be hashed (WebCrypto has no streaming digest), never more than the
 * manifest's size plus one chunk; `@licensing/client/server`'s verifyArtifact streams them.
 */
export async function verifyArtifact(
  artifact: ArtifactBytes,
  manifest: string,
  options: VerifyArtifactOptions,
): Promise<ReleaseManifest> {
  const claims = await checkManifest(manifest, options);
  const held: Uint8Array[] = [];
  await checkBytes(chunksOf(artifact), claims, {
    update: (chunk) => held.push(chunk),
    digest: async () => hex(await globalThis.crypto.subtle.digest('SHA-256', concat(held))),
  });
  return claims;
}

/** The manifest's signature and claims, before any byte is read. */
export async function checkManifest(
  manifest: string,
  options: VerifyArtifactOptions,
): Promise<ReleaseManifest> {
  if (typeof options?.appId !== 'string' || options.appId.length === 0) {
    throw new TypeError('appId: must be your app id');
  }
  if (options.keySet === undefined && options.jwksUri === undefined) {
    throw new TypeError('keySet or jwksUri: give the key set, its address, or both');
  }
  if (typeof manifest !== 'string' || manifest.trim().length === 0) {
    throw new ArtifactVerificationError('invalid_manifest', 'The manifest is missing');
  }
  const claims = await verifySignature(manifest.trim(), options);
  if (claims.token_use !== RELEASE_MANIFEST_USE) {
    throw new ArtifactVerificationError('wrong_token_use', 'Not a release manifest (token_use)');
  }
  if (
    typeof claims.app !== 'string' ||
    typeof claims.version !== 'string' ||
    typeof claims.filename !== 'string' ||
    typeof claims.size !== 'number' ||
    !Number.isSafeInteger(claims.size) ||
    claims.size < 0 ||
    typeof claims.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(claims.sha256)
  ) {
    throw new ArtifactVerificationError(
      'invalid_manifest',
      'The manifest lacks app, version, filename, size or sha256',
    );
  }
  if (options.issuer !== undefined && claims.iss !== options.issuer) {
    throw new ArtifactVerificationError('invalid_manifest', 'The manifest was signed by another service');
  }
  if (claims.app !== options.appId) {
    throw new ArtifactVerificationError('wrong_app', 'The manifest is of another app’s file');
  }
  if (options.version !== undefined && claims.version !== options.version) {
    throw new ArtifactVerificationError('wrong_version', `The manifest is of version ${claims.version}`);
  }
  if (options.filename !== undefined && claims.filename !== options.filename) {
    throw new ArtifactVerificationError('wrong_file', `The manifest is of ${claims.filename}`);
  }
  return claims as unknown as ReleaseManifest;
}

/** A digest computed as the chunks come (node:crypto) or at the end (WebCrypto). */
export interface Hasher {
  update(chunk: Uint8Array): void;
  digest(): string | Promise<string>;
}

/**
 * Reads the chunks, refusing as soon as there are more bytes than the manifest says, then
 * compares the size and the SHA-256 (hex) with it.
 */
export async function checkBytes(
  chunks: AsyncIterable<Uint8Array>,
  claims: ReleaseManifest,
  hasher: Hasher,
): Promise<void> {
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > claims.size) {
      throw new ArtifactVerificationError(
        'size_mismatch',
        `The file is larger than the manifest’s ${claims.size} bytes`,
      );
    }
    hasher.update(chunk);
  }
  if (size !== claims.size) {
    throw new ArtifactVerificationError(
      'size_mismatch',
      `The file has ${size} bytes, the manifest ${claims.size}`,
    );
  }
  if ((await hasher.digest()) !== claims.sha256) {
    throw new ArtifactVerificationError('digest_mismatch', 'The file’s SHA-256 is not the manifest’s');
  }
}

/** The bytes of any ArtifactBytes, chunk by chunk. */
export async function* chunksOf(artifact: ArtifactBytes): AsyncIterable<Uint8Array> {
  if (artifact instanceof Uint8Array) {
    yield artifact;
  } else if (artifact instanceof ArrayBuffer) {
    yield new Uint8Array(artifact);
  } else if (typeof Blob !== 'undefined' && artifact instanceof Blob) {
    yield* chunksOf(artifact.stream());
  } else if (typeof (artifact as ReadableStream<Uint8Array>)?.getReader === 'function') {
    const reader = (artifact as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  } else if (typeof (artifact as AsyncIterable<Uint8Array>)?.[Symbol.asyncIterator] === 'function') {
    for await (const chunk of artifact as AsyncIterable<Uint8Array>) {
      if (!(chunk instanceof Uint8Array)) throw new TypeError('artifact: a stream must give bytes');
      yield chunk;
    }
  } else {
    throw new TypeError('artifact: must be bytes (Uint8Array, ArrayBuffer, Blob) or a stream of them');
  }
}

/** The manifest's claims once an offline key of the set (fetched when needed) has verified it. */
async function verifySignature(
  manifest: string,
  options: VerifyArtifactOptions,
): Promise<Record<string, unknown>> {
  const { compactVerify, createLocalJWKSet, errors } = await import('jose');
  const fetched = async () => {
    try {
      return await fetchKeySet(options.jwksUri as string, options.fetch ? { fetch: options.fetch } : {});
    } catch (error) {
      throw new ArtifactVerificationError('key_set_unavailable', (error as LicenseTokenError).message);
    }
  };
  const attempt = async (keySet: JsonWebKeySet) => {
    if (!Array.isArray(keySet?.keys)) throw new TypeError('keySet: must be a key set ({ "keys": [...] })');
    const { payload } = await compactVerify(
      manifest,
      createLocalJWKSet(offlineKeysOf(keySet) as Parameters<typeof createLocalJWKSet>[0]),
      { algorithms: [...LICENSE_SIGNING_ALGORITHMS] },
    );
    return payload;
  };
  try {
    let payload: Uint8Array;
    try {
      payload = await attempt(options.keySet ?? (await fetched()));
    } catch (error) {
      // A shipped set that lacks the key (a rotation since): the service's current set may have it.
      if (!(error instanceof errors.JWKSNoMatchingKey) || !options.keySet || !options.jwksUri) throw error;
      payload = await attempt(await fetched());
    }
    const claims = JSON.parse(new TextDecoder().decode(payload));
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
      throw new ArtifactVerificationError('invalid_manifest', 'The manifest is not a claims object');
    }
    return claims;
  } catch (error) {
    if (error instanceof ArtifactVerificationError || error instanceof TypeError) throw error;
    if (
      error instanceof errors.JWSSignatureVerificationFailed ||
      error instanceof errors.JWKSNoMatchingKey ||
      error instanceof errors.JOSEAlgNotAllowed
    ) {
      throw new ArtifactVerificationError(
        'invalid_signature',
        'The manifest is not signed by a key of the key set',
      );
    }
    throw new ArtifactVerificationError(
      'invalid_manifest',
      `Not a signed manifest: ${(error as Error).message}`,
    );
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

function hex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
