import { isDatabaseUnavailable } from '../../platform/db/errors.js';
import type { LicenseState } from './cache-entry.js';
import type { VerificationDeps } from './deps.js';
import type { Later } from './later.js';
import * as store from './store.js';
import { checkInDeadline } from './terms.js';

/**
 * A check-in is written at most once per license and node in this long: a client verifying
 * every minute costs one write an hour, and a deadline days away moves by at most this.
 */
export const CHECK_IN_STEP_MS = 60 * 60_000;

/** The check-in a license with check-in days needs, as verification reads and writes it. */
export function createCheckIn({ db, log, timeline }: Pick<VerificationDeps, 'db' | 'log' | 'timeline'>) {
  /**
   * Whether the license's check-in holds. An online verify is a check-in (unless it says
   * checkIn: false), written at most every CHECK_IN_STEP_MS, so a verify answered from memory
   * stays so. Past the deadline (check-in days and grace since the last one) the license is
   * overdue: the verify that finds it so answers check_in_overdue and records the check-in, so
   * the client's next online verify succeeds; one with checkIn: false only answers overdue. A
   * node whose memory says overdue asks the database first (another node may have had the
   * check-in). A write the database refuses (an outage) does not refuse the client.
   */
  function checkedIn(found: LicenseState, checkIn: boolean, now: Date): Later<boolean> {
    if (found.check_in_days === null) return true;
    if (!isOverdue(found, now)) return checkIn ? recordCheckIn(found, now, true) : true;
    return store.checkedInAt(db, found.id).then(
      (latest) => {
        if (latest && (found.checked_in_at === null || latest > found.checked_in_at))
          found.checked_in_at = latest;
        if (!isOverdue(found, now)) return checkIn ? recordCheckIn(found, now, true) : true;
        return checkIn ? recordCheckIn(found, now, false) : false;
      },
      (err: Error) => {
        if (!isDatabaseUnavailable(err)) throw err;
        return checkIn ? recordCheckIn(found, now, false) : false;
      },
    );
  }

  const isOverdue = (found: LicenseState, now: Date) => {
    const deadline = checkInDeadline(found);
    return deadline !== null && now.getTime() > deadline.getTime();
  };

  /** Writes the check-in when a step has passed since the last one; answers `holds`. */
  function recordCheckIn(found: LicenseState, now: Date, holds: boolean): Later<boolean> {
    const last = (found.checked_in_at ?? found.created_at).getTime();
    if (now.getTime() - last < CHECK_IN_STEP_MS) return holds;
    found.checked_in_at = now;
    // In the timeline as written: at most once a step per node, like the check-in itself.
    timeline.record(found, 'check_in', null, null, undefined, now);
    return store.recordCheckIn(db, found.id, now, new Date(now.getTime() - CHECK_IN_STEP_MS)).then(
      () => holds,
      (err: Error) => {
        log.warn({ licenseId: found.id, err: { message: err.message } }, 'license.check_in.not_recorded');
        return holds;
      },
    );
  }

  return checkedIn;
}
