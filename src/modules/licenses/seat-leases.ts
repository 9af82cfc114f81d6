import type { LicenseStatus } from '../../platform/db/schema.js';
import type { NameLimitExcess } from '../../platform/http/rate-limit.js';
import { recordEntry } from '../timeline/index.js';
import type { Found } from './cache-entry.js';
import type { VerificationDeps, VerificationLookups } from './deps.js';
import { effectiveStatus, grantsUse, keepsAccess } from './license-status.js';
import type { DeviceLabelInput, VerificationResultType } from './schemas.js';
import { recordSeatEvent, type SeatReleaseReason } from './seat-events.js';
import * as store from './store.js';
import type { VerificationAnswers } from './verification-answer.js';

type SeatLeaseDeps = Pick<VerificationDeps, 'db' | 'clock' | 'log'> &
  VerificationLookups &
  VerificationAnswers;

/** What happened to a seat under the license lock. */
type SeatOutcome =
  | { kind: 'held'; leaseExpiresAt: Date }
  | { kind: 'full' | 'not_floating' | 'gone' }
  | { kind: 'inactive'; status: LicenseStatus; expiresAt: Date | null };

/**
 * Seats of a floating license taken and given back by its client (checkout, checkin), built
 * from verification's own lookups and answers, so a seat's call judges a key as a verify does.
 */
export function createSeatLeases(deps: SeatLeaseDeps) {
  const { db, clock, log, lookup, usable, checkedIn, answer, unknownKey } = deps;
  return {
    /**
     * Takes a seat on a floating license for this device, or renews the one it holds (a
     * heartbeat), until now + the license's lease. Decided under the license row lock, counting
     * only live leases, so seats never exceed maxSeats and a lapsed lease is free at once.
     */
    async checkout(
      lookedUp: Found | null,
      input: { hwuid: string; checkIn?: boolean } & DeviceLabelInput,
    ): Promise<VerificationResultType> {
      if (!lookedUp) return unknownKey();
      const found = lookedUp.state;
      const now = clock.now();
      if (!usable(found, now)) return answer(found, { hwBound: false }, now);
      if (!(await checkedIn(found, input.checkIn ?? true, now)))
        return answer(found, { code: 'check_in_overdue', hwBound: false }, now);
      if (!found.floating) return answer(found, { code: 'not_floating', hwBound: false }, now);
      const outcome = await db.transaction().execute(async (trx): Promise<SeatOutcome> => {
        const license = await store.lockLicense(trx, found.id);
        if (!license) return { kind: 'gone' };
        // The cached state may be a moment old; the locked row decides.
        if (
          !grantsUse(effectiveStatus(license.status, license.expires_at, now)) &&
          !keepsAccess(license, now)
        )
          return { kind: 'inactive', status: license.status, expiresAt: license.expires_at };
        if (!license.floating || license.max_seats === null || license.lease_seconds === null)
          return { kind: 'not_floating' };
        const inUse = await store.seatsInUse(trx, license.id, input.hwuid, now);
        // Leases found lapsed are recorded as they are cleared: a lease lapses without a call.
        for (const lapsed of inUse.lapsed) {
          await recordEntry(trx, license, {
            type: 'seat.lapsed',
            hwuid: lapsed.hwuid,
            occurredAt: lapsed.lease_expires_at,
          });
        }
        if (!inUse.mine && inUse.others >= license.max_seats) return { kind: 'full' };
        const leaseExpiresAt = new Date(now.getTime() + license.lease_seconds * 1000);
        await store.holdSeat(trx, license.id, input.hwuid, now, leaseExpiresAt, inUse.mine, input);
        if (!inUse.mine) {
          await recordSeatEvent(trx, 'license.seat.acquired', license, now, {
            hwuid: input.hwuid,
            name: input.name ?? null,
            platform: input.platform ?? null,
            acquiredAt: now.toISOString(),
            leaseExpiresAt: leaseExpiresAt.toISOString(),
          });
        }
        return { kind: 'held', leaseExpiresAt };
      });
      switch (outcome.kind) {
        case 'held':
          return answer(found, { hwBound: true, leaseExpiresAt: outcome.leaseExpiresAt }, now);
        case 'full':
          log.info({ licenseId: found.id }, 'license.seat.refused');
          return answer(found, { code: 'no_seat_available', hwBound: false }, now);
        case 'not_floating':
          return answer(found, { code: 'not_floating', hwBound: false }, now);
        case 'inactive':
          // Changed since the cached read (suspended, revoked, expired): the locked row says how.
          return answer(
            { ...found, status: outcome.status, expires_at: outcome.expiresAt },
            { hwBound: false },
            now,
          );
        case 'gone':
          return unknownKey();
      }
    },

    /** Gives a device's seat back at once (its lease would lapse anyway). */
    async checkin(input: { key: string; hwuid: string; appId?: string }, excess?: NameLimitExcess) {
      const lookedUp = await lookup(input.key, null, input.appId, excess);
      if (!lookedUp) return { released: false, code: 'license_not_found' as const };
      const found = lookedUp.state;
      if (!found.floating) return { released: false, code: 'not_floating' as const };
      const now = clock.now();
      const released = await db.transaction().execute(async (trx) => {
        const license = await store.lockLicense(trx, found.id);
        if (!license || !(await store.releaseSeat(trx, license.id, input.hwuid, now))) return false;
        await recordSeatEvent(trx, 'license.seat.released', license, now, {
          hwuid: input.hwuid,
          releasedAt: now.toISOString(),
          reason: 'checkin' satisfies SeatReleaseReason,
        });
        return true;
      });
      if (!released) return { released: false, code: 'seat_not_held' as const };
      log.info({ licenseId: found.id }, 'license.seat.released');
      return { released: true };
    },
  };
}
