import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signed redirect to the seller's successUrl. The checkout adds these query parameters and
 * signs them with the product's callback secret:
 *
 *   canonical = the parameters below that are present, sorted by name, each as
 *               encodeURIComponent(name) + "=" + encodeURIComponent(value), joined by "&"
 *   sig       = hex(HMAC-SHA256(callbackSecret, canonical))
 *
 * Any other parameter the successUrl already carries is the seller's own and is not signed.
 */
export const SIGNED_REDIRECT_PARAMS = [
  'email',
  'license',
  'product_id',
  'status',
  'subscription_id',
  'token',
  'transaction_id',
  'ts',
] as const;

export type RedirectParams = Partial<Record<(typeof SIGNED_REDIRECT_PARAMS)[number], string>>;

/** How long a seller should accept a redirect after `ts`; the SDK's default. */
export const REDIRECT_MAX_AGE_SECONDS = 10 * 60;

export function canonicalRedirect(params: URLSearchParams | RedirectParams): string {
  const get = (name: string) =>
    params instanceof URLSearchParams
      ? params.get(name)
      : (params as Record<string, string | undefined>)[name];
  return SIGNED_REDIRECT_PARAMS.flatMap((name) => {
    const value = get(name);
    return value === null || value === undefined
      ? []
      : [`${encodeURIComponent(name)}=${encodeURIComponent(value)}`];
  }).join('&');
}

export function redirectSignature(callbackSecret: string, params: URLSearchParams | RedirectParams): string {
  return createHmac('sha256', callbackSecret).update(canonicalRedirect(params)).digest('hex');
}

/** successUrl with the signed parameters set (replacing any of the same name) and sig last. */
export function signedRedirectUrl(
  successUrl: string,
  callbackSecret: string,
  params: RedirectParams,
): string {
  const url = new URL(successUrl);
  for (const name of [...SIGNED_REDIRECT_PARAMS, 'sig']) url.searchParams.delete(name);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set('sig', redirectSignature(callbackSecret, params));
  return url.toString();
}

/** Whether a redirect's parameters carry a valid, fresh signature (the seller's check). */
export function verifyRedirect(
  callbackSecret: string,
  params: URLSearchParams,
  now: Date,
  maxAgeSeconds = REDIRECT_MAX_AGE_SECONDS,
): boolean {
  // A signed name given twice is refused: frameworks disagree on which value they hand over.
  if ([...SIGNED_REDIRECT_PARAMS, 'sig'].some((name) => params.getAll(name).length > 1)) return false;
  const sig = params.get('sig') ?? '';
  const tsText = params.get('ts') ?? '';
  if (!/^[0-9a-f]{64}$/.test(sig) || !/^[0-9]{1,12}$/.test(tsText)) return false;
  const ts = Number(tsText);
  if (Math.abs(now.getTime() / 1000 - ts) > maxAgeSeconds) return false;
  const expected = Buffer.from(redirectSignature(callbackSecret, params), 'hex');
  return timingSafeEqual(expected, Buffer.from(sig, 'hex'));
}
