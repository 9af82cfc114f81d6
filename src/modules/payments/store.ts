import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { OrderRow, OrderStatus } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';

export function insertOrder(
  executor: Executor,
  order: Omit<OrderRow, 'license_id' | 'status' | 'status_reason' | 'paid_at' | 'updated_at'>,
) {
  return executor
    .insertInto('orders')
    .values({ ...order, updated_at: order.created_at })
    .returningAll()
    .executeTakeFirstOrThrow();
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

/** Queues the buyer's and the seller's notice of a paid order, in the fulfilment's transaction. */
export async function queuePurchaseNotices(
  executor: Executor,
  order: OrderRow,
  details: { licenseKey: string; productName: string; now: Date },
) {
  const data = {
    orderId: order.id,
    transactionId: order.transaction_id,
    productId: order.product_id,
    productName: details.productName,
    amount: order.amount,
    currency: order.currency,
    buyerEmail: order.email,
  };
  await executor
    .insertInto('notifications')
    .values([
      {
        id: newId(),
        kind: 'purchase.buyer',
        to_email: order.email,
        to_user_id: null,
        data: JSON.stringify({ ...data, licenseKey: details.licenseKey }),
        created_at: details.now,
      },
      {
        id: newId(),
        kind: 'purchase.seller',
        to_email: null,
        to_user_id: order.user_id,
        data: JSON.stringify(data),
        created_at: details.now,
      },
    ])
    .execute();
}

export function linkLicense(executor: Executor, id: string, licenseId: string) {
  return executor
    .updateTable('orders')
    .set({ license_id: licenseId })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findOwnedOrder(executor: Executor, userId: string, id: string) {
  return executor
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export function findOwnedTransaction(executor: Executor, userId: string, transactionId: string) {
  return executor
    .selectFrom('orders')
    .selectAll()
    .where('transaction_id', '=', transactionId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export interface OrderFilter {
  statuses: readonly OrderStatus[];
  productId?: string;
  email?: string;
  from?: Date;
  to?: Date;
  transactionIds?: readonly string[];
  /** An API key sees only its app's orders. */
  appId?: string | null;
}

export async function listOrders(executor: Executor, userId: string, filter: OrderFilter, page: Page) {
  let query = executor
    .selectFrom('orders')
    .where('user_id', '=', userId)
    .where('status', 'in', filter.statuses);
  if (filter.productId) query = query.where('product_id', '=', filter.productId);
  if (filter.email) query = query.where(sql<string>`lower(email)`, '=', filter.email.toLowerCase());
  if (filter.from) query = query.where('created_at', '>=', filter.from);
  if (filter.to) query = query.where('created_at', '<', filter.to);
  if (filter.transactionIds) query = query.where('transaction_id', 'in', filter.transactionIds);
  if (filter.appId) query = query.where('app_id', '=', filter.appId);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
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
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** Dispute states of the partner that are over; a late event never reopens them. */
const CLOSED_DISPUTES = ['won', 'lost'];

/** Records the partner's dispute, or its new state unless it is already closed. */
export function upsertDispute(
  executor: Executor,
  dispute: {
    partnerDisputeId: string;
    order: OrderRow;
    status: string;
    amount: string;
    reason: string;
    evidenceDueBy: Date | null;
    now: Date;
  },
) {
  return executor
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
    .onConflict((oc) =>
      oc
        .column('partner_dispute_id')
        .doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'),
          reason: eb.ref('excluded.reason'),
          evidence_due_by: eb.ref('excluded.evidence_due_by'),
          updated_at: dispute.now,
        }))
        .where('disputes.status', 'not in', CLOSED_DISPUTES),
    )
    .returningAll()
    .executeTakeFirst();
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
