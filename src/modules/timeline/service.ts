import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { notFound } from '../../platform/errors.js';
import type { Principal } from '../../platform/http/principal.js';
import { iso } from '../../platform/http/schemas.js';
import type { Log } from '../../platform/log.js';
import { createTimelineCursors } from './cursor.js';
import type { TimelineEntryType, TimelineQueryType } from './schemas.js';
import * as store from './store.js';

/** Entries deleted per statement by the retention purge. */
const PURGE_BATCH = 5_000;
const DAY_MS = 86_400_000;

export interface TimelineServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  /**
   * The app, when the caller may act on it (apps' requireOwnedApp). Typed here rather than
   * imported: apps record events, whose store links them into timelines.
   */
  apps: { requireOwnedApp(principal: Principal, appId: string): Promise<{ id: string }> };
  /** Signs the paging cursors (a server secret). */
  cursorSecret: string;
  /** How long entries are kept (LICENSE_EVENTS_RETENTION_DAYS). */
  retentionDays: number;
}

export type TimelineService = ReturnType<typeof createTimelineService>;

/** A license's timeline as the seller reads it, and the retention purge. */
export function createTimelineService({
  db,
  clock,
  log,
  apps,
  cursorSecret,
  retentionDays,
}: TimelineServiceDeps) {
  const cursors = createTimelineCursors(cursorSecret);

  return {
    /**
     * A page of the license's entries, newest first. Another seller's license (or app) is not
     * found; an API key reads its own app's licenses.
     */
    async page(principal: Principal, appId: string, licenseId: string, query: TimelineQueryType) {
      const app = await apps.requireOwnedApp(principal, appId);
      const license = await store.licenseOfApp(db, app.id, licenseId);
      if (!license) throw notFound('License');
      const before = query.cursor === undefined ? undefined : cursors.decode(license.id, query.cursor);
      const rows = await store.timelinePage(db, license.id, {
        types: query.type?.split(','),
        failuresOnly: query.outcome === 'failure',
        before,
        limit: query.limit,
      });
      const shown = rows.slice(0, query.limit);
      const last = shown[shown.length - 1];
      return {
        events: shown.map(toEntry),
        nextCursor:
          rows.length > query.limit && last
            ? cursors.encode(license.id, { at: last.occurred_at, id: last.id })
            : null,
      };
    },

    /**
     * Deletes entries older than the retention, in batches of PURGE_BATCH so no statement holds
     * many rows at once; stops between batches when the node stops. Safe on several nodes.
     */
    async purgeExpired(stopping?: AbortSignal): Promise<number> {
      const cutoff = new Date(clock.now().getTime() - retentionDays * DAY_MS);
      let total = 0;
      for (;;) {
        const deleted = await store.purgeBefore(db, cutoff, PURGE_BATCH);
        total += deleted;
        if (deleted < PURGE_BATCH || stopping?.aborted) break;
      }
      if (total > 0) log.info({ deleted: total }, 'license.timeline.purged');
      return total;
    },
  };
}

function toEntry(row: Awaited<ReturnType<typeof store.timelinePage>>[number]): TimelineEntryType {
  return {
    id: row.id,
    type: row.type as TimelineEntryType['type'],
    outcome: row.outcome,
    hwuid: row.hwuid,
    clientAddress: row.client_address,
    appVersion: row.app_version,
    actor: row.actor_kind ? { kind: row.actor_kind, id: row.actor_id } : null,
    data: row.data,
    occurredAt: iso(row.occurred_at),
    repeats: row.repeats,
    lastOccurredAt: row.last_occurred_at ? iso(row.last_occurred_at) : null,
  };
}
