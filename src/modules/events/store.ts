import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { EventAudience } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import { recordEntryById } from '../timeline/index.js';
import type { EventData } from './event-data.js';
import type { CoreEventType, MerchantEventType } from './event-types.js';

/** A core event: for the seller's (and admins') endpoints, with its type's documented data. */
export interface NewEvent<T extends CoreEventType = CoreEventType> {
  type: T;
  userId: string;
  appId?: string | null;
  data: EventData<T>;
  occurredAt: Date;
}

/** A merchant event: for the merchant webhook of the product in `data.productId` only. */
export interface NewMerchantEvent {
  type: MerchantEventType;
  userId: string;
  appId: string;
  data: Record<string, unknown> & { productId: string };
  occurredAt: Date;
}

export interface RecordedEvent {
  id: string;
  type: string;
  userId: string | null;
  appId: string | null;
  audience: EventAudience;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Notified (empty payload) when events commit, so dispatchers wake at once instead of at their
 * next poll. A hint only: the outbox itself (dispatched_at) says what is left to do.
 */
export const EVENTS_RECORDED_CHANNEL = 'events_recorded';

/**
 * Appends a core event to the outbox. Pass the transaction of the state change that caused it,
 * so the event exists if and only if the change committed.
 */
export function recordEvent<T extends CoreEventType>(
  executor: Executor,
  event: NewEvent<T>,
): Promise<string> {
  return appendEvent(executor, 'core', event);
}

/** Appends a merchant event to the outbox, in the transaction of its change as recordEvent. */
export function recordForMerchant(executor: Executor, event: NewMerchantEvent): Promise<string> {
  return appendEvent(executor, 'merchant', event);
}

/**
 * The notification goes in the same statement as the row; PostgreSQL sends it at commit, once
 * per transaction.
 */
async function appendEvent(
  executor: Executor,
  audience: EventAudience,
  event: { type: string; userId: string; appId?: string | null; data: object; occurredAt: Date },
): Promise<string> {
  const id = newId();
  await executor
    .with('recorded', (db) =>
      db.insertInto('events').values({
        id,
        type: event.type,
        user_id: event.userId,
        app_id: event.appId ?? null,
        audience,
        data: JSON.stringify(event.data),
        created_at: event.occurredAt,
      }),
    )
    .selectNoFrom(sql<string>`pg_notify(${EVENTS_RECORDED_CHANNEL}, '')`.as('notified'))
    .execute();
  // An event about a license is linked from the license's timeline, in the same transaction.
  const licenseId = licenseOf(event.type, event.data as Record<string, unknown>);
  if (licenseId) {
    await recordEntryById(executor, licenseId, {
      type: 'webhook.event',
      data: { eventId: id, eventType: event.type, audience },
      occurredAt: event.occurredAt,
    });
  }
  return id;
}

/**
 * The license an event is about, if any: a license event's own (data.licenseId for seats, else
 * data.id), a trial's license (data.id), or the licenseId a sale's event carries.
 */
function licenseOf(type: string, data: Record<string, unknown>): string | null {
  const id = type.startsWith('trial.')
    ? data.id
    : type.startsWith('license.')
      ? (data.licenseId ?? data.id)
      : data.licenseId;
  return typeof id === 'string' ? id : null;
}

export async function eventsForUser(executor: Executor, userId: string): Promise<RecordedEvent[]> {
  const rows = await executor
    .selectFrom('events')
    .select(['id', 'type', 'user_id', 'app_id', 'audience', 'data', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    userId: row.user_id,
    appId: row.app_id,
    audience: row.audience,
    data: row.data,
    createdAt: row.created_at,
  }));
}
