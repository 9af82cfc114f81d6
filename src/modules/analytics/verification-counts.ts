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
/**
 * Licenses whose last verification one statement writes. Small, with a turn of the event loop
 * between statements: on PGlite the database runs in this thread, and a statement of 1,000 rows
 * held every verify queued behind it for about 60 ms (P4's p99 on PGlite).
 */
const LAST_VERIFIED_CHUNK = 100;
/**
 * A license's lastVerifiedAt is written at most once in this long by a node: a client verifying
 * every few seconds would otherwise rewrite its license row at every flush, for a figure the
 * seller reads to the minute. A verification within it of the last written waits for its end.
 */
export const LAST_VERIFIED_RESOLUTION_MS = 60_000;
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
  /** License id to the time of its last verification counted and not yet written. */
  const lastVerified = new Map<string, Date>();
  /**
   * License id to when (ms) this node last wrote its lastVerifiedAt, for LAST_VERIFIED_RESOLUTION_MS;
   * past MAX_LAST_VERIFIED licenses a write is not remembered, and the next is not held back.
   */
  let writtenAt = new Map<string, number>();
  /** Set when the service stops: every last verification is written, held back or not. */
  let draining = false;
  /** Failed flushes in a row, and when one was last logged. */
  let failures = 0;
  let failureLoggedAt = Number.NEGATIVE_INFINITY;

  /**
   * Writes a copy of the tallies taken before the first await, then subtracts what was written:
   * counts made during the write stay for the next flush, and a failed write keeps them. Then the
   * last verifications not held back by LAST_VERIFIED_RESOLUTION_MS (all of them when draining).
   */
  async function write(): Promise<boolean> {
    const batch = [...tallies.values()].map((tally) => ({ ...tally }));
    const now = clock.now().getTime();
    const kept = new Map<string, number>();
    for (const [licenseId, at] of writtenAt)
      if (now - at < LAST_VERIFIED_RESOLUTION_MS) kept.set(licenseId, at);
    writtenAt = kept;
    const verified: { licenseId: string; at: Date }[] = [];
    for (const [licenseId, at] of lastVerified)
      if (draining || !writtenAt.has(licenseId)) verified.push({ licenseId, at });
    if (batch.length === 0 && verified.length === 0) return true;
    // Two writes, not one transaction: the tallies, then the last verifications in small
    // statements. Whatever of them was written is taken off; the rest waits for the next flush.
    let talliesWritten = batch.length === 0;
    let written = 0;
    let failed = false;
    try {
      if (!talliesWritten) {
        await addVerificationCounts(db, batch);
        talliesWritten = true;
      }
      while (written < verified.length) {
        if (written > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        const chunk = verified.slice(written, written + LAST_VERIFIED_CHUNK);
        await recordLastVerified(db, chunk);
        written += chunk.length;
      }
    } catch (err) {
      failed = true;
      failures++;
      if (now - failureLoggedAt >= FAILURE_LOG_EVERY_MS) {
        failureLoggedAt = now;
        log.error({ err, tallies: batch.length, failures }, 'license.verify.count_flush_failed');
      }
    }
    if (talliesWritten) {
      for (const counted of batch) {
        const key = keyOf(counted.day, counted.appId);
        // Only this function removes tallies, and one write runs at a time: the entry is still there.
        const tally = tallies.get(key) as VerificationTally;
        tally.valid -= counted.valid;
        tally.invalid -= counted.invalid;
        if (tally.valid === 0 && tally.invalid === 0) tallies.delete(key);
      }
    }
    forget(verified.slice(0, written), now);
    if (failed) return false;
    if (failures > 0) {
      log.info({ failures }, 'license.verify.count_flush_recovered');
      failures = 0;
      failureLoggedAt = Number.NEGATIVE_INFINITY;
    }
    return true;
  }

  /** Written last verifications leave the buffer and hold the license's next one back a while. */
  function forget(verified: readonly { licenseId: string; at: Date }[], now: number): void {
    for (const { licenseId, at } of verified) {
      // A verification counted during the write replaced its Date, and stays for the next flush.
      if (lastVerified.get(licenseId) === at) lastVerified.delete(licenseId);
      if (writtenAt.size < MAX_LAST_VERIFIED) writtenAt.set(licenseId, now);
    }
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

    /** Writes everything, last verifications held back included: for the service's stop. */
    drain(): Promise<boolean> {
      draining = true;
      return flush();
    },
  };
}

function keyOf(day: string, appId: string): string {
  return `${day} ${appId}`;
}
