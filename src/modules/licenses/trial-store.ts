import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { LicenseRow } from '../../platform/db/schema.js';
import { givenBuyerAddress, normalizeBuyerAddress, storedBuyerAddress } from './buyer-address.js';

/*
 * Trials: the one trial per address and per device of a product, and what a payment does to the
 * buyer's trials.
 */

const trialDigest = (kind: 'email' | 'device', value: string) =>
  createHash('sha256')
    .update(kind === 'email' ? normalizeBuyerAddress(value) : value)
    .digest('hex');

/**
 * Takes the one trial of a product for an e-mail or a device, for `licenseId`. True when this
 * license holds it now (taken here, or already its own); false when another license has it. The
 * primary key decides: of concurrent claims, on any node, one inserts and the others wait for it.
 */
export async function claimTrial(
  trx: Executor,
  claim: { productId: string; kind: 'email' | 'device'; value: string; licenseId: string; now: Date },
): Promise<boolean> {
  const taken = await trx
    .insertInto('trial_claims')
    .values({
      product_id: claim.productId,
      kind: claim.kind,
      digest: trialDigest(claim.kind, claim.value),
      license_id: claim.licenseId,
      claimed_at: claim.now,
    })
    .onConflict((oc) => oc.columns(['product_id', 'kind', 'digest']).doNothing())
    .returning('license_id')
    .executeTakeFirst();
  if (taken) return true;
  return (await trialHolder(trx, claim)) === claim.licenseId;
}

/** Whether the product's one trial for this e-mail or device is taken (by any license). */
export async function trialClaimed(
  executor: Executor,
  claim: { productId: string; kind: 'email' | 'device'; value: string },
): Promise<boolean> {
  return (await trialHolder(executor, claim)) !== undefined;
}

/** The license holding the product's one trial for this e-mail or device, if one does. */
async function trialHolder(
  executor: Executor,
  claim: { productId: string; kind: 'email' | 'device'; value: string },
): Promise<string | undefined> {
  const holder = await executor
    .selectFrom('trial_claims')
    .select('license_id')
    .where('product_id', '=', claim.productId)
    .where('kind', '=', claim.kind)
    .where('digest', '=', trialDigest(claim.kind, claim.value))
    .executeTakeFirst();
  return holder?.license_id;
}

/** Binds a device at issue (the trial's first device), taking its place. */
export async function bindFirstDevice(trx: Executor, licenseId: string, hwuid: string, now: Date) {
  await trx
    .insertInto('license_devices')
    .values({ license_id: licenseId, hwuid, activated_at: now })
    .execute();
  return trx
    .updateTable('licenses')
    .set((eb) => ({ device_count: eb('device_count', '+', 1) }))
    .where('id', '=', licenseId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Whether the buyer already holds a license of the product that is not a running trial (bought,
 * converted or issued by the seller), by e-mail as normalised, in any status.
 */
export async function holdsPaidLicense(executor: Executor, productId: string, email: string) {
  const row = await executor
    .selectFrom('licenses')
    .select('id')
    .where('product_id', '=', productId)
    .where(storedBuyerAddress('email'), '=', givenBuyerAddress(email))
    .where((eb) => eb.or([eb('trial_ends_at', 'is', null), eb('converted_at', 'is not', null)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Ends the buyer's trials of the product (running, or ended and expired; same address as
 * normalised) for the paid license a payment issued: expired now, replaced_by that license, and
 * their devices moved to it. A suspended or revoked trial is left as the seller put it. Returns
 * the trials ended and the paid license as it is afterwards (unchanged when none moved a device).
 */
export async function endTrialsFor(
  executor: Executor,
  paid: LicenseRow & { product_id: string; email: string },
  now: Date,
): Promise<{ ended: LicenseRow[]; license: LicenseRow }> {
  const ended = await executor
    .updateTable('licenses')
    .set({
      status: 'expired',
      // least() skips a null (a trial the seller made open-ended).
      expires_at: sql<Date>`least(expires_at, ${now})`,
      converted_at: now,
      replaced_by: paid.id,
      device_count: 0,
      updated_at: now,
    })
    .where('product_id', '=', paid.product_id)
    .where(storedBuyerAddress('email'), '=', givenBuyerAddress(paid.email))
    .where('trial_ends_at', 'is not', null)
    .where('converted_at', 'is', null)
    .where('status', 'in', ['trial', 'expired'])
    .returningAll()
    .execute();
  if (ended.length === 0) return { ended, license: paid };
  const trialIds = ended.map((row) => row.id);
  const moved = await executor
    .insertInto('license_devices')
    .columns(['license_id', 'hwuid', 'activated_at', 'name', 'platform'])
    .expression((eb) =>
      eb
        .selectFrom('license_devices')
        .select((s) => [
          sql<string>`${paid.id}::uuid`.as('license_id'),
          'hwuid',
          s.fn.min('activated_at').as('activated_at'),
          s.fn.max('name').as('name'),
          s.fn.max('platform').as('platform'),
        ])
        .where('license_id', 'in', trialIds)
        .groupBy('hwuid'),
    )
    .onConflict((oc) => oc.doNothing())
    .returning('hwuid')
    .execute();
  await executor.deleteFrom('license_devices').where('license_id', 'in', trialIds).execute();
  if (moved.length === 0) return { ended, license: paid };
  const license = await executor
    .updateTable('licenses')
    .set((eb) => ({ device_count: eb('device_count', '+', moved.length) }))
    .where('id', '=', paid.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ended, license };
}
