import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { DeviceLabelInput } from './schemas.js';
import { claimTrial } from './trial-store.js';

/*
 * Devices bound to a license and seats held on a floating one: binding, labels, releases (by the
 * seller and by the buyer, with the buyer's allowance) and the seat lease under the license lock.
 */

/** A device's label as stored: what its client last said it is and runs on (null: never said). */
export interface DeviceLabel {
  name: string | null;
  platform: string | null;
}

/** Whether a call's label says something the stored one does not (a field not sent says nothing). */
export function relabels(stored: DeviceLabel, sent: DeviceLabelInput): boolean {
  return (
    (sent.name !== undefined && sent.name !== stored.name) ||
    (sent.platform !== undefined && sent.platform !== stored.platform)
  );
}

/**
 * Takes one device place and records the device, in one transaction. The conditional UPDATE
 * holds the license row, so concurrent activations queue up and never pass the limit.
 * Returns false when the license is full.
 */
export async function activateDevice(
  executor: Db,
  licenseId: string,
  hwuid: string,
  now: Date,
  /** On a trial license: the product whose one trial per device this device takes. */
  trialOf: string | null = null,
  label: DeviceLabelInput = {},
): Promise<'activated' | 'full' | 'already_bound' | 'trial_used'> {
  return executor
    .transaction()
    .execute(async (trx) => {
      // Claimed first and kept only with the binding: the claim's key decides across nodes.
      if (
        trialOf &&
        !(await claimTrial(trx, { productId: trialOf, kind: 'device', value: hwuid, licenseId, now }))
      )
        return 'trial_used';
      const place = await trx
        .updateTable('licenses')
        .set((eb) => ({ device_count: eb('device_count', '+', 1) }))
        .where('id', '=', licenseId)
        // Still usable at the moment of binding: a suspension a moment earlier wins.
        .where('status', 'in', ['active', 'trial'])
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .where((eb) => eb.or([eb('max_devices', 'is', null), eb('device_count', '<', eb.ref('max_devices'))]))
        .returning('id')
        .executeTakeFirst();
      // Nothing bound: on a trial, undone, so a claim taken above for this attempt is not kept.
      if (!place) {
        if (trialOf) throw NO_PLACE;
        return 'full';
      }
      const device = await trx
        .insertInto('license_devices')
        .values({
          license_id: licenseId,
          hwuid,
          activated_at: now,
          name: label.name ?? null,
          platform: label.platform ?? null,
        })
        .onConflict((oc) => oc.columns(['license_id', 'hwuid']).doNothing())
        .returning('hwuid')
        .executeTakeFirst();
      if (device) return 'activated';
      // The same device was bound by a concurrent request: give the place back.
      await trx
        .updateTable('licenses')
        .set((eb) => ({ device_count: eb('device_count', '-', 1) }))
        .where('id', '=', licenseId)
        .execute();
      return 'already_bound';
    })
    .catch((error: unknown) => {
      if (error === NO_PLACE) return 'full' as const;
      throw error;
    });
}

/** Thrown to roll back a trial activation that found no place (see activateDevice). */
const NO_PLACE = new Error('no device place');

/**
 * Gives a bound device (or, relabelSeat, a held seat) the label its client sent, in one statement
 * that writes only what differs (a field not sent keeps its value). Verification calls it only
 * when the label it knows differs, so a device that keeps saying the same costs no write.
 */
function relabelIn(table: 'license_devices' | 'license_seats') {
  return async (executor: Executor, licenseId: string, hwuid: string, label: DeviceLabelInput) => {
    await executor
      .updateTable(table)
      .set(labelChanges(label))
      .where('license_id', '=', licenseId)
      .where('hwuid', '=', hwuid)
      .where(labelDiffers(label))
      .execute();
  };
}
export const relabelDevice = relabelIn('license_devices');
export const relabelSeat = relabelIn('license_seats');

const labelChanges = (label: DeviceLabelInput) => ({
  ...(label.name !== undefined ? { name: label.name } : {}),
  ...(label.platform !== undefined ? { platform: label.platform } : {}),
});

const labelDiffers = (label: DeviceLabelInput) =>
  sql<boolean>`((${label.name ?? null}::text is not null and name is distinct from ${label.name ?? null})
    or (${label.platform ?? null}::text is not null and platform is distinct from ${label.platform ?? null}))`;

export function listDevices(executor: Executor, licenseId: string) {
  return executor
    .selectFrom('license_devices')
    .select(['hwuid', 'name', 'platform', 'activated_at', 'offline_until'])
    .where('license_id', '=', licenseId)
    .orderBy('activated_at')
    .orderBy('hwuid')
    .execute();
}

/**
 * Frees a device's place; run it in a transaction (two statements). With `notHeldAt`, only a
 * device no offline license file holds at that time (a buyer's release); false otherwise too.
 */
export async function releaseDevice(
  trx: Executor,
  licenseId: string,
  hwuid: string,
  options: { notHeldAt?: Date } = {},
): Promise<boolean> {
  let query = trx
    .deleteFrom('license_devices')
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid);
  const at = options.notHeldAt;
  if (at) {
    query = query.where((eb) => eb.or([eb('offline_until', 'is', null), eb('offline_until', '<=', at)]));
  }
  const removed = await query.returning('hwuid').executeTakeFirst();
  if (!removed) return false;
  await trx
    .updateTable('licenses')
    .set((eb) => ({ device_count: eb('device_count', '-', 1) }))
    .where('id', '=', licenseId)
    .execute();
  return true;
}

/** A device bound to the license, with until when an offline file holds it; undefined when not bound. */
export function findDevice(executor: Executor, licenseId: string, hwuid: string) {
  return executor
    .selectFrom('license_devices')
    .select(['hwuid', 'offline_until'])
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .executeTakeFirst();
}

/** The portal settings of a license's product; nulls for a license without a product. */
export function portalPolicyOfLicense(executor: Executor, licenseId: string) {
  return executor
    .selectFrom('licenses as l')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .select(['p.portal_device_releases', 'p.portal_release_period_days'])
    .where('l.id', '=', licenseId)
    .executeTakeFirstOrThrow();
}

/** When the license's buyer released devices after `since`, oldest first. */
export async function buyerReleasesSince(
  executor: Executor,
  licenseId: string,
  since: Date,
): Promise<Date[]> {
  const rows = await executor
    .selectFrom('buyer_device_releases')
    .select('released_at')
    .where('license_id', '=', licenseId)
    .where('released_at', '>', since)
    .orderBy('released_at')
    .execute();
  return rows.map((row) => new Date(row.released_at));
}

/** Counts a buyer's release, and forgets the license's releases from before `forgetBefore`. */
export async function recordBuyerRelease(
  trx: Executor,
  licenseId: string,
  now: Date,
  forgetBefore: Date,
): Promise<void> {
  await trx
    .deleteFrom('buyer_device_releases')
    .where('license_id', '=', licenseId)
    .where('released_at', '<', forgetBefore)
    .execute();
  await trx.insertInto('buyer_device_releases').values({ license_id: licenseId, released_at: now }).execute();
}

/**
 * The license row, locked for the rest of the transaction: seats of one license are taken one
 * request at a time, so the count read under this lock is the count written against.
 */
export function lockLicense(trx: Executor, licenseId: string) {
  return trx
    .selectFrom('licenses')
    .select([
      'id',
      'key',
      'app_id',
      'user_id',
      'product_id',
      'status',
      'expires_at',
      'expiry_strategy',
      'floating',
      'max_seats',
      'lease_seconds',
    ])
    .where('id', '=', licenseId)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Under the license lock: drops lapsed seats of the license (answering them, for its timeline),
 * and says how many live seats other devices hold and whether this device holds one. Only leases
 * still running count, so a lapsed lease frees its seat without any job.
 */
export async function seatsInUse(trx: Executor, licenseId: string, hwuid: string, now: Date) {
  // This device's own lapsed lease too: its next seat is a new one (acquired now) either way.
  const lapsed = await trx
    .deleteFrom('license_seats')
    .where('license_id', '=', licenseId)
    .where('lease_expires_at', '<=', now)
    .returning(['hwuid', 'lease_expires_at'])
    .execute();
  const rows = await trx
    .selectFrom('license_seats')
    .select(['hwuid', 'lease_expires_at'])
    .where('license_id', '=', licenseId)
    .where('lease_expires_at', '>', now)
    .execute();
  return {
    others: rows.filter((row) => row.hwuid !== hwuid).length,
    mine: rows.some((r) => r.hwuid === hwuid),
    /** The leases found lapsed, now cleared. */
    lapsed,
  };
}

/** Takes or renews this device's seat until `leaseExpiresAt`; a renewal keeps its acquisition time. */
export async function holdSeat(
  trx: Executor,
  licenseId: string,
  hwuid: string,
  now: Date,
  leaseExpiresAt: Date,
  renewing: boolean,
  label: DeviceLabelInput = {},
) {
  // The label rides on the write a heartbeat makes anyway; a field not sent keeps its value.
  await trx
    .insertInto('license_seats')
    .values({
      license_id: licenseId,
      hwuid,
      acquired_at: now,
      lease_expires_at: leaseExpiresAt,
      name: label.name ?? null,
      platform: label.platform ?? null,
    })
    .onConflict((oc) =>
      oc.columns(['license_id', 'hwuid']).doUpdateSet({
        lease_expires_at: leaseExpiresAt,
        ...(renewing ? {} : { acquired_at: now }),
        ...(label.name !== undefined ? { name: label.name } : {}),
        ...(label.platform !== undefined ? { platform: label.platform } : {}),
      }),
    )
    .execute();
}

/** Gives a device's seat back; true when it held a live one. */
export async function releaseSeat(trx: Executor, licenseId: string, hwuid: string, now: Date) {
  const removed = await trx
    .deleteFrom('license_seats')
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .returning('lease_expires_at')
    .executeTakeFirst();
  return removed !== undefined && removed.lease_expires_at > now;
}

/** This device's live seat: when it lapses, and its label; undefined when it holds none. */
export function seatLease(executor: Executor, licenseId: string, hwuid: string, now: Date) {
  return executor
    .selectFrom('license_seats')
    .select(['lease_expires_at', 'name', 'platform'])
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .where('lease_expires_at', '>', now)
    .executeTakeFirst();
}

/** The live seats of a license, oldest first. */
export function listSeats(executor: Executor, licenseId: string, now: Date) {
  return executor
    .selectFrom('license_seats')
    .select(['hwuid', 'name', 'platform', 'acquired_at', 'lease_expires_at'])
    .where('license_id', '=', licenseId)
    .where('lease_expires_at', '>', now)
    .orderBy('acquired_at')
    .orderBy('hwuid')
    .execute();
}
