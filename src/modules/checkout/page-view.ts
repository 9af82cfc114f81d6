import { randomBytes } from 'node:crypto';
import { toMinorUnits } from '../../platform/money.js';
import type { BrandView } from '../brand/index.js';
import type { CheckoutProduct, CheckoutServiceDeps } from './deps.js';
import { type CheckoutView, type PageOutcome, type PageProduct, problemPage } from './pages.js';
import type { StrictPurchase } from './strict-mode.js';

export type PageView = ReturnType<typeof createPageView>;

/**
 * The checkout page's view of a product on sale: how it can be paid here (the card partner,
 * crypto), the e-mail a strict-mode purchase fixes, the form's own attempt id and the trial.
 */
export function createPageView({
  card,
  cryptoConfigured,
}: Pick<CheckoutServiceDeps, 'card' | 'cryptoConfigured'>) {
  return function view(
    product: CheckoutProduct,
    brand: BrandView | null,
    strict: StrictPurchase | null,
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
  };
}

/** The outcome, framable by the sites the seller listed when it is a page. */
export function framable(brand: BrandView | null, outcome: PageOutcome): PageOutcome {
  return 'page' in outcome && brand && brand.overlayOrigins.length > 0
    ? { ...outcome, frameAncestors: brand.overlayOrigins }
    : outcome;
}

/** The page of a product that does not exist or is not on sale. */
export function unavailable(): PageOutcome {
  return {
    status: 404,
    page: problemPage(
      'This product is not available',
      'The product you are trying to buy does not exist or is no longer on sale. Nothing was charged.',
    ),
  };
}

/** What the pages show of the product. */
export function pageProduct(product: CheckoutProduct): PageProduct {
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
