import { createHmac, timingSafeEqual } from 'node:crypto';
import { request } from 'undici';

/**
 * The hosted crypto-payment partner, on Coinbase Commerce's charges API: a charge for a fixed
 * fiat price, a hosted page where the buyer pays, and HMAC-signed callbacks. As with cards,
 * fulfilment re-reads the charge; a callback only says which charge to look at.
 */
export type CryptoChargeStatus = 'pending' | 'confirmed' | 'failed' | 'expired';

export interface CryptoCharge {
  id: string;
  hostedUrl: string;
  status: CryptoChargeStatus;
  /** The fiat price asked, as a decimal string ("19.99"). */
  amount: string;
  currency: string;
  orderId: string | null;
}

export interface CryptoPartnerEvent {
  id: string;
  type: string;
  chargeId: string;
}

export interface CryptoPartner {
  readonly name: 'crypto';
  createCharge(input: {
    orderId: string;
    amount: string;
    currency: string;
    name: string;
    description: string;
    email: string;
    redirectUrl: string;
    cancelUrl: string;
  }): Promise<CryptoCharge>;
  /** Null when the partner does not know the charge. */
  retrieveCharge(id: string): Promise<CryptoCharge | null>;
  /** Checks the callback's signature on the raw body; throws when it does not hold. */
  verifyEvent(rawBody: string, signature: string | undefined): CryptoPartnerEvent;
}

/** The partner answered other than 2xx (statusCode), or gave no usable answer (statusCode null). */
export class CryptoPartnerError extends Error {
  override readonly name = 'CryptoPartnerError';
  constructor(
    message: string,
    readonly statusCode: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const CRYPTO_API_VERSION = '2018-03-22';
/** The whole exchange (connect, send, answer, body) must finish within this. */
export const CRYPTO_REQUEST_TIMEOUT_MS = 15_000;
/** The signature header on the partner's callbacks: hex HMAC-SHA256 of the raw body. */
export const CRYPTO_SIGNATURE_HEADER = 'x-cc-webhook-signature';

// The timeline's last entry is the charge's state. UNRESOLVED (under/overpaid, late) can still
// turn RESOLVED when the merchant accepts the payment, so `failed` is not final.
const TIMELINE_STATUS: Record<string, CryptoChargeStatus> = {
  NEW: 'pending',
  SIGNED: 'pending',
  PENDING: 'pending',
  COMPLETED: 'confirmed',
  CONFIRMED: 'confirmed',
  RESOLVED: 'confirmed',
  EXPIRED: 'expired',
  CANCELED: 'failed',
  CANCELATION_COMPLETE: 'failed',
  UNRESOLVED: 'failed',
};

// No well-kept official Node SDK exists (coinbase-commerce-node is deprecated), so this is a small client over undici.
export function createCryptoPartner(options: {
  apiUrl: string;
  apiKey: string;
  webhookSecret: string;
}): CryptoPartner {
  const base = options.apiUrl.replace(/\/+$/, '');
  const { apiKey, webhookSecret } = options;
  // An empty secret would let anyone sign callbacks.
  if (!apiKey || !webhookSecret) throw new Error('crypto partner: apiKey and webhookSecret are required');

  /** The `data` of a 2xx answer; null for a 404 when `notFoundAsNull`. */
  async function call(
    method: 'GET' | 'POST',
    path: string,
    init: { body?: unknown; idempotencyKey?: string; notFoundAsNull?: boolean } = {},
  ): Promise<unknown> {
    const what = `${method} ${path}`;
    let statusCode: number;
    let text: string;
    try {
      const res = await request(`${base}${path}`, {
        method,
        signal: AbortSignal.timeout(CRYPTO_REQUEST_TIMEOUT_MS),
        headers: {
          accept: 'application/json',
          'x-cc-api-key': apiKey,
          'x-cc-version': CRYPTO_API_VERSION,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.idempotencyKey ? { 'idempotency-key': init.idempotencyKey } : {}),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      statusCode = res.statusCode;
      text = await res.body.text();
    } catch (error) {
      const reason = (error as { code?: string }).code ?? (error as Error).name;
      throw new CryptoPartnerError(`crypto partner: ${what} got no answer (${reason})`, null, {
        cause: error,
      });
    }
    if (statusCode === 404 && init.notFoundAsNull) return null;
    if (statusCode < 200 || statusCode >= 300) {
      throw new CryptoPartnerError(
        `crypto partner: ${what} answered ${statusCode}${partnerMessage(text, apiKey)}`,
        statusCode,
      );
    }
    try {
      return (JSON.parse(text) as { data?: unknown } | null)?.data;
    } catch {
      throw new CryptoPartnerError(`crypto partner: ${what} answered ${statusCode} without JSON`, statusCode);
    }
  }

  return {
    name: 'crypto',
    async createCharge(input) {
      const data = await call('POST', '/charges', {
        idempotencyKey: input.orderId,
        body: {
          name: input.name,
          description: input.description,
          pricing_type: 'fixed_price',
          local_price: { amount: input.amount, currency: input.currency },
          metadata: { orderId: input.orderId, email: input.email },
          redirect_url: input.redirectUrl,
          cancel_url: input.cancelUrl,
        },
      });
      return toCharge(data);
    },
    async retrieveCharge(id) {
      const data = await call('GET', `/charges/${encodeURIComponent(id)}`, { notFoundAsNull: true });
      return data === null ? null : toCharge(data);
    },
    verifyEvent(rawBody, signature) {
      const given = signature?.trim() ?? '';
      if (!/^[0-9a-f]{64}$/i.test(given)) throw new Error('crypto partner: missing or malformed signature');
      const expected = createHmac('sha256', webhookSecret).update(rawBody, 'utf8').digest();
      if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) {
        throw new Error('crypto partner: signature does not match the body');
      }
      let event: { id?: unknown; type?: unknown; data?: { id?: unknown } | null } | undefined;
      try {
        event = (JSON.parse(rawBody) as { event?: typeof event } | null)?.event;
      } catch {
        throw new Error('crypto partner: signed callback is not JSON');
      }
      if (
        typeof event?.id !== 'string' ||
        typeof event.type !== 'string' ||
        typeof event.data?.id !== 'string'
      ) {
        throw new Error('crypto partner: signed callback is not a charge event');
      }
      return { id: event.id, type: event.type, chargeId: event.data.id };
    },
  };
}

/** The partner's own error message, short, with the key scrubbed should it ever be echoed. */
function partnerMessage(text: string, apiKey: string): string {
  let message: unknown;
  try {
    message = (JSON.parse(text) as { error?: { message?: unknown } } | null)?.error?.message;
  } catch {
    return '';
  }
  if (typeof message !== 'string' || message === '') return '';
  return `: ${message.slice(0, 200).replaceAll(apiKey, '[redacted]')}`;
}

function toCharge(data: unknown): CryptoCharge {
  const charge = data as {
    id?: unknown;
    hosted_url?: unknown;
    pricing?: { local?: { amount?: unknown; currency?: unknown } };
    local_price?: { amount?: unknown; currency?: unknown };
    metadata?: { orderId?: unknown } | null;
    timeline?: { status?: unknown }[];
  } | null;
  const local = charge?.pricing?.local ?? charge?.local_price;
  if (
    typeof charge?.id !== 'string' ||
    typeof charge.hosted_url !== 'string' ||
    typeof local?.amount !== 'string' ||
    typeof local.currency !== 'string'
  ) {
    throw new CryptoPartnerError('crypto partner: the answer is not a charge', null);
  }
  const last = Array.isArray(charge.timeline) ? charge.timeline.at(-1)?.status : undefined;
  return {
    id: charge.id,
    hostedUrl: charge.hosted_url,
    // States this table does not know (refunds, new ones) are never taken for a payment.
    status: (typeof last === 'string' ? TIMELINE_STATUS[last] : undefined) ?? 'pending',
    amount: local.amount,
    currency: local.currency,
    orderId: typeof charge.metadata?.orderId === 'string' ? charge.metadata.orderId : null,
  };
}
