import type { CreateOptions } from './client.js';
import { checkedKey, type RetryOptions, requestJson } from './http.js';
import type { PurchaseValidation, RenewalCharge, StartedTrial } from './types.js';

export interface CheckoutClientOptions extends RetryOptions {
  /** The checkout host's address ({pay_url}), e.g. https://pay.example.com. */
  payUrl: string;
  fetch?: typeof fetch;
}

/**
 * Calls to the checkout host, from your backend or (startTrial) your client software. These paths
 * are not under /v1 and take no API key: the product's callbackSecret is the credential where one
 * is needed. Error answers throw
 * LicensingApiError; a purchase that does not verify is an answer, not an error.
 */
export class CheckoutClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: CheckoutClientOptions) {
    if (typeof options?.payUrl !== 'string' || !/^https?:\/\//.test(options.payUrl)) {
      throw new TypeError('payUrl: must be the checkout host address, e.g. https://pay.example.com');
    }
    this.base = options.payUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Where to send the buyer; pass a sealMirrorPayload result for strict mode. */
  checkoutUrl(productId: string, payload?: string): string {
    const url = new URL(`${this.base}/checkout/${encodeURIComponent(productId)}`);
    if (payload !== undefined) url.searchParams.set('payload', payload);
    return url.toString();
  }

  /** Confirms a purchase after the redirect; grant access only when `verified` is true. */
  validatePurchase(input: { license: string; email: string }): Promise<PurchaseValidation> {
    return this.post('/api/checkout/mirror/validate', { license: input.license, email: input.email });
  }

  /** Charges one renewal period; repeats for the same period charge once and answer `duplicate: true`. */
  chargeRenewal(input: {
    subscriptionId: string;
    amount: number;
    currency: string;
    callbackSecret: string;
  }): Promise<RenewalCharge> {
    return this.post('/api/checkout/mirror/subscription/charge', {
      subscription_id: input.subscriptionId,
      amount: input.amount,
      currency: input.currency,
      callback_secret: input.callbackSecret,
    });
  }

  /**
   * Starts the product's free trial for a buyer; no credential. With `hwuid`, a trial on that
   * device: the answer carries the key, bound to it. Without, a trial by e-mail: the key goes to
   * the address only and `licenseKey` is null. A second trial for the address (trials by e-mail)
   * or the device rejects with 409 `trial_already_used`.
   */
  startTrial(
    input: { productId: string; email: string; hwuid?: string },
    options: CreateOptions = {},
  ): Promise<StartedTrial> {
    const body = { productId: input.productId, email: input.email, hwuid: input.hwuid };
    // Keyed: a retry after a lost answer replays the trial instead of meeting trial_already_used.
    return requestJson<StartedTrial>(
      this.fetchImpl,
      {
        method: 'POST',
        url: new URL(`${this.base}/api/checkout/trials`),
        body,
        retry: 'keyed',
        idempotencyKey: checkedKey(options.idempotencyKey),
      },
      this.options,
    );
  }

  // Both calls are safe to repeat: validate only reads, and the service charges a period once
  // (a repeat answers duplicate: true), so lost answers are retried like reads.
  private post<T>(path: string, body: unknown): Promise<T> {
    return requestJson<T>(
      this.fetchImpl,
      { method: 'POST', url: new URL(this.base + path), body, retry: 'repeatable' },
      this.options,
    );
  }
}
