import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import {
  afterCursor,
  keysetRows,
  type ListOrder,
  orderClause,
  type SortColumn,
  sortKey,
} from '../../platform/db/list-order.js';
import type { LicenseMetadata, LicenseRow, LicenseStatus } from '../../platform/db/schema.js';
import { containsPattern } from '../../platform/db/text-search.js';
import type { Page, Sort } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import { type LicenseTerms, NO_TERMS } from '../products/index.js';
import type { LicenseSortColumn } from './schemas.js';

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

/** A license with its product's features: what a token's holder is checked and granted by. */
export type TokenLicense = LicenseRow & { product_features: string[] | null };

/** The license a token names, with its product's features (its entitlements when it sets none). */
export function findTokenLicense(executor: Executor, licenseId: string): Promise<TokenLicense | undefined> {
  return executor
    .selectFrom('licenses as l')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .selectAll('l')
    .select('p.features as product_features')
    .where('l.id', '=', licenseId)
    .executeTakeFirst();
}

/** Whose licenses a list reads: one app's, or a seller's (of one app when `appId` is set). */
export type LicenseScope = { appId: string } | { userId: string; appId: string | null };

const SORT_COLUMNS: Record<LicenseSortColumn, SortColumn> = {
  createdAt: { value: sql.ref('created_at'), type: 'timestamptz' },
  lastVerifiedAt: { value: sql.ref('last_verified_at'), type: 'timestamptz' },
  expiresAt: { value: sql.ref('expires_at'), type: 'timestamptz' },
  status: { value: sql.ref('status'), type: 'text' },
  email: { value: sql.ref('email'), type: 'text' },
};

/** The order of a license list: the sort asked, then the id the same way. */
export function licenseOrder(sort: Sort<LicenseSortColumn>): ListOrder {
  return { column: SORT_COLUMNS[sort.column], descending: sort.descending, id: sql.ref('id') };
}

function scopedLicenses(executor: Executor, scope: LicenseScope, filter: LicenseSearch) {
  let query = executor.selectFrom('licenses');
  if ('userId' in scope) query = query.where('user_id', '=', scope.userId);
  if (scope.appId) query = query.where('app_id', '=', scope.appId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.productId) query = query.where('product_id', '=', filter.productId);
  // A plain ilike: a seller's licenses are few enough to scan, and no trigram extension is needed.
  if (filter.email) query = query.where('email', 'ilike', containsPattern(filter.email));
  if (filter.key) query = query.where('key', '=', filter.key);
  return query;
}

/** What a license list is filtered by, its key already normalised. */
export interface LicenseSearch {
  status?: LicenseStatus;
  productId?: string;
  email?: string;
  key?: string;
}

export async function listLicenses(
  executor: Executor,
  scope: LicenseScope,
  filter: LicenseSearch,
  order: ListOrder,
  page: Page,
) {
  const query = scopedLicenses(executor, scope, filter);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy(orderClause(order)).limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

/** Every license of the list, a page at a time in its order (the CSV export). */
export function exportLicenses(
  executor: Executor,
  scope: LicenseScope,
  filter: LicenseSearch,
  order: ListOrder,
): AsyncGenerator<LicenseRow> {
  return keysetRows((after, size) => {
    let query = scopedLicenses(executor, scope, filter);
    if (after) query = query.where(afterCursor(order, after));
    return query
      .selectAll()
      .select(sortKey(order).as('sort_key'))
      .orderBy(orderClause(order))
      .limit(size)
      .execute();
  });
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
  notice: {
    email: string;
    productId: string;
    productName: string;
    licenseKey: string;
    licenseId: string;
    now: Date;
  },
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
        licenseId: notice.licenseId,
      }),
      created_at: notice.now,
    })
    .execute();
}

// The rooms of one concern each, read through this one door: callers keep `store.…`.
export * from './device-store.js';
export * from './trial-store.js';
export * from './usage-store.js';
export * from './verification-store.js';
