import type { CheckoutProduct, CheckoutServiceDeps } from './deps.js';
import { openMirrorPayload, PayloadRefused } from './mirror-payload.js';
import { type PageOutcome, problemPage } from './pages.js';

/** What a strict-mode payload holds for the checkout: the seller's token and the buyer's e-mail. */
export interface StrictPurchase {
  token: string;
  email: string;
}

export type StrictMode = ReturnType<typeof createStrictMode>;

/**
 * The strict-mode payload, opened (null without one); `refused` holds the problem page when it
 * does not hold.
 */
export function createStrictMode({
  clock,
  log,
  products,
}: Pick<CheckoutServiceDeps, 'clock' | 'log' | 'products'>) {
  return async function strictMode(
    product: CheckoutProduct,
    payload: string | undefined,
  ): Promise<{ strict: StrictPurchase | null; refused?: never } | { refused: PageOutcome; strict?: never }> {
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
  };
}
