import type { Executor } from '../../platform/db/database.js';
import { type EventData, recordEvent } from '../events/index.js';
import { type Actor, recordEntry } from '../timeline/index.js';

/**
 * Why a seat was given back, in `license.seat.released`: the device checked in, the seller
 * released it, or the buyer did in the portal.
 */
export type SeatReleaseReason = 'checkin' | 'seller' | 'buyer';

/**
 * A seat event, in the transaction that took or gave back the seat (outbox), with its entry in
 * the license's timeline (`actor`: who gave it back, when not the device itself).
 */
export async function recordSeatEvent<T extends 'license.seat.acquired' | 'license.seat.released'>(
  trx: Executor,
  type: T,
  license: { id: string; key: string; app_id: string; user_id: string; product_id: string | null },
  now: Date,
  seat: Omit<EventData<T>, 'licenseId' | 'licenseKey' | 'productId'>,
  actor: Actor | null = null,
) {
  const data = { licenseId: license.id, licenseKey: license.key, productId: license.product_id, ...seat };
  await recordEvent(trx, {
    type,
    userId: license.user_id,
    appId: license.app_id,
    // The spread above is the whole of EventData<T>, which the compiler cannot see through a generic.
    data: data as EventData<T>,
    occurredAt: now,
  });
  const { hwuid, ...details } = seat as { hwuid: string } & Record<string, unknown>;
  await recordEntry(trx, license, {
    type: type === 'license.seat.acquired' ? 'seat.acquired' : 'seat.released',
    hwuid,
    actor,
    data: details,
    occurredAt: now,
  });
}
