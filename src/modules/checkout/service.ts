import { AppError } from '../../platform/errors.js';
import type { IdempotentAnswer } from '../../platform/http/idempotency.js';
import { isUuid } from '../../platform/ids.js';
import type { CheckoutProduct, CheckoutServiceDeps } from './deps.js';
import { createMirrorValidation } from './mirror-validation.js';
import { createPageView, framable, unavailable } from './page-view.js';
import { checkoutPage, type PageOutcome } from './pages.js';
import { type CheckoutForm, createPaymentForm } from './payment-form.js';
import { createReceipt } from './receipt.js';
import { createStrictMode } from './strict-mode.js';
import { createTrialForm } from './trial-form.js';
import type { StartedTrial } from './trials.js';

export type CheckoutService = ReturnType<typeof createCheckoutService>;

/**
 * The hosted checkout: each use case finds the product (on sale, except for a receipt), the
 * seller's brand, and answers its page through the file that owns it (page-view.ts,
 * trial-form.ts, payment-form.ts, receipt.ts); mirror validation is mirror-validation.ts.
 */
export function createCheckoutService(deps: CheckoutServiceDeps) {
  const { products, brands, trials } = deps;
  const findProduct = (id: string) => (isUuid(id) ? products.forCheckout(id) : Promise.resolve(null));
  const brandOf = (product: CheckoutProduct) => brands.forSeller(product.userId);
  const view = createPageView(deps);
  const strictMode = createStrictMode(deps);
  const trialOutcome = createTrialForm({ trials, view });
  const payment = createPaymentForm({ ...deps, strictMode, view });
  const receiptOutcome = createReceipt(deps);
  const validate = createMirrorValidation(deps);

  return {
    async page(productId: string, query: { payload?: string; hwuid?: string }): Promise<PageOutcome> {
      const product = await findProduct(productId);
      if (!product?.active) return unavailable();
      const brand = await brandOf(product);
      const { strict, refused } = await strictMode(product, query.payload);
      if (refused) return framable(brand, refused);
      return framable(brand, {
        status: 200,
        page: checkoutPage(
          view(product, brand, strict, { payload: query.payload, trial: { hwuid: query.hwuid } }),
        ),
      });
    },

    /**
     * Client software starting a trial for its buyer (the JSON route): its id and end, and the
     * key only for a trial on the device given.
     */
    startTrialFor: (
      input: { productId: string; email: string; hwuid?: string },
      answer?: IdempotentAnswer<StartedTrial>,
    ) => trials.start(input, answer),

    /**
     * The trial form post: for the device the page was opened for, the trial key on a page (and
     * by e-mail); without one, a page saying the key went to the address; or the checkout page
     * again saying why no trial started.
     */
    async startTrial(productId: string, form: { email?: string; hwuid?: string }): Promise<PageOutcome> {
      const product = await findProduct(productId);
      if (!product?.active) return unavailable();
      const brand = await brandOf(product);
      return framable(brand, await trialOutcome(product, brand, form));
    },

    /** The plain form post: the sandbox's test card, or the crypto button. Works without JavaScript. */
    async pay(productId: string, form: CheckoutForm): Promise<PageOutcome> {
      const product = await findProduct(productId);
      if (!product?.active) return unavailable();
      const brand = await brandOf(product);
      return framable(brand, await payment.payOutcome(product, brand, form));
    },

    /** For Stripe Elements: the intent is made when the buyer submits the embedded form. */
    async startCardPayment(
      input: { productId: string; email?: string; payload?: string; attempt: string },
      answer?: IdempotentAnswer<{ clientSecret: string; returnUrl: string }>,
    ) {
      const product = await findProduct(input.productId);
      if (!product?.active) throw new AppError('product_unavailable', 'This product is no longer on sale');
      return payment.startCardPayment(product, input, answer);
    },

    /**
     * The buyer's return: the license and the way on, or straight on with autoRedirect, except in
     * a frame (the overlay), where the receipt tells the seller's page instead.
     */
    async complete(
      productId: string,
      query: { order: string; key: string },
      options: { continue?: boolean; framed?: boolean } = {},
    ): Promise<PageOutcome> {
      const product = await findProduct(productId);
      if (!product) return unavailable();
      const brand = await brandOf(product);
      return framable(brand, await receiptOutcome(product, brand, query, options));
    },

    /** Mirror validate: whether a paid purchase matches a license and e-mail (mirror-validation.ts). */
    validate,
  };
}
