import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';
import { offlineLicenses } from '../licenses/index.js';

/**
 * All SQL of the buyer portal. A buyer is an e-mail address (normalized: trimmed, lowercase);
 * every read of purchases matches it against lower(email) and skips deleted sellers' records.
 */

const byBuyer = (column: string, email: string) => sql<boolean>`lower(${sql.ref(column)}) = ${email}`;

/** Whether anything was bought (or issued) under the address: only then is a link mailed. */
export async function holdsPurchases(db: Db, email: string): Promise<boolean> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .or([
          eb.exists(
            eb
              .selectFrom('licenses as l')
              .innerJoin('users as u', 'u.id', 'l.user_id')
              .select('l.id')
              .where(byBuyer('l.email', email))
              .where('u.deleted_at', 'is', null),
          ),
          eb.exists(
            eb
              .selectFrom('orders as o')
              .innerJoin('users as u', 'u.id', 'o.user_id')
              .select('o.id')
              .where(byBuyer('o.email', email))
              .where('o.status', 'in', ['paid', 'canceled'])
              .where('u.deleted_at', 'is', null),
          ),
        ])
        .as('holds'),
    ])
    .executeTakeFirstOrThrow();
  return Boolean(row.holds);
}

/**
 * A sign-in mail for the address, queued with nothing in it: the link is made when it is sent
 * (the portal's signInMail), and only if the address holds purchases.
 */
export async function queueSignInMail(db: Db, email: string, now: Date): Promise<void> {
  await db
    .insertInto('notifications')
    .values({
      id: newId(),
      kind: 'portal.sign_in',
      to_email: email,
      to_user_id: null,
      data: '{}',
      created_at: now,
    })
    .execute();
}

/** A one-time sign-in link (its token's hash), made as its mail is sent. */
export async function insertSignInLink(
  db: Db,
  input: { tokenHash: string; email: string; now: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('portal_sign_in_links')
    .values({
      token_hash: input.tokenHash,
      email: input.email,
      created_at: input.now,
      expires_at: input.expiresAt,
      used_at: null,
    })
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .execute();
}

/** Forgets the address's spent links (used or expired). */
export async function forgetSpentLinks(db: Db, email: string, now: Date): Promise<void> {
  await db
    .deleteFrom('portal_sign_in_links')
    .where('email', '=', email)
    .where((eb) => eb.or([eb('used_at', 'is not', null), eb('expires_at', '<=', now)]))
    .execute();
}

/**
 * Deletes links that ended a day ago or more (used or not) and sessions that ran out, with the
 * addresses they held. A day's grace keeps a just-expired link explaining itself ("no longer
 * works") rather than vanishing; either way it signs no one in.
 */
export async function purgeEnded(db: Db, now: Date): Promise<number> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const links = await db
    .deleteFrom('portal_sign_in_links')
    .where('expires_at', '<=', dayAgo)
    .executeTakeFirst();
  const sessions = await db.deleteFrom('portal_sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(links.numDeletedRows) + Number(sessions.numDeletedRows);
}

/** Whether a link could still sign in (unused, not expired); reading it does not use it. */
export async function linkIsUsable(db: Db, tokenHash: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('portal_sign_in_links')
    .select('email')
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** Uses a link in one conditional statement: of two clicks at once, one gets the address. */
export async function consumeLink(db: Db, tokenHash: string, now: Date): Promise<string | null> {
  const row = await db
    .updateTable('portal_sign_in_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('email')
    .executeTakeFirst();
  return row?.email ?? null;
}

export async function insertSession(
  db: Db,
  input: { tokenHash: string; email: string; now: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('portal_sessions')
    .values({
      token_hash: input.tokenHash,
      email: input.email,
      created_at: input.now,
      expires_at: input.expiresAt,
    })
    .execute();
  // Sessions that ran out go when a new one starts; nothing else needs a job for them.
  await db.deleteFrom('portal_sessions').where('expires_at', '<=', input.now).execute();
}

export async function findSession(db: Db, tokenHash: string, now: Date): Promise<string | null> {
  const row = await db
    .selectFrom('portal_sessions')
    .select('email')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.email ?? null;
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('portal_sessions').where('token_hash', '=', tokenHash).execute();
}

/**
 * The buyer's licenses with what the portal shows of each: never the seller's metadata or
 * settings (the seller's id finds their brand; entitlements, metadata and the expiry strategy
 * decide which releases the license may download; none of them is shown). The software is named by the
 * product, or by the app for a license issued without one.
 */
export function buyerLicenses(db: Db, email: string) {
  return db
    .selectFrom('licenses as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .innerJoin('apps as a', 'a.id', 'l.app_id')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .select([
      'l.id',
      'l.app_id',
      'l.key',
      'l.status',
      'l.expires_at',
      'l.expiry_strategy',
      'l.features',
      'l.metadata',
      'p.features as product_features',
      'l.floating',
      'l.max_devices',
      'l.max_seats',
      'l.created_at',
      'l.user_id as seller_id',
      'p.name as product_name',
      'a.name as app_name',
      'p.portal_device_releases',
      'p.portal_release_period_days',
    ])
    .where(byBuyer('l.email', email))
    .where('u.deleted_at', 'is', null)
    .orderBy('l.created_at', 'desc')
    .orderBy('l.id')
    .execute();
}

export function devicesOf(db: Db, licenseIds: readonly string[]) {
  if (licenseIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('license_devices')
    .select(['license_id', 'hwuid', 'name', 'platform', 'activated_at', 'offline_until'])
    .where('license_id', 'in', [...licenseIds])
    .orderBy('activated_at')
    .orderBy('hwuid')
    .execute();
}

/** The live seats (leases not lapsed) of these floating licenses, oldest first. */
export function seatsOf(db: Db, licenseIds: readonly string[], now: Date) {
  if (licenseIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('license_seats')
    .select(['license_id', 'hwuid', 'name', 'platform', 'acquired_at', 'lease_expires_at'])
    .where('license_id', 'in', [...licenseIds])
    .where('lease_expires_at', '>', now)
    .orderBy('acquired_at')
    .orderBy('hwuid')
    .execute();
}

/** The device releases the buyer made on these licenses after `since`, oldest first. */
export function buyerReleasesOf(db: Db, licenseIds: readonly string[], since: Date) {
  if (licenseIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('buyer_device_releases')
    .select(['license_id', 'released_at'])
    .where('license_id', 'in', [...licenseIds])
    .where('released_at', '>', since)
    .orderBy('released_at')
    .execute();
}

/** Paid orders and those undone since (refunds, lost disputes); open or declined attempts are not purchases. */
export function buyerOrders(db: Db, email: string) {
  return db
    .selectFrom('orders as o')
    .innerJoin('users as u', 'u.id', 'o.user_id')
    .innerJoin('products as p', 'p.id', 'o.product_id')
    .select([
      'o.transaction_id',
      'o.amount',
      'o.currency',
      'o.status',
      'o.created_at',
      'o.paid_at',
      'p.name',
      'o.user_id as seller_id',
    ])
    .where(byBuyer('o.email', email))
    .where('o.status', 'in', ['paid', 'canceled'])
    .where('u.deleted_at', 'is', null)
    .orderBy('o.created_at', 'desc')
    .orderBy('o.id')
    .execute();
}

export function buyerSubscriptions(db: Db, email: string) {
  return db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .innerJoin('products as p', 'p.id', 's.product_id')
    .select([
      's.id',
      's.status',
      's.interval',
      's.current_period_end',
      's.canceled_at',
      's.user_id as seller_id',
      'p.name',
    ])
    .where(byBuyer('s.email', email))
    .where('u.deleted_at', 'is', null)
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id')
    .execute();
}

/**
 * One of the buyer's licenses in the shape offline activation takes (with the seller's tier and
 * the product's features); none when it is not theirs.
 */
export function findBuyerLicense(db: Db, email: string, licenseId: string) {
  return offlineLicenses(db)
    .where('l.id', '=', licenseId)
    .where(byBuyer('l.email', email))
    .executeTakeFirst();
}

export async function ownsSubscription(db: Db, email: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select('s.id')
    .where('s.id', '=', id)
    .where(byBuyer('s.email', email))
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}
