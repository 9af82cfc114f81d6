import { DeviceCount, LeaseSeconds } from '../products/index.js';

/**
 * The per-key verify limit (VERIFY_KEY_RATE_LIMIT, calls a minute per license key across
 * verify, validate-hardware, checkout and checkin) scales with a floating license's seats:
 *
 *   limit = max(VERIFY_KEY_RATE_LIMIT, maxSeats × callsPerSeat(leaseSeconds))
 *   callsPerSeat = 2 × ceil(120 / leaseSeconds)
 *
 * A seat is kept by a heartbeat about every half lease, ceil(120 / leaseSeconds) calls a minute
 * (at least one: a fixed minute window can hold one heartbeat of any cadence). Doubled, so every
 * seat can be taken and verified in the same minute (a whole team starting at nine), and a
 * check-in or a retry fits beside the heartbeat. A license that does not float keeps the plain
 * limit, and so does a key that is unknown or another app's.
 *
 * The limiter counts before the license is read and lets a key past the plain limit on up to the
 * largest limit any license can have (`verifyKeyLimitCeiling`); verification then compares the
 * count with this license's limit as soon as it has looked the license up, which it does anyway
 * (from memory for a known key), so the rule costs no read.
 */
export function callsPerSeat(leaseSeconds: number): number {
  return 2 * Math.ceil(120 / leaseSeconds);
}

export function verifyKeyLimit(
  license: { floating: boolean; max_seats: number | null; lease_seconds: number | null } | null | undefined,
  plainLimit: number,
): number {
  if (!license?.floating || license.max_seats === null || license.lease_seconds === null) return plainLimit;
  return Math.max(plainLimit, license.max_seats * callsPerSeat(license.lease_seconds));
}

// The bounds the license schemas accept, read from them so the ceiling follows if they change.
const MOST_SEATS = (DeviceCount as unknown as { maximum: number }).maximum;
const SHORTEST_LEASE = (LeaseSeconds as unknown as { minimum: number }).minimum;

/** The largest limit any license can have: the most seats on the shortest lease. */
export function verifyKeyLimitCeiling(plainLimit: number): number {
  return Math.max(plainLimit, MOST_SEATS * callsPerSeat(SHORTEST_LEASE));
}
