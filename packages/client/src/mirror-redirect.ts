import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The parameters the checkout signs, in the order the canonical string lists them (by name). */
const SIGNED_PARAMS = [
  'email',
  'license',
  'product_id',
  'status',
  'subscription_id',
  'token',
  'transaction_id',
  'ts',
] as const;

export interface MirrorRedirectOptions {
  /** The product's callbackSecret (server-side only). */
  callbackSecret: string;
  /** How old (or how far in the future) `ts` may be; default 600 seconds. */
  maxAgeSeconds?: number;
  now?: Date;
}

/** The signed redirect's fields, read only after the signature and `ts` were checked. */
export interface MirrorRedirect {
  license: string;
  /** Null when the product hides the e-mail. */
  email: string | null;
  transactionId: string;
  productId: string;
  /** Recurring products only. */
  subscriptionId: string | null;
  /** Strict mode only: the TOKEN from your payload. */
  token: string | null;
  status: string;
  /** Unix seconds of the redirect. */
  ts: number;
}

export class MirrorRedirectError extends Error {
  constructor(
    readonly code: 'malformed' | 'bad_signature' | 'stale_timestamp',
    message: string,
  ) {
    super(message);
    this.name = 'MirrorRedirectError';
  }
}

type RedirectInput = URLSearchParams | string | URL;

/**
 * Whether the query of a redirect to your successUrl carries the checkout's signature and a fresh
 * `ts`. Your own parameters are ignored. Accepts the parameters, a URL, a path with its query
 * (`req.url`) or a bare query string.
 */
export function verifyMirrorRedirect(input: RedirectInput, options: MirrorRedirectOptions): boolean {
  try {
    checkedParams(input, options);
    return true;
  } catch (error) {
    if (error instanceof MirrorRedirectError) return false;
    throw error;
  }
}

/**
 * Checks the redirect like verifyMirrorRedirect and returns its fields; throws MirrorRedirectError
 * otherwise. Prefer these fields to reading the query yourself, then confirm with validate.
 */
export function readMirrorRedirect(input: RedirectInput, options: MirrorRedirectOptions): MirrorRedirect {
  const params = checkedParams(input, options);
  const license = params.get('license');
  const transactionId = params.get('transaction_id');
  const productId = params.get('product_id');
  const status = params.get('status');
  if (!license || !transactionId || !productId || !status) {
    throw new MirrorRedirectError(
      'malformed',
      'The redirect lacks license, transaction_id, product_id or status',
    );
  }
  return {
    license,
    email: params.get('email'),
    transactionId,
    productId,
    subscriptionId: params.get('subscription_id'),
    token: params.get('token'),
    status,
    ts: Number(params.get('ts')),
  };
}

function checkedParams(input: RedirectInput, options: MirrorRedirectOptions): URLSearchParams {
  if (typeof options?.callbackSecret !== 'string' || options.callbackSecret.length === 0) {
    throw new TypeError(
      "callbackSecret: must be the product's callbackSecret ({ callbackSecret } as second argument)",
    );
  }
  if (typeof input !== 'string' && !(input instanceof URL) && !(input instanceof URLSearchParams)) {
    throw new TypeError(
      'The redirect must be a URL, URLSearchParams, a URL string, req.url or a query string',
    );
  }
  const params = toParams(input);
  // A repeated signed name could be read differently by your framework than by this check.
  for (const name of [...SIGNED_PARAMS, 'sig']) {
    if (params.getAll(name).length > 1) {
      throw new MirrorRedirectError('malformed', `The redirect repeats the ${name} parameter`);
    }
  }
  const sig = params.get('sig') ?? '';
  const ts = params.get('ts') ?? '';
  if (!/^[0-9a-f]{64}$/.test(sig) || !/^\d{1,12}$/.test(ts)) {
    throw new MirrorRedirectError('malformed', 'The redirect lacks a valid sig or ts');
  }
  const canonical = SIGNED_PARAMS.flatMap((name) => {
    const value = params.get(name);
    return value === null ? [] : [`${encodeURIComponent(name)}=${encodeURIComponent(value)}`];
  }).join('&');
  const expected = createHmac('sha256', options.callbackSecret).update(canonical).digest();
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) {
    throw new MirrorRedirectError('bad_signature', 'The redirect signature does not match');
  }
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(ts)) > (options.maxAgeSeconds ?? 600)) {
    throw new MirrorRedirectError('stale_timestamp', 'The redirect is too old (or from the future)');
  }
  return params;
}

function toParams(input: RedirectInput): URLSearchParams {
  if (input instanceof URLSearchParams) return input;
  if (input instanceof URL) return input.searchParams;
  // "https://shop/x?a=b", "/x?a=b#top", "?a=b" and "a=b" all mean the query a=b.
  const query = input.includes('?') ? input.slice(input.indexOf('?') + 1) : input;
  return new URLSearchParams(query.split('#')[0]);
}
