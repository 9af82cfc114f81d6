import type { Selectable } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { NotificationsTable } from '../../platform/db/schema.js';
import { recordEntryById } from '../timeline/index.js';

export type NotificationRow = Selectable<NotificationsTable>;

/**
 * Leases up to `limit` due notifications to this worker and counts the attempt, in one
 * statement. SKIP LOCKED lets several nodes claim side by side without taking one row twice;
 * a worker that dies leaves its lease to run out, and the notification is taken again.
 */
export function claimDue(db: Db, now: Date, leaseMs: number, limit: number): Promise<NotificationRow[]> {
  return db
    .updateTable('notifications')
    .set((eb) => ({ leased_until: new Date(now.getTime() + leaseMs), attempts: eb('attempts', '+', 1) }))
    .where(
      'id',
      'in',
      db
        .selectFrom('notifications')
        .select('id')
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
        .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<=', now)]))
        .orderBy('created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
}

/** Current addresses of the given accounts; a deleted account has none. */
export async function accountAddresses(db: Db, userIds: readonly string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('id', 'in', [...new Set(userIds)])
    .where('deleted_at', 'is', null)
    .execute();
  return new Map(rows.map((row) => [row.id, row.email]));
}

/**
 * Settles a claimed notification: sent, pending again from `retryAt`, or failed for good. Only
 * under the lease it was claimed with; when that ran out and another worker took over, the
 * other worker settles it.
 */
export async function settle(
  db: Db,
  claimed: Pick<NotificationRow, 'id' | 'leased_until' | 'kind' | 'data'>,
  outcome: { status: 'sent' } | { status: 'pending' | 'failed'; retryAt: Date | null; error: string },
  now: Date,
): Promise<boolean> {
  const settle = async (executor: Executor) => {
    let update = executor
      .updateTable('notifications')
      .set(
        outcome.status === 'sent'
          ? { status: 'sent', sent_at: now, leased_until: null, last_error: null }
          : {
              status: outcome.status,
              next_attempt_at: outcome.retryAt,
              leased_until: null,
              last_error: outcome.error,
            },
      )
      .where('id', '=', claimed.id)
      .where('status', '=', 'pending');
    if (claimed.leased_until) update = update.where('leased_until', '=', claimed.leased_until);
    const result = await update.executeTakeFirst();
    return result.numUpdatedRows > 0n;
  };
  const licenseId = claimed.data.licenseId;
  if (outcome.status === 'pending' || typeof licenseId !== 'string') return settle(db);
  // A message about a license, settled for good, goes in the license's timeline with it.
  return db.transaction().execute(async (trx) => {
    if (!(await settle(trx))) return false;
    await recordEntryById(trx, licenseId, {
      type: outcome.status === 'sent' ? 'email.sent' : 'email.failed',
      outcome: outcome.status === 'sent' ? null : 'failed',
      data: { kind: claimed.kind, notificationId: claimed.id },
      occurredAt: now,
    });
    return true;
  });
}

/** Deletes a claimed notice that no mail is owed for (under its lease, as settle does). */
export async function drop(db: Db, claimed: Pick<NotificationRow, 'id' | 'leased_until'>): Promise<void> {
  let remove = db.deleteFrom('notifications').where('id', '=', claimed.id).where('status', '=', 'pending');
  if (claimed.leased_until) remove = remove.where('leased_until', '=', claimed.leased_until);
  await remove.execute();
}

/** Notifications still to be sent (the metrics' mail queue). */
export async function countPending(db: Db): Promise<number> {
  const row = await db
    .selectFrom('notifications')
    .where('status', '=', 'pending')
    .select((eb) => eb.fn.countAll<number>().as('pending'))
    .executeTakeFirstOrThrow();
  return Number(row.pending);
}
