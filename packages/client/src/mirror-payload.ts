import { Buffer } from 'node:buffer';
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** The limits the checkout applies when it opens a payload (docs/checkout.md, strict mirror mode). */
const TOKEN_MAX_LENGTH = 1000;
const EMAIL_MAX_LENGTH = 320;
const PAYLOAD_MAX_LENGTH = 4096;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface MirrorPayloadInput {
  /** The product's callbackSecret (server-side only). */
  callbackSecret: string;
  /** The product the buyer is sent to: the payload opens for this product only. */
  productId: string;
  /** Your reference (order, user id), 1 to 1000 characters; it comes back as `token` on the redirect. */
  token: string;
  /** The buyer's e-mail, shown locked on the checkout page. */
  email: string;
  /** When the payload is made (default now); the checkout accepts it for 30 minutes after. */
  issuedAt?: Date;
}

/**
 * Builds a strict mirror mode payload, format version 1:
 * "v1." + base64url(iv || AES-256-GCM(HKDF-SHA256(callbackSecret), {TOKEN, CLIENT_EMAIL, iat}) || tag),
 * with the product id as additional data. Throws a TypeError naming the field for input the
 * checkout would refuse, so a bad payload fails here rather than on the buyer's screen.
 */
export function sealMirrorPayload(input: MirrorPayloadInput): string {
  if (typeof input !== 'object' || input === null) {
    throw new TypeError('sealMirrorPayload({ callbackSecret, productId, token, email }) takes one object');
  }
  const email = typeof input.email === 'string' ? input.email.trim() : '';
  const issuedAt = input.issuedAt ?? new Date();
  if (typeof input.callbackSecret !== 'string' || input.callbackSecret.length === 0) {
    throw new TypeError('callbackSecret: must be the product callback secret');
  }
  if (typeof input.productId !== 'string' || input.productId.length === 0) {
    throw new TypeError('productId: must be the product id');
  }
  if (typeof input.token !== 'string' || input.token.length === 0 || input.token.length > TOKEN_MAX_LENGTH) {
    throw new TypeError(`token: must be a string of 1 to ${TOKEN_MAX_LENGTH} characters`);
  }
  if (email.length > EMAIL_MAX_LENGTH || !EMAIL.test(email)) {
    throw new TypeError('email: must be an e-mail address such as buyer@example.com');
  }
  if (!(issuedAt instanceof Date) || Number.isNaN(issuedAt.getTime())) {
    throw new TypeError('issuedAt: must be a valid Date');
  }

  const key = Buffer.from(hkdfSync('sha256', input.callbackSecret, 'svc-mirror', 'payload-v1', 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(input.productId, 'utf8'));
  const plaintext = JSON.stringify({
    TOKEN: input.token,
    CLIENT_EMAIL: email,
    iat: Math.floor(issuedAt.getTime() / 1000),
  });
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const payload = `v1.${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url')}`;
  // Multi-byte or escaped characters can make a 1000-character token too long for the checkout.
  if (payload.length > PAYLOAD_MAX_LENGTH) {
    throw new TypeError(
      `token: too long once encrypted (the checkout takes payloads up to ${PAYLOAD_MAX_LENGTH} characters)`,
    );
  }
  return payload;
}
