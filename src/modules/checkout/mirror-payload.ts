import { createDecipheriv, hkdfSync } from 'node:crypto';

/**
 * Strict mirror mode's payload: the seller encrypts {TOKEN, CLIENT_EMAIL, iat} for one product
 * with that product's callback secret, and the checkout page decrypts it.
 *
 *   key     = HKDF-SHA256(ikm: callbackSecret, salt: "svc-mirror", info: "payload-v1", 32 bytes)
 *   sealed  = AES-256-GCM(key, iv: 12 random bytes, aad: productId, plaintext: JSON)
 *   payload = "v1." + base64url(iv || ciphertext || tag)
 *
 * The product id as associated data binds a payload to its product; iat (Unix seconds) lets a
 * stale payload be refused. Sellers seal with the SDK's sealMirrorPayload (packages/client),
 * whose tests open with this function, so one sealer is kept.
 */
export interface MirrorPayload {
  TOKEN: string;
  CLIENT_EMAIL: string;
  iat: number;
}

/** How long a payload stays usable after the seller made it. */
export const PAYLOAD_MAX_AGE_SECONDS = 30 * 60;
/** Clock skew tolerated for a payload dated in the future. */
const FUTURE_SKEW_SECONDS = 5 * 60;
export const PAYLOAD_MAX_LENGTH = 4096;
const VERSION = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type PayloadProblem = 'malformed' | 'not_for_this_product' | 'stale';

export class PayloadRefused extends Error {
  constructor(readonly problem: PayloadProblem) {
    super(`mirror payload refused: ${problem}`);
  }
}

function payloadKey(callbackSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', callbackSecret, 'svc-mirror', 'payload-v1', 32));
}

/**
 * Opens a payload for `productId`. A payload sealed with another secret or for another product
 * fails authentication (`not_for_this_product`); one that opens but is too old is `stale`.
 */
export function openMirrorPayload(
  callbackSecret: string,
  productId: string,
  payload: string,
  now: Date,
): { token: string; email: string; issuedAt: Date } {
  if (payload.length > PAYLOAD_MAX_LENGTH || !payload.startsWith(VERSION))
    throw new PayloadRefused('malformed');
  const raw = Buffer.from(payload.slice(VERSION.length), 'base64url');
  if (raw.length <= IV_BYTES + TAG_BYTES) throw new PayloadRefused('malformed');
  const decipher = createDecipheriv('aes-256-gcm', payloadKey(callbackSecret), raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(productId));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  let text: string;
  try {
    text = Buffer.concat([
      decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new PayloadRefused('not_for_this_product');
  }
  const content = parse(text);
  const age = now.getTime() / 1000 - content.iat;
  if (age > PAYLOAD_MAX_AGE_SECONDS || age < -FUTURE_SKEW_SECONDS) throw new PayloadRefused('stale');
  return { token: content.TOKEN, email: content.CLIENT_EMAIL, issuedAt: new Date(content.iat * 1000) };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function parse(text: string): MirrorPayload {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new PayloadRefused('malformed');
  }
  const v = value as Partial<MirrorPayload> | null;
  if (
    typeof v?.TOKEN !== 'string' ||
    v.TOKEN.length === 0 ||
    v.TOKEN.length > 1000 ||
    typeof v.CLIENT_EMAIL !== 'string' ||
    v.CLIENT_EMAIL.length > 320 ||
    !EMAIL.test(v.CLIENT_EMAIL) ||
    typeof v.iat !== 'number' ||
    !Number.isInteger(v.iat)
  ) {
    throw new PayloadRefused('malformed');
  }
  return v as MirrorPayload;
}
