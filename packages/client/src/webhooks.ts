import { createHmac, timingSafeEqual } from 'node:crypto';

export class WebhookVerificationError extends Error {
  constructor(
    readonly code: 'bad_signature' | 'stale_timestamp' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface WebhookEnvelope<T = Record<string, unknown>> {
  id: string;
  type: string;
  data: T;
  timestamp: string;
  signature: string;
}

/**
 * Checks a delivery the way the service documents it and returns the parsed envelope:
 * HMAC-SHA256 of the raw body with your endpoint secret, compared in constant time (the
 * `sha256=` prefix is optional), and X-Webhook-Timestamp within `toleranceSeconds` of now
 * (replays of old deliveries are refused). Answer 401 when it throws, 2xx within 5 s when it
 * does not, and process each envelope id once.
 */
export function verifyWebhook(input: {
  secret: string;
  /** The request body exactly as received (not re-serialised JSON). */
  body: string | Buffer;
  /** X-Webhook-Signature */
  signature: string | undefined;
  /** X-Webhook-Timestamp */
  timestamp: string | undefined;
  toleranceSeconds?: number;
  now?: Date;
}): WebhookEnvelope {
  const body = typeof input.body === 'string' ? input.body : input.body.toString('utf8');
  if (!input.signature || !input.timestamp || !/^\d+$/.test(input.timestamp)) {
    throw new WebhookVerificationError('malformed', 'Missing or malformed signature headers');
  }
  const expected = Buffer.from(createHmac('sha256', input.secret).update(body).digest('hex'));
  const given = Buffer.from(input.signature.trim().replace(/^sha256=/, ''));
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw new WebhookVerificationError('bad_signature', 'The signature does not match the body');
  }
  const now = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(input.timestamp)) > (input.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('stale_timestamp', 'The delivery is too old (or from the future)');
  }
  try {
    return JSON.parse(body) as WebhookEnvelope;
  } catch {
    throw new WebhookVerificationError('malformed', 'The body is not JSON');
  }
}
