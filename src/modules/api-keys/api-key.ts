import { hash, randomBytes } from 'node:crypto';

/**
 * App API keys: "sk_" + 48 hex characters (192 bits from the CSPRNG). Only the SHA-256 of a
 * key is stored. A fast hash is right here — unlike passwords, the key has full entropy —
 * and the lookup is an index probe on that hash, so no stored secret is ever compared
 * byte by byte in application code.
 */
const API_KEY_PREFIX = 'sk_';
const API_KEY_PATTERN = /^sk_[0-9a-f]{48}$/;
const DISPLAY_PREFIX_LENGTH = 12;

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX + randomBytes(24).toString('hex');
  return { key, prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: hashApiKey(key) };
}

export function looksLikeApiKey(token: string): boolean {
  return API_KEY_PATTERN.test(token);
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}
