import { hash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import { type Entry, type LicenseState, TTL_MS } from './cache-entry.js';
import * as store from './store.js';

/**
 * Entries used this recently are read again before their TTL; how often they are looked for,
 * how near their TTL, and how many are read at once.
 */
const KEEP_WARM_MS = 10 * 60_000;
export const REFRESH_EVERY_MS = 5_000;
const REFRESH_AHEAD_MS = 30_000;
const REFRESH_BATCH = 50;
/**
 * A pass spreads its batches over this share of the period, at most REFRESH_PAUSE_MAX_MS apart.
 * Its reads are background work, and a pass after a node's first minutes can hold thousands of
 * entries: read back to back they took the event loop from requests for a fifth of a second on
 * PGlite, whose statements run on that thread, and on two cores the signatures waiting behind
 * made the slowest verifies of a node at half load 30-50 ms (measured on PGlite, 2,884 a second).
 * Smaller batches were worse: a PGlite statement's cost is mostly fixed, so more of them held the
 * loop longer in all.
 */
const REFRESH_SPREAD = 0.8;
const REFRESH_PAUSE_MAX_MS = 100;

/**
 * The verification cache's background refresh: entries in use read again before their TTL,
 * many in one statement, so a license its client checks every few minutes is never a miss. It
 * works on the cache's own entries, and asks the cache as it goes what changed meanwhile.
 */
export function createCacheRefresh({
  db,
  log,
  entries,
  now,
  refreshEveryMs,
  epoch,
  listening,
  closed,
  invalidatedSince,
  drop,
}: {
  db: Db;
  log: Log;
  /** The cache's entries (digest → entry), refreshed in place. */
  entries: Map<string, Entry>;
  now: () => number;
  refreshEveryMs: number;
  /** The cache's invalidation epoch, its channel's state and whether it is closed, as of now. */
  epoch: () => number;
  listening: () => boolean;
  closed: () => boolean;
  invalidatedSince: (since: number, state: LicenseState) => boolean;
  drop: (digest: string) => void;
}) {
  let refreshing: Promise<number> | null = null;

  /**
   * Reads again, in batches, the entries used in the last KEEP_WARM_MS that expire within
   * REFRESH_AHEAD_MS. What changed meanwhile is dropped as a miss would be: an entry replaced or
   * dropped during the read is left alone, a license or seller invalidated since the read began
   * is not refreshed, and a license no longer found (its seller deleted) is forgotten.
   */
  function refreshDue(): Promise<number> {
    if (!listening() || refreshing) return Promise.resolve(0);
    refreshing = refreshAll().finally(() => {
      refreshing = null;
    });
    return refreshing;
  }

  async function refreshAll(): Promise<number> {
    let refreshed = 0;
    try {
      const at = now();
      const due: [string, Entry][] = [];
      for (const item of entries) {
        if (item[1].until <= at + REFRESH_AHEAD_MS && item[1].usedAt >= at - KEEP_WARM_MS) due.push(item);
      }
      // Entries read together (a node's first minute, a flush) would otherwise fall due together
      // and be read again together every TTL, in one burst of statements. A pass takes, soonest
      // first, those that expire before the pass after next, and at least a share of the rest
      // that lets the passes before those finish them: a burst spreads over the window and
      // stays spread.
      due.sort((a, b) => a[1].until - b[1].until);
      const urgentWithin = 2 * REFRESH_EVERY_MS;
      const urgent = due.findIndex(([, entry]) => entry.until > at + urgentWithin);
      const share = Math.ceil((due.length * REFRESH_EVERY_MS) / (REFRESH_AHEAD_MS - urgentWithin));
      const taken = due.slice(0, Math.max(urgent === -1 ? due.length : urgent, share));
      const batches = Math.ceil(taken.length / REFRESH_BATCH);
      const pauseMs = Math.min(REFRESH_PAUSE_MAX_MS, (REFRESH_SPREAD * refreshEveryMs) / batches);
      for (let i = 0; i < taken.length && !closed(); i += REFRESH_BATCH) {
        if (i > 0 && pauseMs > 0) await sleep(pauseMs);
        refreshed += await refreshBatch(taken.slice(i, i + REFRESH_BATCH));
      }
    } catch (err) {
      // Entries left as they are expire on their own; the next verify reads them.
      log.warn({ err: { message: (err as Error).message } }, 'license.verify.cache_refresh_failed');
    }
    return refreshed;
  }

  async function refreshBatch(batch: [string, Entry][]): Promise<number> {
    const since = epoch();
    const devices = batch.flatMap(([, entry]) =>
      [...entry.devices.keys()].map((hwuid) => ({ licenseId: entry.state.id, hwuid })),
    );
    const read = await store.refreshForVerification(
      db,
      batch.map(([, entry]) => entry.state.id),
      devices,
    );
    const states = new Map(read.states.map((state) => [state.id, state]));
    const bound = new Map(
      read.bound.map((device) => [
        `${device.license_id} ${device.hwuid}`,
        { name: device.name, platform: device.platform },
      ]),
    );
    let refreshed = 0;
    for (const [digest, entry] of batch) {
      if (entries.get(digest) !== entry) continue;
      const row = states.get(entry.state.id);
      if (!listening() || invalidatedSince(since, entry.state)) continue;
      // Gone (its seller deleted), or its key changed by hand: the old key must not stay valid.
      if (!row || hash('sha256', row.key, 'base64url') !== digest) {
        drop(digest);
        continue;
      }
      const { key: _key, ...state } = row;
      entry.state = state;
      const devices = new Map<string, store.DeviceLabel>();
      for (const hwuid of entry.devices.keys()) {
        const label = bound.get(`${state.id} ${hwuid}`);
        if (label) devices.set(hwuid, label);
      }
      entry.devices = devices;
      entry.until = now() + TTL_MS;
      refreshed++;
    }
    return refreshed;
  }

  return {
    refreshDue,
    /** The refresh under way, if any. */
    underWay: (): Promise<number> | null => refreshing,
  };
}
