import type { Clock } from '../../platform/clock.js';
import type { Log } from '../../platform/log.js';
import type { BrandService } from '../brand/index.js';
import type { PaymentService } from '../payments/index.js';
import type { ProductService } from '../products/index.js';
import type { Trials } from './trials.js';

/*
 * What the checkout service is built from, shared by service.ts (which composes it) and the files
 * it is composed of (page-view.ts, strict-mode.ts, trial-form.ts, payment-form.ts, receipt.ts,
 * mirror-validation.ts): in a file of its own, so neither imports the other.
 */

export interface CheckoutServiceDeps {
  clock: Clock;
  log: Log;
  payments: Pick<
    PaymentService,
    'createPaymentIntent' | 'confirmPayment' | 'startCryptoPayment' | 'checkoutReceipt' | 'findPaidPurchase'
  >;
  products: Pick<ProductService, 'forCheckout' | 'callbackSecretOf'>;
  /** The seller's name, logo and colour for the pages, and the sites that may frame them. */
  brands: Pick<BrandService, 'forSeller'>;
  trials: Pick<Trials, 'start'>;
  /** The card partner as the page embeds it. */
  card: { kind: 'sandbox' } | { kind: 'stripe'; publishableKey: string };
  cryptoConfigured: boolean;
  /** {pay_url} as buyers' browsers reach it. */
  payUrl: string;
}

/** A product as the checkout reads it. */
export type CheckoutProduct = NonNullable<Awaited<ReturnType<ProductService['forCheckout']>>>;
