import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { LicenseMetadata, LicenseRow, LicenseStatus } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/schemas.js';
import type { LicenseFilter } from './schemas.js';

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
    now: Date;
  },
): Promise<LicenseRow> {
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
      created_at: license.now,
      updated_at: license.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
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

/** Moves a license to `status`, only from the states in `from`, decided in one statement. */
export function setLicenseStatus(
  executor: Executor,
  licenseId: string,
  status: LicenseStatus,
  from: readonly LicenseStatus[],
  now: Date,
): Promise<LicenseRow | undefined> {
  return executor
    .updateTable('licenses')
    .set({ status, updated_at: now })
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
      ...(revives
        ? { status: sql<LicenseStatus>`case when status = 'expired' then 'active' else status end` }
        : {}),
      updated_at: now,
    })
    .where('id', '=', licenseId);
  if (changes.maxDevices != null) query = query.where('device_count', '<=', changes.maxDevices);
  return query.returningAll().executeTakeFirst();
}

/** What verification needs, in one indexed read: the license, its seller's tier, and the device. */
export function findForVerification(executor: Executor, key: string, hwuid: string | null) {
  return executor
    .selectFrom('licenses as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .select([
      'l.id',
      'l.app_id',
      'l.user_id',
      'l.email',
      'l.status',
      'l.expires_at',
      'l.metadata',
      'l.max_devices',
      'u.tier',
      (eb) =>
        (hwuid === null
          ? eb.val(false)
          : eb.exists(
              eb
                .selectFrom('license_devices as d')
                .select('d.hwuid')
                .whereRef('d.license_id', '=', 'l.id')
                .where('d.hwuid', '=', hwuid),
            )
        ).as('device_bound'),
    ])
    .where('l.key', '=', key)
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
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
): Promise<'activated' | 'full' | 'already_bound'> {
  return executor.transaction().execute(async (trx) => {
    const place = await trx
      .updateTable('licenses')
      .set((eb) => ({ device_count: eb('device_count', '+', 1) }))
      .where('id', '=', licenseId)
      // Still usable at the moment of binding: a suspension a moment earlier wins.
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .where((eb) => eb.or([eb('max_devices', 'is', null), eb('device_count', '<', eb.ref('max_devices'))]))
      .returning('id')
      .executeTakeFirst();
    if (!place) return 'full';
    const device = await trx
      .insertInto('license_devices')
      .values({ license_id: licenseId, hwuid, activated_at: now })
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
  });
}

export function listDevices(executor: Executor, licenseId: string) {
  return executor
    .selectFrom('license_devices')
    .select(['hwuid', 'activated_at'])
    .where('license_id', '=', licenseId)
    .orderBy('activated_at')
    .orderBy('hwuid')
    .execute();
}

/** Frees a device's place; run it in a transaction (two statements). */
export async function releaseDevice(trx: Executor, licenseId: string, hwuid: string): Promise<boolean> {
  const removed = await trx
    .deleteFrom('license_devices')
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .returning('hwuid')
    .executeTakeFirst();
  if (!removed) return false;
  await trx
    .updateTable('licenses')
    .set((eb) => ({ device_count: eb('device_count', '-', 1) }))
    .where('id', '=', licenseId)
    .execute();
  return true;
}

/** Moves active licenses whose expiry has passed to expired, at most `limit` at a time. */
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
          .where('status', '=', 'active')
          .where('expires_at', '<=', now)
          .orderBy('expires_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .where('status', '=', 'active')
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
      updated_at: now,
    }))
    .where('id', '=', licenseId)
    .returningAll()
    .executeTakeFirst();
}
