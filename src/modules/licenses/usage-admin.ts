import type { LicenseRow } from '../../platform/db/schema.js';
import { invalidField, notFound } from '../../platform/errors.js';
import type { Principal } from '../../platform/http/principal.js';
import type { SellerUseCaseDeps } from './deps.js';
import * as store from './store.js';
import { usageStanding, usePeriods } from './terms.js';

/** A license's usage quota as the seller reads and corrects it (usage.ts consumes it). */
export function createUsageAdmin({ db, clock, log, requireLicense }: SellerUseCaseDeps) {
  return {
    /** The license's usage: its quota and the count of the current period. */
    async usage(principal: Principal, appId: string, licenseId: string) {
      return usageOfLicense(await requireLicense(principal, appId, licenseId), clock.now());
    },

    /**
     * Sets the count of the current period (a correction, or 0 to reset it). A license without a
     * quota is refused, naming maxUses.
     */
    async setUsage(principal: Principal, appId: string, licenseId: string, uses: number) {
      const license = await requireLicense(principal, appId, licenseId);
      if (license.max_uses === null)
        throw invalidField(
          'maxUses',
          'is not set on this license: give it a quota first (PATCH the license)',
        );
      const now = clock.now();
      const row = await store.setUses(db, license.id, uses, usePeriods(now), now);
      if (!row) throw notFound('License');
      log.info({ licenseId: license.id, uses }, 'license.usage.set');
      return usageOfLicense(row, now);
    },
  };
}

function usageOfLicense(row: LicenseRow, now: Date) {
  const standing = usageStanding(row, now);
  return {
    licenseId: row.id,
    maxUses: row.max_uses,
    uses: standing.uses,
    usesRemaining: standing.remaining,
    usesResetInterval: row.uses_reset_interval,
    resetsAt: standing.resetsAt,
  };
}
