import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { SigningAlgorithm } from '../../platform/db/schema.js';

/**
 * The reads of offline activation and the revocation list, and the offline hold on a device.
 * Device binding itself is store.activateDevice, the same conditional write online activation uses.
 */

/**
 * Licenses with what offline activation needs beside the record: the seller's tier, the app's
 * token algorithm (which key signs the file), the product's features (for effectiveFeatures) and
 * its portal file validity (null without a product); never a deleted seller's. Callers add whose.
 */
export function offlineLicenses(executor: Executor) {
  return executor
    .selectFrom('licenses as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .innerJoin('apps as a', 'a.id', 'l.app_id')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .selectAll('l')
    .select(['u.tier', 'a.token_algorithm', 'p.features as product_features', 'p.portal_license_file_days'])
    .where('u.deleted_at', 'is', null);
}

/** A license by its canonical key, for offline activation. */
export function findLicenseByKey(executor: Executor, key: string) {
  return offlineLicenses(executor).where('l.key', '=', key).executeTakeFirst();
}

export type OfflineLicense = NonNullable<Awaited<ReturnType<typeof findLicenseByKey>>>;

/**
 * Holds a bound device until `until` (or later, when another file already holds it longer), in
 * one statement. False when the device is no longer bound: it was released meanwhile.
 */
export async function holdDeviceOffline(
  executor: Executor,
  licenseId: string,
  hwuid: string,
  until: Date,
): Promise<boolean> {
  const row = await executor
    .updateTable('license_devices')
    // greatest() passes over a null: a device held by no file yet takes `until`.
    .set({ offline_until: sql<Date>`greatest(offline_until, ${until})` })
    .where('license_id', '=', licenseId)
    .where('hwuid', '=', hwuid)
    .returning('hwuid')
    .executeTakeFirst();
  return row !== undefined;
}

/** The app's token algorithm, when the app exists and its seller's account is open; else null. */
export async function openAppAlgorithm(executor: Executor, appId: string): Promise<SigningAlgorithm | null> {
  const row = await executor
    .selectFrom('apps as a')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .select('a.token_algorithm')
    .where('a.id', '=', appId)
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.token_algorithm ?? null;
}

/** The app's revoked and suspended licenses: id and when each last changed. */
function revokedRows(executor: Executor, appId: string) {
  return executor
    .selectFrom('licenses')
    .select(['id', 'updated_at'])
    .where('app_id', '=', appId)
    .where('status', 'in', ['revoked', 'suspended'])
    .orderBy('updated_at')
    .orderBy('id')
    .execute();
}

type RevokedRow = Awaited<ReturnType<typeof revokedRows>>[number];

function digestOf(rows: RevokedRow[]): string {
  const entries = rows.map((row) => [row.id, row.updated_at.getTime()]);
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url');
}

/**
 * The app's revoked and suspended licenses, and the list's version: it grows whenever the
 * entries change and never goes back, so a machine holding a list can tell whether another is
 * newer even within the hour they share an issue time. A new version is at least the current
 * time and the latest license change in milliseconds (what versions were before migration 0023),
 * and more than the last one, whatever the nodes' clocks say.
 *
 * Only a change takes the app's row lock, and the entries it gives a version are read under it,
 * so a later version never names older entries than an earlier one.
 */
export async function revokedLicenses(db: Db, appId: string, now: Date) {
  const [rows, recorded] = await Promise.all([revokedRows(db, appId), recordedVersion(db, appId)]);
  if (recorded?.digest === digestOf(rows)) return { rows, version: recorded.version };
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('revocation_list_versions')
      .values({ app_id: appId, version: 0, digest: '' })
      .onConflict((oc) => oc.column('app_id').doNothing())
      .execute();
    const held = await trx
      .selectFrom('revocation_list_versions')
      .select(['version', 'digest'])
      .where('app_id', '=', appId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const current = await revokedRows(trx, appId);
    const digest = digestOf(current);
    if (held.digest === digest) return { rows: current, version: Number(held.version) };
    const latest = await trx
      .selectFrom('licenses')
      .select((eb) => eb.fn.max('updated_at').as('latest'))
      .where('app_id', '=', appId)
      .executeTakeFirst();
    const latestAt = latest?.latest ? new Date(latest.latest as Date | string).getTime() : 0;
    const version = Math.max(Number(held.version) + 1, now.getTime(), latestAt);
    await trx
      .updateTable('revocation_list_versions')
      .set({ version, digest })
      .where('app_id', '=', appId)
      .execute();
    return { rows: current, version };
  });
}

async function recordedVersion(executor: Executor, appId: string) {
  const row = await executor
    .selectFrom('revocation_list_versions')
    .select(['version', 'digest'])
    .where('app_id', '=', appId)
    .executeTakeFirst();
  return row ? { version: Number(row.version), digest: row.digest } : null;
}
