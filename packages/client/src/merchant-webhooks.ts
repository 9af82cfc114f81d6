import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { MerchantWebhookEvent } from './types.js';
import { WebhookVerificationError } from './webhooks.js';

export interface MerchantWebhookOptions {
  /** The product's callbackSecret (server-side only). */
  callbackSecret: string;
  /** How far `t` may be from now; default 300 seconds. */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Checks a checkout merchant webhook and returns its event. The `x-svc-pay-signature` header is
 * `t=<unix>,v1=<hex HMAC-SHA256(callbackSecret, t + "." + raw body)>`; the signature is compared
 * in constant time and `t` must be within the tolerance. Throws WebhookVerificationError
 * otherwise: answer 401 then, 2xx within 5 s when it passes, and process each event id once.
 */
export function verifyMerchantWebhook<T = Record<string, unknown>>(
  rawBody: string | Uint8Array,
  signatureHeader: string | readonly string[] | undefined,
  options: MerchantWebhookOptions,
): MerchantWebhookEvent<T> {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError(
      'verifyMerchantWebhook(rawBody, signatureHeader, { callbackSecret }): rawBody must be the raw request body as a string or Buffer',
    );
  }
  if (typeof options?.callbackSecret !== 'string' || options.callbackSecret.length === 0) {
    throw new TypeError(
      "verifyMerchantWebhook(rawBody, signatureHeader, { callbackSecret }): callbackSecret must be the product's callbackSecret",
    );
  }
  const header = typeof signatureHeader === 'string' ? signatureHeader : (signatureHeader ?? []).join(',');
  const parts = header.split(',').map((part) => part.trim().split('='));
  const t = parts.find(([name]) => name === 't')?.[1] ?? '';
  const given = parts.filter(([name, value]) => name === 'v1' && /^[0-9a-f]{64}$/.test(value ?? ''));
  if (!/^\d{1,12}$/.test(t) || given.length === 0) {
    throw new WebhookVerificationError('malformed', 'Missing or malformed x-svc-pay-signature header');
  }
  // The raw bytes as received: decoding and re-encoding could change what was signed.
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const expected = createHmac('sha256', options.callbackSecret).update(`${t}.`).update(body).digest();
  if (!given.some(([, value]) => timingSafeEqual(expected, Buffer.from(value ?? '', 'hex')))) {
    throw new WebhookVerificationError('bad_signature', 'The signature does not match the body');
  }
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(t)) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('stale_timestamp', 'The delivery is too old (or from the future)');
  }
  let event: Partial<MerchantWebhookEvent<T>> | null;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('malformed', 'The body is not JSON');
  }
  if (typeof event?.id !== 'string' || typeof event.type !== 'string') {
    throw new WebhookVerificationError('malformed', 'The body is not a merchant event');
  }
  return event as MerchantWebhookEvent<T>;
}
