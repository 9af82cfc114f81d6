import type { Executor } from '../../platform/db/database.js';
import type {
  BillingInterval,
  OrderRow,
  SubscriptionRow,
  SubscriptionStatus,
} from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';

/** Opens the subscription a paid recurring purchase starts (in the fulfilment's transaction). */
export function insertSubscription(
  executor: Executor,
  input: {
    order: OrderRow;
    licenseId: string;
    savedCard: { customerId: string; paymentMethodId: string };
    interval: BillingInterval;
    currentPeriodEnd: Date;
    now: Date;
  },
) {
  return executor
    .insertInto('subscriptions')
    .values({
      id: newId(),
      user_id: input.order.user_id,
      app_id: input.order.app_id,
      product_id: input.order.product_id,
      license_id: input.licenseId,
      email: input.order.email,
      payment_provider: input.order.payment_provider,
      partner_subscription_id: input.savedCard.customerId,
      partner_payment_method: input.savedCard.paymentMethodId,
      interval: input.interval,
      currency: input.order.currency,
      current_period_end: input.currentPeriodEnd,
      created_at: input.now,
      updated_at: input.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface SubscriptionFilter {
  status?: SubscriptionStatus;
  productId?: string;
  /** An API key sees only its app's subscriptions. */
  appId: string | null;
}

export async function listSubscriptions(
  executor: Executor,
  userId: string,
  filter: SubscriptionFilter,
  page: Page,
) {
  let query = executor.selectFrom('subscriptions').where('user_id', '=', userId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.productId) query = query.where('product_id', '=', filter.productId);
  if (filter.appId) query = query.where('app_id', '=', filter.appId);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export function findOwnedSubscription(executor: Executor, userId: string, id: string) {
  return executor
    .selectFrom('subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Cancels only an active subscription, in one statement: of two cancels, one wins. */
export function cancelSubscription(executor: Executor, id: string, now: Date) {
  return executor
    .updateTable('subscriptions')
    .set({ status: 'canceled', canceled_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .returningAll()
    .executeTakeFirst();
}

/** A subscription with its product's callback secret, which authenticates renewal charges. */
export async function findForRenewal(
  executor: Executor,
  id: string,
): Promise<{ subscription: SubscriptionRow; callbackSecret: string } | undefined> {
  const row = await executor
    .selectFrom('subscriptions as s')
    .innerJoin('products as p', 'p.id', 's.product_id')
    .selectAll('s')
    .select('p.callback_secret')
    .where('s.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const { callback_secret: callbackSecret, ...subscription } = row;
  return { subscription: subscription as SubscriptionRow, callbackSecret };
}

export function findSubscription(executor: Executor, id: string) {
  return executor.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Moves the period on from `from` to `to` in one statement, only while it still ends at `from`:
 * a paid renewal moves it once, however many requests raced to pay it.
 */
export function movePeriod(executor: Executor, id: string, from: Date, to: Date, now: Date) {
  return executor
    .updateTable('subscriptions')
    .set({ current_period_end: to, updated_at: now })
    .where('id', '=', id)
    .where('current_period_end', '=', from)
    .returningAll()
    .executeTakeFirst();
}

/** The live (pending or paid) renewal order of a period, if one was opened. */
export function findRenewalOrder(executor: Executor, subscriptionId: string, periodEnd: Date) {
  return executor
    .selectFrom('orders')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('renewal_period_end', '=', periodEnd)
    .where('status', 'in', ['pending', 'paid'])
    .executeTakeFirst();
}

/**
 * Opens the renewal order of a period unless a live one exists (the partial unique index
 * decides between concurrent requests); returns the live one either way.
 */
export async function openRenewalOrder(
  executor: Executor,
  order: Pick<
    OrderRow,
    | 'id'
    | 'transaction_id'
    | 'user_id'
    | 'product_id'
    | 'app_id'
    | 'license_id'
    | 'email'
    | 'amount'
    | 'currency'
    | 'payment_provider'
    | 'partner_payment_id'
    | 'client_secret'
    | 'subscription_id'
    | 'created_at'
  > & { renewal_period_end: Date },
) {
  await executor
    .insertInto('orders')
    .values({ ...order, updated_at: order.created_at })
    // The only conflict a fresh id can meet is orders_renewal_key (a live order of the period).
    .onConflict((oc) => oc.doNothing())
    .execute();
  const live = await findRenewalOrder(executor, order.subscription_id as string, order.renewal_period_end);
  if (!live) throw new Error('renewal order vanished');
  return live;
}

export function setPartnerPayment(executor: Executor, orderId: string, partnerPaymentId: string) {
  return executor
    .updateTable('orders')
    .set({ partner_payment_id: partnerPaymentId })
    .where('id', '=', orderId)
    .execute();
}

/** The subscription's most recently paid renewal order. */
export function latestPaidRenewal(executor: Executor, subscriptionId: string) {
  return executor
    .selectFrom('orders')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('renewal_period_end', 'is not', null)
    .where('status', '=', 'paid')
    .orderBy('paid_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** How many renewal charges of the period were declined (their orders rejected). */
export async function countDeclinedRenewals(executor: Executor, subscriptionId: string, periodEnd: Date) {
  const row = await executor
    .selectFrom('orders')
    .select((eb) => eb.fn.countAll<number>().as('declined'))
    .where('subscription_id', '=', subscriptionId)
    .where('renewal_period_end', '=', periodEnd)
    .where('status', '=', 'rejected')
    .executeTakeFirstOrThrow();
  return Number(row.declined);
}
