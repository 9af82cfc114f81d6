import type { LicenseStatus } from '../../platform/db/schema.js';
import { AppError } from '../../platform/errors.js';
import type { Principal } from '../../platform/http/principal.js';
import { type Actor, actorOf, BILLING, recordEntry, SYSTEM, type TimelineType } from '../timeline/index.js';
import type { SellerUseCaseDeps } from './deps.js';
import { recordLicenseEvent } from './license-events.js';
import { toLicense } from './license-resource.js';
import * as store from './store.js';

/** How many licenses the expiry job moves per statement. */
const EXPIRY_BATCH = 500;

/** A status move as the license's timeline names it. */
const TIMELINE_TYPE_OF: Record<LicenseStatus, TimelineType> = {
  active: 'license.reinstated',
  trial: 'license.updated',
  suspended: 'license.suspended',
  revoked: 'license.revoked',
  expired: 'license.expired',
};

/**
 * A license's status moves (license-status.ts names them): the seller's suspend, revoke and
 * reinstate, a payment's refund or dispute, and the expiry job.
 */
export function createStatusChanges({ db, clock, log, cache, requireLicense }: SellerUseCaseDeps) {
  /**
   * Moves a license to `to`, only from the states in `from`, with its event in the same
   * transaction: back to active is license.updated, suspended or revoked is license.revoked.
   */
  async function moveStatus(
    licenseId: string,
    to: LicenseStatus,
    from: readonly LicenseStatus[],
    actor: Actor,
    data: Record<string, unknown> = {},
  ) {
    const now = clock.now();
    const event = to === 'active' ? 'license.updated' : 'license.revoked';
    const row = await db.transaction().execute(async (trx) => {
      const moved = await store.setLicenseStatus(trx, licenseId, to, from, now);
      if (moved) {
        await recordLicenseEvent(trx, event, moved, now);
        await recordEntry(trx, moved, { type: TIMELINE_TYPE_OF[to], actor, data, occurredAt: now });
        await cache.announceLicense(trx, licenseId);
      }
      return moved;
    });
    cache.forgetLicense(licenseId);
    if (row) log.info({ licenseId, status: to }, 'license.status.changed');
    return row;
  }

  /** A seller's status move, refused with 409 when the license is not in a state it may leave. */
  async function move(
    principal: Principal,
    appId: string,
    licenseId: string,
    to: LicenseStatus,
    from: readonly LicenseStatus[],
  ) {
    const license = await requireLicense(principal, appId, licenseId);
    const row = await moveStatus(license.id, to, from, actorOf(principal));
    if (!row)
      throw new AppError(
        'conflict',
        `A ${license.status} license cannot be ${to === 'active' ? 'reinstated' : to}`,
      );
    return toLicense(row);
  }

  return {
    /**
     * A status move caused by a payment (refund, dispute), with its event; nothing happens when
     * the license is not in a state it may leave. Returns whether it moved. `cause` (the order or
     * dispute, and why) goes in the license's timeline, made by billing.
     */
    async moveForPayment(
      licenseId: string,
      to: LicenseStatus,
      from: readonly LicenseStatus[],
      cause: Record<string, string> = {},
    ): Promise<boolean> {
      return (await moveStatus(licenseId, to, from, BILLING, cause)) !== undefined;
    },

    suspend: (principal: Principal, appId: string, licenseId: string) =>
      move(principal, appId, licenseId, 'suspended', ['active', 'trial']),
    revoke: (principal: Principal, appId: string, licenseId: string) =>
      move(principal, appId, licenseId, 'revoked', ['active', 'trial', 'suspended', 'expired']),
    reinstate: (principal: Principal, appId: string, licenseId: string) =>
      move(principal, appId, licenseId, 'active', ['suspended']),

    /**
     * Marks licenses past their expiry as expired, each with one license.expired event in the
     * same transaction. Rows are claimed with SKIP LOCKED and moved only from active, so nodes
     * running this together never expire (or announce) a license twice.
     */
    async expireDue(): Promise<number> {
      let total = 0;
      for (;;) {
        const now = clock.now();
        const moved = await db.transaction().execute(async (trx) => {
          const rows = await store.expireDue(trx, now, EXPIRY_BATCH);
          for (const row of rows) {
            await recordLicenseEvent(trx, 'license.expired', row, now);
            await recordEntry(trx, row, { type: 'license.expired', actor: SYSTEM, occurredAt: now });
            await cache.announceLicense(trx, row.id);
          }
          return rows;
        });
        for (const row of moved) cache.forgetLicense(row.id);
        total += moved.length;
        if (moved.length < EXPIRY_BATCH) break;
      }
      if (total > 0) log.info({ count: total }, 'license.expired');
      return total;
    },
  };
}
