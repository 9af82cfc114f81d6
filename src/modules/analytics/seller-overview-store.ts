import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { OrderStatus } from '../../platform/db/schema.js';
import type { SeriesRange } from './series-range.js';
import { buckets, type Owner } from './store.js';

/**
 * The seller overview's SQL. Every statement is scoped by the seller (user_id), and by one of
 * their apps when asked, and reads that seller's slice of an index (migration 0015 and
 * docs/analytics.md say which).
 */

/** The app is the seller's (deleted accounts' apps are never the caller's). */
export async function ownsApp(executor: Executor, userId: string, appId: string): Promise<boolean> {
  const row = await executor
    .selectFrom('apps')
    .select('id')
    .where('id', '=', appId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

const byOwner = (owner: Owner, table: string) =>
  sql`${sql.ref(`${table}.user_id`)} = ${owner.userId} ${owner.appId ? sql`and ${sql.ref(`${table}.app_id`)} = ${owner.appId}` : sql``}`;

/**
 * Licenses by status as verification sees them: an active one or a trial past its expiry counts
 * as expired.
 */
export async function countLicenses(executor: Executor, owner: Owner, now: Date) {
  const { rows } = await sql<{
    active: number;
    trial: number;
    suspended: number;
    revoked: number;
    expired: number;
  }>`
    select
      count(*) filter (where status = 'active' and (expires_at is null or expires_at > ${now}))::bigint as active,
      count(*) filter (where status = 'trial' and expires_at > ${now})::bigint as trial,
      count(*) filter (where status = 'suspended')::bigint as suspended,
      count(*) filter (where status = 'revoked')::bigint as revoked,
      count(*) filter (where status = 'expired' or (status in ('active', 'trial') and expires_at <= ${now}))::bigint as expired
    from licenses l
    where ${byOwner(owner, 'l')}
  `.execute(executor);
  return rows[0] ?? { active: 0, trial: 0, suspended: 0, revoked: 0, expired: 0 };
}

export interface ActivityPoint {
  start: Date;
  valid: number;
  invalid: number;
  activations: number;
}

/**
 * Per UTC day of the range: verifications of the owner's apps (the stored daily counts) and
 * devices activated on the owner's licenses (devices still bound: a removed device leaves no
 * row). Each is one grouped pass over the owner's rows, joined to the days.
 */
export async function activitySeries(
  executor: Executor,
  owner: Owner,
  range: SeriesRange,
  now: Date,
): Promise<ActivityPoint[]> {
  const { rows } = await sql<ActivityPoint>`
    with
    buckets as (${buckets(range)}),
    verified as (
      select c.day, sum(c.valid) as valid, sum(c.invalid) as invalid
      from license_verification_counts c
      where c.app_id in (select a.id from apps a where ${byOwner({ ...owner, appId: null }, 'a')}
          ${owner.appId ? sql`and a.id = ${owner.appId}` : sql``})
        and c.day >= (select (min(start) at time zone 'UTC')::date from buckets)
        and c.day <= (${now}::timestamptz at time zone 'UTC')::date
      group by c.day
    ),
    activated as (
      select (d.activated_at at time zone 'UTC')::date as day, count(*) as activations
      from licenses l
      join license_devices d on d.license_id = l.id
      where ${byOwner(owner, 'l')}
        and d.activated_at >= (select min(start) from buckets) and d.activated_at <= ${now}
      group by 1
    )
    select
      b.start,
      coalesce(v.valid, 0)::bigint as valid,
      coalesce(v.invalid, 0)::bigint as invalid,
      coalesce(a.activations, 0)::bigint as activations
    from buckets b
    left join verified v on v.day = (b.start at time zone 'UTC')::date
    left join activated a on a.day = (b.start at time zone 'UTC')::date
    order by b.start
  `.execute(executor);
  return rows;
}

/**
 * Paid orders per currency whose payment time lies in [from, until) and has happened: a past
 * period's totals, without buckets (orders_user_paid_idx, as the series).
 */
export async function revenueTotals(executor: Executor, owner: Owner, from: Date, until: Date, now: Date) {
  const { rows } = await sql<{ currency: string; amount: string; orders: number }>`
    select o.currency, sum(o.amount)::text as amount, count(*)::bigint as orders
    from orders o
    where o.status = 'paid' and ${byOwner(owner, 'o')}
      and o.paid_at >= ${from} and o.paid_at < ${until} and o.paid_at <= ${now}
    group by o.currency
    order by o.currency
  `.execute(executor);
  return rows;
}

/**
 * Verifications of the owner's apps over the UTC days of [from, until) (both day starts), and
 * devices activated on the owner's licenses in that time: the activity series' sums, for a
 * period whose days need no points.
 */
export async function activityTotals(
  executor: Executor,
  owner: Owner,
  from: Date,
  until: Date,
  now: Date,
): Promise<{ valid: number; invalid: number; activations: number }> {
  const { rows } = await sql<{ valid: number; invalid: number; activations: number }>`
    with verified as (
      select coalesce(sum(c.valid), 0)::bigint as valid, coalesce(sum(c.invalid), 0)::bigint as invalid
      from license_verification_counts c
      where c.app_id in (select a.id from apps a where ${byOwner({ ...owner, appId: null }, 'a')}
          ${owner.appId ? sql`and a.id = ${owner.appId}` : sql``})
        and c.day >= (${from}::timestamptz at time zone 'UTC')::date
        and c.day < (${until}::timestamptz at time zone 'UTC')::date
    ),
    activated as (
      select count(*)::bigint as activations
      from licenses l
      join license_devices d on d.license_id = l.id
      where ${byOwner(owner, 'l')}
        and d.activated_at >= ${from} and d.activated_at < ${until} and d.activated_at <= ${now}
    )
    select v.valid, v.invalid, a.activations from verified v cross join activated a
  `.execute(executor);
  return rows[0] ?? { valid: 0, invalid: 0, activations: 0 };
}

export interface EndpointRow {
  id: string;
  kind: 'core' | 'merchant';
  url: string;
  app_id: string | null;
  product_id: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  failing_since: Date | null;
  last_failure_at: Date | null;
}

/** Endpoints that are disabled or whose last delivery failed, and how many of each. */
export async function troubledEndpoints(executor: Executor, owner: Owner, limit: number) {
  const troubled = sql`(not w.enabled or w.consecutive_failures > 0)`;
  const { rows } = await sql<EndpointRow>`
    select w.id, w.kind, w.url, w.app_id, w.product_id, w.enabled, w.disabled_reason,
      w.consecutive_failures, w.failing_since, w.last_failure_at
    from webhook_endpoints w
    where ${byOwner(owner, 'w')} and ${troubled}
    order by w.enabled, w.failing_since nulls last, w.id
    limit ${limit}
  `.execute(executor);
  const counts = await sql<{ failing: number; disabled: number }>`
    select
      count(*) filter (where w.enabled)::bigint as failing,
      count(*) filter (where not w.enabled)::bigint as disabled
    from webhook_endpoints w
    where ${byOwner(owner, 'w')} and ${troubled}
  `.execute(executor);
  return { rows, counts: counts.rows[0] ?? { failing: 0, disabled: 0 } };
}

export interface DisputeRow {
  id: string;
  order_id: string;
  status: string;
  amount: string;
  currency: string;
  reason: string;
  evidence_due_by: Date | null;
  created_at: Date;
}

/** Open disputes (newest first, up to `limit`) and how many there are. */
export async function openDisputes(
  executor: Executor,
  owner: Owner,
  openStatuses: readonly string[],
  limit: number,
) {
  const open = sql`d.status in (${sql.join(openStatuses)})`;
  const { rows } = await sql<DisputeRow>`
    select d.id, d.order_id, d.status, d.amount::text as amount, d.currency, d.reason,
      d.evidence_due_by, d.created_at
    from disputes d
    where ${byOwner(owner, 'd')} and ${open}
    order by d.created_at desc, d.id desc
    limit ${limit}
  `.execute(executor);
  const count = await sql<{ open: number }>`
    select count(*)::bigint as open from disputes d where ${byOwner(owner, 'd')} and ${open}
  `.execute(executor);
  return { rows, open: count.rows[0]?.open ?? 0 };
}

export interface LatestOrderRow {
  id: string;
  transaction_id: string;
  product_id: string;
  product_name: string;
  email: string;
  amount: string;
  currency: string;
  status: OrderStatus;
  created_at: Date;
}

/**
 * The newest orders (orders_user_idx, read backwards), with the status the seller's order routes
 * show: a paid order whose license was suspended or revoked, or whose payment was charged back,
 * reads canceled. The same rule as `liveStatus` in payments/store.ts; the overview test checks
 * that both agree.
 */
export async function latestOrders(executor: Executor, owner: Owner, limit: number) {
  const { rows } = await sql<LatestOrderRow>`
    select o.id, o.transaction_id, o.product_id, p.name as product_name, o.email,
      o.amount::text as amount, o.currency, o.created_at,
      case when o.status <> 'paid' then o.status
        when exists (select 1 from disputes d
            where d.user_id = o.user_id and d.order_id = o.id and d.status = 'lost')
          or l.status in ('revoked', 'suspended') then 'canceled'
        else o.status end as status
    from orders o
    join products p on p.id = o.product_id
    left join licenses l on l.id = o.license_id
    where ${byOwner(owner, 'o')}
    order by o.created_at desc, o.id desc
    limit ${limit}
  `.execute(executor);
  return rows;
}
