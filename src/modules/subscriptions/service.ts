import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { NamedLocks } from '../../platform/db/named-lock.js';
import type { SubscriptionRow, SubscriptionStatus } from '../../platform/db/schema.js';
import { AppError } from '../../platform/errors.js';
import type { IdempotentAnswer } from '../../platform/http/idempotency.js';
import { apiKeyAppId, type Principal, visibleTo } from '../../platform/http/principal.js';
import { iso, isoOrNull, type Page } from '../../platform/http/schemas.js';
import type { Log } from '../../platform/log.js';
import { recordEvent } from '../events/index.js';
import type { PaymentPartner } from '../payments/index.js';
import * as store from './store.js';
import { ownerOf, recordSubscriptionEvent, subscriptionData } from './subscription-events.js';

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;

export function createSubscriptionService({
  db,
  clock,
  log,
  partner,
  locks,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  partner: Pick<PaymentPartner, 'name' | 'releaseSavedCard'>;
  locks: Pick<NamedLocks, 'hold'>;
}) {
  return {
    async list(
      principal: Principal,
      filter: { status?: SubscriptionStatus; productId?: string },
      page: Page,
    ) {
      const { rows, total } = await store.listSubscriptions(
        db,
        principal.userId,
        { ...filter, appId: apiKeyAppId(principal) },
        page,
      );
      return { subscriptions: rows.map(toSubscription), total, ...page };
    },

    /**
     * Cancels an active subscription: no renewal can be charged any more, the card is released
     * at the partner, and subscription.canceled goes to the merchant webhook and the seller's. The license keeps
     * its expiry (the end of the paid period). A second cancel answers 409. It waits for a
     * renewal charge in progress (under the same lock), so none is recorded after it.
     */
    async cancel(principal: Principal, id: string, answer?: IdempotentAnswer<Canceled>) {
      const owned = visibleTo(
        principal,
        await store.findOwnedSubscription(db, principal.userId, id),
        'Subscription',
      );
      return cancelOwned(owned, answer);
    },

    /**
     * The same cancel for a subscription the caller has already matched to its buyer (the
     * buyer portal): subscription.canceled to the merchant webhook, 409 when already canceled.
     */
    async cancelForBuyer(id: string) {
      return cancelOwned(await store.findSubscription(db, id));
    },
  };

  async function cancelOwned(owned: SubscriptionRow, answer?: IdempotentAnswer<Canceled>) {
    const id = owned.id;
    // The row's own id names the lock, as the renewal charge does, whatever the URL's spelling.
    const { canceled, now } = await locks.hold(`subscription:${owned.id}`, async (held) => {
      const now = clock.now();
      const canceled = await held.transaction().execute(async (trx) => {
        const moved = await store.cancelSubscription(trx, id, now);
        if (moved) {
          await recordSubscriptionEvent(trx, 'subscription.canceled', moved, now);
          await recordEvent(trx, {
            ...ownerOf(moved),
            occurredAt: now,
            type: 'subscription.canceled',
            data: subscriptionData(moved),
          });
          await answer?.keep(trx, canceledAnswer(moved, now));
        }
        return moved;
      });
      return { canceled, now };
    });
    if (!canceled) throw new AppError('subscription_inactive', 'This subscription is already canceled');
    if (canceled.payment_provider === partner.name) {
      // Our side is already closed to renewals; a partner hiccup is logged, not undone.
      await partner
        .releaseSavedCard({
          customerId: canceled.partner_subscription_id,
          paymentMethodId: canceled.partner_payment_method,
        })
        .catch((err: Error) =>
          log.warn({ subscriptionId: id, err: { message: err.message } }, 'subscription.release.failed'),
        );
    }
    log.info({ subscriptionId: id }, 'subscription.canceled');
    return canceledAnswer(canceled, now);
  }
}

type Canceled = ReturnType<typeof canceledAnswer>;

const canceledAnswer = (subscription: SubscriptionRow, now: Date) => ({
  id: subscription.id,
  status: 'canceled' as const,
  canceledAt: iso(now),
});

function toSubscription(row: SubscriptionRow) {
  return {
    id: row.id,
    productId: row.product_id,
    email: row.email,
    status: row.status,
    partnerSubscriptionId: row.partner_subscription_id,
    currentPeriodEnd: iso(row.current_period_end),
    canceledAt: isoOrNull(row.canceled_at),
    createdAt: iso(row.created_at),
  };
}
