import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { TimelineActorKind } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import type { TimelinePosition } from './cursor.js';
import type { TimelineType } from './schemas.js';

/** All SQL of license timelines. */

/** Who made a change: `id` is the seller's user id or the API key's id, else null. */
export interface Actor {
  kind: TimelineActorKind;
  id: string | null;
}

/** An entry as the code that causes it describes it. */
export interface NewTimelineEntry {
  type: TimelineType;
  outcome?: string | null;
  hwuid?: string | null;
  clientAddress?: string | null;
  appVersion?: string | null;
  actor?: Actor | null;
  data?: Record<string, unknown>;
  occurredAt: Date;
}

/** The license an entry is about, as the writer has it in hand. */
export interface TimelineLicense {
  id: string;
  user_id: string;
  app_id: string;
}

/** One entry in the transaction of the change that causes it. */
export async function recordEntry(
  executor: Executor,
  license: TimelineLicense,
  entry: NewTimelineEntry,
): Promise<void> {
  await executor
    .insertInto('license_events')
    .values({
      id: newId(),
      license_id: license.id,
      user_id: license.user_id,
      app_id: license.app_id,
      type: entry.type,
      outcome: entry.outcome ?? null,
      hwuid: entry.hwuid ?? null,
      client_address: entry.clientAddress ?? null,
      app_version: entry.appVersion ?? null,
      actor_kind: entry.actor?.kind ?? null,
      actor_id: entry.actor?.id ?? null,
      data: JSON.stringify(entry.data ?? {}),
      occurred_at: entry.occurredAt,
    })
    .execute();
}

/** One entry for a license known by its id only, in the transaction of its change. */
export async function recordEntryById(
  executor: Executor,
  licenseId: string,
  entry: NewTimelineEntry,
): Promise<void> {
  await executor
    .insertInto('license_events')
    .columns([
      'id',
      'license_id',
      'user_id',
      'app_id',
      'type',
      'outcome',
      'hwuid',
      'actor_kind',
      'actor_id',
      'data',
      'occurred_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('licenses')
        .select([
          sql<string>`${newId()}::uuid`.as('id'),
          'id as license_id',
          'user_id',
          'app_id',
          sql<string>`${entry.type}::text`.as('type'),
          sql<string | null>`${entry.outcome ?? null}::text`.as('outcome'),
          sql<string | null>`${entry.hwuid ?? null}::text`.as('hwuid'),
          sql<TimelineActorKind | null>`${entry.actor?.kind ?? null}::text`.as('actor_kind'),
          sql<string | null>`${entry.actor?.id ?? null}::text`.as('actor_id'),
          sql<string>`${JSON.stringify(entry.data ?? {})}::jsonb`.as('data'),
          sql<Date>`${entry.occurredAt}::timestamptz`.as('occurred_at'),
        ])
        .where('id', '=', licenseId),
    )
    .execute();
}

/** An entry buffered in memory (verifications and the client's other calls), ids given at flush. */
export interface BufferedEntry {
  licenseId: string;
  type: TimelineType;
  outcome: string | null;
  hwuid: string | null;
  clientAddress: string | null;
  appVersion: string | null;
  /** JSON, or null for none. */
  data: string | null;
  occurredAt: Date;
  /** The identical calls this entry stands for (1 for one call). */
  repeats: number;
  /**
   * The last of them, in milliseconds (occurredAt's when one call). A number, not a Date: a
   * repeated call updates it in place, where storing each call's fresh Date into an entry that
   * has grown old would have the garbage collector promote every one of them.
   */
  lastMs: number;
}

/**
 * Many buffered entries in one statement; the seller and app come from the license. An entry
 * whose license is gone is dropped rather than failing the batch.
 */
export async function insertBuffered(executor: Executor, entries: readonly BufferedEntry[]): Promise<void> {
  await sql`
    insert into license_events
      (id, license_id, user_id, app_id, type, outcome, hwuid, client_address, app_version, data, occurred_at,
        repeats, last_occurred_at)
    select v.id, v.license_id, l.user_id, l.app_id, v.type, v.outcome, v.hwuid, v.client_address,
      v.app_version, coalesce(v.data::jsonb, '{}'::jsonb), v.occurred_at, v.repeats, v.last_occurred_at
    from unnest(
      ${entries.map(() => newId())}::uuid[],
      ${entries.map((entry) => entry.licenseId)}::uuid[],
      ${entries.map((entry) => entry.type)}::text[],
      ${entries.map((entry) => entry.outcome)}::text[],
      ${entries.map((entry) => entry.hwuid)}::text[],
      ${entries.map((entry) => entry.clientAddress)}::text[],
      ${entries.map((entry) => entry.appVersion)}::text[],
      ${entries.map((entry) => entry.data)}::text[],
      ${entries.map((entry) => entry.occurredAt.toISOString())}::timestamptz[],
      ${entries.map((entry) => entry.repeats)}::int[],
      ${entries.map((entry) => (entry.repeats > 1 ? new Date(entry.lastMs).toISOString() : null))}::timestamptz[]
    ) as v (id, license_id, type, outcome, hwuid, client_address, app_version, data, occurred_at,
      repeats, last_occurred_at)
    join licenses l on l.id = v.license_id
  `.execute(executor);
}

/** The license, when it is one of this app's (the caller's ownership of the app already checked). */
export function licenseOfApp(executor: Executor, appId: string, licenseId: string) {
  return executor
    .selectFrom('licenses')
    .select(['id', 'user_id', 'app_id'])
    .where('id', '=', licenseId)
    .where('app_id', '=', appId)
    .executeTakeFirst();
}

/** What a page asks for: newest first, after `before` when given. */
export interface TimelineFilter {
  types?: readonly string[];
  failuresOnly: boolean;
  before?: TimelinePosition;
  limit: number;
}

/** A page of a license's entries, newest first, one more than `limit` to tell whether more follow. */
export function timelinePage(executor: Executor, licenseId: string, filter: TimelineFilter) {
  let query = executor
    .selectFrom('license_events')
    .select([
      'id',
      'type',
      'outcome',
      'hwuid',
      'client_address',
      'app_version',
      'actor_kind',
      'actor_id',
      'data',
      'occurred_at',
      'repeats',
      'last_occurred_at',
    ])
    .where('license_id', '=', licenseId);
  if (filter.types && filter.types.length > 0) query = query.where('type', 'in', filter.types);
  if (filter.failuresOnly) {
    query = query.where((eb) =>
      eb.or([
        eb.and([eb('type', '=', 'verification'), eb('outcome', '<>', 'valid')]),
        eb('outcome', '=', 'failed'),
      ]),
    );
  }
  const before = filter.before;
  if (before) {
    query = query.where((eb) =>
      eb.or([
        eb('occurred_at', '<', before.at),
        eb.and([eb('occurred_at', '=', before.at), eb('id', '<', before.id)]),
      ]),
    );
  }
  return query
    .orderBy('occurred_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

/** Deletes up to `batch` entries older than `cutoff`, oldest first; answers how many went. */
export async function purgeBefore(executor: Executor, cutoff: Date, batch: number): Promise<number> {
  const result = await executor
    .deleteFrom('license_events')
    .where('id', 'in', (eb) =>
      eb.selectFrom('license_events').select('id').where('occurred_at', '<', cutoff).limit(batch),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
