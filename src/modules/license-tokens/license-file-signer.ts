import { webcrypto } from 'node:crypto';
import { CompactEncrypt } from 'jose';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { SigningAlgorithm } from '../../platform/db/schema.js';
import type { Tier } from '../../platform/http/principal.js';
import type { KeyRing } from './key-ring.js';
import * as store from './store.js';
import { type VerificationTier, verificationTierOf } from './token-lifetime.js';

/** token_use of a license file: never accepted where a license token is expected, nor the reverse. */
export const LICENSE_FILE_USE = 'service_license_file_v1';
/** token_use of a signed revocation list. */
export const REVOCATION_LIST_USE = 'service_revocation_list_v1';
/** A revocation list is good for a day; clients fetch a fresh one whenever they are online. */
export const REVOCATION_LIST_LIFETIME_SECONDS = 24 * 60 * 60;
/**
 * A list's ETag names its entries, its version and the hour it was fetched in, so a client told
 * 304 keeps a list at most an hour older than a fresh one, and one that asks every hour never
 * holds an expired list. The list itself carries the moment it was signed: its `version`, not
 * its `iat`, tells lists apart.
 */
export const REVOCATION_LIST_STEP_SECONDS = 60 * 60;

/** The hour (seconds, at its start) a list fetched at `now` is named by in its ETag. */
export function revocationListPeriod(now: Date): number {
  const seconds = Math.floor(now.getTime() / 1000);
  return seconds - (seconds % REVOCATION_LIST_STEP_SECONDS);
}
/** Without `validDays`, a file is valid for a year at most (and never past the license). */
export const DEFAULT_LICENSE_FILE_DAYS = 365;

/**
 * An encrypted file's key: HKDF-SHA256 over the canonical license key (as written, with dashes),
 * with this salt and info, 32 bytes, for JWE `dir` + `A256GCM`. The SDK derives the same key.
 */
export const LICENSE_FILE_KEY_SALT = 'licensing-service/license-file';
export const LICENSE_FILE_KEY_INFO = 'A256GCM key v1';

export interface LicenseFileSubject {
  licenseId: string;
  appId: string;
  /** The app's tokenAlgorithm: which of the offline keys signs. */
  algorithm: SigningAlgorithm;
  hwuid: string;
  nonce: string;
  /** Status as shown to clients (ACTIVE). */
  status: string;
  sellerTier: Tier;
  plan?: string;
  features?: string[];
  licenseExpiresAt: Date | null;
  /** Expiry strategy maintain_access: the file outlives the license's expiry, and says so. */
  keepsAccess?: boolean;
  /** Days (check-in and grace) the machine may go without a new file: the file's check_in_by. */
  checkInDays?: number;
}

export interface LicenseFileClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
  token_use: typeof LICENSE_FILE_USE;
  hwuid: string;
  nonce: string;
  status: string;
  svc_vt: VerificationTier;
  seller_tier: Tier;
  plan?: string;
  features?: string[];
  license_exp?: number;
  /** Past license_exp the license keeps access (expiry strategy maintain_access). */
  expiry_strategy?: 'maintain_access';
  /** Seconds: the machine must check in (get a new file) by then; the SDK refuses it after. */
  check_in_by?: number;
}

export interface RevocationEntry {
  /** The license id. */
  sub: string;
  /** When it was revoked or suspended (seconds). */
  at: number;
}

export type LicenseFileSigner = ReturnType<typeof createLicenseFileSigner>;

/**
 * Signs what offline machines rely on — license files and revocation lists — with the offline
 * key of the app's algorithm (RS256 or EdDSA, kid in the header, published at /licenses/jwks with
 * `purpose: "offline"`), each with its own token_use. The offline key is not rotated with the token keys, so a machine holding a
 * copy of the key set accepts new revocation lists after a rotation. A key that signs a license
 * file stays published until the file expires (store.keepKeyForLicenseFile): files signed with a
 * token key before the offline key existed, and files of an offline key replaced since.
 */
export function createLicenseFileSigner({
  db,
  keys,
  clock,
  issuer,
}: {
  db: Db;
  keys: KeyRing;
  clock: Clock;
  issuer: string;
}) {
  return {
    /** Whether a key of `algorithm` signs now; checked before anything is bound. */
    ready: async (algorithm: SigningAlgorithm) => (await keys.signingKey('offline', algorithm)) !== null,

    /**
     * A license file for one device: valid for `validDays` (default a year), never past the
     * license's expiry unless the license keeps access past it. With `encryptTo` (the canonical license key) the signed file is wrapped
     * in a JWE only that key opens. Null when no key signs.
     */
    async issue(
      subject: LicenseFileSubject,
      options: { validDays?: number; encryptTo?: string } = {},
    ): Promise<{ licenseFile: string; issuedAt: Date; expiresAt: Date; kid: string } | null> {
      const iat = Math.floor(clock.now().getTime() / 1000);
      const licenseExp = subject.licenseExpiresAt
        ? Math.floor(subject.licenseExpiresAt.getTime() / 1000)
        : null;
      const exp = Math.min(
        iat + (options.validDays ?? DEFAULT_LICENSE_FILE_DAYS) * 86_400,
        subject.keepsAccess ? Number.POSITIVE_INFINITY : (licenseExp ?? Number.POSITIVE_INFINITY),
      );
      const claims: LicenseFileClaims = {
        iss: issuer,
        sub: subject.licenseId,
        aud: subject.appId,
        iat,
        nbf: iat,
        exp,
        token_use: LICENSE_FILE_USE,
        hwuid: subject.hwuid,
        nonce: subject.nonce,
        status: subject.status,
        svc_vt: verificationTierOf(subject.sellerTier),
        seller_tier: subject.sellerTier,
        ...(subject.plan !== undefined ? { plan: subject.plan } : {}),
        ...(subject.features !== undefined ? { features: subject.features } : {}),
        ...(licenseExp !== null ? { license_exp: licenseExp } : {}),
        ...(subject.keepsAccess ? { expiry_strategy: 'maintain_access' as const } : {}),
        ...(subject.checkInDays !== undefined ? { check_in_by: iat + subject.checkInDays * 86_400 } : {}),
      };
      const key = await keys.signingKey('offline', subject.algorithm);
      if (!key) return null;
      const expiresAt = new Date(exp * 1000);
      // Recorded before the file exists, so no file outlives its key's publication.
      await store.keepKeyForLicenseFile(db, key.kid, expiresAt);
      const signed = await key.sign(claims);
      const licenseFile = options.encryptTo ? await encryptLicenseFile(signed, options.encryptTo) : signed;
      return { licenseFile, issuedAt: new Date(iat * 1000), expiresAt, kid: key.kid };
    },

    /** The signed revocation list of one app, issued now, in its algorithm. Null when no key signs. */
    async revocationList(
      app: { id: string; algorithm: SigningAlgorithm },
      version: number,
      revoked: RevocationEntry[],
    ): Promise<{ list: string; issuedAt: Date; expiresAt: Date } | null> {
      const appId = app.id;
      const key = await keys.signingKey('offline', app.algorithm);
      if (!key) return null;
      const iat = Math.floor(clock.now().getTime() / 1000);
      const exp = iat + REVOCATION_LIST_LIFETIME_SECONDS;
      const list = await key.sign({
        iss: issuer,
        aud: appId,
        iat,
        nbf: iat,
        exp,
        token_use: REVOCATION_LIST_USE,
        version,
        revoked,
      });
      return { list, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000) };
    },
  };
}

/** The JWE key of a license file, from the canonical license key (see LICENSE_FILE_KEY_SALT). */
export async function licenseFileKey(canonicalKey: string): Promise<Uint8Array> {
  const material = await webcrypto.subtle.importKey('raw', Buffer.from(canonicalKey), 'HKDF', false, [
    'deriveBits',
  ]);
  const bits = await webcrypto.subtle.deriveBits(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: Buffer.from(LICENSE_FILE_KEY_SALT),
      info: Buffer.from(LICENSE_FILE_KEY_INFO),
    },
    material,
    256,
  );
  return new Uint8Array(bits);
}

async function encryptLicenseFile(jws: string, canonicalKey: string): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(jws))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', cty: 'JWT' })
    .encrypt(await licenseFileKey(canonicalKey));
}
