import { randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { IdempotentAnswer } from '../../platform/http/idempotency.js';
import { iso } from '../../platform/http/schemas.js';
import { isUuid } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { toMinorUnits } from '../../platform/money.js';
import type { BrandService, BrandView } from '../brand/index.js';
import { normalizeLicenseKey } from '../licenses/index.js';
import type { PaymentService } from '../payments/index.js';
import type { ProductService } from '../products/index.js';
import type { Page } from './html.js';
import { openMirrorPayload, PayloadRefused } from './mirror-payload.js';
import { type RedirectParams, signedRedirectUrl } from './mirror-signature.js';
import {
  type CheckoutView,
  checkoutPage,
  type PageProduct,
  pendingPage,
  problemPage,
  successPage,
  trialStartedPage,
} from './pages.js';
import type { StartedTrial, Trials } from './trials.js';

type CheckoutProduct = NonNullable<Awaited<ReturnType<ProductService['forCheckout']>>>;

/**
 * What a route answers: a page with its status, or a redirect. A page of a seller who lists
 * overlay origins may be framed by those sites (frame-ancestors); every other page by none.
 */
export type PageOutcome =
  | { status: number; page: Page; frameAncestors?: readonly string[] }
  | { redirect: string };

export interface CheckoutForm {
  email?: string;
  card?: string;
  payload?: string;
  attempt?: string;
  method?: 'card' | 'crypto';
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;

export function createCheckoutService({
  clock,
  log,
  payments,
  products,
  brands,
  trials,
  card,
  cryptoConfigured,
  payUrl,
}: {
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
}) {
  const notVerified = <R extends { code: string; message: string }>(refusal: R) => {
    log.info({ code: refusal.code }, 'checkout.validate.not_verified');
    return { success: false as const, verified: false as const, status: 'not_verified' as const, ...refusal };
  };
  const findProduct = (id: string) => (isUuid(id) ? products.forCheckout(id) : Promise.resolve(null));
  const brandOf = (product: CheckoutProduct) => brands.forSeller(product.userId);
  /** The outcome, framable by the sites the seller listed when it is a page. */
  const framable = (brand: BrandView | null, outcome: PageOutcome): PageOutcome =>
    'page' in outcome && brand && brand.overlayOrigins.length > 0
      ? { ...outcome, frameAncestors: brand.overlayOrigins }
      : outcome;

  const unavailable = (): PageOutcome => ({
    status: 404,
    page: problemPage(
      'This product is not available',
      'The product you are trying to buy does not exist or is no longer on sale. Nothing was charged.',
    ),
  });

  /**
   * The strict-mode payload, opened (null without one); `refused` holds the problem page when it
   * does not hold.
   */
  async function strictMode(
    product: CheckoutProduct,
    payload: string | undefined,
  ): Promise<
    | { strict: { token: string; email: string } | null; refused?: never }
    | { refused: PageOutcome; strict?: never }
  > {
    if (payload === undefined || payload === '') return { strict: null };
    const secret = await products.callbackSecretOf(product.id);
    try {
      return { strict: openMirrorPayload(secret ?? '', product.id, payload, clock.now()) };
    } catch (error) {
      if (!(error instanceof PayloadRefused)) throw error;
      log.info({ productId: product.id, problem: error.problem }, 'checkout.payload.refused');
      const refused: PageOutcome = {
        status: 400,
        page:
          error.problem === 'stale'
            ? problemPage(
                'This checkout link has expired',
                'For your security, this link was only valid for a short time. Go back to the seller and start the purchase again. Nothing was charged.',
                product.cancelUrl,
              )
            : problemPage(
                'This checkout link is not valid',
                'The link was changed or was not made for this product. Go back to the seller and start the purchase again. Nothing was charged.',
                product.cancelUrl,
              ),
      };
      return { refused };
    }
  }

  function view(
    product: CheckoutProduct,
    brand: BrandView | null,
    strict: { token: string; email: string } | null,
    form: {
      email?: string;
      payload?: string;
      error?: string | null;
      trial?: { hwuid?: string | null; email?: string; error?: string | null };
    },
  ): CheckoutView {
    return {
      product: pageProduct(product),
      brand,
      testMode: card.kind === 'sandbox',
      card:
        product.billingType === 'recurring' && !product.partnerPriceIdRecurring
          ? {
              kind: 'unavailable',
              reason:
                'This subscription cannot be bought by card yet: the seller has not finished setting up its billing. Please contact the seller.',
            }
          : card.kind === 'stripe'
            ? { ...card, amountMinor: toMinorUnits(product.exactPrice, product.currency) }
            : card,
      crypto: cryptoConfigured && product.cryptoPayments && product.billingType === 'one_time',
      email: {
        value: strict?.email ?? form.email ?? '',
        locked: strict !== null,
        hidden: strict !== null && product.hideEmail,
      },
      payload: form.payload ?? null,
      // A fresh attempt id for every form shown: a double submit of one form opens one order.
      attempt: randomBytes(16).toString('base64url'),
      error: form.error ?? null,
      trial:
        product.trialDays === null
          ? null
          : {
              days: product.trialDays,
              hwuid: form.trial?.hwuid ?? null,
              email: form.trial?.email ?? '',
              error: form.trial?.error ?? null,
            },
    };
  }

  /** The trial form post's page, for a product on sale (see startTrial). */
  async function trialOutcome(
    product: CheckoutProduct,
    brand: BrandView | null,
    form: { email?: string; hwuid?: string },
  ): Promise<PageOutcome> {
    // The trial form of a product without a trial is a page that does not exist.
    if (product.trialDays === null)
      return {
        status: 404,
        page: problemPage('No free trial', 'This product does not offer a free trial.'),
      };
    const hwuid = form.hwuid?.trim() ? form.hwuid : null;
    const again = (status: number, error: string) => ({
      status,
      page: checkoutPage(view(product, brand, null, { trial: { hwuid, email: form.email, error } })),
    });
    const email = (form.email ?? '').trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
      return again(422, 'Enter the e-mail address where you want to receive your trial key.');
    try {
      const trial = await trials.start({ productId: product.id, email, hwuid });
      return {
        status: 200,
        page: trialStartedPage({
          product: pageProduct(product),
          brand,
          licenseKey: trial.licenseKey,
          email: trial.email,
          days: trial.trialDays,
          endsAt: trial.expiresAt,
        }),
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (['trial_already_used', 'license_already_owned', 'product_unavailable'].includes(error.code))
        return again(409, `${error.message}.`);
      throw error;
    }
  }

  /** The sandbox's test card or the crypto button, for a product on sale. */
  async function payOutcome(
    product: CheckoutProduct,
    brand: BrandView | null,
    form: CheckoutForm,
  ): Promise<PageOutcome> {
    const { strict, refused } = await strictMode(product, form.payload);
    if (refused) return refused;
    const again = (status: number, error: string) => ({
      status,
      page: checkoutPage(view(product, brand, strict, { email: form.email, payload: form.payload, error })),
    });
    const email = (strict?.email ?? form.email ?? '').trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
      return again(422, 'Enter the e-mail address where you want to receive your license.');
    const request = {
      productId: product.id,
      email,
      checkoutKey: form.attempt && /^[A-Za-z0-9_-]{16,64}$/.test(form.attempt) ? form.attempt : undefined,
      mirrorToken: strict?.token ?? null,
    };
    try {
      if (form.method === 'crypto') {
        const started = await payments.startCryptoPayment(request, (order) => ({
          redirectUrl: completeUrl(product.id, order),
          cancelUrl: `${payUrl}/checkout/${product.id}`,
        }));
        return { redirect: started.hostedUrl };
      }
      if (card.kind !== 'sandbox')
        return again(422, 'Card payments on this page need JavaScript enabled in your browser.');
      if (!form.card?.trim()) return again(422, 'Enter your card number.');
      const intent = await payments.createPaymentIntent(request);
      const confirmed = await payments.confirmPayment({
        paymentIntentId: intent.paymentIntentId,
        clientSecret: intent.clientSecret,
        testCard: form.card,
      });
      if (confirmed.transactionStatus === 'rejected' || confirmed.transactionStatus === 'canceled')
        return again(
          402,
          `${confirmed.statusReason || 'The payment failed.'} Nothing was charged; you can try again.`,
        );
      return {
        redirect: completePath(product.id, { id: intent.orderId, clientSecret: intent.clientSecret }),
      };
    } catch (error) {
      if (error instanceof AppError && error.code === 'product_unavailable') return again(409, error.message);
      throw error;
    }
  }

  /** The receipt, or why there is none, for the order the return address names. */
  async function receiptOutcome(
    product: CheckoutProduct,
    brand: BrandView | null,
    query: { order: string; key: string },
    options: { continue?: boolean; framed?: boolean },
  ): Promise<PageOutcome> {
    const productId = product.id;
    let receipt: Awaited<ReturnType<typeof payments.checkoutReceipt>>;
    if (!isUuid(query.order))
      return { status: 404, page: problemPage('Payment not found', 'This payment link is not valid.') };
    try {
      receipt = await payments.checkoutReceipt({ orderId: query.order, clientSecret: query.key });
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found')
        return { status: 404, page: problemPage('Payment not found', 'This payment link is not valid.') };
      throw error;
    }
    const { order, licenseKey } = receipt;
    if (order.product_id !== productId)
      return { status: 404, page: problemPage('Payment not found', 'This payment link is not valid.') };
    if (order.status !== 'paid' || !licenseKey) {
      if (order.status === 'pending')
        return {
          status: 200,
          page: pendingPage(
            pageProduct(product),
            completePath(productId, { id: order.id, clientSecret: query.key }),
            brand,
          ),
        };
      return {
        status: 402,
        page: problemPage(
          'The payment did not go through',
          `${order.status_reason || 'The payment was not completed.'} Nothing was charged.`,
          // A strict-mode purchase starts again at the seller, who makes a fresh payload.
          order.mirror_token !== null ? product.cancelUrl : `/checkout/${productId}`,
        ),
      };
    }
    const next = await continueUrl(product, order, licenseKey);
    if (next && ((product.autoRedirect && !options.framed) || options.continue)) return { redirect: next };
    return {
      status: 200,
      page: successPage({
        product: pageProduct(product),
        brand,
        licenseKey,
        email: product.hideEmail ? null : order.email,
        transactionId: order.transaction_id,
        // Signed when followed, so a buyer who lingers on this page still arrives with a fresh ts.
        continueUrl: next
          ? `/checkout/${productId}/continue?order=${order.id}&key=${encodeURIComponent(query.key)}`
          : null,
      }),
    };
  }

  /** successUrl with the signed parameters, or null when the product has none. */
  async function continueUrl(
    product: CheckoutProduct,
    order: {
      transaction_id: string;
      email: string;
      mirror_token: string | null;
      subscription_id: string | null;
    },
    licenseKey: string,
  ): Promise<string | null> {
    if (!product.successUrl) return null;
    const secret = await products.callbackSecretOf(product.id);
    if (!secret) return null;
    const params: RedirectParams = {
      license: licenseKey,
      transaction_id: order.transaction_id,
      product_id: product.id,
      status: 'successful',
      ts: String(Math.floor(clock.now().getTime() / 1000)),
      ...(product.hideEmail ? {} : { email: order.email }),
      ...(order.subscription_id ? { subscription_id: order.subscription_id } : {}),
      ...(order.mirror_token !== null ? { token: order.mirror_token } : {}),
    };
    return signedRedirectUrl(product.successUrl, secret, params);
  }

  // Relative on our own pages; partners (Stripe's return, the crypto page) get the absolute one.
  const completePath = (productId: string, order: { id: string; clientSecret: string }) =>
    `/checkout/${productId}/complete?order=${order.id}&key=${encodeURIComponent(order.clientSecret)}`;
  const completeUrl = (productId: string, order: { id: string; clientSecret: string }) =>
    `${payUrl}${completePath(productId, order)}`;

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
      return framable(brand, await payOutcome(product, brand, form));
    },

    /** For Stripe Elements: the intent is made when the buyer submits the embedded form. */
    async startCardPayment(
      input: { productId: string; email?: string; payload?: string; attempt: string },
      answer?: IdempotentAnswer<{ clientSecret: string; returnUrl: string }>,
    ) {
      const product = await findProduct(input.productId);
      if (!product?.active) throw new AppError('product_unavailable', 'This product is no longer on sale');
      const { strict, refused } = await strictMode(product, input.payload);
      if (refused)
        throw new AppError('bad_request', 'The checkout link is not valid or has expired', [
          { field: 'payload', message: 'is not valid for this product, or has expired' },
        ]);
      const email = strict?.email ?? input.email;
      if (!email)
        throw new AppError('validation_failed', 'email: is required', [
          { field: 'email', message: 'is required' },
        ]);
      const started = (intent: { orderId: string; clientSecret: string }) => ({
        clientSecret: intent.clientSecret,
        returnUrl: completeUrl(input.productId, { id: intent.orderId, clientSecret: intent.clientSecret }),
      });
      const intent = await payments.createPaymentIntent(
        { productId: input.productId, email, checkoutKey: input.attempt, mirrorToken: strict?.token ?? null },
        answer && { keep: (trx, opened) => answer.keep(trx, started(opened)) },
      );
      return started(intent);
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

    /**
     * Mirror validate: a paid purchase matching the license and e-mail, whose license still
     * grants access. Every failure to match gets the same answer, so a caller learns nothing about
     * which half was wrong; only a caller who proved both learns that the license stopped.
     */
    async validate(input: { license: string; email: string }) {
      const key = normalizeLicenseKey(input.license);
      const found = key ? await payments.findPaidPurchase(key, input.email) : null;
      if (!found) return notVerified(NO_PURCHASE);
      if (found.licenseStatus === 'trial') return notVerified(NO_PURCHASE);
      if (found.licenseStatus !== 'active') return notVerified(LICENSE_REFUSALS[found.licenseStatus]);
      const { order } = found;
      return {
        success: true as const,
        verified: true as const,
        status: 'successful' as const,
        purchase: {
          id: order.id,
          productId: order.product_id,
          createdAt: iso(order.created_at),
          transactionId: order.transaction_id,
          subscriptionId: order.subscription_id,
        },
      };
    },
  };
}

const NO_PURCHASE = {
  code: 'purchase_not_verified',
  message: 'No paid purchase matches this license and e-mail',
} as const;

/** Why a paid purchase no longer validates: its license stopped (the codes verification uses). */
const LICENSE_REFUSALS = {
  revoked: { code: 'license_revoked', message: 'The license of this purchase was revoked' },
  suspended: { code: 'license_suspended', message: 'The license of this purchase is suspended' },
  expired: { code: 'license_expired', message: 'The license of this purchase has expired' },
} as const;

function pageProduct(product: CheckoutProduct): PageProduct {
  return {
    id: product.id,
    name: product.name,
    description: product.description,
    price: product.exactPrice,
    currency: product.currency,
    billingType: product.billingType,
    interval: product.interval,
    cancelUrl: product.cancelUrl,
    links: product.links,
  };
}
