/**
 * When an e-mail that could not be sent is tried again: 1 min, 5 min, 15 min, 1 h, 3 h, 6 h,
 * 12 h and 24 h after the attempt before (about two days in all), each spread by ±10% so that
 * messages held up by one outage do not all retry at once. After the last one it fails.
 */
export const RETRY_DELAYS_MS = [
  60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** ms until the next attempt after failed attempt number `attempt` (1-based), or null: give up. */
export function retryDelay(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + 0.2 * random()));
}
