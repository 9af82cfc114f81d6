import { ms, OTHER_APP, TOKEN_LEEWAY, timesOf } from './case-terms.js';
import type { Issued } from './issued.js';
import {
  headerOf,
  keySetWithout,
  signedByStranger,
  withClaims,
  withFlippedSignature,
  withHeader,
} from './tampering.js';
import type { Vector } from './vectors.js';

/** License tokens and seat tokens: the rules of token-verifier.ts written out. */
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
