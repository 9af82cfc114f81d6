import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import type { NamedLocks } from '../../platform/db/named-lock.js';
import type { OrderRow, SubscriptionRow } from '../../platform/db/schema.js';
import { AppError, invalidField } from '../../platform/errors.js';
import type { IdempotentAnswer } from '../../platform/http/idempotency.js';
import { iso, isoOrNull } from '../../platform/http/schemas.js';
import { isUuid, newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import {
  currencyExponent,
  decimalPlaces,
  fromDecimalString,
  toDecimalString,
  toMinorUnits,
} from '../../platform/money.js';
import { sameSecret } from '../../platform/secrets.js';
import { recordEvent } from '../events/index.js';
import type { LicenseService } from '../licenses/index.js';
import {
  addInterval,
  moveOrder,
  type PaymentPartner,
  recordMerchantEvent,
  recordOrderPaid,
} from '../payments/index.js';
import type { RenewalCharged } from './schemas.js';
import * as store from './store.js';
import { ownerOf, recordSubscriptionEvent, subscriptionData } from './subscription-events.js';

/** A renewal may be charged from this long before the period ends (and any time after). */
export const RENEWAL_WINDOW_MS = 7 * 24 * 60 * 60_000;

/** A renewal sent again this soon after it was paid gets the paid charge back, not an error. */
export const RENEWAL_REPLAY_MS = 24 * 60 * 60_000;

export type Renewals = ReturnType<typeof createRenewals>;

type Charged = IdempotentAnswer<Static<typeof RenewalCharged>>;

/**
 * Renewal charges sent by the seller's backend to the checkout host. One charge per period: the
 * period's live order is unique in the database and is the partner's idempotency key, so
 * duplicates — sequential or concurrent — share one charge; the period moves once. A charge
 * holds the subscription's lock from reading its status to recording the outcome, as a cancel
 * does, so no renewal is charged or recorded once a cancel has committed.
 */
export function createRenewals({
  db,
  clock,
  log,
  partner,
  licenses,
  locks,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  partner: Pick<PaymentPartner, 'name' | 'chargeSavedCard'>;
  licenses: Pick<LicenseService, 'extendForRenewal'>;
  locks: Pick<NamedLocks, 'hold'>;
}) {
  async function answer(db: Executor, order: OrderRow, duplicate: boolean) {
    const subscription = await store.findSubscription(db, order.subscription_id as string);
    return {
      success: true as const,
      duplicate,
      status: 'paid' as const,
      subscriptionId: subscription.id,
      orderId: order.id,
      transactionId: order.transaction_id,
      amount: fromDecimalString(order.amount),
      currency: order.currency,
      currentPeriodEnd: iso(subscription.current_period_end),
      licenseExpiresAt: isoOrNull(subscription.license_id ? subscription.current_period_end : null),
    };
  }

  /**
   * Pays the period: the order, the period and the license expiry move together, once, with the
   * idempotent request's answer.
   */
  async function settlePaid(db: Db, order: OrderRow, subscription: SubscriptionRow, idempotent?: Charged) {
    const now = clock.now();
    const periodEnd = subscription.current_period_end;
    const base = periodEnd.getTime() > now.getTime() ? periodEnd : now;
    const nextEnd = addInterval(base, subscription.interval);
    return db.transaction().execute(async (trx) => {
      const paid = await moveOrder(trx, order.id, 'paid', ['pending'], { reason: '', now, paid: true });
      if (!paid) return false;
      const moved = await store.movePeriod(trx, subscription.id, periodEnd, nextEnd, now);
      if (subscription.license_id)
        await licenses.extendForRenewal(trx, subscription.license_id, nextEnd, now);
      await recordMerchantEvent(trx, 'payment.succeeded', paid, now, { renewal: true });
      await recordOrderPaid(trx, paid, now);
      if (moved) {
        await recordSubscriptionEvent(trx, 'subscription.renewed', moved, now, {
          orderId: paid.id,
          transactionId: paid.transaction_id,
          amount: fromDecimalString(paid.amount),
          currency: paid.currency,
        });
        await recordEvent(trx, {
          ...ownerOf(moved),
          occurredAt: now,
          type: 'subscription.renewed',
          data: {
            ...subscriptionData(moved),
            orderId: paid.id,
            transactionId: paid.transaction_id,
            amount: fromDecimalString(paid.amount),
            previousPeriodEnd: iso(periodEnd),
          },
        });
      }
      if (idempotent) await idempotent.keep(trx, await answer(trx, paid, false));
      return true;
    });
  }

  /** The charge itself, under the subscription's lock: what it reads stays true until it is recorded. */
  async function chargeHeld(
    db: Db,
    subscriptionId: string,
    input: { amount: number; currency: string },
    idempotent?: Charged,
  ) {
    const subscription = await store.findSubscription(db, subscriptionId);
    if (subscription.status !== 'active')
      throw new AppError('subscription_inactive', 'This subscription is canceled; it cannot be renewed');
    const currency = input.currency.toUpperCase();
    if (currency !== subscription.currency)
      throw new AppError(
        'currency_mismatch',
        `currency: must be ${subscription.currency}, the subscription's`,
        [{ field: 'currency', message: `must be ${subscription.currency}, the subscription's currency` }],
      );
    if (decimalPlaces(input.amount) > (currencyExponent(currency) ?? 0))
      throw invalidField('amount', `has more decimals than ${currency} allows`);

    const now = clock.now();
    const periodEnd = subscription.current_period_end;
    let order = await store.findRenewalOrder(db, subscription.id, periodEnd);
    if (!order) {
      // A repeat of a renewal that just moved the period (a retry, or a racing duplicate).
      const recent = await store.latestPaidRenewal(db, subscription.id);
      if (recent?.paid_at && now.getTime() - recent.paid_at.getTime() < RENEWAL_REPLAY_MS)
        return answer(db, recent, true);
      if (periodEnd.getTime() - now.getTime() > RENEWAL_WINDOW_MS)
        throw new AppError(
          'renewal_not_due',
          `The current period is paid until ${iso(periodEnd)}; its renewal can be charged from 7 days before`,
          [{ field: 'currentPeriodEnd', message: iso(periodEnd) }],
        );
      const id = newId();
      order = await store.openRenewalOrder(db, {
        id,
        transaction_id: `txn_${randomBytes(12).toString('hex')}`,
        user_id: subscription.user_id,
        product_id: subscription.product_id,
        app_id: subscription.app_id,
        license_id: subscription.license_id,
        email: subscription.email,
        amount: toDecimalString(input.amount, currency),
        currency,
        payment_provider: subscription.payment_provider,
        // Replaced by the partner's charge id once it exists.
        partner_payment_id: `renewal:${id}`,
        client_secret: randomBytes(24).toString('base64url'),
        subscription_id: subscription.id,
        renewal_period_end: periodEnd,
        created_at: now,
      });
    }
    if (order.status === 'paid') return answer(db, order, true);

    // The order id is the partner's idempotency key: every request for this period gets the
    // partner's one charge back, never a second one.
    const intent = await partner.chargeSavedCard({
      card: {
        customerId: subscription.partner_subscription_id,
        paymentMethodId: subscription.partner_payment_method,
      },
      amountMinor: toMinorUnits(order.amount, order.currency),
      currency: order.currency,
      idempotencyKey: order.id,
    });
    await store.setPartnerPayment(db, order.id, intent.id);
    if (intent.status === 'succeeded') {
      const settledHere = await settlePaid(db, order, subscription, idempotent);
      const current = (await store.findRenewalOrder(db, subscription.id, periodEnd)) ?? order;
      if (settledHere)
        log.info({ subscriptionId: subscription.id, orderId: order.id }, 'subscription.renewed');
      return answer(db, current, !settledHere);
    }
    const reason = intent.failureMessage ?? 'The card could not be charged without the buyer';
    await db.transaction().execute(async (trx) => {
      const declinedAt = clock.now();
      const rejected = await moveOrder(trx, order.id, 'rejected', ['pending'], { reason, now: declinedAt });
      if (!rejected) return;
      await recordMerchantEvent(trx, 'payment.failed', rejected, declinedAt, { reason, renewal: true });
      // Past due from the period's first decline on; a retry declined again changes nothing more.
      if ((await store.countDeclinedRenewals(trx, subscription.id, periodEnd)) === 1)
        await recordEvent(trx, {
          ...ownerOf(subscription),
          occurredAt: declinedAt,
          type: 'subscription.past_due',
          data: {
            ...subscriptionData(subscription),
            orderId: rejected.id,
            transactionId: rejected.transaction_id,
            amount: fromDecimalString(rejected.amount),
            reason,
          },
        });
    });
    log.info({ subscriptionId: subscription.id, orderId: order.id }, 'subscription.renewal.declined');
    throw new AppError('payment_declined', reason, [
      { field: 'transactionId', message: order.transaction_id },
    ]);
  }

  return {
    async charge(
      input: {
        subscriptionId: string;
        amount: number;
        currency: string;
        callbackSecret: string;
      },
      idempotent?: Charged,
    ) {
      const found = isUuid(input.subscriptionId)
        ? await store.findForRenewal(db, input.subscriptionId)
        : undefined;
      // One answer for an unknown subscription and a wrong secret: neither is hinted at.
      if (!sameSecret(found?.callbackSecret ?? '', input.callbackSecret) || !found)
        throw new AppError('invalid_callback_secret', 'The subscription and callback secret do not match');
      return locks.hold(`subscription:${found.subscription.id}`, (db) =>
        chargeHeld(db, found.subscription.id, input, idempotent),
      );
    },
  };
}
