/**
 * When a failed delivery is tried again: after the first attempt, 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 14 h, 20 h and 24 h later (about three days in all), each spread by ±10% so that
 * endpoints recovering together are not hit together. After the last one the delivery fails.
 */
export const RETRY_DELAYS_MS = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Slow-down answers and timeouts wait at least this long. */
export const BACKOFF_FLOOR_MS = 60_000;
/** A Retry-After is honoured up to this long. */
export const RETRY_AFTER_CAP_MS = 86_400_000;

export interface AttemptOutcome {
  /** 0 when no HTTP answer came (network error, timeout, refused target). */
  statusCode: number;
  timedOut: boolean;
  /** Retry-After of the answer, in ms, when it gave one. */
  retryAfterMs: number | null;
}

/** ms until the next attempt after failed attempt number `attempt` (1-based), or null: give up. */
export function nextAttemptDelay(
  attempt: number,
  outcome: AttemptOutcome,
  random: () => number = Math.random,
): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  const slowDown = outcome.timedOut || [429, 502, 503, 504].includes(outcome.statusCode);
  let delay = slowDown ? Math.max(jittered, BACKOFF_FLOOR_MS) : jittered;
  if (outcome.retryAfterMs !== null)
    delay = Math.min(Math.max(delay, outcome.retryAfterMs), RETRY_AFTER_CAP_MS);
  return delay;
}

/** Retry-After as ms: seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now.getTime());
}
