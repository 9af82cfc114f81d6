import { notFound } from '../../platform/errors.js';
import type { Principal } from '../../platform/http/principal.js';
import { iso } from '../../platform/http/schemas.js';
import { type Actor, actorOf, BUYER, recordEntryById } from '../timeline/index.js';
import { type BuyerReleaseOutcome, releaseForBuyer } from './buyer-release.js';
import type { SellerUseCaseDeps } from './deps.js';
import { recordSeatEvent, type SeatReleaseReason } from './seat-events.js';
import * as store from './store.js';

/**
 * The devices bound to a license and the seats held on a floating one, as the seller lists and
 * releases them, and as the buyer releases them in the portal.
 */
export function createDeviceAdmin({ db, clock, log, cache, requireLicense }: SellerUseCaseDeps) {
  async function releaseBoundDevice(licenseId: string, hwuid: string, actor: Actor): Promise<void> {
    const released = await db.transaction().execute(async (trx) => {
      if (!(await store.releaseDevice(trx, licenseId, hwuid))) return false;
      await cache.announceLicense(trx, licenseId);
      await recordEntryById(trx, licenseId, {
        type: 'device.released',
        hwuid,
        actor,
        occurredAt: clock.now(),
      });
      return true;
    });
    cache.forgetLicense(licenseId);
    if (!released) throw notFound('Device');
    log.info({ licenseId, hwuid }, 'license.device.released');
  }

  /** Frees a live seat at once, with license.seat.released; 404 when the device holds none. */
  async function releaseHeldSeat(
    licenseId: string,
    hwuid: string,
    reason: SeatReleaseReason,
    actor: Actor,
  ): Promise<void> {
    const now = clock.now();
    const released = await db.transaction().execute(async (trx) => {
      const locked = await store.lockLicense(trx, licenseId);
      if (!locked || !(await store.releaseSeat(trx, locked.id, hwuid, now))) return false;
      await recordSeatEvent(
        trx,
        'license.seat.released',
        locked,
        now,
        {
          hwuid,
          releasedAt: now.toISOString(),
          reason,
        },
        actor,
      );
      return true;
    });
    if (!released) throw notFound('Seat');
    log.info({ licenseId, reason }, 'license.seat.released');
  }

  return {
    async devices(principal: Principal, appId: string, licenseId: string) {
      const license = await requireLicense(principal, appId, licenseId);
      const rows = await store.listDevices(db, license.id);
      return {
        devices: rows.map((d) => ({
          hwuid: d.hwuid,
          name: d.name,
          platform: d.platform,
          activatedAt: iso(d.activated_at),
          offlineUntil: d.offline_until && d.offline_until > clock.now() ? iso(d.offline_until) : null,
        })),
        total: rows.length,
      };
    },

    /** The seats held now on a floating license: only unexpired leases. */
    async seats(principal: Principal, appId: string, licenseId: string) {
      const license = await requireLicense(principal, appId, licenseId);
      const rows = await store.listSeats(db, license.id, clock.now());
      return {
        seats: rows.map((seat) => ({
          hwuid: seat.hwuid,
          name: seat.name,
          platform: seat.platform,
          acquiredAt: iso(seat.acquired_at),
          leaseExpiresAt: iso(seat.lease_expires_at),
        })),
        total: rows.length,
        maxSeats: license.max_seats,
      };
    },

    /**
     * The seller takes a floating license's seat back at once (a stuck seat need not wait for its
     * lease), with license.seat.released, reason seller. 404 when the device holds no live seat.
     */
    async releaseSeat(principal: Principal, appId: string, licenseId: string, hwuid: string) {
      const license = await requireLicense(principal, appId, licenseId);
      await releaseHeldSeat(license.id, hwuid, 'seller', actorOf(principal));
    },

    /**
     * The buyer gives a seat back in the portal, on a license the caller has already matched to
     * its buyer: as the seller's release, reason buyer, with no allowance to use up (a seat
     * lapses by itself, and maxSeats holds whoever takes it next). 404 when no live seat.
     */
    releaseBuyerSeat: (licenseId: string, hwuid: string) => releaseHeldSeat(licenseId, hwuid, 'buyer', BUYER),

    async releaseDevice(principal: Principal, appId: string, licenseId: string, hwuid: string) {
      const license = await requireLicense(principal, appId, licenseId);
      await releaseBoundDevice(license.id, hwuid, actorOf(principal));
    },

    /**
     * Frees a device's place on a license the caller has already matched to its buyer (the
     * buyer portal), when buyer-release.ts allows it: not while an offline file holds the
     * device, and within the product's release allowance. 404 for a device not bound to it.
     */
    async releaseBuyerDevice(licenseId: string, hwuid: string): Promise<BuyerReleaseOutcome> {
      const now = clock.now();
      const outcome = await releaseForBuyer(db, {
        licenseId,
        hwuid,
        now,
        announce: async (trx) => {
          await cache.announceLicense(trx, licenseId);
          await recordEntryById(trx, licenseId, {
            type: 'device.released',
            hwuid,
            actor: BUYER,
            occurredAt: now,
          });
        },
      });
      if (!outcome) throw notFound('Device');
      if (!outcome.released) {
        log.info({ licenseId, code: outcome.code }, 'license.device.release_refused');
        return outcome;
      }
      cache.forgetLicense(licenseId);
      log.info({ licenseId, hwuid }, 'license.device.released');
      return outcome;
    },
  };
}
