import { type RawBuilder, sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { UserTier } from '../../platform/db/schema.js';
import type { SeriesRange } from './series-range.js';

/**
 * Aggregates for the admin dashboard: counts and sums over indexed columns (migration 0012 and
 * docs/analytics.md say which index serves what); no query reads rows into the process.
 * Buckets and zero-filling are made in the database, in UTC whatever the session's time zone.
 */

/**
 * Runs the queries of one answer on one read-only snapshot, so its numbers agree. JIT is off:
 * the planner's guesses for generate_series and date_trunc groups are large enough to trigger
 * it, and compiling costs several times more than these short aggregates.
 */
export function inSnapshot<T>(db: Db, read: (trx: Executor) => Promise<T>): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      await sql`set local jit = off`.execute(trx);
      return read(trx);
    });
}

export function countUsers(executor: Executor) {
  return executor
    .selectFrom('users')
    .select(['tier', 'role'])
    .select((eb) => [
      eb.fn.countAll<number>().filterWhere('deleted_at', 'is', null).as('live'),
      eb.fn.countAll<number>().filterWhere('deleted_at', 'is not', null).as('deleted'),
    ])
    .groupBy(['tier', 'role'])
    .execute();
}

export async function countApps(executor: Executor): Promise<number> {
  const row = await executor
    .selectFrom('apps')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  return row.total;
}

export function countProducts(executor: Executor) {
  return executor
    .selectFrom('products')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.countAll<number>().filterWhere('active', '=', true).as('active'),
    ])
    .executeTakeFirstOrThrow();
}

/**
 * Licenses by stored status, and how many of the active ones and trials are past their expiry (the job
 * has not marked them yet; verification already refuses them).
 */
export async function countLicenses(executor: Executor, now: Date) {
  const byStatus = await executor
    .selectFrom('licenses')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute();
  const lapsed = await executor
    .selectFrom('licenses')
    .select([
      (eb) => eb.fn.countAll<number>().filterWhere('status', '=', 'active').as('active'),
      (eb) => eb.fn.countAll<number>().filterWhere('status', '=', 'trial').as('trial'),
    ])
    .where('status', 'in', ['active', 'trial'])
    .where('expires_at', '<=', now)
    .executeTakeFirstOrThrow();
  return { byStatus, lapsed: { active: Number(lapsed.active), trial: Number(lapsed.trial) } };
}

/** Orders by status; `paid` counts those that were paid at some point (a refund cancels them). */
export function countOrders(executor: Executor) {
  return executor
    .selectFrom('orders')
    .select([
      'status',
      (eb) => eb.fn.countAll<number>().as('count'),
      (eb) => eb.fn.count<number>('paid_at').as('paid'),
    ])
    .groupBy('status')
    .execute();
}

export function countSubscriptions(executor: Executor) {
  return executor
    .selectFrom('subscriptions')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute();
}

export function countDisputes(executor: Executor, openStatuses: readonly string[]) {
  return executor
    .selectFrom('disputes')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.countAll<number>().filterWhere('status', 'in', openStatuses).as('open'),
    ])
    .executeTakeFirstOrThrow();
}

/** Paid orders per currency, with exact decimal sums. */
export function revenueByCurrency(executor: Executor) {
  return executor
    .selectFrom('orders')
    .select(['currency', (eb) => eb.fn.sum<string>('amount').as('amount')])
    .select((eb) => eb.fn.countAll<number>().as('orders'))
    .where('status', '=', 'paid')
    .groupBy('currency')
    .orderBy('currency')
    .execute();
}

/**
 * Every bucket of the range as [start, next): date_trunc in UTC of `from` and `to`, and
 * generate_series between them, on UTC wall-clock time so that days and months do not shift
 * with the session's time zone.
 */
export function buckets(range: SeriesRange): RawBuilder<unknown> {
  const unit = range.interval;
  const step = `1 ${unit}`;
  return sql`
    select wall at time zone 'UTC' as start, (wall + ${step}::interval) at time zone 'UTC' as next
    from generate_series(
      date_trunc(${unit}::text, ${range.from}::timestamptz at time zone 'UTC'),
      date_trunc(${unit}::text, ${range.to}::timestamptz at time zone 'UTC'),
      ${step}::interval
    ) as wall`;
}

/**
 * The column's time lies in bucket `b` and has already happened. Each bucket counts its own
 * index range: no expression is computed per row and nothing is sorted, so the cost is one
 * index-only pass over the range's rows.
 */
export function inBucket(column: string, now: Date): RawBuilder<unknown> {
  const ref = sql.ref(column);
  return sql`${ref} >= b.start and ${ref} < b.next and ${ref} <= ${now}`;
}

/** The column's time lies after the range's last bucket and has already happened. */
function afterRange(column: string, now: Date): RawBuilder<unknown> {
  const ref = sql.ref(column);
  return sql`${ref} >= (select max(next) from buckets) and ${ref} <= ${now}`;
}

export interface RevenuePoint {
  currency: string;
  start: Date;
  amount: string;
  orders: number;
  total_amount: string;
  total_orders: number;
}

/** One seller's records, or one app's of theirs; the platform's when absent. */
export interface Owner {
  userId: string;
  appId: string | null;
}

/**
 * Paid orders per currency and bucket of payment time; one row per bucket for every currency
 * that had revenue in the range. With an owner, only theirs (orders_user_paid_idx, 0015).
 */
export async function revenueSeries(
  executor: Executor,
  range: SeriesRange,
  now: Date,
  currency: string | null,
  owner: Owner | null = null,
): Promise<RevenuePoint[]> {
  const { rows } = await sql<RevenuePoint>`
    with
    buckets as (${buckets(range)}),
    sums as (
      select b.start, s.currency, s.amount, s.orders
      from buckets b
      cross join lateral (
        select currency, sum(amount) as amount, count(*) as orders
        from orders
        where status = 'paid' and ${inBucket('paid_at', now)}
          ${currency ? sql`and currency = ${currency}` : sql``}
          ${owner ? sql`and user_id = ${owner.userId}` : sql``}
          ${owner?.appId ? sql`and app_id = ${owner.appId}` : sql``}
        group by currency
      ) s
    ),
    currencies as (select distinct currency from sums)
    select
      c.currency,
      b.start,
      coalesce(s.amount, 0)::text as amount,
      coalesce(s.orders, 0)::bigint as orders,
      sum(coalesce(s.amount, 0)) over (partition by c.currency)::text as total_amount,
      sum(coalesce(s.orders, 0)) over (partition by c.currency)::bigint as total_orders
    from currencies c
    cross join buckets b
    left join sums s on s.currency = c.currency and s.start = b.start
    order by c.currency, b.start
  `.execute(executor);
  return rows;
}

export interface LicensePoint {
  start: Date;
  issued: number;
  expired: number;
  revoked: number;
  suspended: number;
  active: number;
  valid_verifications: number;
  invalid_verifications: number;
}

/**
 * Per bucket: licenses issued, ended by expiry, suspended and revoked (from the license.revoked
 * events, whose data.status says which), and active at the bucket's end. A license is active
 * from created_at until ended_at, so the active count at a bucket's end is the count active
 * now, minus what was issued since, plus what ended since: window sums over the later buckets
 * and two counts after the range, never a count of everything before a bucket. Verifications
 * are the stored daily counts of the bucket's UTC days (each bucket is whole days).
 */
export async function licenseSeries(
  executor: Executor,
  range: SeriesRange,
  now: Date,
  activeNow: number,
): Promise<LicensePoint[]> {
  const { rows } = await sql<LicensePoint>`
    with
    buckets as (${buckets(range)}),
    points as materialized (
      select
        b.start,
        (select count(*) from licenses where ${inBucket('created_at', now)}) as issued,
        e.ended,
        e.expired,
        m.revoked,
        m.suspended,
        v.valid_verifications,
        v.invalid_verifications
      from buckets b
      cross join lateral (
        select count(*) as ended, count(*) filter (where ended_at = expires_at) as expired
        from licenses where ${inBucket('ended_at', now)}
      ) e
      cross join lateral (
        select
          count(*) filter (where data ->> 'status' = 'revoked') as revoked,
          count(*) filter (where data ->> 'status' = 'suspended') as suspended
        from events where type = 'license.revoked' and ${inBucket('created_at', now)}
      ) m
      cross join lateral (
        select
          coalesce(sum(valid), 0)::bigint as valid_verifications,
          coalesce(sum(invalid), 0)::bigint as invalid_verifications
        from license_verification_counts
        where day >= (b.start at time zone 'UTC')::date and day < (b.next at time zone 'UTC')::date
          and day <= (${now}::timestamptz at time zone 'UTC')::date
      ) v
    ),
    after_range as (
      select
        (select count(*) from licenses where ${afterRange('created_at', now)}) as issued,
        (select count(*) from licenses where ${afterRange('ended_at', now)}) as ended
    )
    select
      p.start, p.issued, p.expired, p.revoked, p.suspended,
      p.valid_verifications, p.invalid_verifications,
      (${activeNow}::bigint
        - coalesce(sum(p.issued) over later, 0) - a.issued
        + coalesce(sum(p.ended) over later, 0) + a.ended)::bigint as active
    from points p cross join after_range a
    window later as (order by p.start rows between 1 following and unbounded following)
    order by p.start
  `.execute(executor);
  return rows;
}

export interface UserPoint {
  start: Date;
  registrations: number;
  deleted: number;
  total: number;
  /** Registrations by the accounts' current tier; tiers without any are missing. */
  by_tier: Partial<Record<UserTier, number>>;
}

/**
 * Per bucket: accounts registered (split by their current tier), accounts deleted, and accounts
 * existing at the bucket's end, computed back from the count existing now as for licenses.
 */
export async function userSeries(
  executor: Executor,
  range: SeriesRange,
  now: Date,
  liveNow: number,
): Promise<UserPoint[]> {
  const { rows } = await sql<UserPoint>`
    with
    buckets as (${buckets(range)}),
    points as materialized (
      select
        b.start,
        coalesce(r.registrations, 0) as registrations,
        coalesce(r.by_tier, '{}') as by_tier,
        (select count(*) from users where ${inBucket('deleted_at', now)}) as deleted
      from buckets b
      cross join lateral (
        select sum(n)::bigint as registrations, jsonb_object_agg(tier, n) as by_tier
        from (
          select tier, count(*) as n from users where ${inBucket('created_at', now)} group by tier
        ) per_tier
      ) r
    ),
    after_range as (
      select
        (select count(*) from users where ${afterRange('created_at', now)}) as registered,
        (select count(*) from users where ${afterRange('deleted_at', now)}) as deleted
    )
    select
      p.start, p.registrations, p.deleted, p.by_tier,
      (${liveNow}::bigint
        - coalesce(sum(p.registrations) over later, 0) - a.registered
        + coalesce(sum(p.deleted) over later, 0) + a.deleted)::bigint as total
    from points p cross join after_range a
    window later as (order by p.start rows between 1 following and unbounded following)
    order by p.start
  `.execute(executor);
  return rows;
}

/** One UTC day's verifications of one app, as a node tallied them since its last flush. */
export interface VerificationTally {
  /** YYYY-MM-DD, UTC. */
  day: string;
  appId: string;
  valid: number;
  invalid: number;
}

/**
 * Adds tallies to the stored counts in one conditional statement; the arrays keep it at four
 * parameters whatever the number of apps. An app deleted since its tally is skipped, so its
 * counts cannot make every other app's fail.
 */
export async function addVerificationCounts(
  executor: Executor,
  tallies: readonly VerificationTally[],
): Promise<void> {
  await sql`
    insert into license_verification_counts as t (day, app_id, valid, invalid)
    select v.day, v.app_id, v.valid, v.invalid
    from unnest(
      ${tallies.map((tally) => tally.day)}::date[],
      ${tallies.map((tally) => tally.appId)}::uuid[],
      ${tallies.map((tally) => tally.valid)}::bigint[],
      ${tallies.map((tally) => tally.invalid)}::bigint[]
    ) as v (day, app_id, valid, invalid)
    where exists (select 1 from apps where apps.id = v.app_id)
    on conflict (day, app_id) do update
      set valid = t.valid + excluded.valid, invalid = t.invalid + excluded.invalid
  `.execute(executor);
}

/** Verifications of every app over the UTC days from `first` to `last`, both included. */
export async function countVerifications(executor: Executor, first: string, last: string) {
  const { rows } = await sql<{ valid: number; invalid: number }>`
    select coalesce(sum(valid), 0)::bigint as valid, coalesce(sum(invalid), 0)::bigint as invalid
    from license_verification_counts
    where day between ${first}::date and ${last}::date
  `.execute(executor);
  return rows[0] ?? { valid: 0, invalid: 0 };
}
