import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Checkout merchant webhooks carry `x-svc-pay-signature: t=<unix seconds>,v1=<hex>` where the hex
 * is HMAC-SHA256(product callbackSecret, `${t}.${raw body}`). The timestamp inside the signed
 * message lets receivers refuse replays; this model never shares a secret with core webhooks.
 */
export const MERCHANT_SIGNATURE_HEADER = 'x-svc-pay-signature';
export const MERCHANT_SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export function merchantSignature(callbackSecret: string, sentAt: number, body: string): string {
  const v1 = createHmac('sha256', callbackSecret).update(`${sentAt}.${body}`).digest('hex');
  return `t=${sentAt},v1=${v1}`;
}

export function verifyMerchantSignature(
  callbackSecret: string,
  header: string | undefined,
  body: string,
  now: Date,
  toleranceSeconds = MERCHANT_SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  const parts = new Map(
    (header ?? '').split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const tText = parts.get('t') ?? '';
  const v1 = parts.get('v1') ?? '';
  if (!/^[1-9][0-9]{0,11}$/.test(tText) || !/^[0-9a-f]{64}$/.test(v1)) return false;
  const t = Number(tText);
  if (Math.abs(now.getTime() / 1000 - t) > toleranceSeconds) return false;
  const expected = merchantSignature(callbackSecret, t, body).slice(`t=${t},v1=`.length);
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(v1, 'hex'));
}
