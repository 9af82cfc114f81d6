import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import { preparedStatement } from '../../platform/db/prepared.js';
import type { LicenseMetadata, LicenseRow, LicenseStatus } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import { EVENTS_RECORDED_CHANNEL } from '../events/index.js';
import { type LicenseTerms, NO_TERMS, type UsesResetInterval } from '../products/index.js';
import { givenBuyerAddress, normalizeBuyerAddress, storedBuyerAddress } from './buyer-address.js';
import type { DeviceLabelInput, LicenseFilter } from './schemas.js';

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

export function insertLicense(
  executor: Executor,
  license: {
    id: string;
    key: string;
    appId: string;
    productId: string | null;
    userId: string;
    email: string | null;
    expiresAt: Date | null;
    metadata: LicenseMetadata;
    maxDevices: number | null;
    features?: string[] | null;
    seats?: { maxSeats: number; leaseSeconds: number } | null;
    /** Check-in, expiry strategy and quota; none when absent. */
    terms?: LicenseTerms;
    /** A trial license: status trial until trialEndsAt (its expiry). */
    trial?: boolean;
    now: Date;
  },
): Promise<LicenseRow> {
  const terms = license.terms ?? NO_TERMS;
  return executor
    .insertInto('licenses')
    .values({
      id: license.id,
      key: license.key,
      app_id: license.appId,
      product_id: license.productId,
      user_id: license.userId,
      email: license.email,
      expires_at: license.expiresAt,
      metadata: JSON.stringify(license.metadata),
      max_devices: license.maxDevices,
      features: license.features ?? null,
      floating: Boolean(license.seats),
      max_seats: license.seats?.maxSeats ?? null,
      lease_seconds: license.seats?.leaseSeconds ?? null,
      ...termColumns(terms),
      ...(license.trial ? { status: 'trial' as const, trial_ends_at: license.expiresAt } : {}),
      created_at: license.now,
      updated_at: license.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The columns of a license's check-in, expiry strategy and quota. */
export function termColumns(terms: LicenseTerms) {
  return {
    check_in_days: terms.checkIn?.days ?? null,
    grace_days: terms.checkIn?.graceDays ?? null,
    expiry_strategy: terms.expiryStrategy,
    max_uses: terms.usage?.maxUses ?? null,
    uses_reset_interval: terms.usage?.resetInterval ?? null,
  };
}

export function findAppLicense(
  executor: Executor,
  appId: string,
  licenseId: string,
): Promise<LicenseRow | undefined> {
  return executor
    .selectFrom('licenses')
    .selectAll()
    .where('id', '=', licenseId)
    .where('app_id', '=', appId)
    .executeTakeFirst();
}

export function findLicenseById(executor: Executor, licenseId: string): Promise<LicenseRow | undefined> {
  return executor.selectFrom('licenses').selectAll().where('id', '=', licenseId).executeTakeFirst();
}

export async function listLicenses(executor: Executor, appId: string, filter: LicenseFilter, page: Page) {
  let query = executor.selectFrom('licenses').where('app_id', '=', appId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.productId) query = query.where('product_id', '=', filter.productId);
  if (filter.email) query = query.where(sql<string>`lower(email)`, '=', filter.email.toLowerCase());
  if (filter.key) query = query.where('key', '=', filter.key);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

/**
 * A license back in use: a trial not yet paid for returns to trial, and so does a trial a payment
 * ended (replaced_by: it was never the paid license); any other to active.
 */
const inUseAgain = sql<LicenseStatus>`case when trial_ends_at is not null
  and (converted_at is null or replaced_by is not null) then 'trial' else 'active' end`;

/**
 * Moves a license to `status`, only from the states in `from`, decided in one statement. Back to
 * active means back in use: an unconverted trial becomes a trial again.
 */
export function setLicenseStatus(
  executor: Executor,
  licenseId: string,
  status: LicenseStatus,
  from: readonly LicenseStatus[],
  now: Date,
): Promise<LicenseRow | undefined> {
  return executor
    .updateTable('licenses')
    .set({ status: status === 'active' ? inUseAgain : status, updated_at: now })
    .where('id', '=', licenseId)
    .where('status', 'in', from)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Changes e-mail, expiry, metadata or device limit in one statement, so it cannot undo a
 * concurrent status change: an expired license comes back to active only if it is still
 * expired when written and the new expiry is later than now, and a device limit only applies
 * if the devices bound at that moment fit under it. Undefined when the limit did not fit.
 */
export function updateLicenseDetails(
  executor: Executor,
  licenseId: string,
  changes: {
    email?: string | null;
    expiresAt?: Date | null;
    metadata?: LicenseMetadata;
    maxDevices?: number | null;
    features?: string[] | null;
    maxSeats?: number;
    leaseSeconds?: number;
    terms?: LicenseTerms;
  },
  now: Date,
): Promise<LicenseRow | undefined> {
  const revives = changes.expiresAt === null || (changes.expiresAt !== undefined && changes.expiresAt > now);
  let query = executor
    .updateTable('licenses')
    .set({
      ...(changes.email !== undefined ? { email: changes.email } : {}),
      ...(changes.expiresAt !== undefined ? { expires_at: changes.expiresAt } : {}),
      ...(changes.metadata !== undefined ? { metadata: JSON.stringify(changes.metadata) } : {}),
      ...(changes.maxDevices !== undefined ? { max_devices: changes.maxDevices } : {}),
      ...(changes.features !== undefined ? { features: changes.features } : {}),
      ...(changes.maxSeats !== undefined ? { max_seats: changes.maxSeats } : {}),
      ...(changes.leaseSeconds !== undefined ? { lease_seconds: changes.leaseSeconds } : {}),
      ...(changes.terms !== undefined ? termColumns(changes.terms) : {}),
      ...(revives
        ? { status: sql<LicenseStatus>`case when status = 'expired' then ${inUseAgain} else status end` }
        : {}),
      updated_at: now,
    })
    .where('id', '=', licenseId);
  if (changes.maxDevices != null) query = query.where('device_count', '<=', changes.maxDevices);
  return query.returningAll().executeTakeFirst();
}

/** A key to verify, and the device asked about (null: none). */
export interface VerificationAsk {
  key: string;
  hwuid: string | null;
}

/**
 * What verification needs, for many keys in one indexed read: each license, its product's
 * features, its seller's tier, its app's token algorithm, and whether the device asked about is
 * bound to it. Answers in the
 * order asked, undefined where no license has the key (or its seller is deleted).
 */
export async function findManyForVerification(executor: Executor, asked: readonly VerificationAsk[]) {
  const result = await verificationLookup.run(executor, {
    keys: asked.map((ask) => ask.key),
    hwuids: asked.map((ask) => ask.hwuid),
  });
  const found: (Omit<(typeof result.rows)[number], 'n'> | undefined)[] = asked.map(() => undefined);
  for (const { n, ...row } of result.rows) found[n - 1] = row;
  return found;
}

// Built once and prepared per connection: this read runs for every batch of verifications the
// cache misses. The keys and devices arrive as two arrays, numbered by `with ordinality`.
const verificationLookup = preparedStatement('license_verification_many', ['keys', 'hwuids'], (executor, p) =>
  verificationColumns(executor)
    .innerJoin(
      sql<{ key: string; hwuid: string | null; n: number }>`(
        select key, hwuid, n::int as n
        from unnest(${p.keys}::text[], ${p.hwuids}::text[]) with ordinality as asked (key, hwuid, n)
      )`.as('asked'),
      'asked.key',
      'l.key',
    )
    // At most one row: (license_id, hwuid) is the primary key. Its label comes along so a call
    // sending another can be told apart without a second read.
    .leftJoin('license_devices as d', (join) =>
      join.onRef('d.license_id', '=', 'l.id').onRef('d.hwuid', '=', 'asked.hwuid'),
    )
    .select([
      'asked.n',
      sql<boolean>`d.hwuid is not null`.as('device_bound'),
      'd.name as device_name',
      'd.platform as device_platform',
    ]),
);

/**
 * The license, its product's features, its seller's tier and how its app's tokens are signed:
 * what the cache holds.
 */
const VERIFICATION_COLUMNS = [
  'l.id',
  'l.app_id',
  'l.product_id',
  'l.user_id',
  'l.email',
  'l.status',
  'l.expires_at',
  'l.metadata',
  'l.max_devices',
  'l.features',
  'l.floating',
  'l.created_at',
  'l.check_in_days',
  'l.grace_days',
  'l.checked_in_at',
  'l.expiry_strategy',
  'l.max_uses',
  'l.uses',
  'l.uses_reset_interval',
  'l.uses_period_start',
  // For the per-key verify limit, which scales with seats (key-rate-limit.ts).
  'l.max_seats',
  'l.lease_seconds',
  'p.features as product_features',
  'u.tier',
  'a.token_algorithm',
] as const;

/** The columns above for licenses whose seller is not deleted. */
function verificationColumns(executor: Executor) {
  return executor
    .selectFrom('licenses as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .innerJoin('apps as a', 'a.id', 'l.app_id')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .select(VERIFICATION_COLUMNS)
    .where('u.deleted_at', 'is', null);
}

/**
 * What `findManyForVerification` reads, with the key, for many licenses by id in one read, and
 * which of the given (license, device) pairs are still bound: the verification cache re-reads the
 * entries in use this way before they expire. A license missing from the answer is gone (its
 * seller deleted).
 */
export async function refreshForVerification(
  executor: Executor,
  ids: readonly string[],
  devices: readonly { licenseId: string; hwuid: string }[],
) {
  const states = ids.length === 0 ? [] : (await refreshStates.run(executor, { ids })).rows;
  const bound =
    devices.length === 0
      ? []
      : (
          await refreshDevices.run(executor, {
            licenseIds: devices.map((device) => device.licenseId),
            hwuids: devices.map((device) => device.hwuid),
          })
        ).rows;
  return { states, bound };
}

// Both prepared, like the lookup above: the cache's background refresh runs them every few
// seconds, and on PGlite a statement's parsing and planning take the event loop from requests.
const refreshStates = preparedStatement('license_verification_refresh', ['ids'], (executor, p) =>
  verificationColumns(executor).select('l.key').where(sql<boolean>`l.id = any(${p.ids}::uuid[])`),
);

const refreshDevices = preparedStatement(
  'license_verification_refresh_devices',
  ['licenseIds', 'hwuids'],
  (executor, p) =>
    executor
      .selectFrom('license_devices as d')
      .innerJoin(
        sql<{ license_id: string; hwuid: string }>`(
          select license_id, hwuid
          from unnest(${p.licenseIds}::uuid[], ${p.hwuids}::text[]) as asked (license_id, hwuid)
        )`.as('asked'),
        (join) => join.onRef('asked.license_id', '=', 'd.license_id').onRef('asked.hwuid', '=', 'd.hwuid'),
      )
      .select(['d.license_id', 'd.hwuid', 'd.name', 'd.platform']),
);

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
 * Gives a bound device the label its client sent, in one statement that writes only what
 * differs (a field not sent keeps its value). Verification calls it only when the label it knows
 * differs, so a device that keeps saying the same costs no write.
 */
export async function relabelDevice(
  executor: Executor,
  licenseId: string,
  hwuid: string,
  label: DeviceLabelInput,
): Promise<void> {
  await executor
    .updateTable('license_devices')
    .set(labelChanges(label))
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .where(labelDiffers(label))
    .execute();
}

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

/** Moves active and trial licenses whose expiry has passed to expired, at most `limit` at a time. */
export async function expireDue(executor: Executor, now: Date, limit: number) {
  return (
    executor
      .updateTable('licenses')
      .set({ status: 'expired', updated_at: now })
      .where(
        'id',
        'in',
        executor
          .selectFrom('licenses')
          .select('id')
          .where('status', 'in', ['active', 'trial'])
          .where('expires_at', '<=', now)
          .orderBy('expires_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .where('status', 'in', ['active', 'trial'])
      // Re-checked on the row as written: an expiry extended meanwhile keeps the license active.
      .where('expires_at', '<=', now)
      .returningAll()
      .execute()
  );
}

/** Sets a license's expiry; an expired license becomes active again with it. */
export function extendExpiry(executor: Executor, licenseId: string, expiresAt: Date, now: Date) {
  return executor
    .updateTable('licenses')
    .set((eb) => ({
      expires_at: expiresAt,
      status: eb
        .case()
        .when('status', '=', 'expired')
        .then(eb.val<LicenseStatus>('active'))
        .else(eb.ref('status'))
        .end(),
      // A quota that resets at each renewal starts again from zero.
      uses: sql<number>`case when uses_reset_interval = 'renewal' then 0 else uses end`,
      updated_at: now,
    }))
    .where('id', '=', licenseId)
    .returningAll()
    .executeTakeFirst();
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
 * Under the license lock: drops lapsed seats of the license (except this device's row), and
 * says how many live seats other devices hold and whether this device holds one. Only leases
 * still running count, so a lapsed lease frees its seat without any job.
 */
export async function seatsInUse(trx: Executor, licenseId: string, hwuid: string, now: Date) {
  await trx
    .deleteFrom('license_seats')
    .where('license_id', '=', licenseId)
    .where('lease_expires_at', '<=', now)
    .where('hwuid', '<>', hwuid)
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

/** Gives a held seat the label its client sent, writing only what differs (as relabelDevice). */
export async function relabelSeat(
  executor: Executor,
  licenseId: string,
  hwuid: string,
  label: DeviceLabelInput,
): Promise<void> {
  await executor
    .updateTable('license_seats')
    .set(labelChanges(label))
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .where(labelDiffers(label))
    .execute();
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

/**
 * Gives the product's licenses the limits of its policy (applyProductPolicy): those of the same
 * kind as the policy (floating, or not) that are not revoked, running trials or trials a payment
 * ended, and whose limits differ. Returns the licenses changed and how many of another kind were
 * left as they are.
 */
export async function applyLimits(
  trx: Executor,
  productId: string,
  limits: {
    maxDevices: number | null;
    seats: { maxSeats: number; leaseSeconds: number } | null;
    terms: LicenseTerms;
  },
  now: Date,
): Promise<{ changed: LicenseRow[]; otherKind: number }> {
  const floating = limits.seats !== null;
  const terms = termColumns(limits.terms);
  const maxSeats = limits.seats?.maxSeats ?? null;
  const leaseSeconds = limits.seats?.leaseSeconds ?? null;
  const covered = trx
    .selectFrom('licenses')
    .where('product_id', '=', productId)
    .where('status', 'not in', ['revoked', 'trial'])
    .where('replaced_by', 'is', null);
  const changed = await trx
    .updateTable('licenses')
    .set({
      max_devices: limits.maxDevices,
      max_seats: maxSeats,
      lease_seconds: leaseSeconds,
      ...terms,
      updated_at: now,
    })
    .where('id', 'in', covered.select('id').where('floating', '=', floating))
    .where((eb) =>
      eb.or([
        sql<boolean>`max_devices is distinct from ${limits.maxDevices}`,
        sql<boolean>`max_seats is distinct from ${maxSeats}`,
        sql<boolean>`lease_seconds is distinct from ${leaseSeconds}`,
        sql<boolean>`check_in_days is distinct from ${terms.check_in_days}::int`,
        sql<boolean>`grace_days is distinct from ${terms.grace_days}::int`,
        sql<boolean>`expiry_strategy is distinct from ${terms.expiry_strategy}`,
        sql<boolean>`max_uses is distinct from ${terms.max_uses}::int`,
        sql<boolean>`uses_reset_interval is distinct from ${terms.uses_reset_interval}::text`,
      ]),
    )
    .returningAll()
    .execute();
  const other = await covered
    .where('floating', '=', !floating)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return { changed, otherKind: Number(other.n) };
}

/** Gives the license a new key (regenerateKey); the old one matches nothing from this commit on. */
export function replaceKey(trx: Executor, licenseId: string, key: string, now: Date) {
  return trx
    .updateTable('licenses')
    .set({ key, updated_at: now })
    .where('id', '=', licenseId)
    .returningAll()
    .executeTakeFirst();
}

/** The buyer's message with a license's new key, in the transaction that changed it. */
export async function queueNewKeyNotice(
  trx: Executor,
  notice: { email: string; productId: string; productName: string; licenseKey: string; now: Date },
) {
  await trx
    .insertInto('notifications')
    .values({
      id: newId(),
      kind: 'license.key_replaced',
      to_email: notice.email,
      to_user_id: null,
      data: JSON.stringify({
        productId: notice.productId,
        productName: notice.productName,
        buyerEmail: notice.email,
        licenseKey: notice.licenseKey,
      }),
      created_at: notice.now,
    })
    .execute();
}

/**
 * Records an online check-in at `now`, unless one was recorded since `since` (another node, or
 * this one a moment ago): at most one write per license and step, whatever the verifies.
 */
export async function recordCheckIn(executor: Executor, licenseId: string, now: Date, since: Date) {
  await executor
    .updateTable('licenses')
    .set({ checked_in_at: now })
    .where('id', '=', licenseId)
    .where((eb) => eb.or([eb('checked_in_at', 'is', null), eb('checked_in_at', '<', since)]))
    .execute();
}

/** The usage count of a license as it stands (verify reads it each time, as it reads seats). */
export function usageOf(executor: Executor, licenseId: string) {
  return usageRead.run(executor, { id: licenseId }).then((result) => result.rows[0]);
}

const usageRead = preparedStatement('license_usage', ['id'], (executor, p) =>
  executor
    .selectFrom('licenses')
    .select(['max_uses', 'uses', 'uses_reset_interval', 'uses_period_start'])
    .where(sql<boolean>`id = ${p.id}::uuid`),
);

/** The period starts a use at `now` may count in, for consumeUses (see terms.ts). */
export interface UsePeriods {
  day: Date;
  month: Date;
}

/** The start of the license's current period, by its reset interval, in SQL. */
function periodOf(periods: UsePeriods) {
  return sql<Date>`(case uses_reset_interval when 'day' then ${periods.day}::timestamptz
    when 'month' then ${periods.month}::timestamptz else 'epoch'::timestamptz end)`;
}

/** Sets the count of the license's current period (the seller's correction, or a reset to 0). */
export function setUses(executor: Executor, licenseId: string, uses: number, periods: UsePeriods, now: Date) {
  return executor
    .updateTable('licenses')
    .set({ uses, uses_period_start: periodOf(periods), updated_at: now })
    .where('id', '=', licenseId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Consumes `amount` uses in one statement: the count of the period (a new period starts at
 * zero) grows only while it stays within max_uses, on a license that grants use (or keeps access
 * past its expiry), so concurrent consumes never take it past the quota. Crossing 80 % or
 * reaching the quota records license.usage.threshold or license.usage.exhausted in the same
 * statement. Returns the count after, or undefined when nothing was consumed.
 */
export async function consumeUses(
  executor: Executor,
  input: {
    licenseId: string;
    amount: number;
    periods: UsePeriods;
    now: Date;
    eventIds: { threshold: string; exhausted: string };
  },
) {
  const period = periodOf(input.periods);
  const counted = sql<number>`(case when uses_period_start = ${period} or uses_reset_interval not in ('day', 'month')
    then uses else 0 end)`;
  const result = await sql<{
    uses: number;
    max_uses: number;
    uses_reset_interval: UsesResetInterval | null;
    uses_period_start: Date;
  }>`
    with consumed as (
      update licenses set uses = ${counted} + ${input.amount}, uses_period_start = ${period}
      where id = ${input.licenseId}::uuid and max_uses is not null
        and ${counted} + ${input.amount} <= max_uses
        and (status in ('active', 'trial')
          and (expires_at is null or expires_at > ${input.now}::timestamptz)
          or (expiry_strategy = 'maintain_access' and status in ('active', 'expired')))
      returning id as license_id, app_id, user_id, key, uses, max_uses, uses_reset_interval,
        uses_period_start, uses - ${input.amount} as before
    ),
    crossed as (
      select ${input.eventIds.threshold}::uuid as event_id, 'license.usage.threshold' as type, c.*
      -- In bigint: a quota near its largest (10^9) times 4 is past an integer's range.
      from consumed c where c.before * 5 < c.max_uses::bigint * 4 and c.uses * 5 >= c.max_uses::bigint * 4
      union all
      select ${input.eventIds.exhausted}::uuid, 'license.usage.exhausted', c.*
      from consumed c where c.uses >= c.max_uses and c.before < c.max_uses
    ),
    recorded as (
      insert into events (id, type, user_id, app_id, data, created_at)
      select event_id, type, user_id, app_id,
        jsonb_build_object('id', license_id, 'licenseKey', key, 'uses', uses, 'maxUses', max_uses,
          'usesRemaining', greatest(max_uses - uses, 0), 'usesResetInterval', uses_reset_interval),
        ${input.now}::timestamptz
      from crossed
      returning 1
    ),
    notified as (select pg_notify(${EVENTS_RECORDED_CHANNEL}, '') from recorded limit 1)
    select uses, max_uses, uses_reset_interval, uses_period_start, (select count(*) from notified) as notified
    from consumed`.execute(executor);
  return result.rows[0];
}
