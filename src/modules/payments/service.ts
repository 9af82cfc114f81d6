import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { DisputeRow, OrderRow, OrderStatus } from '../../platform/db/schema.js';
import { AppError, notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import { iso, isoOrNull, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { fromDecimalString, fromMinorUnits, toMinorUnits } from '../../platform/money.js';
import type { LicenseService } from '../licenses/index.js';
import type { ProductService } from '../products/index.js';
import type { PaymentPartner } from './partner.js';
import type { SandboxPartner } from './sandbox-partner.js';
import * as store from './store.js';

export interface PaymentServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  partner: PaymentPartner | SandboxPartner;
  products: Pick<ProductService, 'forCheckout'>;
  licenses: Pick<LicenseService, 'issueForPurchase' | 'moveForPayment'>;
  /**
   * Checks a partner webhook's signature and returns its event; throws when it does not hold.
   * Null when the partner sends no webhooks (the sandbox).
   */
  verifyPartnerEvent: ((rawBody: string, signature: string) => PartnerEvent) | null;
}

/** The part of a partner event this service reads. */
export interface PartnerEvent {
  id: string;
  type: string;
  data: {
    object: {
      id?: string;
      object?: string;
      payment_intent?: string | null;
      amount?: number;
      currency?: string;
      reason?: string;
      status?: string;
      evidence_details?: { due_by?: number | null } | null;
    };
  };
}

/** Partner events that say a payment changed; each is answered by re-reading the payment. */
const PAYMENT_EVENTS = new Set([
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.processing',
]);

type Window = 'all' | 'today' | 'week' | 'month';

export type PaymentService = ReturnType<typeof createPaymentService>;

export function createPaymentService({
  db,
  clock,
  log,
  partner,
  products,
  licenses,
  verifyPartnerEvent,
}: PaymentServiceDeps) {
  /**
   * Brings the order in line with the partner's record of the payment. Paid issues the license
   * in the same transaction as the order's move to paid, which only one caller can make: the
   * confirm route and a partner webhook arriving together issue one license.
   */
  async function fulfil(order: OrderRow): Promise<{ order: OrderRow; licenseKey: string | null }> {
    const intent = await partner.retrieveIntent(order.partner_payment_id);
    const now = clock.now();
    if (intent?.status === 'succeeded') {
      const product = await products.forCheckout(order.product_id);
      const result = await db.transaction().execute(async (trx) => {
        const paid = await store.moveOrder(trx, order.id, 'paid', ['pending', 'rejected'], {
          reason: '',
          now,
          paid: true,
        });
        if (!paid) return null;
        const license = await licenses.issueForPurchase(trx, {
          appId: paid.app_id,
          userId: paid.user_id,
          productId: paid.product_id,
          email: paid.email,
          expiresAt:
            product?.billingType === 'recurring' ? addInterval(now, product.interval ?? 'month') : null,
          now,
        });
        await store.queuePurchaseNotices(trx, paid, {
          licenseKey: license.key,
          productName: product?.name ?? '',
          now,
        });
        return { order: await store.linkLicense(trx, paid.id, license.id), licenseKey: license.key };
      });
      if (result) {
        log.info({ orderId: order.id, licenseId: result.order.license_id }, 'order.paid');
        return result;
      }
    } else if (intent?.status === 'canceled') {
      await store.moveOrder(db, order.id, 'canceled', ['pending'], {
        reason: 'The payment was canceled',
        now,
      });
    } else if (intent?.failureMessage) {
      await store.moveOrder(db, order.id, 'rejected', ['pending', 'rejected'], {
        reason: intent.failureMessage,
        now,
      });
    }
    const current =
      (await store.findByPartnerPayment(db, order.payment_provider, order.partner_payment_id)) ?? order;
    return { order: current, licenseKey: null };
  }

  /** A refunded payment cancels its transaction and revokes the license it bought. */
  async function refund(paymentIntentId: string) {
    const order = await store.findByPartnerPayment(db, partner.name, paymentIntentId);
    if (!order) return;
    const canceled = await store.moveOrder(db, order.id, 'canceled', ['paid'], {
      reason: 'The payment was refunded',
      now: clock.now(),
    });
    if (canceled?.license_id)
      await licenses.moveForPayment(canceled.license_id, 'revoked', ['active', 'suspended', 'expired']);
    if (canceled) log.info({ orderId: order.id }, 'order.refunded');
  }

  /**
   * Records the partner's dispute and holds the license accordingly: suspended while the
   * dispute is open, reinstated when it is won, revoked when it is lost.
   */
  async function recordDispute(
    dispute: NonNullable<PartnerEvent['data']['object']> & { id: string; payment_intent: string },
  ) {
    const order = await store.findByPartnerPayment(db, partner.name, dispute.payment_intent);
    if (!order) return;
    const now = clock.now();
    const dueBy = dispute.evidence_details?.due_by;
    const row = await store.upsertDispute(db, {
      partnerDisputeId: dispute.id,
      order,
      status: dispute.status ?? 'needs_response',
      amount: fromMinorUnits(dispute.amount ?? 0, order.currency),
      reason: dispute.reason ?? '',
      evidenceDueBy: dueBy ? new Date(dueBy * 1000) : null,
      now,
    });
    if (!row || !order.license_id) return;
    if (row.status === 'won') await licenses.moveForPayment(order.license_id, 'active', ['suspended']);
    else if (row.status === 'lost')
      await licenses.moveForPayment(order.license_id, 'revoked', ['active', 'suspended']);
    else await licenses.moveForPayment(order.license_id, 'suspended', ['active']);
    log.info({ disputeId: row.id, status: row.status }, 'dispute.recorded');
  }

  return {
    /** The buyer starts paying for a product: a pending order and the partner's payment intent. */
    async createPaymentIntent(input: { productId: string; email: string }) {
      const product = await products.forCheckout(input.productId);
      if (!product) throw notFound('Product');
      if (!product.active) throw new AppError('product_unavailable', 'This product is no longer on sale');
      if (product.billingType === 'recurring' && !product.partnerPriceIdRecurring) {
        throw new AppError(
          'product_unavailable',
          'This recurring product has no card partner price yet and cannot be bought by card',
        );
      }
      const orderId = newId();
      // The order id is the idempotency key: a retried request never opens a second payment.
      const intent = await partner.createIntent({
        amountMinor: toMinorUnits(product.exactPrice, product.currency),
        currency: product.currency,
        idempotencyKey: orderId,
        email: input.email,
      });
      const order = await store.insertOrder(db, {
        id: orderId,
        transaction_id: `txn_${randomBytes(12).toString('hex')}`,
        user_id: product.userId,
        product_id: product.id,
        app_id: product.appId,
        email: input.email.trim(),
        amount: product.exactPrice,
        currency: product.currency,
        payment_provider: partner.name,
        partner_payment_id: intent.id,
        client_secret: intent.clientSecret,
        created_at: clock.now(),
      });
      log.info({ orderId: order.id, productId: product.id }, 'order.created');
      return {
        orderId: order.id,
        transactionId: order.transaction_id,
        paymentIntentId: intent.id,
        clientSecret: intent.clientSecret,
        amount: fromDecimalString(order.amount),
        currency: order.currency,
        paymentProvider: partner.name,
        testMode: partner.testMode,
      };
    },

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
     * The card partner's webhook. The signature is checked on the raw body (bad or stale: 400,
     * nothing changes); an event already handled is acknowledged again and changes nothing; a
     * payment event is answered by re-reading the payment at the partner, so events that arrive
     * late or out of order cannot move an order backwards.
     */
    async receivePartnerEvent(rawBody: string, signature: string | undefined) {
      if (!verifyPartnerEvent) throw notFound('Partner webhook');
      let event: PartnerEvent;
      try {
        event = verifyPartnerEvent(rawBody, signature ?? '');
      } catch {
        throw new AppError('bad_request', 'The partner signature does not match or is too old');
      }
      if (await store.partnerEventSeen(db, event.id)) return { received: true, duplicate: true };
      const object = event.data.object;
      if (PAYMENT_EVENTS.has(event.type) && object.id) {
        const order = await store.findByPartnerPayment(db, partner.name, object.id);
        if (order) await fulfil(order);
      } else if (event.type === 'charge.refunded' && object.payment_intent) {
        await refund(object.payment_intent);
      } else if (event.type.startsWith('charge.dispute.') && object.id && object.payment_intent) {
        await recordDispute({ ...object, id: object.id, payment_intent: object.payment_intent });
      }
      await store.recordPartnerEvent(db, {
        id: event.id,
        provider: partner.name,
        type: event.type,
        at: clock.now(),
      });
      log.info({ eventId: event.id, type: event.type }, 'payment.partner_event.handled');
      return { received: true, duplicate: false };
    },

    async transactionStatus(principal: Principal, transactionId: string) {
      const order = visible(
        principal,
        await store.findOwnedTransaction(db, principal.userId, transactionId),
        'Transaction',
      );
      return {
        status: 200 as const,
        transactionStatus: order.status,
        transactionStatusReason: order.status_reason,
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
      const { rows, total } = await store.listOrders(
        db,
        principal.userId,
        {
          statuses: ['pending', 'paid', 'canceled', 'rejected'],
          transactionIds: input.transactionsId,
          email: input.email,
          appId: apiKeyAppId(principal),
          ...(from ? { from } : {}),
          to: new Date(now.getTime() + 1),
        },
        { limit: 200, offset: 0 },
      );
      return {
        transactions: rows.map(toTransaction),
        total,
        limits: input.limits,
        from: isoOrNull(from),
        to: iso(now),
      };
    },

    async listOrders(
      principal: Principal,
      filter: { status?: OrderStatus; productId?: string; email?: string; from?: string; to?: string },
      page: Page,
    ) {
      const { rows, total } = await store.listOrders(
        db,
        principal.userId,
        {
          statuses: filter.status ? [filter.status] : ['paid', 'pending'],
          appId: apiKeyAppId(principal),
          productId: filter.productId,
          email: filter.email,
          from: filter.from ? new Date(filter.from) : undefined,
          to: filter.to ? new Date(filter.to) : undefined,
        },
        page,
      );
      return { orders: rows.map(toOrderSummary), total, ...page };
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
      const row = await store.findOwnedDispute(db, principal.userId, id);
      if (!row) throw notFound('Dispute');
      const keyApp = apiKeyAppId(principal);
      if (keyApp && keyApp !== row.app_id)
        throw new AppError('app_scope_mismatch', 'This API key belongs to another app');
      return {
        ...toDisputeSummary(row),
        evidenceDueBy: isoOrNull(row.evidence_due_by),
        updatedAt: iso(row.updated_at),
      };
    },

    async getOrder(principal: Principal, id: string) {
      const order = visible(principal, await store.findOwnedOrder(db, principal.userId, id), 'Order');
      return { ...toOrderSummary(order), licenseId: order.license_id, updatedAt: iso(order.updated_at) };
    },
  };
}

/** The seller's order, refused to an API key of another of their apps. */
function visible(principal: Principal, order: OrderRow | undefined, what: string): OrderRow {
  if (!order) throw notFound(what);
  const keyApp = apiKeyAppId(principal);
  if (keyApp && keyApp !== order.app_id)
    throw new AppError('app_scope_mismatch', 'This API key belongs to another app');
  return order;
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Relative windows in UTC: today from 00:00 UTC, week the last 7 days, month the last 30 days. */
export function windowStart(window: Window, now: Date): Date | null {
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

function addInterval(from: Date, interval: 'month' | 'year'): Date {
  const next = new Date(from);
  if (interval === 'year') next.setUTCFullYear(next.getUTCFullYear() + 1);
  else next.setUTCMonth(next.getUTCMonth() + 1);
  return next;
}

function toTransaction(order: OrderRow) {
  return {
    transactionId: order.transaction_id,
    transactionStatus: order.status,
    statusReason: order.status_reason,
    licenseId: order.license_id,
    productId: order.product_id,
    amount: fromDecimalString(order.amount),
    currency: order.currency,
    email: order.email,
    timestamp: iso(order.updated_at),
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

function toOrderSummary(order: OrderRow) {
  return {
    id: order.id,
    productId: order.product_id,
    email: order.email,
    amount: fromDecimalString(order.amount),
    currency: order.currency,
    status: order.status,
    paymentProvider: order.payment_provider,
    transactionId: order.transaction_id,
    createdAt: iso(order.created_at),
  };
}
