import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import { preparedStatement } from '../../platform/db/prepared.js';
import { EVENTS_RECORDED_CHANNEL } from '../events/index.js';
import type { UsesResetInterval } from '../products/index.js';

/*
 * A license's check-in and its usage quota (terms.ts): the writes of verify's check-in and of
 * POST /v1/licenses/usage, and the seller's corrections.
 */

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

/** The license's last recorded check-in (null: none since its issue). */
export async function checkedInAt(executor: Executor, licenseId: string): Promise<Date | null> {
  const row = await executor
    .selectFrom('licenses')
    .select('checked_in_at')
    .where('id', '=', licenseId)
    .executeTakeFirst();
  return row?.checked_in_at ?? null;
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
    /** The timeline entries linking them. */
    entryIds: { threshold: string; exhausted: string };
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
      returning id, type, user_id, app_id, created_at
    ),
    -- Each linked from the license's timeline, as recordEvent links the events it appends.
    linked as (
      insert into license_events (id, license_id, user_id, app_id, type, data, occurred_at)
      select case r.type when 'license.usage.threshold' then ${input.entryIds.threshold}::uuid
          else ${input.entryIds.exhausted}::uuid end,
        ${input.licenseId}::uuid, r.user_id, r.app_id, 'webhook.event',
        jsonb_build_object('eventId', r.id, 'eventType', r.type, 'audience', 'core'), r.created_at
      from recorded r
    ),
    notified as (select pg_notify(${EVENTS_RECORDED_CHANNEL}, '') from recorded limit 1)
    select uses, max_uses, uses_reset_interval, uses_period_start, (select count(*) from notified) as notified
    from consumed`.execute(executor);
  return result.rows[0];
}
