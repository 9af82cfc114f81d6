import { FILE_LEEWAY, ms, OTHER_APP, timesOf } from './case-terms.js';
import type { Issued } from './issued.js';
import {
  claimsOf,
  headerOf,
  keySetWithout,
  withClaims,
  withFlippedCiphertext,
  withFlippedSignature,
  withHeader,
} from './tampering.js';
import type { Vector } from './vectors.js';

/** License files, plain, with a check-in and encrypted: the rules of license-file.ts written out. */
export function licenseFileVectors(issued: Issued): Vector[] {
  const { file, nonce, hwuid, licenseId } = issued.licenseFile;
  const { iat, exp } = timesOf(file);
  const { kid } = headerOf(file);
  const jwks = issued.keySet;
  const base = { kind: 'license_file', algorithm: issued.algorithm, keys: { jwks } } as const;
  const at = (now: number) => ({ appId: issued.appId, hwuid, nonce, now });
  const name = (what: string) => `license_file ${issued.algorithm}: ${what}`;
  const valid = {
    valid: true as const,
    claims: {
      sub: licenseId,
      aud: issued.appId,
      hwuid,
      nonce,
      token_use: 'service_license_file_v1',
      plan: 'pro',
    },
  };
  const refused = (error: string) => ({ valid: false as const, error });
  const now = iat + 60;
  const snapshot = (appId: string) => ({ appId, version: 7, issuedAt: iat, revoked: [licenseId] });
  return [
    { ...base, name: name('as issued'), input: { file }, context: at(now), expect: valid },
    {
      ...base,
      name: name('claims changed after signing'),
      input: { file: withClaims(file, { exp: exp + 10 * 365 * 86_400 }) },
      context: at(now),
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('signature flipped'),
      input: { file: withFlippedSignature(file) },
      context: at(now),
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('unknown kid (the key set lacks it)'),
      input: { file },
      keys: { jwks: keySetWithout(jwks, kid) },
      context: at(now),
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('alg HS256 in the header'),
      input: { file: withHeader(file, { alg: 'HS256' }) },
      context: at(now),
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('wrong app'),
      input: { file },
      context: { ...at(now), appId: OTHER_APP },
      expect: refused('wrong_app'),
    },
    {
      ...base,
      name: name('wrong device'),
      input: { file },
      context: { ...at(now), hwuid: 'device-z' },
      expect: refused('wrong_device'),
    },
    {
      ...base,
      name: name('wrong nonce'),
      input: { file },
      context: { ...at(now), nonce: 'another-request' },
      expect: refused('wrong_nonce'),
    },
    {
      ...base,
      name: name('no nonce to compare: not checked'),
      input: { file },
      context: { appId: issued.appId, hwuid, now },
      expect: valid,
    },
    {
      ...base,
      name: name('a license token is no license file'),
      input: { file: issued.licenseToken },
      context: at(now),
      expect: refused('wrong_token_use'),
    },
    {
      ...base,
      name: name('a revocation list is no license file'),
      input: { file: issued.revocationLists.newer.list },
      context: at(now),
      expect: refused('wrong_token_use'),
    },
    {
      ...base,
      name: name('expired'),
      input: { file },
      context: at(exp + FILE_LEEWAY + 1),
      expect: refused('expired'),
    },
    {
      ...base,
      name: name('just inside the leeway after exp'),
      input: { file },
      context: at(exp + FILE_LEEWAY),
      expect: valid,
    },
    {
      ...base,
      name: name('before its issue time: the clock was turned back'),
      input: { file },
      context: at(iat - FILE_LEEWAY - 1),
      expect: refused('clock_rollback'),
    },
    {
      ...base,
      name: name('the clock turned back before a time already seen'),
      input: { file },
      context: { ...at(now), clock: { lastSeen: ms(now + FILE_LEEWAY + 1), vouchedAt: ms(iat) } },
      expect: {
        ...refused('clock_rollback'),
        clock: { lastSeen: ms(now + FILE_LEEWAY + 1), vouchedAt: ms(iat) },
      },
    },
    {
      ...base,
      name: name('the clock turned back, a guard kept before vouchedAt existed starts keeping it'),
      input: { file },
      context: { ...at(now), clock: { lastSeen: ms(now + 86_400) } },
      expect: { ...refused('clock_rollback'), clock: { lastSeen: ms(now + 86_400), vouchedAt: ms(iat) } },
    },
    {
      ...base,
      name: name('a file newer than the guard vouched resets a clock set ahead'),
      input: { file },
      context: { ...at(now), clock: { lastSeen: ms(now + 86_400), vouchedAt: ms(iat - 86_400) } },
      expect: { ...valid, clock: { lastSeen: ms(now), vouchedAt: ms(iat) } },
    },
    {
      ...base,
      name: name('an accepted check moves the guard forward'),
      input: { file },
      context: { ...at(now), clock: { lastSeen: ms(iat), vouchedAt: ms(iat) } },
      expect: { ...valid, clock: { lastSeen: ms(now), vouchedAt: ms(iat) } },
    },
    {
      ...base,
      name: name('revoked'),
      input: { file },
      context: { ...at(now), revocations: snapshot(issued.appId) },
      expect: refused('revoked'),
    },
    {
      ...base,
      name: name('another app’s revocations do not apply'),
      input: { file },
      context: { ...at(now), revocations: snapshot(OTHER_APP) },
      expect: valid,
    },
    {
      ...base,
      name: name('not a file'),
      input: { file: 'a.b.c' },
      context: at(now),
      expect: refused('invalid_file'),
    },
    { ...base, name: name('empty'), input: { file: ' ' }, context: at(now), expect: refused('invalid_file') },
    ...checkInVectors(issued, base),
    ...encryptedFileVectors(issued, base),
  ];
}

function checkInVectors(issued: Issued, base: Pick<Vector, 'kind' | 'algorithm' | 'keys'>): Vector[] {
  const { file, hwuid } = issued.checkInFile;
  const { check_in_by: checkInBy } = claimsOf(file) as { check_in_by: number };
  const at = (now: number) => ({ appId: issued.appId, hwuid, now });
  return [
    {
      ...base,
      name: `license_file ${issued.algorithm}: check-in overdue`,
      input: { file },
      context: at(checkInBy + FILE_LEEWAY + 1),
      expect: { valid: false, error: 'check_in_overdue' },
    },
    {
      ...base,
      name: `license_file ${issued.algorithm}: check-in due, inside the leeway`,
      input: { file },
      context: at(checkInBy + FILE_LEEWAY),
      expect: { valid: true, claims: { check_in_by: checkInBy } },
    },
  ];
}

function encryptedFileVectors(issued: Issued, base: Pick<Vector, 'kind' | 'algorithm' | 'keys'>): Vector[] {
  const { file, nonce, hwuid, licenseKey, otherKey } = issued.encryptedFile;
  const name = (what: string) => `license_file ${issued.algorithm} encrypted: ${what}`;
  const context = { appId: issued.appId, hwuid, nonce, licenseKey, now: 0 };
  // Issued at the same moment as the plain file (the service's clock stands still).
  const now = timesOf(issued.licenseFile.file).iat + 60;
  const refused = (error: string) => ({ valid: false as const, error });
  return [
    {
      ...base,
      name: name('opens with its license key, as typed'),
      input: { file },
      context: { ...context, now },
      expect: { valid: true, claims: { hwuid, nonce, token_use: 'service_license_file_v1' } },
    },
    {
      ...base,
      name: name('no license key'),
      input: { file },
      context: { appId: issued.appId, hwuid, nonce, now },
      expect: refused('decryption_failed'),
    },
    {
      ...base,
      name: name('another license’s key'),
      input: { file },
      context: { ...context, licenseKey: otherKey, now },
      expect: refused('decryption_failed'),
    },
    {
      ...base,
      name: name('ciphertext changed'),
      input: { file: withFlippedCiphertext(file) },
      context: { ...context, now },
      expect: refused('decryption_failed'),
    },
    {
      ...base,
      name: name('wrong device'),
      input: { file },
      context: { ...context, hwuid: 'device-z', now },
      expect: refused('wrong_device'),
    },
  ];
}
