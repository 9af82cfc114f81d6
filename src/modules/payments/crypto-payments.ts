import { randomBytes } from 'node:crypto';
import { AppError, notFound } from '../../platform/errors.js';
import { fromMinorUnits, toMinorUnits } from '../../platform/money.js';
import type { PaymentServiceDeps } from './deps.js';
import type { Fulfilment } from './fulfil-order.js';
import type { OrderOpening, OrderRequest } from './open-order.js';
import * as store from './store.js';

/** The crypto partner's payments: a charge on its hosted page, and its signed callback. */
export function createCryptoPayments({
  db,
  log,
  crypto,
  opening: { purchasable, openOrder },
  fulfilment: { fulfil },
}: Pick<PaymentServiceDeps, 'db' | 'log' | 'crypto'> & {
  opening: Pick<OrderOpening, 'purchasable' | 'openOrder'>;
  fulfilment: Pick<Fulfilment, 'fulfil'>;
}) {
  return {
    /**
     * The buyer chose crypto: a pending order and a charge at the crypto partner, whose hosted
     * page the buyer is sent to. Only for one-time products whose seller's tier allows crypto.
     */
    async startCryptoPayment(
      input: OrderRequest,
      urls: (order: { id: string; clientSecret: string }) => { redirectUrl: string; cancelUrl: string },
    ) {
      const cryptoPartner = crypto;
      const product = await purchasable(input.productId);
      if (!cryptoPartner || !product.cryptoPayments || product.billingType !== 'one_time')
        throw new AppError('product_unavailable', 'This product cannot be paid with crypto');
      const secret = randomBytes(24).toString('base64url');
      let hostedUrl = '';
      const { order } = await openOrder(input, cryptoPartner.name, async (orderId) => {
        const charge = await cryptoPartner.createCharge({
          orderId,
          // Prices are stored with four decimals ("19.9900"); the partner takes the currency's own.
          amount: fromMinorUnits(toMinorUnits(product.exactPrice, product.currency), product.currency),
          currency: product.currency,
          name: product.name,
          description: product.description.slice(0, 200),
          email: input.email.trim(),
          ...urls({ id: orderId, clientSecret: secret }),
        });
        hostedUrl = charge.hostedUrl;
        return { id: charge.id, clientSecret: secret };
      });
      if (!hostedUrl) {
        // A repeated attempt: the charge already exists at the partner.
        hostedUrl = (await cryptoPartner.retrieveCharge(order.partner_payment_id))?.hostedUrl ?? '';
      }
      return { orderId: order.id, hostedUrl };
    },

    /** The crypto partner's signed callback: re-read the charge there, then fulfil. */
    async receiveCryptoEvent(rawBody: string, signature: string | undefined) {
      if (!crypto) throw notFound('Crypto partner webhook');
      let event: { id: string; type: string; chargeId: string };
      try {
        event = crypto.verifyEvent(rawBody, signature);
      } catch {
        throw new AppError('bad_request', 'The crypto partner signature does not match');
      }
      const order = await store.findByPartnerPayment(db, crypto.name, event.chargeId);
      if (order) await fulfil(order);
      log.info({ eventId: event.id, type: event.type }, 'payment.crypto_event.handled');
      return { received: true };
    },
  };
}
