import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import { oneWriteAtATime } from '../../platform/one-write-at-a-time.js';
import { recordLastVerified } from '../licenses/index.js';
import { addVerificationCounts, type VerificationTally } from './store.js';

const DAY_MS = 86_400_000;
/**
 * Licenses whose last verification is held between flushes. Past it, a license not yet held waits
 * for the next flush's verification of it: its lastVerifiedAt is late, never wrong.
 */
const MAX_LAST_VERIFIED = 100_000;
/** Licenses whose last verification one statement writes. */
const LAST_VERIFIED_CHUNK = 1000;
/** Through an outage a failing flush is logged once, then once in this long, not every flush. */
const FAILURE_LOG_EVERY_MS = 60_000;

export type VerificationCounter = ReturnType<typeof createVerificationCounter>;

/**
 * License verifications tallied per UTC day, app and outcome in this process's memory, and added
 * to the database by flush(), with each license's last verification (its lastVerifiedAt).
 * Counting does no I/O, so the verify path stays one read; what a crash loses is what was counted
 * since the last flush.
 */
export function createVerificationCounter({ db, clock, log }: { db: Db; clock: Clock; log: Log }) {
  const tallies = new Map<string, VerificationTally>();
  /** License id to the time of its last verification counted since the last flush. */
  const lastVerified = new Map<string, Date>();
  /** Failed flushes in a row, and when one was last logged. */
  let failures = 0;
  let failureLoggedAt = Number.NEGATIVE_INFINITY;

  /**
   * Writes a copy of the tallies taken before the first await, then subtracts what was written:
   * counts made during the write stay for the next flush, and a failed write keeps them all.
   */
  async function write(): Promise<boolean> {
    const batch = [...tallies.values()].map((tally) => ({ ...tally }));
    const verified = [...lastVerified].map(([licenseId, at]) => ({ licenseId, at }));
    if (batch.length === 0 && verified.length === 0) return true;
    try {
      await db.transaction().execute(async (trx) => {
        if (batch.length > 0) await addVerificationCounts(trx, batch);
        for (let start = 0; start < verified.length; start += LAST_VERIFIED_CHUNK)
          await recordLastVerified(trx, verified.slice(start, start + LAST_VERIFIED_CHUNK));
      });
    } catch (err) {
      failures++;
      const now = clock.now().getTime();
      if (now - failureLoggedAt >= FAILURE_LOG_EVERY_MS) {
        failureLoggedAt = now;
        log.error({ err, tallies: batch.length, failures }, 'license.verify.count_flush_failed');
      }
      return false;
    }
    if (failures > 0) {
      log.info({ failures }, 'license.verify.count_flush_recovered');
      failures = 0;
      failureLoggedAt = Number.NEGATIVE_INFINITY;
    }
    for (const written of batch) {
      const key = keyOf(written.day, written.appId);
      // Only this function removes tallies, and one write runs at a time: the entry is still there.
      const tally = tallies.get(key) as VerificationTally;
      tally.valid -= written.valid;
      tally.invalid -= written.invalid;
      if (tally.valid === 0 && tally.invalid === 0) tallies.delete(key);
    }
    // A verification counted during the write replaced its Date, and stays for the next flush.
    for (const { licenseId, at } of verified)
      if (lastVerified.get(licenseId) === at) lastVerified.delete(licenseId);
    return true;
  }

  /**
   * Adds everything counted before the call to the database; true when written (or nothing to
   * write), false when the database refused it (logged; kept for the next flush). Never rejects.
   * One write at a time: a flush asked during one runs after it, and callers asking meanwhile
   * share that next write.
   */
  const flush = oneWriteAtATime(write);

  // The UTC day of the last count, so a count formats no date until the day changes.
  let day = '';
  let dayStart = 0;
  let dayEnd = 0;
  const dayOf = (now: number) => {
    if (now < dayStart || now >= dayEnd) {
      dayStart = now - (now % DAY_MS);
      dayEnd = dayStart + DAY_MS;
      day = new Date(dayStart).toISOString().slice(0, 10);
    }
    return day;
  };

  return {
    /**
     * One verification that found its license (so its app is known), valid or not, made `at`
     * (the verification's own reading of the clock, so the hot path reads it once); `licenseId`
     * is the license it found, whose lastVerifiedAt becomes `at` at the next flush.
     */
    count(appId: string, valid: boolean, at: Date = clock.now(), licenseId?: string): void {
      if (licenseId !== undefined && (lastVerified.size < MAX_LAST_VERIFIED || lastVerified.has(licenseId)))
        lastVerified.set(licenseId, at);
      const day = dayOf(at.getTime());
      const key = keyOf(day, appId);
      let tally = tallies.get(key);
      if (!tally) {
        tally = { day, appId, valid: 0, invalid: 0 };
        tallies.set(key, tally);
      }
      if (valid) tally.valid += 1;
      else tally.invalid += 1;
    },

    flush,
  };
}

function keyOf(day: string, appId: string): string {
  return `${day} ${appId}`;
}
