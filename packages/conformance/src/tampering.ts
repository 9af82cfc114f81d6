import { generateKeyPair, SignJWT } from 'jose';
import type { JsonWebKeySet } from './vectors.js';

/**
 * The ways an attacker (or a broken copy) changes what the service signed. Each keeps the rest of
 * the compact serialisation as it was, so a vector fails for one reason only.
 */

const decode = (part: string | undefined) =>
  JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8'));
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function headerOf(jws: string): { alg: string; kid: string } {
  return decode(jws.split('.')[0]);
}

export function claimsOf(jws: string): Record<string, unknown> {
  return decode(jws.split('.')[1]);
}

/** The claims changed, the signature kept: a forgery the signature must catch. */
export function withClaims(jws: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = jws.split('.');
  return [header, encode({ ...decode(payload), ...change }), signature].join('.');
}

/** The protected header changed (another alg, another kid), the rest kept. */
export function withHeader(jws: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = jws.split('.');
  return [encode({ ...decode(header), ...change }), payload, signature].join('.');
}

/** One byte of the signature flipped. */
export function withFlippedSignature(jws: string): string {
  const [header, payload, signature] = jws.split('.');
  const bytes = Buffer.from(signature ?? '', 'base64url');
  bytes[Math.floor(bytes.length / 2)] = (bytes[Math.floor(bytes.length / 2)] ?? 0) ^ 0x01;
  return [header, payload, bytes.toString('base64url')].join('.');
}

/** One byte of an encrypted file's ciphertext flipped (JWE compact: its fourth part). */
export function withFlippedCiphertext(jwe: string): string {
  const parts = jwe.split('.');
  const bytes = Buffer.from(parts[3] ?? '', 'base64url');
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  parts[3] = bytes.toString('base64url');
  return parts.join('.');
}

/** The same claims and header signed by a key the service never had, under the service's kid. */
export async function signedByStranger(jws: string): Promise<string> {
  const { alg, kid } = headerOf(jws);
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return new SignJWT(claimsOf(jws)).setProtectedHeader({ alg, kid }).sign(privateKey);
}

/** The key set without the key of this kid: a client that never learnt it. */
export function keySetWithout(keySet: JsonWebKeySet, kid: string): JsonWebKeySet {
  return { keys: keySet.keys.filter((key) => key.kid !== kid) };
}
