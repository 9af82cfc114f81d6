import { FILE_LEEWAY, ms, OTHER_APP, timesOf } from './case-terms.js';
import type { Issued } from './issued.js';
import { headerOf, keySetWithout, withClaims } from './tampering.js';
import type { Vector } from './vectors.js';

/** Revocation lists: checkRevocations in license-file.ts written out, replays included. */
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
