import { type ClockState, loadState, rememberClock, type StateStore, vouchForClock } from './clock-guard.js';
import type { JsonWebKeySet, LicenseSigningAlgorithm } from './types.js';

/**
 * Air-gapped activation, on the machine: write an activation request, check the license file
 * the seller sends back, and keep revocations learnt whenever the machine is online. Everything
 * here runs offline and in browsers (WebCrypto, no Node built-ins).
 */

export const LICENSE_FILE_USE = 'service_license_file_v1';
export const REVOCATION_LIST_USE = 'service_revocation_list_v1';

/** What a license file says, once checked. */
export interface LicenseFileClaims {
  iss: string;
  /** The license id. */
  sub: string;
  /** The app id. */
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
  token_use: typeof LICENSE_FILE_USE;
  /** The device the file was issued for. */
  hwuid: string;
  /** The nonce of the activation request it answers. */
  nonce: string;
  status: string;
  svc_vt: 'basic' | 'advanced' | 'custom';
  seller_tier: string;
  plan?: string;
  features?: string[];
  /** The license's own expiry (seconds), when it has one. */
  license_exp?: number;
  /** maintain_access: past license_exp the license keeps what it had (the file outlives it). */
  expiry_strategy?: 'maintain_access';
  /** The machine must check in (get a new file) by then (seconds); the file is refused after. */
  check_in_by?: number;
  /** Set by verifyLicenseFile: the license is past license_exp and keeps access. */
  expired?: boolean;
}

export type LicenseFileErrorCode =
  | 'invalid_file'
  | 'decryption_failed'
  | 'bad_signature'
  | 'wrong_token_use'
  | 'wrong_app'
  | 'wrong_device'
  | 'wrong_nonce'
  | 'not_yet_valid'
  | 'expired'
  | 'clock_rollback'
  | 'check_in_overdue'
  | 'revoked';

/** A license file (or revocation list) that must not be trusted, with the reason. */
export class LicenseFileError extends Error {
  constructor(
    readonly code: LicenseFileErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LicenseFileError';
  }
}

/** The revocations in force: the newest list this machine has checked. */
export interface RevocationSnapshot {
  appId: string;
  version: number;
  /** When the list was issued (seconds). */
  issuedAt: number;
  /** License ids revoked or suspended. */
  revoked: string[];
}

export interface VerifyLicenseFileOptions {
  /** The key set, as shipped with the software or stored from `GET /licenses/jwks` when online. */
  keySet: JsonWebKeySet;
  /** Your app id: a file for another app is refused. */
  appId: string;
  /** This machine's device id: a file for another device is refused. */
  hwuid: string;
  /** Needed for an encrypted file: the license key the request was written with. */
  licenseKey?: string;
  /** The nonce of the request this machine wrote, to refuse a file answering another one. */
  nonce?: string;
  /** Expected iss (the service's `…/v1` address); not checked when absent. */
  issuer?: string;
  /**
   * The clock-rollback guard: the latest time seen, updated on every accepted check, and reset by
   * a file newer than any checked before (see ClockState). A plain object is updated in place; a
   * store is loaded and saved.
   */
  clock?: ClockState | StateStore<ClockState>;
  /** The revocations last seen (from checkRevocations): a license on it is refused. */
  revocations?: RevocationSnapshot | StateStore<RevocationSnapshot>;
  /** Allowed clock difference and drift, in seconds (default 300). */
  clockToleranceSeconds?: number;
  /** The current time, for tests and for clients with a trusted clock of their own. */
  now?: () => Date;
}

/**
 * Writes an activation request for `POST /licenses/offline-activations`: base64url JSON of
 * `{v: 1, key, hwuid, nonce, appId?, createdAt}`. Keep the nonce to check the file that answers it.
 */
export function createOfflineActivationRequest(input: {
  key: string;
  hwuid: string;
  appId?: string;
  now?: () => Date;
}): { request: string; nonce: string } {
  if (typeof input?.key !== 'string' || canonicalLicenseKey(input.key) === null) {
    throw new TypeError('key: must be a license key');
  }
  if (typeof input.hwuid !== 'string' || !/\S/.test(input.hwuid) || input.hwuid.length > 200) {
    throw new TypeError('hwuid: must be 1 to 200 characters, not blank');
  }
  const nonce = base64url(globalThis.crypto.getRandomValues(new Uint8Array(16)));
  const request = {
    v: 1,
    key: input.key,
    hwuid: input.hwuid,
    nonce,
    ...(input.appId !== undefined ? { appId: input.appId } : {}),
    createdAt: (input.now?.() ?? new Date()).toISOString(),
  };
  return { request: base64url(new TextEncoder().encode(JSON.stringify(request))), nonce };
}

/**
 * Checks a license file offline: decrypts it when encrypted (with `licenseKey`), then checks
 * the signature (RS256 or EdDSA, as the app signs) against `keySet`, token_use, app, device, nonce, times, the clock-rollback
 * guard and the revocations. Throws LicenseFileError with the reason; answers the claims.
 */
export async function verifyLicenseFile(
  file: string,
  options: VerifyLicenseFileOptions,
): Promise<LicenseFileClaims> {
  if (typeof options?.appId !== 'string' || options.appId.length === 0) {
    throw new TypeError('appId: must be your app id');
  }
  if (typeof options.hwuid !== 'string' || options.hwuid.length === 0) {
    throw new TypeError('hwuid: must be this machine’s device id');
  }
  if (typeof file !== 'string' || file.trim().length === 0) {
    throw new LicenseFileError('invalid_file', 'The license file is missing');
  }
  const parts = file.trim().split('.');
  const jws = parts.length === 5 ? await decrypt(file.trim(), options.licenseKey) : file.trim();
  const claims = (await verifySigned(jws, options.keySet)) as Partial<LicenseFileClaims>;
  if (claims.token_use !== LICENSE_FILE_USE) {
    throw new LicenseFileError('wrong_token_use', 'Not a license file (token_use)');
  }
  if (
    typeof claims.sub !== 'string' ||
    typeof claims.hwuid !== 'string' ||
    typeof claims.iat !== 'number' ||
    typeof claims.exp !== 'number'
  ) {
    throw new LicenseFileError('invalid_file', 'The license file lacks sub, hwuid, iat or exp');
  }
  if (options.issuer !== undefined && claims.iss !== options.issuer) {
    throw new LicenseFileError('invalid_file', 'The license file was issued by another service');
  }
  if (claims.aud !== options.appId) {
    throw new LicenseFileError('wrong_app', 'The license file was issued for another app');
  }
  if (claims.hwuid !== options.hwuid) {
    throw new LicenseFileError('wrong_device', 'The license file was issued for another device');
  }
  if (options.nonce !== undefined && claims.nonce !== options.nonce) {
    throw new LicenseFileError('wrong_nonce', 'The license file answers another activation request');
  }

  const tolerance = (options.clockToleranceSeconds ?? 300) * 1000;
  const now = (options.now?.() ?? new Date()).getTime();
  const clock = await loadState(options.clock);
  const issuedAt = claims.iat * 1000;
  const reset = clock?.vouchedAt !== undefined && issuedAt > clock.vouchedAt;
  // A file is never issued in the future, and time never runs backwards: either means the
  // clock was set back, perhaps to stretch an expired file.
  const rollback =
    now < issuedAt - tolerance
      ? 'The clock is earlier than the license file’s issue time'
      : clock !== undefined && !reset && now < clock.lastSeen - tolerance
        ? 'The clock is earlier than a time this machine has already seen'
        : null;
  if (rollback !== null) {
    // A guard kept before vouchedAt existed starts keeping it here, so that a newer file or list
    // can reset it; any other refused check leaves the guard as it was.
    if (options.clock !== undefined && clock?.vouchedAt === undefined) {
      await rememberClock(options.clock, clock, { vouchedAt: issuedAt });
    }
    throw new LicenseFileError('clock_rollback', rollback);
  }
  if (typeof claims.nbf === 'number' && now < claims.nbf * 1000 - tolerance) {
    throw new LicenseFileError('not_yet_valid', 'The license file is not valid yet');
  }
  if (now > claims.exp * 1000 + tolerance) {
    throw new LicenseFileError('expired', 'The license file has expired');
  }
  if (typeof claims.check_in_by === 'number' && now > claims.check_in_by * 1000 + tolerance) {
    throw new LicenseFileError(
      'check_in_overdue',
      'The license must check in: a new activation request gets a new file',
    );
  }
  const revocations = await loadState(options.revocations);
  if (revocations?.appId === options.appId && revocations.revoked.includes(claims.sub)) {
    throw new LicenseFileError('revoked', 'The license is revoked or suspended');
  }

  if (options.clock !== undefined) {
    await rememberClock(options.clock, clock, { vouchedAt: issuedAt, seenAt: now, reset });
  }
  if (typeof claims.license_exp === 'number' && now > claims.license_exp * 1000) {
    return { ...(claims as LicenseFileClaims), expired: true };
  }
  return claims as LicenseFileClaims;
}

/**
 * Checks a revocation list fetched from `GET /licenses/revocations?appId=…` (the whole answer
 * or its `revocationList`) and keeps it in `store` unless it is not newer than the list held
 * there, so an old list replayed cannot lift a revocation. Answers the snapshot in force.
 *
 * When the key set has an offline key (`purpose: "offline"`), only a list it signed is accepted.
 * With `clock` (the one verifyLicenseFile keeps), a list newer than any file or list checked
 * before resets the clock-rollback guard: fetching one is this machine's online check.
 */
export async function checkRevocations(
  list: string | { revocationList: string },
  options: {
    keySet: JsonWebKeySet;
    appId: string;
    issuer?: string;
    store?: StateStore<RevocationSnapshot>;
    clock?: ClockState | StateStore<ClockState>;
    clockToleranceSeconds?: number;
    now?: () => Date;
  },
): Promise<RevocationSnapshot> {
  const jws = typeof list === 'string' ? list : list?.revocationList;
  if (typeof jws !== 'string' || jws.length === 0) {
    throw new LicenseFileError('invalid_file', 'The revocation list is missing');
  }
  const claims = await verifySigned(jws, offlineKeysOf(options.keySet));
  if (claims.token_use !== REVOCATION_LIST_USE) {
    throw new LicenseFileError('wrong_token_use', 'Not a revocation list (token_use)');
  }
  if (claims.aud !== options.appId) {
    throw new LicenseFileError('wrong_app', 'The revocation list is another app’s');
  }
  if (options.issuer !== undefined && claims.iss !== options.issuer) {
    throw new LicenseFileError('invalid_file', 'The revocation list was issued by another service');
  }
  const revoked = claims.revoked;
  if (
    typeof claims.iat !== 'number' ||
    typeof claims.exp !== 'number' ||
    typeof claims.version !== 'number' ||
    !Array.isArray(revoked) ||
    revoked.some((entry) => typeof (entry as { sub?: unknown })?.sub !== 'string')
  ) {
    throw new LicenseFileError('invalid_file', 'The revocation list is malformed');
  }
  const now = (options.now?.() ?? new Date()).getTime();
  const tolerance = (options.clockToleranceSeconds ?? 300) * 1000;
  if (now > claims.exp * 1000 + tolerance) {
    throw new LicenseFileError('expired', 'The revocation list has expired; fetch a fresh one');
  }
  if (options.clock !== undefined) await vouchForClock(options.clock, claims.iat * 1000, now, tolerance);
  const snapshot: RevocationSnapshot = {
    appId: options.appId,
    version: claims.version,
    issuedAt: claims.iat,
    revoked: revoked.map((entry) => (entry as { sub: string }).sub),
  };
  if (!options.store) return snapshot;
  const held = await options.store.load();
  if (held && held.appId === snapshot.appId && !supersedes(snapshot, held)) return held;
  await options.store.save(snapshot);
  return snapshot;
}

/**
 * Whether a list may take the place of the one held. The service's versions grow with every
 * change of the entries and never go back, so the greater version is the newer list; of the same
 * version, a later issue refreshes the one held only if it lifts no revocation.
 */
function supersedes(next: RevocationSnapshot, held: RevocationSnapshot): boolean {
  if (next.version !== held.version) return next.version > held.version;
  return next.issuedAt > held.issuedAt && held.revoked.every((sub) => next.revoked.includes(sub));
}

/**
 * The keys a revocation list must be signed with: the offline keys when the set has any, so a
 * rotating token key (or one leaked from an old backup) cannot sign a list this machine takes.
 * A set copied before the offline key existed has none, and its keys are taken as they are.
 */
export function offlineKeysOf(keySet: JsonWebKeySet): JsonWebKeySet {
  if (!Array.isArray(keySet?.keys)) return keySet;
  const offline = keySet.keys.filter((key) => key.purpose === 'offline');
  return offline.length > 0 ? { keys: offline } : keySet;
}

/** The canonical form of a typed license key, as the service reads it; null when it cannot be one. */
export function canonicalLicenseKey(input: string): string | null {
  const compact = input.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (!/^[0-9A-HJKMNP-TV-Z]{30}$/.test(compact)) return null;
  return compact.match(/.{5}/g)!.join('-');
}

/** What a token, file or list may be signed with; the key its kid names narrows it to one. */
export const LICENSE_SIGNING_ALGORITHMS: readonly LicenseSigningAlgorithm[] = ['RS256', 'EdDSA'];

async function verifySigned(jws: string, keySet: JsonWebKeySet): Promise<Record<string, unknown>> {
  if (!Array.isArray(keySet?.keys)) throw new TypeError('keySet: must be a key set ({ "keys": [...] })');
  const { compactVerify, createLocalJWKSet, errors } = await import('jose');
  try {
    const { payload } = await compactVerify(
      jws,
      createLocalJWKSet(keySet as Parameters<typeof createLocalJWKSet>[0]),
      // As for tokens: the key of the kid decides, RS256 with an RSA key, EdDSA with an Ed25519 one.
      { algorithms: [...LICENSE_SIGNING_ALGORITHMS] },
    );
    const claims = JSON.parse(new TextDecoder().decode(payload));
    if (typeof claims !== 'object' || claims === null) throw new Error('not a claims object');
    return claims;
  } catch (error) {
    if (
      error instanceof errors.JWSSignatureVerificationFailed ||
      error instanceof errors.JWKSNoMatchingKey ||
      error instanceof errors.JOSEAlgNotAllowed
    ) {
      throw new LicenseFileError('bad_signature', 'Not signed by a key of the key set');
    }
    throw new LicenseFileError('invalid_file', `Not a signed file: ${(error as Error).message}`);
  }
}

/** Opens an encrypted file: JWE dir + A256GCM, the key HKDF-SHA256 over the canonical license key. */
async function decrypt(jwe: string, licenseKey: string | undefined): Promise<string> {
  const canonical = licenseKey === undefined ? null : canonicalLicenseKey(licenseKey);
  if (canonical === null) {
    throw new LicenseFileError('decryption_failed', 'The license file is encrypted: give licenseKey');
  }
  const { compactDecrypt } = await import('jose');
  try {
    const { plaintext } = await compactDecrypt(jwe, await licenseFileKey(canonical), {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    return new TextDecoder().decode(plaintext);
  } catch {
    throw new LicenseFileError('decryption_failed', 'The license file does not open with this license key');
  }
}

async function licenseFileKey(canonicalKey: string): Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const material = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(canonicalKey),
    'HKDF',
    false,
    ['deriveBits'],
  );
  const bits = await globalThis.crypto.subtle.deriveBits(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: encoder.encode('licensing-service/license-file'),
      info: encoder.encode('A256GCM key v1'),
    },
    material,
    256,
  );
  return new Uint8Array(bits);
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
