import { randomBytes } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import type { BillingInterval, DisputeRow, OrderRow, OrderStatus } from '../../platform/db/schema.js';
import { AppError, notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal, visibleTo } from '../../platform/http/principal.js';
import { iso, isoOrNull, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { fromDecimalString, fromMinorUnits, toMinorUnits } from '../../platform/money.js';
import { sameSecret } from '../../platform/secrets.js';
import { type MerchantEventType, recordEvent } from '../events/index.js';
import type { LicenseService } from '../licenses/index.js';
import type { ProductService } from '../products/index.js';
import type { CryptoPartner } from './crypto-partner.js';
import type { PaymentPartner, SavedCard } from './partner.js';
import type { SandboxPartner } from './sandbox-partner.js';
import * as store from './store.js';

export interface PaymentServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  partner: PaymentPartner | SandboxPartner;
  /** The crypto partner, when configured; products with cryptoPaymentsEnabled may use it. */
  crypto: CryptoPartner | null;
  products: Pick<ProductService, 'forCheckout'>;
  licenses: Pick<LicenseService, 'issueForPurchase' | 'moveForPayment' | 'keyOf'>;
  /** Opens the subscription a recurring purchase starts, inside the fulfilment's transaction. */
  openSubscription: SubscriptionOpener;
  /**
   * Checks a partner webhook's signature and returns its event; throws when it does not hold.
   * Null when the partner sends no webhooks (the sandbox).
   */
  verifyPartnerEvent: ((rawBody: string, signature: string) => PartnerEvent) | null;
}

export type SubscriptionOpener = (
  trx: Executor,
  input: {
    order: OrderRow;
    licenseId: string;
    savedCard: SavedCard;
    interval: BillingInterval;
    currentPeriodEnd: Date;
    now: Date;
  },
) => Promise<{ id: string }>;

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

/** A payment as its partner sees it now, whichever partner took it. */
interface PaymentState {
  outcome: 'paid' | 'canceled' | 'failed' | 'pending';
  failureMessage: string | null;
  savedCard: SavedCard | null;
}

/** What opens an order: the product, the buyer, and the checkout's own references. */
export interface OrderRequest {
  productId: string;
  email: string;
  /** The checkout form's attempt id: the same attempt opens one order, however often sent. */
  checkoutKey?: string;
  /** Strict mirror mode's TOKEN, returned in the signed redirect. */
  mirrorToken?: string | null;
}

export type PaymentService = ReturnType<typeof createPaymentService>;

export function createPaymentService({
  db,
  clock,
  log,
  partner,
  crypto,
  products,
  licenses,
  openSubscription,
  verifyPartnerEvent,
}: PaymentServiceDeps) {
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
   * (and, for a recurring product, opens the subscription) in the same transaction as the
   * order's move to paid, which only one caller can make: the confirm route and a partner
   * webhook arriving together issue one license.
   */
  async function fulfil(order: OrderRow): Promise<{ order: OrderRow; licenseKey: string | null }> {
    const payment = await readPayment(order);
    const now = clock.now();
    if (payment?.outcome === 'paid') {
      const product = await products.forCheckout(order.product_id);
      const result = await db.transaction().execute(async (trx) => {
        const paid = await store.moveOrder(trx, order.id, 'paid', ['pending', 'rejected'], {
          reason: '',
          now,
          paid: true,
        });
        if (!paid) return null;
        const recurring = product?.billingType === 'recurring';
        const interval = product?.interval ?? 'month';
        const periodEnd = recurring ? addInterval(now, interval) : null;
        const license = await licenses.issueForPurchase(trx, {
          appId: paid.app_id,
          userId: paid.user_id,
          productId: paid.product_id,
          email: paid.email,
          expiresAt: periodEnd,
          now,
        });
        const subscription =
          periodEnd && payment.savedCard
            ? await openSubscription(trx, {
                order: paid,
                licenseId: license.id,
                savedCard: payment.savedCard,
                interval,
                currentPeriodEnd: periodEnd,
                now,
              })
            : null;
        await store.queuePurchaseNotices(trx, paid, {
          licenseKey: license.key,
          productName: product?.name ?? '',
          sendToBuyer: product?.sendLicenseToCustomer ?? false,
          copiesTo: product?.licenseEmails ?? [],
          now,
        });
        const linked = await store.linkLicense(trx, paid.id, license.id, subscription?.id ?? null);
        await recordMerchantEvent(trx, 'payment.succeeded', linked, now, { licenseKey: license.key });
        if (subscription && periodEnd)
          await recordMerchantEvent(trx, 'subscription.created', linked, now, {
            currentPeriodEnd: iso(periodEnd),
          });
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

  /** A refunded payment cancels its transaction and revokes the license it bought. */
  async function refund(paymentIntentId: string) {
    const order = await store.findByPartnerPayment(db, partner.name, paymentIntentId);
    if (!order) return;
    const now = clock.now();
    const canceled = await db.transaction().execute(async (trx) => {
      const moved = await store.moveOrder(trx, order.id, 'canceled', ['paid'], {
        reason: 'The payment was refunded',
        now,
      });
      if (moved) await recordMerchantEvent(trx, 'payment.refunded', moved, now, {});
      return moved;
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
    const row = await db.transaction().execute(async (trx) => {
      const saved = await store.upsertDispute(trx, {
        partnerDisputeId: dispute.id,
        order,
        status: dispute.status ?? 'needs_response',
        amount: fromMinorUnits(dispute.amount ?? 0, order.currency),
        reason: dispute.reason ?? '',
        evidenceDueBy: dueBy ? new Date(dueBy * 1000) : null,
        now,
      });
      if (saved)
        await recordMerchantEvent(
          trx,
          saved.created_at.getTime() === saved.updated_at.getTime() ? 'dispute.created' : 'dispute.updated',
          order,
          now,
          {
            disputeId: saved.id,
            status: saved.status,
            reason: saved.reason,
            disputedAmount: fromDecimalString(saved.amount),
          },
        );
      return saved;
    });
    if (!row || !order.license_id) return;
    if (row.status === 'won') await licenses.moveForPayment(order.license_id, 'active', ['suspended']);
    else if (row.status === 'lost')
      await licenses.moveForPayment(order.license_id, 'revoked', ['active', 'suspended']);
    else await licenses.moveForPayment(order.license_id, 'suspended', ['active']);
    log.info({ disputeId: row.id, status: row.status }, 'dispute.recorded');
  }

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
    const order = await store.insertOrderOnce(db, {
      id: orderId,
      transaction_id: `txn_${randomBytes(12).toString('hex')}`,
      user_id: product.userId,
      product_id: product.id,
      app_id: product.appId,
      email: input.email.trim(),
      amount: product.exactPrice,
      currency: product.currency,
      payment_provider: provider,
      partner_payment_id: payment.id,
      client_secret:
        'clientSecret' in payment ? String(payment.clientSecret) : randomBytes(24).toString('base64url'),
      checkout_key: checkoutKey,
      mirror_token: input.mirrorToken ?? null,
      created_at: clock.now(),
    });
    log.info({ orderId: order.id, productId: product.id, provider }, 'order.created');
    return { order, product };
  }

  return {
    /** The buyer starts paying for a product: a pending order and the partner's payment intent. */
    async createPaymentIntent(input: OrderRequest) {
      const { order } = await openOrder(input, partner.name, (orderId, product) =>
        partner.createIntent({
          amountMinor: toMinorUnits(product.exactPrice, product.currency),
          currency: product.currency,
          idempotencyKey: orderId,
          email: input.email.trim(),
          keepCard: product.billingType === 'recurring',
        }),
      );
      return {
        orderId: order.id,
        transactionId: order.transaction_id,
        paymentIntentId: order.partner_payment_id,
        clientSecret: order.client_secret,
        amount: fromDecimalString(order.amount),
        currency: order.currency,
        paymentProvider: partner.name,
        testMode: partner.testMode,
      };
    },

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

    /** The paid purchase a license and e-mail prove (mirror validate), or null. */
    async findPaidPurchase(licenseKey: string, email: string) {
      return (await store.findPaidPurchase(db, licenseKey, email)) ?? null;
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
      const order = visibleTo(
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
      const row = visibleTo(principal, await store.findOwnedDispute(db, principal.userId, id), 'Dispute');
      return {
        ...toDisputeSummary(row),
        evidenceDueBy: isoOrNull(row.evidence_due_by),
        updatedAt: iso(row.updated_at),
      };
    },

    async getOrder(principal: Principal, id: string) {
      const order = visibleTo(principal, await store.findOwnedOrder(db, principal.userId, id), 'Order');
      return { ...toOrderSummary(order), licenseId: order.license_id, updatedAt: iso(order.updated_at) };
    },
  };
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

export function addInterval(from: Date, interval: 'month' | 'year'): Date {
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

/**
 * A checkout merchant event for the order's product, in the caller's transaction. Data carries
 * what a seller's backend needs to fulfil: the order, the buyer, the strict-mode token.
 */
export async function recordMerchantEvent(
  trx: Executor,
  type: MerchantEventType,
  order: OrderRow,
  now: Date,
  extra: Record<string, unknown>,
) {
  await recordEvent(trx, {
    type,
    userId: order.user_id,
    appId: order.app_id,
    occurredAt: now,
    data: {
      orderId: order.id,
      transactionId: order.transaction_id,
      productId: order.product_id,
      licenseId: order.license_id,
      subscriptionId: order.subscription_id,
      email: order.email,
      amount: fromDecimalString(order.amount),
      currency: order.currency,
      paymentProvider: order.payment_provider,
      token: order.mirror_token,
      ...extra,
    },
  });
}

/** The namespace of checkout attempt order ids (fixed: one attempt always names one order). */
const CHECKOUT_ATTEMPT_NAMESPACE = '5b0c8a3e-5c1d-4f6e-9a57-3f2d1c0b9e84';
