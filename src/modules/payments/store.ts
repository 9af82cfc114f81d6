import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import {
  afterCursor,
  keysetRows,
  type ListOrder,
  orderClause,
  type SortColumn,
  sortKey,
} from '../../platform/db/list-order.js';
import type { DisputeRow, OrderRow, OrderStatus } from '../../platform/db/schema.js';
import { containsPattern } from '../../platform/db/text-search.js';
import type { Page, Sort } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { OrderSortColumn } from './schemas.js';

type OptionalOrderColumns =
  | 'license_id'
  | 'status'
  | 'status_reason'
  | 'paid_at'
  | 'updated_at'
  | 'checkout_key'
  | 'mirror_token'
  | 'subscription_id'
  | 'renewal_period_end';

/**
 * Inserts the order unless one with its id exists (a concurrent double submit); either way returns
 * it. No conflict target: racing submits of one attempt also collide on the partner payment key
 * (the partner answers both with the same payment), which `ON CONFLICT (id)` would still raise.
 */
export async function insertOrderOnce(
  executor: Executor,
  order: Omit<OrderRow, OptionalOrderColumns | 'license_policy'> &
    Partial<Pick<OrderRow, OptionalOrderColumns>> & { license_policy: string | null },
) {
  await executor
    .insertInto('orders')
    .values({ ...order, updated_at: order.created_at })
    .onConflict((oc) => oc.doNothing())
    .execute();
  return executor.selectFrom('orders').selectAll().where('id', '=', order.id).executeTakeFirstOrThrow();
}

export function findByPartnerPayment(executor: Executor, provider: string, partnerPaymentId: string) {
  return executor
    .selectFrom('orders')
    .selectAll()
    .where('payment_provider', '=', provider)
    .where('partner_payment_id', '=', partnerPaymentId)
    .executeTakeFirst();
}

/**
 * Moves an order between states only from the states given, in one statement; concurrent
 * fulfilments of one payment therefore pass this point once.
 */
export function moveOrder(
  executor: Executor,
  id: string,
  to: OrderStatus,
  from: readonly OrderStatus[],
  changes: { reason: string; now: Date; paid?: boolean },
) {
  return executor
    .updateTable('orders')
    .set({
      status: to,
      status_reason: changes.reason,
      updated_at: changes.now,
      ...(changes.paid ? { paid_at: changes.now } : {}),
    })
    .where('id', '=', id)
    .where('status', 'in', from)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Queues the notices of a paid order, in the fulfilment's transaction: the buyer's (with the
 * license key) when the product sends it or the license replaced the buyer's trial, a copy (with
 * the key) to each of the product's license e-mails, and always the seller's (without the key).
 */
export async function queuePurchaseNotices(
  executor: Executor,
  order: OrderRow,
  details: {
    licenseKey: string;
    /** The license the notices are about: its timeline records each one sent (mail/store.ts). */
    licenseId: string;
    productName: string;
    sendToBuyer: boolean;
    /** The license replaced the buyer's trial: the buyer's message says its key replaces the trial's. */
    replacesTrial?: boolean;
    copiesTo: readonly string[];
    now: Date;
  },
) {
  const data = {
    orderId: order.id,
    transactionId: order.transaction_id,
    productId: order.product_id,
    productName: details.productName,
    amount: order.amount,
    currency: order.currency,
    buyerEmail: order.email,
    licenseId: details.licenseId,
  };
  const withKey = JSON.stringify({ ...data, licenseKey: details.licenseKey });
  const toBuyer = details.replacesTrial
    ? JSON.stringify({ ...data, licenseKey: details.licenseKey, replacesTrial: true })
    : withKey;
  const notice = (kind: string, toEmail: string | null, payload: string) => ({
    id: newId(),
    kind,
    to_email: toEmail,
    to_user_id: toEmail === null ? order.user_id : null,
    data: payload,
    created_at: details.now,
  });
  // One message per address: the buyer already holding the key gets no copy on top.
  const seen = new Set(details.sendToBuyer ? [order.email.toLowerCase()] : []);
  const copies: string[] = [];
  for (const to of details.copiesTo) {
    if (!seen.has(to.toLowerCase())) copies.push(to);
    seen.add(to.toLowerCase());
  }
  await executor
    .insertInto('notifications')
    .values([
      ...(details.sendToBuyer ? [notice('purchase.buyer', order.email, toBuyer)] : []),
      ...copies.map((to) => notice('purchase.copy', to, withKey)),
      notice('purchase.seller', null, JSON.stringify(data)),
    ])
    .execute();
}

export function linkLicense(
  executor: Executor,
  id: string,
  licenseId: string,
  subscriptionId: string | null = null,
) {
  return executor
    .updateTable('orders')
    .set({ license_id: licenseId, subscription_id: subscriptionId })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * An order as the seller reads it. A paid order follows what became of the license it issued and
 * of the payment since, read live in the same statement so the two can never disagree:
 * a lost chargeback or a revoked or suspended license shows `canceled`, an expired license stays
 * `paid` (its term ended). Other states, and the stored row, stay as the payment left them.
 */
export type SellerOrderRow = OrderRow & {
  live_status: OrderStatus;
  live_status_reason: string;
  /** The later of the order's and its license's last change. */
  live_updated_at: Date;
};

/** The live status, reason and change time of `orders as o` left-joined to `licenses as l`. */
function liveStatus(now: Date) {
  // Scoped by the seller too, so the disputes_user_idx index finds the order's disputes.
  const chargedBack = sql<boolean>`exists (select 1 from disputes d
    where d.user_id = o.user_id and d.order_id = o.id and d.status = 'lost')`;
  const paid = sql<boolean>`o.status = 'paid'`;
  return {
    status: sql<OrderStatus>`case when not ${paid} then o.status
      when ${chargedBack} or l.status in ('revoked', 'suspended') then 'canceled'
      else o.status end`,
    reason: sql<string>`case when not ${paid} then o.status_reason
      when ${chargedBack} then 'The payment was charged back (dispute lost)'
      when l.status = 'revoked' then 'The license was revoked'
      when l.status = 'suspended' then 'The license is suspended'
      when l.status = 'expired' or (l.status = 'active' and l.expires_at <= ${now}) then 'The license has expired'
      else o.status_reason end`,
    updatedAt: sql<Date>`case when ${paid} and l.updated_at > o.updated_at then l.updated_at else o.updated_at end`,
  };
}

export interface OrderFilter {
  /** Matched against the live status (as the seller reads it); any status when left out. */
  statuses?: readonly OrderStatus[];
  productId?: string;
  /** The whole address, ignoring case (transaction lookups). */
  email?: string;
  /** Any part of the address, ignoring case (the seller's list). */
  emailContains?: string;
  from?: Date;
  to?: Date;
  transactionIds?: readonly string[];
  /** An API key sees only its app's orders. */
  appId?: string | null;
}

/** The seller's orders joined to their licenses, filtered; `live` selects or compares the live status. */
function sellerOrders(executor: Executor, userId: string, filter: OrderFilter, now: Date) {
  const live = liveStatus(now);
  let query = executor
    .selectFrom('orders as o')
    .leftJoin('licenses as l', 'l.id', 'o.license_id')
    .where('o.user_id', '=', userId);
  if (filter.statuses) query = query.where(live.status, 'in', filter.statuses);
  if (filter.productId) query = query.where('o.product_id', '=', filter.productId);
  if (filter.email) query = query.where(sql<string>`lower(o.email)`, '=', filter.email.toLowerCase());
  // A plain ilike: a seller's orders are few enough to scan, and no trigram extension is needed.
  if (filter.emailContains) query = query.where('o.email', 'ilike', containsPattern(filter.emailContains));
  if (filter.from) query = query.where('o.created_at', '>=', filter.from);
  if (filter.to) query = query.where('o.created_at', '<', filter.to);
  if (filter.transactionIds) query = query.where('o.transaction_id', 'in', filter.transactionIds);
  if (filter.appId) query = query.where('o.app_id', '=', filter.appId);
  return { live, query };
}

function selectSellerOrder({ live, query }: ReturnType<typeof sellerOrders>) {
  return query
    .selectAll('o')
    .select([
      live.status.as('live_status'),
      live.reason.as('live_status_reason'),
      live.updatedAt.as('live_updated_at'),
    ]);
}

export function findOwnedOrder(
  executor: Executor,
  userId: string,
  id: string,
  now: Date,
): Promise<SellerOrderRow | undefined> {
  return selectSellerOrder(sellerOrders(executor, userId, {}, now))
    .where('o.id', '=', id)
    .executeTakeFirst();
}

export function findOwnedTransaction(
  executor: Executor,
  userId: string,
  transactionId: string,
  now: Date,
): Promise<SellerOrderRow | undefined> {
  return selectSellerOrder(
    sellerOrders(executor, userId, { transactionIds: [transactionId] }, now),
  ).executeTakeFirst();
}

/** The order of an order list: the sort asked (status as the seller reads it), then the id. */
export function sellerOrderOrder(sort: Sort<OrderSortColumn>, now: Date): ListOrder {
  const columns: Record<OrderSortColumn, SortColumn> = {
    createdAt: { value: sql.ref('o.created_at'), type: 'timestamptz' },
    amount: { value: sql.ref('o.amount'), type: 'numeric' },
    status: { value: liveStatus(now).status, type: 'text' },
    email: { value: sql.ref('o.email'), type: 'text' },
  };
  return { column: columns[sort.column], descending: sort.descending, id: sql.ref('o.id') };
}

/** One page of the seller's orders with their live status, and the total. */
export async function listOrders(
  executor: Executor,
  userId: string,
  filter: OrderFilter,
  order: ListOrder,
  page: Page,
  now: Date,
): Promise<{ rows: SellerOrderRow[]; total: number }> {
  const orders = sellerOrders(executor, userId, filter, now);
  const [rows, total] = await Promise.all([
    selectSellerOrder(orders).orderBy(orderClause(order)).limit(page.limit).offset(page.offset).execute(),
    orders.query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

/** Every order of the list, a page at a time in its order (the CSV export). */
export function exportOrders(
  executor: Executor,
  userId: string,
  filter: OrderFilter,
  order: ListOrder,
  now: Date,
): AsyncGenerator<SellerOrderRow> {
  return keysetRows((after, size) => {
    const orders = sellerOrders(executor, userId, filter, now);
    const query = after ? { ...orders, query: orders.query.where(afterCursor(order, after)) } : orders;
    return selectSellerOrder(query)
      .select(sortKey(order).as('sort_key'))
      .orderBy(orderClause(order))
      .limit(size)
      .execute();
  });
}

/** The seller's transactions among the ids given (at most `limit` of them), in one statement. */
export function findTransactions(
  executor: Executor,
  userId: string,
  filter: OrderFilter & { transactionIds: readonly string[] },
  limit: number,
  now: Date,
): Promise<SellerOrderRow[]> {
  return selectSellerOrder(sellerOrders(executor, userId, filter, now))
    .orderBy('o.created_at')
    .orderBy('o.id')
    .limit(limit)
    .execute();
}

export async function partnerEventSeen(executor: Executor, id: string): Promise<boolean> {
  return (
    (await executor.selectFrom('partner_events').select('id').where('id', '=', id).executeTakeFirst()) !==
    undefined
  );
}

export async function recordPartnerEvent(
  executor: Executor,
  event: { id: string; provider: string; type: string; at: Date },
) {
  await executor
    .insertInto('partner_events')
    .values({ id: event.id, provider: event.provider, type: event.type, received_at: event.at })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Dispute states of the partner that are over; a late event never reopens them. */
export const CLOSED_DISPUTES: readonly string[] = ['won', 'lost'];

/**
 * Records the partner's dispute, or its new state unless it is already closed, and returns it
 * with what it was before (null when first seen); undefined when a closed dispute stays as it
 * is. The row is locked from before the change to commit, so of two events about one dispute
 * each compares with what the other left.
 */
export async function saveDispute(
  trx: Executor,
  dispute: {
    partnerDisputeId: string;
    order: OrderRow;
    status: string;
    amount: string;
    reason: string;
    evidenceDueBy: Date | null;
    now: Date;
  },
): Promise<{ saved: DisputeRow; before: DisputeRow | null } | undefined> {
  const inserted = await trx
    .insertInto('disputes')
    .values({
      id: newId(),
      partner_dispute_id: dispute.partnerDisputeId,
      order_id: dispute.order.id,
      user_id: dispute.order.user_id,
      app_id: dispute.order.app_id,
      status: dispute.status,
      amount: dispute.amount,
      currency: dispute.order.currency,
      reason: dispute.reason,
      evidence_due_by: dispute.evidenceDueBy,
      created_at: dispute.now,
      updated_at: dispute.now,
    })
    // A concurrent first sighting waits here for the other to commit, then finds its row below.
    .onConflict((oc) => oc.column('partner_dispute_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { saved: inserted, before: null };
  const before = await trx
    .selectFrom('disputes')
    .selectAll()
    .where('partner_dispute_id', '=', dispute.partnerDisputeId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (CLOSED_DISPUTES.includes(before.status)) return undefined;
  const saved = await trx
    .updateTable('disputes')
    .set({
      status: dispute.status,
      reason: dispute.reason,
      evidence_due_by: dispute.evidenceDueBy,
      updated_at: dispute.now,
    })
    .where('id', '=', before.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { saved, before };
}

export async function listDisputes(
  executor: Executor,
  userId: string,
  filter: { status?: string; appId: string | null },
  page: Page,
) {
  let query = executor.selectFrom('disputes').where('user_id', '=', userId);
  if (filter.appId) query = query.where('app_id', '=', filter.appId);
  if (filter.status) query = query.where('status', '=', filter.status);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export function findOwnedDispute(executor: Executor, userId: string, id: string) {
  return executor
    .selectFrom('disputes')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export function findOrder(executor: Executor, id: string) {
  return executor.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The paid purchase (not a renewal) that issued this license to this e-mail, with the license's
 * status and expiry as they are now. The e-mail matches without regard to case or surrounding
 * spaces.
 */
export function findPaidPurchase(executor: Executor, licenseKey: string, email: string) {
  return executor
    .selectFrom('orders as o')
    .innerJoin('licenses as l', 'l.id', 'o.license_id')
    .selectAll('o')
    .select(['l.status as license_status', 'l.expires_at as license_expires_at'])
    .where('l.key', '=', licenseKey)
    .where(sql<string>`lower(o.email)`, '=', email.trim().toLowerCase())
    .where('o.status', '=', 'paid')
    .where('o.renewal_period_end', 'is', null)
    .orderBy('o.created_at')
    .limit(1)
    .executeTakeFirst();
}
