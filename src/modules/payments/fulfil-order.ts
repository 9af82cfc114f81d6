import type { OrderRow } from '../../platform/db/schema.js';
import { AppError, notFound } from '../../platform/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { sameSecret } from '../../platform/secrets.js';
import { effectiveStatus } from '../licenses/index.js';
import { policyExpiry, storedPolicy } from '../products/index.js';
import type { PaymentServiceDeps } from './deps.js';
import { recordMerchantEvent, recordOrderPaid, recordTrialConverted } from './order-events.js';
import type { SavedCard } from './partner.js';
import * as store from './store.js';

/** A payment as its partner sees it now, whichever partner took it. */
interface PaymentState {
  outcome: 'paid' | 'canceled' | 'failed' | 'pending';
  failureMessage: string | null;
  savedCard: SavedCard | null;
}

export type Fulfilment = ReturnType<typeof createFulfilment>;

/** An open order brought in line with its partner's payment: paid, canceled or rejected. */
export function createFulfilment({
  db,
  clock,
  log,
  partner,
  crypto,
  products,
  licenses,
  openSubscription,
}: Pick<
  PaymentServiceDeps,
  'db' | 'clock' | 'log' | 'partner' | 'crypto' | 'products' | 'licenses' | 'openSubscription'
>) {
  async function readPayment(order: OrderRow): Promise<PaymentState | null> {
    if (crypto && order.payment_provider === crypto.name) {
      const charge = await crypto.retrieveCharge(order.partner_payment_id);
      if (!charge) return null;
      // A failed crypto charge can still resolve later: rejected is not final for it.
      return {
        outcome: charge.status === 'confirmed' ? 'paid' : charge.status === 'pending' ? 'pending' : 'failed',
        failureMessage:
          charge.status === 'expired'
            ? 'The crypto payment expired before it was completed'
            : 'The crypto payment did not complete',
        savedCard: null,
      };
    }
    if (order.payment_provider !== partner.name) return null;
    const intent = await partner.retrieveIntent(order.partner_payment_id);
    if (!intent) return null;
    return {
      outcome:
        intent.status === 'succeeded'
          ? 'paid'
          : intent.status === 'canceled'
            ? 'canceled'
            : intent.failureMessage
              ? 'failed'
              : 'pending',
      failureMessage: intent.failureMessage,
      savedCard: intent.savedCard,
    };
  }

  /**
   * Brings the order in line with the partner's record of the payment. Paid issues the license
   * (and, for a recurring order, opens the subscription) in the same transaction as the order's
   * move to paid, which only one caller can make: the confirm route and a partner webhook
   * arriving together issue one license. What the buyer gets follows the order's terms, not the
   * product as it is now. A trial of the buyer's ends for the new license, whose key the buyer
   * then gets by e-mail too.
   */
  async function fulfil(order: OrderRow): Promise<{ order: OrderRow; licenseKey: string | null }> {
    // A renewal order buys no license: its subscription's renewal settles it (subscriptions).
    if (order.renewal_period_end !== null) return { order, licenseKey: null };
    const payment = await readPayment(order);
    const now = clock.now();
    if (payment?.outcome === 'paid') {
      // For its name and the seller's delivery settings only.
      const product = await products.forCheckout(order.product_id);
      const result = await db.transaction().execute(async (trx) => {
        const paid = await store.moveOrder(trx, order.id, 'paid', ['pending', 'rejected'], {
          reason: '',
          now,
          paid: true,
        });
        if (!paid) return null;
        const interval = paid.billing_type === 'recurring' ? paid.billing_interval : null;
        const period = interval ? { interval, end: addInterval(now, interval) } : null;
        // The policy the order was opened with (an order from before policies: none, unlimited).
        const policy = storedPolicy(paid.license_policy);
        const { license, endedTrials } = await licenses.issueForPurchase(trx, {
          appId: paid.app_id,
          userId: paid.user_id,
          productId: paid.product_id,
          email: paid.email,
          policy,
          expiresAt: period?.end ?? policyExpiry(policy, now),
          now,
        });
        const subscription =
          period && payment.savedCard
            ? await openSubscription(trx, {
                order: paid,
                licenseId: license.id,
                savedCard: payment.savedCard,
                interval: period.interval,
                currentPeriodEnd: period.end,
                now,
              })
            : null;
        await store.queuePurchaseNotices(trx, paid, {
          licenseKey: license.key,
          licenseId: license.id,
          productName: product?.name ?? '',
          // The trial key in the buyer's software just stopped: the new key goes to them, on any tier.
          sendToBuyer: (product?.sendLicenseToCustomer ?? false) || endedTrials.length > 0,
          replacesTrial: endedTrials.length > 0,
          copiesTo: product?.licenseEmails ?? [],
          now,
        });
        const linked = await store.linkLicense(trx, paid.id, license.id, subscription?.id ?? null);
        await recordMerchantEvent(trx, 'payment.succeeded', linked, now, { licenseKey: license.key });
        if (subscription && period)
          await recordMerchantEvent(trx, 'subscription.created', linked, now, {
            currentPeriodEnd: iso(period.end),
          });
        await recordOrderPaid(trx, linked, now);
        for (const trial of endedTrials) await recordTrialConverted(trx, trial, linked, license.id, now);
        return { order: linked, licenseKey: license.key };
      });
      if (result) {
        log.info({ orderId: order.id, licenseId: result.order.license_id }, 'order.paid');
        return result;
      }
    } else if (payment?.outcome === 'canceled') {
      await store.moveOrder(db, order.id, 'canceled', ['pending'], {
        reason: 'The payment was canceled',
        now,
      });
    } else if (payment?.outcome === 'failed') {
      await reject(order, payment.failureMessage ?? 'The payment failed', now);
    }
    const current =
      (await store.findByPartnerPayment(db, order.payment_provider, order.partner_payment_id)) ?? order;
    return { order: current, licenseKey: null };
  }

  /** A failed attempt rejects the transaction; payment.failed goes out once per failure. */
  async function reject(order: OrderRow, reason: string, now: Date) {
    await db.transaction().execute(async (trx) => {
      const moved = await store.moveOrder(trx, order.id, 'rejected', ['pending'], { reason, now });
      if (moved) await recordMerchantEvent(trx, 'payment.failed', moved, now, { reason });
      else await store.moveOrder(trx, order.id, 'rejected', ['rejected'], { reason, now });
    });
  }

  return {
    fulfil,

    /**
     * After the buyer paid at the partner: re-reads the payment there (never the buyer's word)
     * and fulfils. The client secret proves the caller is the buyer; the license key is theirs.
     */
    async confirmPayment(input: { paymentIntentId: string; clientSecret: string; testCard?: string }) {
      const order = await store.findByPartnerPayment(db, partner.name, input.paymentIntentId);
      if (!order || !sameSecret(order.client_secret, input.clientSecret)) throw notFound('Payment');
      if (input.testCard !== undefined) {
        if (!('pay' in partner))
          throw new AppError('validation_failed', 'testCard is only accepted in sandbox mode', [
            { field: 'testCard', message: 'sandbox only' },
          ]);
        await partner.pay(order.partner_payment_id, input.testCard);
      }
      const { order: current, licenseKey } = await fulfil(order);
      return {
        orderId: current.id,
        transactionId: current.transaction_id,
        transactionStatus: current.status,
        statusReason: current.status_reason,
        paymentProvider: current.payment_provider,
        licenseKey,
      };
    },

    /**
     * The buyer back from paying (the hosted page's return address). The secret the buyer was
     * given proves the order is theirs; the answer carries the license key once paid.
     */
    async checkoutReceipt(input: { orderId: string; clientSecret: string }) {
      const order = await store.findOrder(db, input.orderId);
      if (!order || !sameSecret(order.client_secret, input.clientSecret)) throw notFound('Payment');
      const { order: current } = order.status === 'paid' ? { order } : await fulfil(order);
      return {
        order: current,
        licenseKey:
          current.status === 'paid' && current.license_id ? await licenses.keyOf(current.license_id) : null,
      };
    },

    /**
     * The paid purchase a license and e-mail prove (mirror validate) with its license's status
     * now (an expiry that has passed counts as expired), or null.
     */
    async findPaidPurchase(licenseKey: string, email: string) {
      const found = await store.findPaidPurchase(db, licenseKey, email);
      if (!found) return null;
      const { license_status, license_expires_at, ...order } = found;
      return { order, licenseStatus: effectiveStatus(license_status, license_expires_at, clock.now()) };
    },
  };
}

export function addInterval(from: Date, interval: 'month' | 'year'): Date {
  const next = new Date(from);
  if (interval === 'year') next.setUTCFullYear(next.getUTCFullYear() + 1);
  else next.setUTCMonth(next.getUTCMonth() + 1);
  return next;
}
