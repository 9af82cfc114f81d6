import { AppError } from '../../platform/errors.js';
import { isUuid } from '../../platform/ids.js';
import type { BrandView } from '../brand/index.js';
import type { CheckoutProduct, CheckoutServiceDeps } from './deps.js';
import { type RedirectParams, signedRedirectUrl } from './mirror-signature.js';
import { pageProduct } from './page-view.js';
import { type PageOutcome, pendingPage, problemPage, successPage } from './pages.js';

/** The buyer's return address after paying, relative as our own pages link it. */
export const completePath = (productId: string, order: { id: string; clientSecret: string }) =>
  `/checkout/${productId}/complete?order=${order.id}&key=${encodeURIComponent(order.clientSecret)}`;

/**
 * The buyer's return: the receipt with the license and the way on to the seller's success URL
 * (signed), a page that waits for a pending payment, or why there is none.
 */
export function createReceipt({
  clock,
  payments,
  products,
}: Pick<CheckoutServiceDeps, 'clock' | 'payments' | 'products'>) {
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

  return receiptOutcome;
}
