import { randomBytes } from 'node:crypto';

/**
 * License keys are typed by people, so they use Crockford's base32 (no I, L, O or U) in six
 * groups of five: 30 characters, 150 bits from the CSPRNG. Reading a key forgives case, spaces,
 * missing dashes and the letters people confuse with digits (O for 0, I and L for 1).
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const LENGTH = 30;
const GROUP = 5;

export function generateLicenseKey(): string {
  // 256 is a multiple of 32, so masking each byte keeps every character equally likely.
  const chars = [...randomBytes(LENGTH)].map((byte) => ALPHABET[byte & 31]);
  return group(chars.join(''));
}

/** A key exactly as we write it: what client software sends on every verify. */
const CANONICAL = /^[0-9A-HJKMNP-TV-Z]{5}(?:-[0-9A-HJKMNP-TV-Z]{5}){5}$/;

/** The canonical form of a typed key, or null when it cannot be one of ours. */
export function normalizeLicenseKey(input: string): string | null {
  if (input.length === LENGTH + LENGTH / GROUP - 1 && CANONICAL.test(input)) return input;
  const compact = input.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (compact.length !== LENGTH || ![...compact].every((char) => ALPHABET.includes(char))) return null;
  return group(compact);
}

function group(compact: string): string {
  const groups: string[] = [];
  for (let at = 0; at < compact.length; at += GROUP) groups.push(compact.slice(at, at + GROUP));
  return groups.join('-');
}

/** What the per-key verification limit counts: the canonical key, however it was typed. */
export function verificationLimitKey(body: unknown): string | null {
  const key = (body as { key?: unknown } | undefined)?.key;
  const canonical = typeof key === 'string' ? normalizeLicenseKey(key) : null;
  return canonical ? `verify:${canonical}` : null;
}
