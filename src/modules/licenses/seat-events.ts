import type { Executor } from '../../platform/db/database.js';
import { type EventType, recordEvent } from '../events/index.js';

/**
 * Why a seat was given back, in `license.seat.released`: the device checked in, the seller
 * released it, or the buyer did in the portal.
 */
export type SeatReleaseReason = 'checkin' | 'seller' | 'buyer';

/** A seat event, in the transaction that took or gave back the seat (outbox). */
export async function recordSeatEvent(
  trx: Executor,
  type: Extract<EventType, 'license.seat.acquired' | 'license.seat.released'>,
  license: { id: string; key: string; app_id: string; user_id: string; product_id: string | null },
  now: Date,
  seat: Record<string, string | null>,
) {
  await recordEvent(trx, {
    type,
    userId: license.user_id,
    appId: license.app_id,
    data: { licenseId: license.id, licenseKey: license.key, productId: license.product_id, ...seat },
    occurredAt: now,
  });
}
