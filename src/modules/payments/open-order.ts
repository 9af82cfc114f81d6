import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import { v5 as uuidv5 } from 'uuid';
import type { Executor } from '../../platform/db/database.js';
import type { OrderRow } from '../../platform/db/schema.js';
import { AppError, notFound } from '../../platform/errors.js';
import type { IdempotentAnswer } from '../../platform/http/idempotency.js';
import { newId } from '../../platform/ids.js';
import { fromDecimalString, toMinorUnits } from '../../platform/money.js';
import type { PaymentServiceDeps } from './deps.js';
import type { PaymentIntentCreated } from './schemas.js';
import * as store from './store.js';

/** What opens an order: the product, the buyer, and the checkout's own references. */
export interface OrderRequest {
  productId: string;
  email: string;
  /** The checkout form's attempt id: the same attempt opens one order, however often sent. */
  checkoutKey?: string;
  /** Strict mirror mode's TOKEN, returned in the signed redirect. */
  mirrorToken?: string | null;
}

export type OrderOpening = ReturnType<typeof createOrderOpening>;

/** A card payment started: what createPaymentIntent answers. */
export type PaymentIntent = Static<typeof PaymentIntentCreated>;

/**
 * Opening a buyer's order for a product on sale: the card partner's payment intent here, the
 * crypto partner's charge through `openOrder` (crypto-payments.ts).
 */
export function createOrderOpening({
  db,
  clock,
  log,
  partner,
  products,
}: Pick<PaymentServiceDeps, 'db' | 'clock' | 'log' | 'partner' | 'products'>) {
  /** The product a buyer may pay for now, or the reason they cannot. */
  async function purchasable(productId: string) {
    const product = await products.forCheckout(productId);
    if (!product) throw notFound('Product');
    if (!product.active) throw new AppError('product_unavailable', 'This product is no longer on sale');
    if (product.billingType === 'recurring' && !product.partnerPriceIdRecurring) {
      throw new AppError(
        'product_unavailable',
        'This recurring product has no card partner price yet and cannot be bought by card',
      );
    }
    return product;
  }

  /**
   * Opens the order for a payment the partner makes with `pay` (called with the order id, the
   * partner's idempotency key). A checkout attempt already seen gives back its order instead.
   */
  async function openOrder(
    input: OrderRequest,
    provider: string,
    pay: (orderId: string, product: Awaited<ReturnType<typeof purchasable>>) => Promise<{ id: string }>,
    kept?: (trx: Executor, order: OrderRow) => Promise<void>,
  ): Promise<{ order: OrderRow; product: Awaited<ReturnType<typeof purchasable>> }> {
    const product = await purchasable(input.productId);
    // One attempt of one form with one partner names one order (the card and the crypto button
    // of the same form are two).
    const checkoutKey = input.checkoutKey ? `${provider}:${product.id}:${input.checkoutKey}` : null;
    const orderId = checkoutKey ? uuidv5(checkoutKey, CHECKOUT_ATTEMPT_NAMESPACE) : newId();
    if (checkoutKey) {
      const seen = await store.findOrder(db, orderId);
      if (seen) return { order: seen, product };
    }
    // The order id is the idempotency key: a retried request never opens a second payment.
    const payment = await pay(orderId, product);
    // With the idempotent request's answer, if any: the order and the answer commit together.
    const order = await db.transaction().execute(async (trx) => {
      const opened = await store.insertOrderOnce(trx, {
        id: orderId,
        transaction_id: `txn_${randomBytes(12).toString('hex')}`,
        user_id: product.userId,
        product_id: product.id,
        app_id: product.appId,
        email: input.email.trim(),
        // The terms the buyer is charged for, from the same read that priced the payment: the
        // order's fulfilment follows them, whatever the product says by then.
        amount: product.exactPrice,
        currency: product.currency,
        billing_type: product.billingType,
        billing_interval: product.billingType === 'recurring' ? product.interval : null,
        license_policy: JSON.stringify(product.licensePolicy),
        payment_provider: provider,
        partner_payment_id: payment.id,
        client_secret:
          'clientSecret' in payment ? String(payment.clientSecret) : randomBytes(24).toString('base64url'),
        checkout_key: checkoutKey,
        mirror_token: input.mirrorToken ?? null,
        created_at: clock.now(),
      });
      await kept?.(trx, opened);
      return opened;
    });
    log.info({ orderId: order.id, productId: product.id, provider }, 'order.created');
    return { order, product };
  }

  /** What the buyer's page needs of an opened order to confirm its payment. */
  const intentOf = (order: OrderRow) => ({
    orderId: order.id,
    transactionId: order.transaction_id,
    paymentIntentId: order.partner_payment_id,
    clientSecret: order.client_secret,
    amount: fromDecimalString(order.amount),
    currency: order.currency,
    paymentProvider: partner.name,
    testMode: partner.testMode,
  });

  return {
    purchasable,
    openOrder,

    /** The buyer starts paying for a product: a pending order and the partner's payment intent. */
    async createPaymentIntent(input: OrderRequest, answer?: IdempotentAnswer<PaymentIntent>) {
      const { order } = await openOrder(
        input,
        partner.name,
        (orderId, product) =>
          partner.createIntent({
            amountMinor: toMinorUnits(product.exactPrice, product.currency),
            currency: product.currency,
            idempotencyKey: orderId,
            email: input.email.trim(),
            keepCard: product.billingType === 'recurring',
          }),
        answer && ((trx, opened) => answer.keep(trx, intentOf(opened))),
      );
      return intentOf(order);
    },
  };
}

/** The namespace of checkout attempt order ids (fixed: one attempt always names one order). */
const CHECKOUT_ATTEMPT_NAMESPACE = '5b0c8a3e-5c1d-4f6e-9a57-3f2d1c0b9e84';
