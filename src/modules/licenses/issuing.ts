import type { Executor } from '../../platform/db/database.js';
import type { LicenseMetadata } from '../../platform/db/schema.js';
import { AppError, invalidField } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import type { Principal } from '../../platform/http/principal.js';
import { requestInstant } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import { type LicensePolicy, licenseLimits, NO_TERMS, policyExpiry, policyTerms } from '../products/index.js';
import { actorOf, BILLING, BUYER, recordEntry } from '../timeline/index.js';
import type { LicenseServiceDeps } from './deps.js';
import { recordLicenseEvent } from './license-events.js';
import { generateLicenseKey } from './license-key.js';
import { toLicense } from './license-resource.js';
import { DEFAULT_LEASE_SECONDS, type LicenseCreateInput, type LicenseResource } from './schemas.js';
import * as store from './store.js';
import { termsWith } from './terms.js';

/**
 * Licenses coming into being: the seller's issue (the product's policy, overridden by what the
 * request says), a paid order's and a trial's, the last two in the caller's transaction.
 */
export function createIssuing({
  db,
  clock,
  log,
  apps,
  products,
  cache,
}: Pick<LicenseServiceDeps, 'db' | 'clock' | 'log' | 'apps' | 'products' | 'cache'>) {
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
        await recordEntry(trx, row, { type: 'license.created', actor: actorOf(principal), occurredAt: now });
        return toLicense(row);
      });
      log.info({ licenseId: license.id, appId: license.appId }, 'license.created');
      return license;
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
      await recordEntry(trx, license, { type: 'license.created', actor: BILLING, occurredAt: input.now });
      const { ended, license: paid } = await store.endTrialsFor(
        trx,
        { ...license, product_id: input.productId, email: input.email },
        input.now,
      );
      for (const trial of ended) {
        await recordLicenseEvent(trx, 'license.expired', trial, input.now);
        await recordEntry(trx, trial, {
          type: 'license.expired',
          actor: BILLING,
          data: { cause: 'trial_converted', licenseId: license.id },
          occurredAt: input.now,
        });
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
      await recordEntry(trx, license, {
        type: 'license.created',
        actor: BUYER,
        hwuid: input.hwuid,
        data: { trial: true },
        occurredAt: input.now,
      });
      return license;
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
export function refuseShapeMismatch(
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
