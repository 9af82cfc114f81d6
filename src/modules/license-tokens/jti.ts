import { randomFillSync } from 'node:crypto';

// Random bytes drawn from the CSPRNG in batches, one system call per 256 tokens instead of one
// per token (as randomUUID does); each 12-byte slice is used once.
const RANDOM_BYTES = 12;
const batch = Buffer.alloc(RANDOM_BYTES * 256);
let next = batch.length;

function freshRandom(): Buffer {
  if (next === batch.length) {
    randomFillSync(batch);
    next = 0;
  }
  next += RANDOM_BYTES;
  return batch.subarray(next - RANDOM_BYTES, next);
}

/**
 * A token id (jti) that is unique per issuance and also says which license the token was for
 * and when it expires: 16 bytes of license id, 4 bytes of expiry (Unix seconds), 12 random
 * bytes, base64url. Revocation can then check ownership and keep the denylist entry exactly
 * as long as needed, without writing anything when a token is issued.
 */
export function newJti(licenseId: string, expiresAt: Date): string {
  const bytes = Buffer.allocUnsafe(32);
  bytes.write(licenseId.replace(/-/g, ''), 0, 16, 'hex');
  bytes.writeUInt32BE(Math.floor(expiresAt.getTime() / 1000), 16);
  freshRandom().copy(bytes, 20);
  return bytes.toString('base64url');
}

export function parseJti(jti: string): { licenseId: string; expiresAt: Date } | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(jti)) return null;
  const bytes = Buffer.from(jti, 'base64url');
  if (bytes.length !== 32) return null;
  const hex = bytes.subarray(0, 16).toString('hex');
  const licenseId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { licenseId, expiresAt: new Date(bytes.readUInt32BE(16) * 1000) };
}
