import { Buffer } from 'node:buffer';
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

export interface VerifyWebhookInput {
  /** The endpoint's secret (`secret` from POST /webhooks). */
  secret: string;
  /** The request body exactly as received (not re-serialised JSON): a string, Buffer or Uint8Array. */
  body: string | Uint8Array;
  /** The X-Webhook-Signature header. */
  signature: string | undefined;
  /** The X-Webhook-Timestamp header (Unix seconds). */
  timestamp: string | undefined;
  /** How far the timestamp may be from now; default 300 seconds. */
  toleranceSeconds?: number;
  now?: Date;
}

const USAGE = 'verifyWebhook({ secret, body, signature, timestamp }) takes one object';

/** Wrong arguments are a bug in the caller's endpoint, not a bad delivery: say so plainly. */
function checkInput(input: VerifyWebhookInput): void {
  if (typeof input !== 'object' || input === null || input instanceof Uint8Array) {
    throw new TypeError(`${USAGE}; the first argument is ${describe(input)}, not that object`);
  }
  if (typeof input.secret !== 'string' || input.secret.length === 0) {
    throw new TypeError(
      `${USAGE}: secret must be the endpoint's webhook secret (got ${describe(input.secret)})`,
    );
  }
  if (typeof input.body !== 'string' && !(input.body instanceof Uint8Array)) {
    throw new TypeError(
      `${USAGE}: body must be the raw request body as a string or Buffer (got ${describe(input.body)})`,
    );
  }
  for (const name of ['signature', 'timestamp'] as const) {
    const value: unknown = input[name];
    if (value !== undefined && typeof value !== 'string') {
      throw new TypeError(
        `${USAGE}: ${name} must be the X-Webhook-${name === 'signature' ? 'Signature' : 'Timestamp'} header as a string (got ${describe(value)})`,
      );
    }
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Uint8Array) return 'a Buffer';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Checks a delivery the way the service documents it and returns the parsed envelope:
 * HMAC-SHA256 of the raw body with your endpoint secret, compared in constant time (the
 * `sha256=` prefix is optional), and X-Webhook-Timestamp within `toleranceSeconds` of now
 * (replays of old deliveries are refused). Answer 401 when it throws, 2xx within 5 s when it
 * does not, and process each envelope id once.
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookEnvelope {
  checkInput(input);
  const body = typeof input.body === 'string' ? input.body : Buffer.from(input.body).toString('utf8');
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
