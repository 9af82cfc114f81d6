import { AppError } from '../../platform/errors.js';
import type { IdempotentAnswer } from '../../platform/http/idempotency.js';
import type { BrandView } from '../brand/index.js';
import type { CheckoutProduct, CheckoutServiceDeps } from './deps.js';
import type { PageView } from './page-view.js';
import { checkoutPage, type PageOutcome } from './pages.js';
import { completePath } from './receipt.js';
import type { StrictMode } from './strict-mode.js';

/** The checkout form as posted. */
export interface CheckoutForm {
  email?: string;
  card?: string;
  payload?: string;
  attempt?: string;
  method?: 'card' | 'crypto';
}

/**
 * Paying for a product on sale: the plain form post (the sandbox's test card or the crypto
 * button, without JavaScript), and the intent Stripe Elements' embedded form confirms.
 */
export function createPaymentForm({
  payments,
  card,
  payUrl,
  strictMode,
  view,
}: Pick<CheckoutServiceDeps, 'payments' | 'card' | 'payUrl'> & { strictMode: StrictMode; view: PageView }) {
  // Partners (Stripe's return, the crypto page) get the absolute return address.
  const completeUrl = (productId: string, order: { id: string; clientSecret: string }) =>
    `${payUrl}${completePath(productId, order)}`;

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

  /** For Stripe Elements, for a product on sale: the intent is made when the buyer submits the embedded form. */
  async function startCardPayment(
    product: CheckoutProduct,
    input: { productId: string; email?: string; payload?: string; attempt: string },
    answer?: IdempotentAnswer<{ clientSecret: string; returnUrl: string }>,
  ) {
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
  }

  return { payOutcome, startCardPayment };
}
