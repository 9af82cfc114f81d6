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
 * Appends an event to the outbox. Pass the transaction of the state change that caused it,
 * so the event exists if and only if the change committed.
 */
export async function recordEvent(executor: Executor, event: NewEvent): Promise<string> {
  const id = newId();
  await executor
    .insertInto('events')
    .values({
      id,
      type: event.type,
      user_id: event.userId,
      app_id: event.appId ?? null,
      data: JSON.stringify(event.data),
      created_at: event.occurredAt,
    })
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
