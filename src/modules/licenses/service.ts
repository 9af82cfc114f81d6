import type { Executor } from '../../platform/db/database.js';
import type { LicenseMetadata } from '../../platform/db/schema.js';
import { invalidField, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import type { Principal } from '../../platform/http/principal.js';
import { requestInstant } from '../../platform/http/schemas.js';
import { licenseLimits } from '../products/index.js';
import { actorOf, BILLING, recordEntry } from '../timeline/index.js';
import type { LicenseServiceDeps } from './deps.js';
import { createDeviceAdmin } from './device-admin.js';
import { createIssuing, refuseShapeMismatch } from './issuing.js';
import { recordLicenseEvent } from './license-events.js';
import { generateLicenseKey } from './license-key.js';
import { licenseFinder, toLicense } from './license-resource.js';
import { createLicenseLists } from './lists.js';
import type { LicenseResource, LicenseUpdateInput } from './schemas.js';
import { createStatusChanges } from './status-changes.js';
import * as store from './store.js';
import { namesTerms, termsOfRow, termsWith } from './terms.js';
import { createUsageAdmin } from './usage-admin.js';

export type { LicenseServiceDeps } from './deps.js';

export type LicenseService = ReturnType<typeof createLicenseService>;

/**
 * The licenses module's service, composed of its use cases (issuing.ts, status-changes.ts,
 * device-admin.ts, usage-admin.ts, lists.ts), with the seller's reads and edits of a license and
 * what other modules ask of one (a renewal, a receipt's key) below; this is its whole surface.
 */
export function createLicenseService(deps: LicenseServiceDeps) {
  const { db, clock, log, products, cache } = deps;
  const requireLicense = licenseFinder(deps);
  const issuing = createIssuing(deps);
  const statuses = createStatusChanges({ ...deps, requireLicense });
  const devices = createDeviceAdmin({ ...deps, requireLicense });
  const usage = createUsageAdmin({ ...deps, requireLicense });
  const lists = createLicenseLists(deps);

  return {
    issue: issuing.issue,
    issueForPurchase: issuing.issueForPurchase,
    issueTrial: issuing.issueTrial,
    moveForPayment: statuses.moveForPayment,
    suspend: statuses.suspend,
    revoke: statuses.revoke,
    reinstate: statuses.reinstate,
    expireDue: statuses.expireDue,
    devices: devices.devices,
    seats: devices.seats,
    releaseSeat: devices.releaseSeat,
    releaseBuyerSeat: devices.releaseBuyerSeat,
    releaseDevice: devices.releaseDevice,
    releaseBuyerDevice: devices.releaseBuyerDevice,
    usage: usage.usage,
    setUsage: usage.setUsage,

    /**
     * Gives the product's existing licenses the limits of its current policy, in one transaction,
     * with license.updated for each one changed; every node forgets what it held of the seller.
     * Licenses of the other kind (floating against node-locked) cannot change kind under their
     * devices and are counted as skipped; revoked licenses and trials keep theirs; expiry dates
     * stay as they were issued.
     */
    async applyProductPolicy(principal: Principal, productId: string) {
      const terms = await products.requireLicenseTerms(principal, productId);
      const now = clock.now();
      const result = await db.transaction().execute(async (trx) => {
        const applied = await store.applyLimits(trx, productId, licenseLimits(terms.licensePolicy), now);
        for (const row of applied.changed) {
          await recordLicenseEvent(trx, 'license.updated', row, now);
          await recordEntry(trx, row, {
            type: 'license.updated',
            actor: actorOf(principal),
            data: { cause: 'product_policy', productId },
            occurredAt: now,
          });
        }
        if (applied.changed.length > 0) await cache.announceSeller(trx, principal.userId);
        return applied;
      });
      if (result.changed.length > 0) cache.forgetSeller(principal.userId);
      log.info({ productId, updated: result.changed.length }, 'product.license_policy.applied');
      return { updated: result.changed.length, skipped: result.otherKind };
    },

    /**
     * Whether the buyer (address as normalised) already holds a non-trial license of the product
     * (trials are refused).
     */
    holdsPaidLicense: (productId: string, email: string) => store.holdsPaidLicense(db, productId, email),

    /**
     * A paid renewal moves the license's expiry to the new period end, in the renewal's own
     * transaction; a license that expired meanwhile becomes active again. Suspended or revoked
     * licenses keep their status (a dispute or the seller decided that).
     */
    async extendForRenewal(trx: Executor, licenseId: string, expiresAt: Date, now: Date) {
      const row = await store.extendExpiry(trx, licenseId, expiresAt, now);
      if (row) {
        await recordLicenseEvent(trx, 'license.updated', row, now);
        await recordEntry(trx, row, {
          type: 'license.renewed',
          actor: BILLING,
          data: { expiresAt: expiresAt.toISOString() },
          occurredAt: now,
        });
        await cache.announceLicense(trx, licenseId);
      }
      // Before the caller commits; the announcement at commit drops what a read meanwhile stored.
      cache.forgetLicense(licenseId);
      return row;
    },

    /** A license's key, for the buyer who proved the purchase (checkout receipt). */
    async keyOf(licenseId: string): Promise<string | null> {
      return (await store.findLicenseById(db, licenseId))?.key ?? null;
    },

    get: async (principal: Principal, appId: string, licenseId: string) =>
      toLicense(await requireLicense(principal, appId, licenseId)),

    list: lists.list,
    listAll: lists.listAll,
    exportAll: lists.exportAll,

    /** Changes e-mail, expiry, metadata or device limit. Extending an expired license revives it. */
    async update(principal: Principal, appId: string, licenseId: string, input: LicenseUpdateInput) {
      const license = await requireLicense(principal, appId, licenseId);
      // Whether a license floats is fixed at issue, so this check cannot race a change of it.
      refuseShapeMismatch(license.floating, input);
      const now = clock.now();
      const changes = {
        email: input.email === undefined ? undefined : (input.email?.trim() ?? null),
        expiresAt:
          input.expiresAt === undefined
            ? undefined
            : input.expiresAt === null
              ? null
              : requestInstant(input.expiresAt, 'expiresAt'),
        metadata: input.metadata as LicenseMetadata | undefined,
        maxDevices: input.maxDevices,
        features: input.features,
        maxSeats: input.maxSeats,
        leaseSeconds: input.leaseSeconds,
        terms: namesTerms(input) ? termsWith(termsOfRow(license), input) : undefined,
      };
      const row = await db.transaction().execute(async (trx) => {
        const updated = await store.updateLicenseDetails(trx, license.id, changes, now);
        if (updated) {
          await recordLicenseEvent(trx, 'license.updated', updated, now);
          await recordEntry(trx, updated, {
            type: 'license.updated',
            actor: actorOf(principal),
            // The fields changed, not their values: metadata may hold what the seller keeps private.
            data: {
              fields: Object.keys(input).filter((field) => input[field as keyof typeof input] !== undefined),
            },
            occurredAt: now,
          });
          await cache.announceLicense(trx, license.id);
        }
        return updated;
      });
      cache.forgetLicense(license.id);
      if (!row) {
        throw invalidField('maxDevices', 'is below the number of devices already bound; release some first');
      }
      return toLicense(row);
    },

    /**
     * A new key for the license (a key that leaked): same license, devices, seats and history;
     * the old key answers license_not_found on every node from the commit on (the cache hears the
     * change in the same transaction). When the product mails licenses to buyers, the buyer gets
     * the new key by e-mail. Tokens and files already signed name the license, not the key, and
     * stay valid until they expire.
     */
    async regenerateKey(
      principal: Principal,
      appId: string,
      licenseId: string,
      answer?: IdempotentAnswer<LicenseResource>,
    ) {
      const license = await requireLicense(principal, appId, licenseId);
      const product = license.product_id ? await products.forCheckout(license.product_id) : null;
      const now = clock.now();
      const changed = await transactionWithAnswer(db, answer, async (trx) => {
        const row = await store.replaceKey(trx, license.id, generateLicenseKey(), now);
        if (!row) throw notFound('License');
        await recordLicenseEvent(trx, 'license.updated', row, now);
        await recordEntry(trx, row, {
          type: 'license.key_regenerated',
          actor: actorOf(principal),
          occurredAt: now,
        });
        await cache.announceLicense(trx, row.id);
        if (product?.sendLicenseToCustomer && row.email && row.product_id)
          await store.queueNewKeyNotice(trx, {
            email: row.email,
            productId: row.product_id,
            productName: product.name,
            licenseKey: row.key,
            licenseId: row.id,
            now,
          });
        return toLicense(row);
      });
      cache.forgetLicense(changed.id);
      log.info({ licenseId: changed.id }, 'license.key.regenerated');
      return changed;
    },
  };
}
