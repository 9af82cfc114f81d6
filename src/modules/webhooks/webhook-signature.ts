import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Three signatures ride on each delivery, all with the endpoint's secret:
 * - X-Webhook-Signature: "sha256=" + hex HMAC-SHA256 of the raw body (key: the secret's UTF-8
 *   bytes); receivers strip the prefix if present and compare in constant time;
 * - the envelope's own `signature` field: hex HMAC-SHA256 of `${id}.${timestamp}.${JSON of data}`
 *   (it cannot cover the body that contains it);
 * - Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature: "v1,<base64>") over
 *   `${id}.${unix seconds}.${body}`, keyed with the base64 part of a "whsec_" secret (other
 *   secrets: their UTF-8 bytes), so the standard's libraries verify it and reject replays.
 */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function bodySignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function envelopeSignature(secret: string, id: string, timestamp: string, data: unknown): string {
  return createHmac('sha256', secret)
    .update(`${id}.${timestamp}.${JSON.stringify(data)}`)
    .digest('hex');
}

export function standardSignature(secret: string, id: string, unixSeconds: number, body: string): string {
  const key = secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret);
  return `v1,${createHmac('sha256', key).update(`${id}.${unixSeconds}.${body}`).digest('base64')}`;
}

/** What a receiver does with X-Webhook-Signature (the SDK uses the same function). */
export function verifyBodySignature(secret: string, body: string, header: string): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(body).digest('hex'));
  const given = Buffer.from(header.trim().replace(/^sha256=/, ''));
  return expected.length === given.length && timingSafeEqual(expected, given);
}
