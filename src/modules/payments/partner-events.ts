import { AppError, notFound } from '../../platform/errors.js';
import { fromDecimalString, fromMinorUnits } from '../../platform/money.js';
import type { PartnerEvent, PaymentServiceDeps } from './deps.js';
import type { Fulfilment } from './fulfil-order.js';
import { recordDisputeChange, recordMerchantEvent, recordOrderRefunded } from './order-events.js';
import * as store from './store.js';

/** Partner events that say a payment changed; each is answered by re-reading the payment. */
const PAYMENT_EVENTS = new Set([
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.processing',
]);

/** The card partner's webhook: payment confirmations, refunds and disputes. */
export function createPartnerEvents({
  db,
  clock,
  log,
  partner,
  licenses,
  verifyPartnerEvent,
  fulfilment: { fulfil },
}: Pick<PaymentServiceDeps, 'db' | 'clock' | 'log' | 'partner' | 'licenses' | 'verifyPartnerEvent'> & {
  fulfilment: Pick<Fulfilment, 'fulfil'>;
}) {
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
      if (moved) {
        await recordMerchantEvent(trx, 'payment.refunded', moved, now, {});
        await recordOrderRefunded(trx, moved, now);
      }
      return moved;
    });
    if (canceled?.license_id)
      await licenses.moveForPayment(canceled.license_id, 'revoked', ['active', 'suspended', 'expired'], {
        orderId: order.id,
        cause: 'refund',
      });
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
      const change = await store.saveDispute(trx, {
        partnerDisputeId: dispute.id,
        order,
        status: dispute.status ?? 'needs_response',
        amount: fromMinorUnits(dispute.amount ?? 0, order.currency),
        reason: dispute.reason ?? '',
        evidenceDueBy: dueBy ? new Date(dueBy * 1000) : null,
        now,
      });
      if (!change) return undefined;
      const { saved, before } = change;
      // The merchant webhook hears of every event that touched an open dispute, as it always has.
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
      await recordDisputeChange(trx, order, saved, before, now);
      return saved;
    });
    if (!row || !order.license_id) return;
    const cause = { disputeId: row.id, orderId: order.id, cause: `dispute_${row.status}` };
    if (row.status === 'won') await licenses.moveForPayment(order.license_id, 'active', ['suspended'], cause);
    else if (row.status === 'lost')
      await licenses.moveForPayment(order.license_id, 'revoked', ['active', 'suspended'], cause);
    else await licenses.moveForPayment(order.license_id, 'suspended', ['active'], cause);
    log.info({ disputeId: row.id, status: row.status }, 'dispute.recorded');
  }

  return {
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
  };
}
