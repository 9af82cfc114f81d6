import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import type { LicenseMetadata, LicenseRow, LicenseStatus } from '../../platform/db/schema.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import type { Principal } from '../../platform/http/principal.js';
import { iso, isoOrNull, type Page, requestInstant } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import type { AppService } from '../apps/index.js';
import { type CoreEventType, recordEvent } from '../events/index.js';
import {
  type LicensePolicy,
  licenseLimits,
  NO_TERMS,
  type ProductService,
  policyExpiry,
  policyTerms,
} from '../products/index.js';
import { type BuyerReleaseOutcome, releaseForBuyer } from './buyer-release.js';
import { generateLicenseKey, normalizeLicenseKey } from './license-key.js';
import {
  DEFAULT_LEASE_SECONDS,
  type LicenseCreateInput,
  type LicenseFilter,
  type LicenseResource,
  type LicenseUpdateInput,
} from './schemas.js';
import { recordSeatEvent, type SeatReleaseReason } from './seat-events.js';
import * as store from './store.js';
import { checkInDeadline, namesTerms, termsOfRow, termsWith, usageStanding, usePeriods } from './terms.js';
import type { VerificationCache } from './verification-cache.js';

export interface LicenseServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  apps: Pick<AppService, 'requireOwnedApp'>;
  products: Pick<ProductService, 'licenseTerms' | 'requireLicenseTerms' | 'forCheckout'>;
  /** Every change to what verification reads is announced in its transaction, then forgotten here. */
  cache: Pick<VerificationCache, 'announceLicense' | 'forgetLicense' | 'announceSeller' | 'forgetSeller'>;
}

/** How many licenses the expiry job moves per statement. */
const EXPIRY_BATCH = 500;

export type LicenseService = ReturnType<typeof createLicenseService>;

export function createLicenseService({ db, clock, log, apps, products, cache }: LicenseServiceDeps) {
  async function requireLicense(principal: Principal, appId: string, licenseId: string): Promise<LicenseRow> {
    const app = await apps.requireOwnedApp(principal, appId);
    const license = await store.findAppLicense(db, app.id, licenseId);
    if (!license) throw notFound('License');
    return license;
  }

  /**
   * Moves a license to `to`, only from the states in `from`, with its event in the same
   * transaction: back to active is license.updated, suspended or revoked is license.revoked.
   */
  async function moveStatus(licenseId: string, to: LicenseStatus, from: readonly LicenseStatus[]) {
    const now = clock.now();
    const event = to === 'active' ? 'license.updated' : 'license.revoked';
    const row = await db.transaction().execute(async (trx) => {
      const moved = await store.setLicenseStatus(trx, licenseId, to, from, now);
      if (moved) {
        await recordLicenseEvent(trx, event, moved, now);
        await cache.announceLicense(trx, licenseId);
      }
      return moved;
    });
    cache.forgetLicense(licenseId);
    if (row) log.info({ licenseId, status: to }, 'license.status.changed');
    return row;
  }

  async function releaseBoundDevice(licenseId: string, hwuid: string): Promise<void> {
    const released = await db.transaction().execute(async (trx) => {
      if (!(await store.releaseDevice(trx, licenseId, hwuid))) return false;
      await cache.announceLicense(trx, licenseId);
      return true;
    });
    cache.forgetLicense(licenseId);
    if (!released) throw notFound('Device');
    log.info({ licenseId, hwuid }, 'license.device.released');
  }

  /** Frees a live seat at once, with license.seat.released; 404 when the device holds none. */
  async function releaseHeldSeat(licenseId: string, hwuid: string, reason: SeatReleaseReason): Promise<void> {
    const now = clock.now();
    const released = await db.transaction().execute(async (trx) => {
      const locked = await store.lockLicense(trx, licenseId);
      if (!locked || !(await store.releaseSeat(trx, locked.id, hwuid, now))) return false;
      await recordSeatEvent(trx, 'license.seat.released', locked, now, {
        hwuid,
        releasedAt: now.toISOString(),
        reason,
      });
      return true;
    });
    if (!released) throw notFound('Seat');
    log.info({ licenseId, reason }, 'license.seat.released');
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
    const row = await moveStatus(license.id, to, from);
    if (!row)
      throw new AppError(
        'conflict',
        `A ${license.status} license cannot be ${to === 'active' ? 'reinstated' : to}`,
      );
    return toLicense(row);
  }

  return {
    async issue(
      principal: Principal,
      appId: string,
      input: LicenseCreateInput,
      answer?: IdempotentAnswer<LicenseResource>,
    ) {
      const app = await apps.requireOwnedApp(principal, appId);
      const product = input.productId ? await products.licenseTerms(principal, input.productId) : null;
      if (input.productId && product?.appId !== app.id) {
        throw invalidField('productId', 'must be one of this app’s products');
      }
      // A license of a product starts from the product's policy; what the request says overrides it.
      const policy = product?.licensePolicy ?? null;
      const now = clock.now();
      if (input.trialDays !== undefined && input.expiresAt !== undefined)
        throw invalidField('trialDays', 'sets the expiry itself; send trialDays or expiresAt, not both');
      const expiresAt =
        input.trialDays !== undefined
          ? new Date(now.getTime() + input.trialDays * 86_400_000)
          : input.expiresAt !== undefined
            ? input.expiresAt
              ? requestInstant(input.expiresAt, 'expiresAt')
              : null
            : policy && policyExpiry(policy, now);
      if (expiresAt && expiresAt.getTime() <= now.getTime())
        throw invalidField('expiresAt', 'must be in the future');
      const seats = seatsOf(input, policy);
      const maxDevices =
        seats !== null
          ? null
          : input.maxDevices !== undefined
            ? input.maxDevices
            : policy?.model === 'node_locked'
              ? policy.maxDevices
              : null;
      const terms = termsWith(policy ? policyTerms(policy) : NO_TERMS, input);
      const license = await transactionWithAnswer(db, answer, async (trx) => {
        const row = await store.insertLicense(trx, {
          id: newId(),
          key: generateLicenseKey(),
          appId: app.id,
          productId: input.productId ?? null,
          userId: app.user_id,
          email: input.email?.trim() ?? null,
          expiresAt,
          metadata: (input.metadata ?? {}) as LicenseMetadata,
          maxDevices,
          features: input.features ?? null,
          seats,
          terms,
          trial: input.trialDays !== undefined,
          now,
        });
        await recordLicenseEvent(trx, 'license.created', row, now);
        return toLicense(row);
      });
      log.info({ licenseId: license.id, appId: license.appId }, 'license.created');
      return license;
    },

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
        for (const row of applied.changed) await recordLicenseEvent(trx, 'license.updated', row, now);
        if (applied.changed.length > 0) await cache.announceSeller(trx, principal.userId);
        return applied;
      });
      if (result.changed.length > 0) cache.forgetSeller(principal.userId);
      log.info({ productId, updated: result.changed.length }, 'product.license_policy.applied');
      return { updated: result.changed.length, skipped: result.otherKind };
    },

    /**
     * A status move caused by a payment (refund, dispute), with its event; nothing happens when
     * the license is not in a state it may leave. Returns whether it moved.
     */
    async moveForPayment(
      licenseId: string,
      to: LicenseStatus,
      from: readonly LicenseStatus[],
    ): Promise<boolean> {
      return (await moveStatus(licenseId, to, from)) !== undefined;
    },

    /**
     * Issues the license a paid order buys, inside the fulfilment's own transaction, so the
     * payment, the order and the license commit together or not at all. A trial never becomes it
     * (a trial's key may be a stranger's): the buyer's trials of the product (same address as
     * normalised) end with license.expired, their keys stop verifying on every node, and their
     * devices move to this license. `endedTrials` are those trials, as they ended.
     */
    async issueForPurchase(
      trx: Executor,
      input: {
        appId: string;
        userId: string;
        productId: string;
        email: string;
        /** The order's copy of the product's policy: the license's limits. */
        policy: LicensePolicy;
        expiresAt: Date | null;
        now: Date;
      },
    ) {
      const license = await store.insertLicense(trx, {
        id: newId(),
        key: generateLicenseKey(),
        appId: input.appId,
        productId: input.productId,
        userId: input.userId,
        email: input.email,
        expiresAt: input.expiresAt,
        metadata: {},
        ...licenseLimits(input.policy),
        now: input.now,
      });
      await recordLicenseEvent(trx, 'license.created', license, input.now);
      const { ended, license: paid } = await store.endTrialsFor(
        trx,
        { ...license, product_id: input.productId, email: input.email },
        input.now,
      );
      for (const trial of ended) {
        await recordLicenseEvent(trx, 'license.expired', trial, input.now);
        await cache.announceLicense(trx, trial.id);
        // Before the caller commits; the announcement at commit drops what a read meanwhile stored.
        cache.forgetLicense(trial.id);
      }
      return { license: paid, endedTrials: ended };
    },

    /**
     * Issues a product's trial license in the caller's transaction: status trial until `endsAt`,
     * with the product's policy (node-locked: its device limit; floating: its seats, no device
     * bound; unlimited: one device, so a free trial never runs on any number). Without a `hwuid` it is a trial by e-mail, taking the address's one trial; with
     * one, a trial on that device (bound at once), taking the device's one trial and refused to an
     * address that had its trial by e-mail, but not using that up: anyone can type any address
     * into an app, and a stranger's start must not cost its owner the trial. Throws
     * trial_already_used (the transaction then undoes the license) naming the field.
     */
    async issueTrial(
      trx: Executor,
      input: {
        appId: string;
        userId: string;
        productId: string;
        email: string;
        hwuid: string | null;
        policy: LicensePolicy;
        endsAt: Date;
        now: Date;
      },
    ) {
      const limits = licenseLimits(input.policy);
      let license = await store.insertLicense(trx, {
        id: newId(),
        key: generateLicenseKey(),
        appId: input.appId,
        productId: input.productId,
        userId: input.userId,
        email: input.email,
        expiresAt: input.endsAt,
        metadata: {},
        maxDevices: limits.seats ? null : (limits.maxDevices ?? 1),
        seats: limits.seats,
        // A trial ends at its end, whatever the policy does with paid licenses past theirs.
        terms: { ...limits.terms, expiryStrategy: 'restrict' },
        trial: true,
        now: input.now,
      });
      const claim = { productId: input.productId, licenseId: license.id, now: input.now };
      const address = { ...claim, kind: 'email' as const, value: input.email };
      let refused: 'email' | 'hwuid' | null = null;
      if (input.hwuid === null) {
        if (!(await store.claimTrial(trx, address))) refused = 'email';
      } else if (await store.trialClaimed(trx, address)) refused = 'email';
      else if (!(await store.claimTrial(trx, { ...claim, kind: 'device', value: input.hwuid })))
        refused = 'hwuid';
      if (refused)
        throw new AppError(
          'trial_already_used',
          `${refused === 'email' ? 'This e-mail address' : 'This device'} has already had a trial of this product`,
          [{ field: refused, message: 'has already had a trial of this product' }],
        );
      if (input.hwuid !== null && !license.floating)
        license = await store.bindFirstDevice(trx, license.id, input.hwuid, input.now);
      await recordLicenseEvent(trx, 'license.created', license, input.now);
      return license;
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

    async list(principal: Principal, appId: string, filter: LicenseFilter, page: Page) {
      const app = await apps.requireOwnedApp(principal, appId);
      // A key that cannot be one of ours matches nothing rather than being refused: it is a search.
      const key = filter.key === undefined ? undefined : normalizeLicenseKey(filter.key);
      if (key === null) return { licenses: [], total: 0, ...page };
      const { rows, total } = await store.listLicenses(db, app.id, { ...filter, key }, page);
      return { licenses: rows.map(toLicense), total, ...page };
    },

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

    suspend: (principal: Principal, appId: string, licenseId: string) =>
      move(principal, appId, licenseId, 'suspended', ['active', 'trial']),
    revoke: (principal: Principal, appId: string, licenseId: string) =>
      move(principal, appId, licenseId, 'revoked', ['active', 'trial', 'suspended', 'expired']),
    reinstate: (principal: Principal, appId: string, licenseId: string) =>
      move(principal, appId, licenseId, 'active', ['suspended']),

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
        await cache.announceLicense(trx, row.id);
        if (product?.sendLicenseToCustomer && row.email && row.product_id)
          await store.queueNewKeyNotice(trx, {
            email: row.email,
            productId: row.product_id,
            productName: product.name,
            licenseKey: row.key,
            now,
          });
        return toLicense(row);
      });
      cache.forgetLicense(changed.id);
      log.info({ licenseId: changed.id }, 'license.key.regenerated');
      return changed;
    },

    /**
     * The seller takes a floating license's seat back at once (a stuck seat need not wait for its
     * lease), with license.seat.released, reason seller. 404 when the device holds no live seat.
     */
    async releaseSeat(principal: Principal, appId: string, licenseId: string, hwuid: string) {
      const license = await requireLicense(principal, appId, licenseId);
      await releaseHeldSeat(license.id, hwuid, 'seller');
    },

    /**
     * The buyer gives a seat back in the portal, on a license the caller has already matched to
     * its buyer: as the seller's release, reason buyer, with no allowance to use up (a seat
     * lapses by itself, and maxSeats holds whoever takes it next). 404 when no live seat.
     */
    releaseBuyerSeat: (licenseId: string, hwuid: string) => releaseHeldSeat(licenseId, hwuid, 'buyer'),

    async releaseDevice(principal: Principal, appId: string, licenseId: string, hwuid: string) {
      const license = await requireLicense(principal, appId, licenseId);
      await releaseBoundDevice(license.id, hwuid);
    },

    /**
     * Frees a device's place on a license the caller has already matched to its buyer (the
     * buyer portal), when buyer-release.ts allows it: not while an offline file holds the
     * device, and within the product's release allowance. 404 for a device not bound to it.
     */
    async releaseBuyerDevice(licenseId: string, hwuid: string): Promise<BuyerReleaseOutcome> {
      const outcome = await releaseForBuyer(db, {
        licenseId,
        hwuid,
        now: clock.now(),
        announce: (trx) => cache.announceLicense(trx, licenseId),
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

/**
 * The seat settings of a license being issued, or null for a node-locked one: floating when the
 * request says so, else when the product's policy is. Floating and a device limit exclude each
 * other; seat settings without floating are refused, not ignored.
 */
function seatsOf(
  input: LicenseCreateInput,
  policy: LicensePolicy | null,
): { maxSeats: number; leaseSeconds: number } | null {
  const fromPolicy = policy?.model === 'floating' ? policy : null;
  if (!(input.floating ?? fromPolicy !== null)) {
    refuseShapeMismatch(false, input);
    return null;
  }
  if (fromPolicy && input.floating === undefined && input.maxDevices != null) {
    throw invalidField(
      'maxDevices',
      'does not apply: the product’s policy is floating (send floating: false for a node-locked license)',
    );
  }
  refuseShapeMismatch(true, input);
  const maxSeats = input.maxSeats ?? fromPolicy?.maxSeats ?? null;
  if (maxSeats === null) throw invalidField('maxSeats', 'is required for a floating license');
  return {
    maxSeats,
    leaseSeconds: input.leaseSeconds ?? fromPolicy?.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
  };
}

/** Device limits belong to node-locked licenses, seats to floating ones. */
function refuseShapeMismatch(
  floating: boolean,
  input: { maxDevices?: number | null; maxSeats?: number; leaseSeconds?: number },
): void {
  if (floating && input.maxDevices != null) {
    throw invalidField('maxDevices', 'does not apply to a floating license; it limits seats (maxSeats)');
  }
  if (!floating && input.maxSeats !== undefined) {
    throw invalidField('maxSeats', 'applies only to floating licenses (floating: true)');
  }
  if (!floating && input.leaseSeconds !== undefined) {
    throw invalidField('leaseSeconds', 'applies only to floating licenses (floating: true)');
  }
}

/**
 * A date-time the database stores the same way on both drivers: a real instant (not 23:59:60)
 * between 1970 and 9999.
 */

async function recordLicenseEvent(
  executor: Executor,
  type: Extract<CoreEventType, `license.${'created' | 'updated' | 'revoked' | 'expired'}`>,
  row: LicenseRow,
  now: Date,
) {
  await recordEvent(executor, {
    type,
    userId: row.user_id,
    appId: row.app_id,
    data: {
      id: row.id,
      licenseKey: row.key,
      userId: row.user_id,
      productId: row.product_id,
      status: row.status,
      expiresAt: isoOrNull(row.expires_at),
      createdAt: iso(row.created_at),
    },
    occurredAt: now,
  });
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

export function toLicense(row: LicenseRow): LicenseResource {
  return {
    id: row.id,
    key: row.key,
    appId: row.app_id,
    productId: row.product_id,
    userId: row.user_id,
    email: row.email,
    status: row.status,
    expiresAt: isoOrNull(row.expires_at),
    metadata: row.metadata,
    maxDevices: row.max_devices,
    deviceCount: row.device_count,
    features: row.features,
    floating: row.floating,
    maxSeats: row.max_seats,
    leaseSeconds: row.lease_seconds,
    trialEndsAt: isoOrNull(row.trial_ends_at),
    convertedAt: isoOrNull(row.converted_at),
    checkInDays: row.check_in_days,
    graceDays: row.grace_days,
    lastCheckInAt: row.check_in_days === null ? null : iso(row.checked_in_at ?? row.created_at),
    checkInBy: isoOrNull(checkInDeadline(row)),
    expiryStrategy: row.expiry_strategy,
    maxUses: row.max_uses,
    usesResetInterval: row.uses_reset_interval,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
