import type { Executor } from '../../platform/db/database.js';

/**
 * The reads of offline activation and the revocation list. Device binding itself is
 * store.activateDevice, the same conditional write online activation uses.
 */

/**
 * Licenses with what offline activation needs beside the record: the seller's tier and the
 * product's features (for effectiveFeatures); never a deleted seller's. Callers add whose.
 */
export function offlineLicenses(executor: Executor) {
  return executor
    .selectFrom('licenses as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .selectAll('l')
    .select(['u.tier', 'p.features as product_features'])
    .where('u.deleted_at', 'is', null);
}

/** A license by its canonical key, for offline activation. */
export function findLicenseByKey(executor: Executor, key: string) {
  return offlineLicenses(executor).where('l.key', '=', key).executeTakeFirst();
}

export type OfflineLicense = NonNullable<Awaited<ReturnType<typeof findLicenseByKey>>>;

export async function isDeviceBound(executor: Executor, licenseId: string, hwuid: string): Promise<boolean> {
  const row = await executor
    .selectFrom('license_devices')
    .select('hwuid')
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the app exists and its seller's account is open. */
export async function appIsOpen(executor: Executor, appId: string): Promise<boolean> {
  const row = await executor
    .selectFrom('apps as a')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .select('a.id')
    .where('a.id', '=', appId)
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The app's revoked and suspended licenses (id and when they last changed), and the list's
 * version: the latest change to any of the app's licenses, in milliseconds (0 with none), so a
 * reinstatement moves it too.
 */
export async function revokedLicenses(executor: Executor, appId: string) {
  const [rows, latest] = await Promise.all([
    executor
      .selectFrom('licenses')
      .select(['id', 'updated_at'])
      .where('app_id', '=', appId)
      .where('status', 'in', ['revoked', 'suspended'])
      .orderBy('updated_at')
      .orderBy('id')
      .execute(),
    executor
      .selectFrom('licenses')
      .select((eb) => eb.fn.max('updated_at').as('latest'))
      .where('app_id', '=', appId)
      .executeTakeFirst(),
  ]);
  const latestAt = latest?.latest ? new Date(latest.latest as Date | string).getTime() : 0;
  return { rows, version: latestAt };
}
