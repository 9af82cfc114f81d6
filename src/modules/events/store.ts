import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';
import type { EventType } from './event-types.js';

export interface NewEvent {
  type: EventType;
  userId: string;
  appId?: string | null;
  data: Record<string, unknown>;
  occurredAt: Date;
}

export interface RecordedEvent {
  id: string;
  type: string;
  userId: string | null;
  appId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Notified (empty payload) when events commit, so dispatchers wake at once instead of at their
 * next poll. A hint only: the outbox itself (dispatched_at) says what is left to do.
 */
export const EVENTS_RECORDED_CHANNEL = 'events_recorded';

/**
 * Appends an event to the outbox. Pass the transaction of the state change that caused it,
 * so the event exists if and only if the change committed. The notification goes in the same
 * statement; PostgreSQL sends it at commit, once per transaction.
 */
export async function recordEvent(executor: Executor, event: NewEvent): Promise<string> {
  const id = newId();
  await executor
    .with('recorded', (db) =>
      db.insertInto('events').values({
        id,
        type: event.type,
        user_id: event.userId,
        app_id: event.appId ?? null,
        data: JSON.stringify(event.data),
        created_at: event.occurredAt,
      }),
    )
    .selectNoFrom(sql<string>`pg_notify(${EVENTS_RECORDED_CHANNEL}, '')`.as('notified'))
    .execute();
  return id;
}

export async function eventsForUser(executor: Executor, userId: string): Promise<RecordedEvent[]> {
  const rows = await executor
    .selectFrom('events')
    .select(['id', 'type', 'user_id', 'app_id', 'data', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    userId: row.user_id,
    appId: row.app_id,
    data: row.data,
    createdAt: row.created_at,
  }));
}
