import type { DisputeRow } from '../../platform/db/schema.js';
import type { CsvValue } from '../../platform/http/csv.js';
import { apiKeyAppId, type Principal, visibleTo } from '../../platform/http/principal.js';
import { iso, isoOrNull, type Page, type Sort, sortOf } from '../../platform/http/schemas.js';
import { fromDecimalString } from '../../platform/money.js';
import type { PaymentServiceDeps } from './deps.js';
import { MAX_BATCH, type OrderListFilter, type OrderSortColumn } from './schemas.js';
import * as store from './store.js';

type Window = 'all' | 'today' | 'week' | 'month';

/** The seller's reads: their orders, transactions and disputes, as far as their credential sees. */
export function createSellerReads({ db, clock }: Pick<PaymentServiceDeps, 'db' | 'clock'>) {
  return {
    async transactionStatus(principal: Principal, transactionId: string) {
      const order = visibleTo(
        principal,
        await store.findOwnedTransaction(db, principal.userId, transactionId, clock.now()),
        'Transaction',
      );
      return {
        status: 200 as const,
        transactionStatus: order.live_status,
        transactionStatusReason: order.live_status_reason,
        info: order.payment_provider === 'sandbox' ? 'sandbox payment: test mode, no money moved' : '',
        transaction: toTransaction(order),
      };
    },

    /** Up to 200 of the seller's transactions by id, within a relative window (UTC). */
    async transactions(
      principal: Principal,
      input: { transactionsId: string[]; limits: Window; email?: string },
    ) {
      const now = clock.now();
      const from = windowStart(input.limits, now);
      // The ids are distinct and at most MAX_BATCH, so every match fits in the one statement.
      const rows = await store.findTransactions(
        db,
        principal.userId,
        {
          transactionIds: input.transactionsId,
          email: input.email,
          appId: apiKeyAppId(principal),
          ...(from ? { from } : {}),
          to: new Date(now.getTime() + 1),
        },
        MAX_BATCH,
        now,
      );
      return {
        transactions: rows.map(toTransaction),
        total: rows.length,
        limits: input.limits,
        from: isoOrNull(from),
        to: iso(now),
      };
    },

    async listOrders(principal: Principal, filter: OrderListFilter, page: Page) {
      const now = clock.now();
      const { rows, total } = await store.listOrders(
        db,
        principal.userId,
        orderFilter(principal, filter),
        store.sellerOrderOrder(sortOf(filter.sort, NEWEST_FIRST), now),
        page,
        now,
      );
      return { orders: rows.map(toOrderSummary), total, ...page };
    },

    /** The rows of the CSV export (ORDER_CSV_HEADER), read as they are sent. */
    exportOrders(principal: Principal, filter: OrderListFilter): AsyncIterable<CsvValue[]> {
      const now = clock.now();
      const rows = store.exportOrders(
        db,
        principal.userId,
        orderFilter(principal, filter),
        store.sellerOrderOrder(sortOf(filter.sort, NEWEST_FIRST), now),
        now,
      );
      return (async function* () {
        for await (const row of rows) yield orderCsvRow(row);
      })();
    },

    async listDisputes(principal: Principal, filter: { status?: string }, page: Page) {
      const { rows, total } = await store.listDisputes(
        db,
        principal.userId,
        { ...filter, appId: apiKeyAppId(principal) },
        page,
      );
      return { disputes: rows.map(toDisputeSummary), total, ...page };
    },

    async getDispute(principal: Principal, id: string) {
      const row = visibleTo(principal, await store.findOwnedDispute(db, principal.userId, id), 'Dispute');
      return {
        ...toDisputeSummary(row),
        evidenceDueBy: isoOrNull(row.evidence_due_by),
        updatedAt: iso(row.updated_at),
      };
    },

    async getOrder(principal: Principal, id: string) {
      const order = visibleTo(
        principal,
        await store.findOwnedOrder(db, principal.userId, id, clock.now()),
        'Order',
      );
      return { ...toOrderSummary(order), licenseId: order.license_id, updatedAt: iso(order.live_updated_at) };
    },
  };
}

/** Newest first, unless the query sorts otherwise. */
const NEWEST_FIRST: Sort<OrderSortColumn> = { column: 'createdAt', descending: true };

/** What the seller's order list and export read: paid and pending unless a status is asked. */
function orderFilter(principal: Principal, filter: OrderListFilter): store.OrderFilter {
  return {
    statuses: filter.status ? [filter.status] : ['paid', 'pending'],
    appId: apiKeyAppId(principal),
    productId: filter.productId,
    emailContains: filter.email,
    from: filter.from ? new Date(filter.from) : undefined,
    to: filter.to ? new Date(filter.to) : undefined,
  };
}

/** The columns of the orders CSV, in order (docs/payments.md lists them). */
export const ORDER_CSV_HEADER = [
  'id',
  'createdAt',
  'email',
  'productId',
  'amount',
  'currency',
  'status',
  'paymentProvider',
  'transactionId',
] as const;

function orderCsvRow(order: store.SellerOrderRow): CsvValue[] {
  const summary = toOrderSummary(order);
  return [
    summary.id,
    summary.createdAt,
    summary.email,
    summary.productId,
    summary.amount,
    summary.currency,
    summary.status,
    summary.paymentProvider,
    summary.transactionId,
  ];
}

/** Relative windows in UTC: today from 00:00 UTC, week the last 7 days, month the last 30 days. */
function windowStart(window: Window, now: Date): Date | null {
  const day = 86_400_000;
  switch (window) {
    case 'all':
      return null;
    case 'today':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    case 'week':
      return new Date(now.getTime() - 7 * day);
    case 'month':
      return new Date(now.getTime() - 30 * day);
  }
}

/** The transaction (and order) follow the license: see `SellerOrderRow`. */
function toTransaction(order: store.SellerOrderRow) {
  return {
    transactionId: order.transaction_id,
    transactionStatus: order.live_status,
    statusReason: order.live_status_reason,
    licenseId: order.license_id,
    productId: order.product_id,
    amount: fromDecimalString(order.amount),
    currency: order.currency,
    email: order.email,
    timestamp: iso(order.live_updated_at),
    paymentProvider: order.payment_provider,
  };
}

function toDisputeSummary(row: DisputeRow) {
  return {
    id: row.id,
    orderId: row.order_id,
    status: row.status,
    amount: fromDecimalString(row.amount),
    currency: row.currency,
    reason: row.reason,
    createdAt: iso(row.created_at),
  };
}

function toOrderSummary(order: store.SellerOrderRow) {
  return {
    id: order.id,
    productId: order.product_id,
    email: order.email,
    amount: fromDecimalString(order.amount),
    currency: order.currency,
    status: order.live_status,
    paymentProvider: order.payment_provider,
    transactionId: order.transaction_id,
    createdAt: iso(order.created_at),
  };
}
