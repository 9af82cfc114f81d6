import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { ClientAddressPolicy } from '../../platform/db/schema.js';
import type { Log } from '../../platform/log.js';
import { oneWriteAtATime } from '../../platform/one-write-at-a-time.js';
import { keptAddress } from './client-address.js';
import type { TimelineType } from './schemas.js';
import { type BufferedEntry, insertBuffered } from './store.js';

/** Entries held at most; past it new ones are dropped (and counted) until a flush makes room. */
const MAX_BUFFERED = 100_000;
/**
 * Entries per INSERT statement. Small, with a turn of the event loop between statements: on
 * PGlite the database runs in this thread, and a statement of 1,000 rows held every verify queued
 * behind it for hundreds of milliseconds (P4's p99 on PGlite).
 */
const FLUSH_BATCH = 100;
/** Through an outage a failing flush is logged once, then once in this long, not every flush. */
const FAILURE_LOG_EVERY_MS = 60_000;
/**
 * How long after an entry is written its repeats are held back: a call identical to one written
 * less than this ago waits for the end of it, so a client calling steadily writes one row a
 * minute for its license (with the calls' count), not one a flush. A new kind of call is written
 * at the next flush. On PGlite the writes run in the service's thread, and every row written is
 * time a verify waits.
 */
export const REPEAT_WINDOW_MS = 60_000;

/**
 * A buffered entry as the journal holds it: waiting to be written (`quietUntilMs` 0, from
 * `dueMs`), or written and kept until `quietUntilMs` so that a repeat of it is held back.
 */
interface HeldEntry extends BufferedEntry {
  dueMs: number;
  quietUntilMs: number;
}

/** What a client's call says about itself: where it came from, and the X-App-Version it sent. */
export interface ClientCall {
  address: string | null;
  appVersion: string | null;
}

/** The license a client's call concerned, as verification holds it (no read needed). */
export interface JournaledLicense {
  id: string;
  client_addresses: ClientAddressPolicy;
}

export type TimelineJournal = ReturnType<typeof createTimelineJournal>;

/**
 * The timeline entries of client software's calls (verifications, activations, check-ins,
 * consumes), held in this process's memory and written by flush(), one multi-row INSERT per
 * FLUSH_BATCH entries: recording one is a push onto an array, so the verify path does no I/O for
 * it. The client's address is cut down as the app's setting says before it is held. What a crash
 * loses is what was recorded since the last flush; what a full buffer drops is counted and logged.
 *
 * A call identical to one already held (same license, kind, answer, device, kept address, app
 * version and data) adds to that entry's `repeats` instead of making another: a client polling
 * in a loop, or a fleet of heartbeats, makes one row per license and REPEAT_WINDOW_MS, not one per
 * call, so the database writes (and the seller reads) what happened rather than how often. The
 * held entries of each license are found through `held`, a short list a license, compared field
 * by field.
 */
export function createTimelineJournal({
  db,
  clock,
  log,
  enabled = true,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  /** False when the operator keeps client calls out of the timelines (LICENSE_TIMELINE_CALLS=off). */
  enabled?: boolean;
}) {
  /** Entries waiting to be written. */
  let buffered: HeldEntry[] = [];
  /**
   * The entries of `buffered`, and those written less than REPEAT_WINDOW_MS ago, by license:
   * where a repeated call finds the entry it adds to, or the written one it must wait behind.
   */
  let held = new Map<string, HeldEntry[]>();
  /** Set when the service stops: every entry is written, due or not. */
  let draining = false;
  let dropped = 0;
  let failures = 0;

  // The last address cut down, and what was kept of it: a client's calls come on one connection,
  // so the next call most often asks the same again, and gets it without a new string.
  let lastAddress: string | null = null;
  let lastPolicy: ClientAddressPolicy | null = null;
  let lastKept: string | null = null;
  function kept(address: string | null, policy: ClientAddressPolicy): string | null {
    if (address !== lastAddress || policy !== lastPolicy) {
      lastKept = keptAddress(address, policy);
      lastAddress = address;
      lastPolicy = policy;
    }
    return lastKept;
  }

  function hold(entry: HeldEntry, into = held): void {
    const ofLicense = into.get(entry.licenseId);
    if (ofLicense) ofLicense.push(entry);
    else into.set(entry.licenseId, [entry]);
  }
  let failureLoggedAt = Number.NEGATIVE_INFINITY;

  /**
   * Writes the entries due before the first await (all of them when draining); entries recorded
   * meanwhile, and repeats held back, wait for a later flush. Each written entry is kept
   * REPEAT_WINDOW_MS so that its repeats wait behind it. A batch the database refuses goes back
   * in front of the waiting entries, with all after it.
   */
  async function write(): Promise<boolean> {
    if (dropped > 0) {
      log.warn({ dropped }, 'license.timeline.dropped');
      dropped = 0;
    }
    const now = clock.now().getTime();
    const taken: HeldEntry[] = [];
    const waiting: HeldEntry[] = [];
    for (const entry of buffered) (draining || entry.dueMs <= now ? taken : waiting).push(entry);
    buffered = waiting;
    // Marked written before the first await: a repeat recorded during the write waits behind it.
    for (const entry of taken) entry.quietUntilMs = now + REPEAT_WINDOW_MS;
    const kept = new Map<string, HeldEntry[]>();
    for (const ofLicense of held.values())
      for (const entry of ofLicense)
        if (entry.quietUntilMs === 0 || entry.quietUntilMs > now) hold(entry, kept);
    held = kept;
    for (let start = 0; start < taken.length; start += FLUSH_BATCH) {
      try {
        if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        await insertBuffered(db, taken.slice(start, start + FLUSH_BATCH));
      } catch (err) {
        const unwritten = taken.slice(start);
        for (const entry of unwritten) entry.quietUntilMs = 0;
        const again = unwritten.concat(buffered);
        dropped += Math.max(0, again.length - MAX_BUFFERED);
        buffered = again.length > MAX_BUFFERED ? again.slice(0, MAX_BUFFERED) : again;
        // Held again, so repeats of them during the outage add to them rather than pile up.
        held = new Map();
        for (const entry of buffered) hold(entry);
        failures++;
        if (now - failureLoggedAt >= FAILURE_LOG_EVERY_MS) {
          failureLoggedAt = now;
          log.error({ err, entries: again.length, failures }, 'license.timeline.flush_failed');
        }
        return false;
      }
    }
    if (failures > 0) {
      log.info({ failures }, 'license.timeline.flush_recovered');
      failures = 0;
      failureLoggedAt = Number.NEGATIVE_INFINITY;
    }
    return true;
  }

  /**
   * Writes everything recorded before the call; true when written (or nothing to write), false
   * when the database refused it (logged; kept for the next flush). Never rejects. One write at a
   * time: a flush asked during one runs after it, and callers asking meanwhile share it.
   */
  const flush = oneWriteAtATime(write);

  return {
    /**
     * One client call's entry, at `at` (the call's own reading of the clock). `data` is JSON
     * text, so the hot path holds a string rather than an object for the flush to serialize.
     */
    record(
      license: JournaledLicense,
      type: TimelineType,
      outcome: string | null,
      hwuid: string | null,
      client: ClientCall | undefined,
      at: Date,
      data: string | null = null,
    ): void {
      if (!enabled) return;
      const clientAddress = client ? kept(client.address, license.client_addresses) : null;
      const appVersion = client?.appVersion ?? null;
      const ms = at.getTime();
      // When a repeat of an entry written less than REPEAT_WINDOW_MS ago: the end of that window.
      let dueMs = 0;
      const ofLicense = held.get(license.id);
      if (ofLicense) {
        for (let index = 0; index < ofLicense.length; index++) {
          const entry = ofLicense[index] as HeldEntry;
          if (
            entry.type === type &&
            entry.outcome === outcome &&
            entry.hwuid === hwuid &&
            entry.clientAddress === clientAddress &&
            entry.appVersion === appVersion &&
            entry.data === data
          ) {
            if (entry.quietUntilMs === 0) {
              entry.repeats++;
              // Calls are recorded as they are answered, nearly in order; the latest wins.
              if (ms > entry.lastMs) entry.lastMs = ms;
              return;
            }
            // Written: the entry that follows it takes its place, due when its window ends.
            if (ms < entry.quietUntilMs) dueMs = entry.quietUntilMs;
            ofLicense.splice(index, 1);
            break;
          }
        }
      }
      if (buffered.length >= MAX_BUFFERED) {
        dropped++;
        return;
      }
      const entry: HeldEntry = {
        licenseId: license.id,
        type,
        outcome,
        hwuid,
        clientAddress,
        appVersion,
        data,
        occurredAt: at,
        repeats: 1,
        lastMs: ms,
        dueMs,
        quietUntilMs: 0,
      };
      buffered.push(entry);
      hold(entry);
    },

    flush,

    /** Writes every entry, repeats held back included: for the service's stop. */
    drain(): Promise<boolean> {
      draining = true;
      return flush();
    },
  };
}
