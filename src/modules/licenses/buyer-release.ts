import type { Db, Executor } from '../../platform/db/database.js';
import { PORTAL_POLICY_DEFAULTS } from '../products/index.js';
import * as store from './store.js';

/**
 * A device release by the license's buyer (the buyer portal), bound by two rules the seller's
 * release does not know:
 * - a device an offline license file holds stays bound until the file expires, since the file
 *   keeps working on that machine whatever the server says;
 * - the license's product allows so many buyer releases in any period of days
 *   (PORTAL_POLICY_DEFAULTS for a license without a product).
 * Without them a buyer could download a file for machine A, release A, download one for B, and
 * run any number of air-gapped machines on a one-device license.
 */

const DAY_MS = 86_400_000;
/** Releases older than the longest period a product may set are never counted again. */
export const LONGEST_RELEASE_PERIOD_DAYS = 365;

export interface ReleaseAllowance {
  allowed: number;
  periodDays: number;
  /** Releases left now. */
  left: number;
  /** When the next release is allowed again, while none is left; null when buyers get none. */
  nextReleaseAt: Date | null;
}

/**
 * What a license's buyer may still release: the product's allowance (the defaults without a
 * product) less the releases made in the last `periodDays` days, counted up to `now`.
 */
export function releaseAllowance(
  product: { portal_device_releases: number | null; portal_release_period_days: number | null },
  releases: readonly Date[],
  now: Date,
): ReleaseAllowance {
  const allowed = product.portal_device_releases ?? PORTAL_POLICY_DEFAULTS.portalDeviceReleases;
  const periodDays = product.portal_release_period_days ?? PORTAL_POLICY_DEFAULTS.portalReleasePeriodDays;
  const period = periodDays * DAY_MS;
  const recent = releases
    .map((at) => at.getTime())
    .filter((at) => at > now.getTime() - period && at <= now.getTime())
    .sort((a, b) => a - b);
  const left = Math.max(0, allowed - recent.length);
  // The allowance comes back as releases age out of the period: this one must, first.
  const agingOut = left > 0 || allowed === 0 ? undefined : recent[recent.length - allowed];
  return {
    allowed,
    periodDays,
    left,
    nextReleaseAt: agingOut === undefined ? null : new Date(agingOut + period),
  };
}

export type BuyerReleaseOutcome =
  | { released: true }
  | { released: false; code: 'device_bound_offline'; releasableAt: Date }
  | {
      released: false;
      code: 'release_limit_reached';
      allowed: number;
      periodDays: number;
      /** When the next release will be allowed; null when the product allows buyers none. */
      nextReleaseAt: Date | null;
    };

/** Thrown inside the transaction so a refused release undoes the device it freed. */
class Refused extends Error {
  constructor(readonly outcome: BuyerReleaseOutcome) {
    super(outcome.released ? 'released' : outcome.code);
  }
}

/**
 * Releases the device when both rules allow it, in one transaction with `announce` (the
 * verification cache's notice). Undefined when the device is not bound to the license.
 */
export async function releaseForBuyer(
  db: Db,
  input: {
    licenseId: string;
    hwuid: string;
    now: Date;
    announce: (trx: Executor) => Promise<unknown>;
  },
): Promise<BuyerReleaseOutcome | undefined> {
  const { licenseId, hwuid, now } = input;
  return db
    .transaction()
    .execute(async (trx): Promise<BuyerReleaseOutcome | undefined> => {
      // Conditional on the hold, so a file signed a moment ago is never released behind its back.
      if (!(await store.releaseDevice(trx, licenseId, hwuid, { notHeldAt: now }))) {
        const device = await store.findDevice(trx, licenseId, hwuid);
        if (!device) return undefined;
        return { released: false, code: 'device_bound_offline', releasableAt: device.offline_until ?? now };
      }
      // The release above updated the license row, which stays locked until commit: buyer
      // releases of one license take turns from here, so each counts the others.
      const since = new Date(now.getTime() - LONGEST_RELEASE_PERIOD_DAYS * DAY_MS);
      const allowance = releaseAllowance(
        await store.portalPolicyOfLicense(trx, licenseId),
        await store.buyerReleasesSince(trx, licenseId, since),
        now,
      );
      if (allowance.left === 0) {
        const { allowed, periodDays, nextReleaseAt } = allowance;
        throw new Refused({
          released: false,
          code: 'release_limit_reached',
          allowed,
          periodDays,
          nextReleaseAt,
        });
      }
      await store.recordBuyerRelease(trx, licenseId, now, since);
      await input.announce(trx);
      return { released: true };
    })
    .catch((error: unknown) => {
      if (error instanceof Refused) return error.outcome;
      throw error;
    });
}
