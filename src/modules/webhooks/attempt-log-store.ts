import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { DeliveryTrigger } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import type { PageByNumber } from './endpoint-store.js';

/*
 * The attempt log: one row per attempt made, read by sellers and purged when old.
 */

export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  attempt: number;
  trigger: DeliveryTrigger;
  statusCode: number;
  responseBody: string;
  success: boolean;
  durationMs: number;
  error: string | null;
  at: Date;
}

/** Logs attempts, one array a column (each record's `attempt` is its number). */
export async function insertAttempts(executor: Executor, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  await sql`
    insert into webhook_attempts (id, delivery_id, endpoint_id, attempt, trigger, status_code,
      response_body, success, duration_ms, error, created_at)
    select * from unnest(
      ${records.map(() => newId())}::uuid[],
      ${records.map((r) => r.deliveryId)}::uuid[],
      ${records.map((r) => r.endpointId)}::uuid[],
      ${records.map((r) => r.attempt)}::integer[],
      ${records.map((r) => r.trigger)}::text[],
      ${records.map((r) => r.statusCode)}::integer[],
      ${records.map((r) => r.responseBody)}::text[],
      ${records.map((r) => r.success)}::boolean[],
      ${records.map((r) => r.durationMs)}::integer[],
      ${records.map((r) => r.error)}::text[],
      ${records.map((r) => r.at)}::timestamptz[]
    )`.execute(executor);
}

/**
 * Logs an attempt and settles its delivery (succeeded, failed, or pending again at `retryAt`),
 * and keeps the endpoint's health record. A delivery whose lease this worker lost (it ran out
 * and another worker took over) is left alone, and so is one when `next` is null.
 */
export async function recordAttempt(
  db: Db,
  record: AttemptRecord,
  next: { status: 'succeeded' | 'failed' | 'pending'; retryAt: Date | null; leasedUntil: Date | null } | null,
) {
  return db.transaction().execute(async (trx) => {
    // Rows are locked endpoint first, then delivery — the order disabling an endpoint uses too,
    // so the two never wait on each other.
    const endpoint = await trx
      .updateTable('webhook_endpoints')
      .set(
        record.success
          ? { consecutive_failures: 0, failing_since: null, last_success_at: record.at }
          : (eb) => ({
              consecutive_failures: eb('consecutive_failures', '+', 1),
              failing_since: eb.fn.coalesce('failing_since', eb.val(record.at)),
              last_failure_at: record.at,
            }),
      )
      .where('id', '=', record.endpointId)
      .returningAll()
      .executeTakeFirst();
    if (next) {
      let settle = trx
        .updateTable('webhook_deliveries')
        .set({
          status: next.status,
          next_attempt_at: next.retryAt,
          leased_until: null,
          updated_at: record.at,
        })
        .where('id', '=', record.deliveryId);
      if (next.leasedUntil) settle = settle.where('leased_until', '=', next.leasedUntil);
      await settle.execute();
    }
    await insertAttempts(trx, [record]);
    return endpoint;
  });
}

export async function listAttempts(executor: Executor, endpointId: string, page: PageByNumber) {
  const query = executor.selectFrom('webhook_attempts as a').where('a.endpoint_id', '=', endpointId);
  const [rows, total] = await Promise.all([
    query
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select([
        'a.id',
        'a.delivery_id',
        'd.event_id',
        'd.event_type',
        'a.attempt',
        'a.trigger',
        'a.status_code',
        'a.response_body',
        'a.success',
        'a.duration_ms',
        'a.error',
        'a.created_at',
      ])
      .orderBy('a.created_at', 'desc')
      .orderBy('a.id', 'desc')
      .limit(page.limit)
      .offset((page.page - 1) * page.limit)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export async function purgeAttempts(executor: Executor, before: Date): Promise<number> {
  const rows = await executor
    .deleteFrom('webhook_attempts')
    .where('created_at', '<', before)
    .returning('id')
    .execute();
  return rows.length;
}
