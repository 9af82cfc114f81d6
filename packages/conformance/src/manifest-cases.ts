import { OTHER_APP } from './case-terms.js';
import type { Issued } from './issued.js';
import {
  claimsOf,
  headerOf,
  keySetWithout,
  signedByStranger,
  withClaims,
  withFlippedSignature,
  withHeader,
} from './tampering.js';
import type { Vector } from './vectors.js';

/** A published file's signed manifest and its bytes: the rules of artifact-manifest.ts written out. */
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
