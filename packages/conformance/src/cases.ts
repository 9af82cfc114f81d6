import type { Delivery, Issued } from './issued.js';
import {
  claimsOf,
  headerOf,
  keySetWithout,
  signedByStranger,
  withClaims,
  withFlippedCiphertext,
  withFlippedSignature,
  withHeader,
} from './tampering.js';
import type { Vector } from './vectors.js';

/**
 * The cases of each kind, from what the service issued. The verdicts are the TypeScript SDK's
 * rules written out (token-verifier.ts, license-file.ts, webhooks.ts); the conformance test holds
 * that SDK to them, and every other SDK to the same.
 */

const TOKEN_LEEWAY = 30;
const FILE_LEEWAY = 300;
const WEBHOOK_LEEWAY = 300;
const OTHER_APP = '00000000-0000-4000-8000-000000000000';
const ms = (seconds: number) => seconds * 1000;

const timesOf = (jws: string) => claimsOf(jws) as { iat: number; nbf: number; exp: number; sub: string };

export async function tokenVectors(issued: Issued, kind: 'license_token' | 'seat_token'): Promise<Vector[]> {
  const token = kind === 'license_token' ? issued.licenseToken : issued.seatToken;
  const { iat, nbf, exp, sub } = timesOf(token);
  const { kid } = headerOf(token);
  const jwks = issued.keySet;
  const base = { kind, algorithm: issued.algorithm, keys: { jwks } } as const;
  const at = (now: number) => ({ appId: issued.appId, now });
  const name = (what: string) => `${kind} ${issued.algorithm}: ${what}`;
  const valid = { valid: true as const, claims: { sub, aud: issued.appId, token_use: 'service_license_v1' } };
  const refused = (error: string) => ({ valid: false as const, error });
  const vectors: Vector[] = [
    { ...base, name: name('as issued'), input: { token }, context: at(iat + 60), expect: valid },
    {
      ...base,
      name: name('claims changed after signing'),
      input: { token: withClaims(token, { sub: `${sub}x` }) },
      context: at(iat),
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('signature flipped'),
      input: { token: withFlippedSignature(token) },
      context: at(iat),
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('signed by another key under the service kid'),
      input: { token: await signedByStranger(token) },
      context: at(iat),
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('unknown kid (the key set lacks it)'),
      input: { token },
      keys: { jwks: keySetWithout(jwks, kid) },
      context: at(iat),
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('alg HS256 in the header'),
      input: { token: withHeader(token, { alg: 'HS256' }) },
      context: at(iat),
      expect: refused('invalid_token'),
    },
    {
      ...base,
      name: name('alg none in the header'),
      input: { token: withHeader(token, { alg: 'none' }) },
      context: at(iat),
      expect: refused('invalid_token'),
    },
    {
      ...base,
      name: name('the other algorithm in the header: its key kind does not match the kid'),
      input: { token: withHeader(token, { alg: issued.algorithm === 'RS256' ? 'EdDSA' : 'RS256' }) },
      context: at(iat),
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('wrong audience'),
      input: { token },
      context: { appId: OTHER_APP, now: iat },
      expect: refused('wrong_audience'),
    },
    {
      ...base,
      name: name('expired'),
      input: { token },
      context: at(exp + TOKEN_LEEWAY),
      expect: refused('token_expired'),
    },
    {
      ...base,
      name: name('just inside the leeway after exp'),
      input: { token },
      context: at(exp + TOKEN_LEEWAY - 1),
      expect: valid,
    },
    {
      ...base,
      name: name('not yet valid'),
      input: { token },
      context: at(nbf - TOKEN_LEEWAY - 1),
      expect: refused('invalid_token'),
    },
    {
      ...base,
      name: name('just inside the leeway before nbf'),
      input: { token },
      context: at(nbf - TOKEN_LEEWAY),
      expect: valid,
    },
    {
      ...base,
      name: name('a license file is no license token (its offline key signs no token)'),
      input: { token: issued.licenseFile.file },
      context: at(iat),
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('not a JWT'),
      input: { token: 'not-a-token' },
      context: at(iat),
      expect: refused('invalid_token'),
    },
  ];
  if (kind === 'license_token') vectors.push(...(await resignedTokenVectors(issued, base, at, name)));
  vectors.push(...tokenClockVectors(token, base, at, name, valid));
  return vectors;
}

/** Claims only the service's own key could sign differently: token_use, missing claims. */
async function resignedTokenVectors(
  issued: Issued,
  base: Pick<Vector, 'kind' | 'algorithm' | 'keys'>,
  at: (now: number) => Vector['context'],
  name: (what: string) => string,
): Promise<Vector[]> {
  const { iat } = timesOf(issued.licenseToken);
  return [
    {
      ...base,
      name: name('wrong token_use, signed by the token key'),
      input: { token: await issued.resigned({ token_use: 'service_license_file_v1' }) },
      context: at(iat),
      expect: { valid: false, error: 'wrong_token_use' },
    },
    {
      ...base,
      name: name('no jti'),
      input: { token: await issued.resigned({}, ['jti']) },
      context: at(iat),
      expect: { valid: false, error: 'invalid_token' },
    },
    {
      ...base,
      name: name('no aud'),
      input: { token: await issued.resigned({}, ['aud']) },
      context: at(iat),
      expect: { valid: false, error: 'wrong_audience' },
    },
  ];
}

/** A token newer than anything checked before vouches for the time: the clock guard resets. */
function tokenClockVectors(
  token: string,
  base: Pick<Vector, 'kind' | 'algorithm' | 'keys'>,
  at: (now: number) => Vector['context'],
  name: (what: string) => string,
  valid: Extract<Vector['expect'], { valid: true }>,
): Vector[] {
  const { iat } = timesOf(token);
  const now = iat + 60;
  return [
    {
      ...base,
      name: name('a newer token resets a clock guard set ahead'),
      input: { token },
      context: { ...at(now), clock: { lastSeen: ms(iat + 86_400), vouchedAt: ms(iat - 3600) } },
      expect: { ...valid, clock: { lastSeen: ms(now), vouchedAt: ms(iat) } },
    },
    {
      ...base,
      name: name('a token no newer than the guard vouched keeps the latest time seen'),
      input: { token },
      context: { ...at(now), clock: { lastSeen: ms(iat + 86_400), vouchedAt: ms(iat) } },
      expect: { ...valid, clock: { lastSeen: ms(iat + 86_400), vouchedAt: ms(iat) } },
    },
    {
      ...base,
      name: name('a first check starts the guard'),
      input: { token },
      context: { ...at(now), clock: { lastSeen: 0 } },
      expect: { ...valid, clock: { lastSeen: ms(now), vouchedAt: ms(iat) } },
    },
  ];
}

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

export function revocationListVectors(issued: Issued): Vector[] {
  const { older, newer } = issued.revocationLists;
  const { iat, exp } = timesOf(newer.list);
  const olderIat = timesOf(older.list).iat;
  const { kid } = headerOf(newer.list);
  const jwks = issued.keySet;
  const base = { kind: 'revocation_list', algorithm: issued.algorithm, keys: { jwks } } as const;
  const name = (what: string) => `revocation_list ${issued.algorithm}: ${what}`;
  const now = iat + 60;
  const at = (seconds: number) => ({ appId: issued.appId, now: seconds });
  const held = (list: { version: number }, issuedAt: number, revoked: string[]) => ({
    appId: issued.appId,
    version: list.version,
    issuedAt,
    revoked,
  });
  const newest = held(newer, iat, issued.revokedIds);
  const oldest = held(older, olderIat, issued.revokedIds.slice(0, 1));
  const refused = (error: string) => ({ valid: false as const, error });
  return [
    {
      ...base,
      name: name('as issued'),
      input: { list: newer.list },
      context: at(now),
      expect: { valid: true, revocations: newest },
    },
    {
      ...base,
      name: name('an older list replayed keeps the newer one held'),
      input: { list: older.list },
      context: { ...at(now), revocations: newest },
      expect: { valid: true, revocations: newest },
    },
    {
      ...base,
      name: name('a newer list replaces the one held'),
      input: { list: newer.list },
      context: { ...at(now), revocations: oldest },
      expect: { valid: true, revocations: newest },
    },
    {
      ...base,
      name: name('claims changed after signing'),
      input: { list: withClaims(newer.list, { revoked: [] }) },
      context: at(now),
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('unknown kid (the key set lacks it)'),
      input: { list: newer.list },
      keys: { jwks: keySetWithout(jwks, kid) },
      context: at(now),
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('wrong app'),
      input: { list: newer.list },
      context: { ...at(now), appId: OTHER_APP },
      expect: refused('wrong_app'),
    },
    {
      ...base,
      name: name('a license file is no revocation list'),
      input: { list: issued.licenseFile.file },
      context: at(now),
      expect: refused('wrong_token_use'),
    },
    {
      ...base,
      name: name('expired'),
      input: { list: newer.list },
      context: at(exp + FILE_LEEWAY + 1),
      expect: refused('expired'),
    },
    {
      ...base,
      name: name('a newer list resets a clock guard set ahead'),
      input: { list: newer.list },
      context: { ...at(now), clock: { lastSeen: ms(now + 86_400), vouchedAt: ms(iat - 3600) } },
      expect: { valid: true, revocations: newest, clock: { lastSeen: ms(now), vouchedAt: ms(iat) } },
    },
  ];
}

export function webhookVectors(delivery: Delivery): Vector[] {
  const { body, headers, secret } = delivery;
  const sentAt = Number(headers['x-webhook-timestamp']);
  const envelope = JSON.parse(body) as { id: string; type: string };
  const base = { kind: 'webhook', keys: { secret } } as const;
  const name = (what: string) => `webhook: ${what}`;
  const valid = { valid: true as const, claims: { id: envelope.id, type: envelope.type } };
  const refused = (error: string) => ({ valid: false as const, error });
  const without = (header: string) =>
    Object.fromEntries(Object.entries(headers).filter(([key]) => key !== header));
  const signature = headers['x-webhook-signature'] ?? '';
  return [
    {
      ...base,
      name: name('as delivered'),
      input: { body, headers },
      context: { now: sentAt },
      expect: valid,
    },
    {
      ...base,
      name: name('signature without its sha256= prefix'),
      input: { body, headers: { ...headers, 'x-webhook-signature': signature.replace(/^sha256=/, '') } },
      context: { now: sentAt },
      expect: valid,
    },
    {
      ...base,
      name: name('body changed'),
      input: { body: body.replace(envelope.id, `${envelope.id}x`), headers },
      context: { now: sentAt },
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('another secret'),
      input: { body, headers },
      keys: { secret: `${secret}x` },
      context: { now: sentAt },
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('no signature header'),
      input: { body, headers: without('x-webhook-signature') },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
    {
      ...base,
      name: name('no timestamp header'),
      input: { body, headers: without('x-webhook-timestamp') },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
    {
      ...base,
      name: name('timestamp not a number'),
      input: { body, headers: { ...headers, 'x-webhook-timestamp': `${sentAt}.5` } },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
    {
      ...base,
      name: name('too old'),
      input: { body, headers },
      context: { now: sentAt + WEBHOOK_LEEWAY + 1 },
      expect: refused('stale_timestamp'),
    },
    {
      ...base,
      name: name('old, inside the tolerance'),
      input: { body, headers },
      context: { now: sentAt + WEBHOOK_LEEWAY },
      expect: valid,
    },
    {
      ...base,
      name: name('from the future'),
      input: { body, headers },
      context: { now: sentAt - WEBHOOK_LEEWAY - 1 },
      expect: refused('stale_timestamp'),
    },
    {
      ...base,
      name: name('signed, but not JSON'),
      input: {
        body: 'not json',
        headers: { ...headers, 'x-webhook-signature': delivery.signBody('not json') },
      },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
  ];
}

export async function manifestVectors(issued: Issued): Promise<Vector[]> {
  const { manifest, bytes, version, filename } = issued.manifest;
  const claims = claimsOf(manifest) as { iat: number; app: string; size: number; sha256: string };
  const { kid } = headerOf(manifest);
  const jwks = issued.keySet;
  const base = { kind: 'release_manifest', algorithm: issued.algorithm, keys: { jwks } } as const;
  const name = (what: string) => `release_manifest ${issued.algorithm}: ${what}`;
  const at = { appId: issued.appId, now: claims.iat + 60 };
  const input = (jws: string, file: Buffer = bytes) => ({ manifest: jws, artifact: file.toString('base64') });
  const valid = {
    valid: true as const,
    claims: {
      app: issued.appId,
      version,
      filename,
      size: bytes.length,
      sha256: claims.sha256,
      token_use: 'service_release_manifest_v1',
    },
  };
  const refused = (error: string) => ({ valid: false as const, error });
  const changed = Buffer.from(bytes);
  changed[0] = (changed[0] ?? 0) ^ 0x01;
  const other = Buffer.concat([bytes, Buffer.from('x')]);
  return [
    { ...base, name: name('as issued'), input: input(manifest), context: at, expect: valid },
    {
      ...base,
      name: name('the version and file name expected'),
      input: input(manifest),
      context: { ...at, version, filename },
      expect: valid,
    },
    {
      ...base,
      name: name('another version expected'),
      input: input(manifest),
      context: { ...at, version: '9.9.9' },
      expect: refused('wrong_version'),
    },
    {
      ...base,
      name: name('another file expected'),
      input: input(manifest),
      context: { ...at, filename: `other-${filename}` },
      expect: refused('wrong_file'),
    },
    {
      ...base,
      name: name('another app'),
      input: input(manifest),
      context: { ...at, appId: OTHER_APP },
      expect: refused('wrong_app'),
    },
    {
      ...base,
      name: name('claims changed after signing to match another file'),
      input: input(withClaims(manifest, { size: other.length }), other),
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('signature flipped'),
      input: input(withFlippedSignature(manifest)),
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('signed by another key under the service kid'),
      input: input(await signedByStranger(manifest)),
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('unknown kid (the key set lacks it)'),
      input: input(manifest),
      keys: { jwks: keySetWithout(jwks, kid) },
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('alg HS256 in the header'),
      input: input(withHeader(manifest, { alg: 'HS256' })),
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('alg none in the header'),
      input: input(withHeader(manifest, { alg: 'none' })),
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('the other algorithm in the header: its key kind does not match the kid'),
      input: input(withHeader(manifest, { alg: issued.algorithm === 'RS256' ? 'EdDSA' : 'RS256' })),
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('signed by the service’s token key: only offline keys sign manifests'),
      input: input(await issued.resignedManifest('token', {})),
      context: at,
      expect: refused('invalid_signature'),
    },
    {
      ...base,
      name: name('a license file is no manifest'),
      input: input(issued.licenseFile.file),
      context: at,
      expect: refused('wrong_token_use'),
    },
    {
      ...base,
      name: name('a revocation list is no manifest'),
      input: input(issued.revocationLists.newer.list),
      context: at,
      expect: refused('wrong_token_use'),
    },
    {
      ...base,
      name: name('no sha256, signed by the offline key'),
      input: input(await issued.resignedManifest('offline', {}, ['sha256'])),
      context: at,
      expect: refused('invalid_manifest'),
    },
    {
      ...base,
      name: name('a size that is no whole number, signed by the offline key'),
      input: input(await issued.resignedManifest('offline', { size: bytes.length + 0.5 })),
      context: at,
      expect: refused('invalid_manifest'),
    },
    {
      ...base,
      name: name('one byte short'),
      input: input(manifest, bytes.subarray(0, bytes.length - 1)),
      context: at,
      expect: refused('size_mismatch'),
    },
    {
      ...base,
      name: name('one byte more'),
      input: input(manifest, other),
      context: at,
      expect: refused('size_mismatch'),
    },
    {
      ...base,
      name: name('empty file'),
      input: input(manifest, Buffer.alloc(0)),
      context: at,
      expect: refused('size_mismatch'),
    },
    {
      ...base,
      name: name('one byte changed'),
      input: input(manifest, changed),
      context: at,
      expect: refused('digest_mismatch'),
    },
    {
      ...base,
      name: name('not a manifest'),
      input: input('not-a-manifest'),
      context: at,
      expect: refused('invalid_manifest'),
    },
    { ...base, name: name('empty'), input: input(' '), context: at, expect: refused('invalid_manifest') },
  ];
}
