import type { RedisClient } from '../redis.js';

/**
 * Fixed-window counters: the rate limits' (`rate-limit.ts`) and the portal's sign-in links per
 * e-mail address. Shared through Redis when configured; if Redis fails, the hits could not be
 * counted (null) and the caller lets the request through.
 */
export interface WindowCounter {
  /**
   * Counts one hit on each name, in windows of `windowMs`; returns, in the same order, the hits
   * in each name's current window and the ms until it ends. In process memory the answer is
   * immediate (no promise: this runs on every verify); through Redis, one MULTI, a promise.
   */
  hit(names: readonly string[], windowMs: number): readonly WindowHits[] | Promise<readonly WindowHits[]>;
}

/** The hits in the current window and ms until it ends; null when they could not be counted. */
export type WindowHits = { count: number; resetMs: number } | null;

const MAX_LOCAL_NAMES = 50_000;

export function createWindowCounter(redis: RedisClient | null): WindowCounter {
  if (redis) {
    return {
      async hit(names, windowMs) {
        try {
          const multi = redis.multi();
          // SET … NX starts a window (any Redis version; PEXPIRE's NX needs Redis 7), INCR counts.
          for (const name of names) {
            const stored = `licensing:window:${name}`;
            multi.set(stored, 0, 'PX', windowMs, 'NX').incr(stored).pttl(stored);
          }
          const results = await multi.exec();
          return names.map((_, i) => {
            const count = Number(results?.[3 * i + 1]?.[1]);
            const ttl = Number(results?.[3 * i + 2]?.[1]);
            return Number.isFinite(count) ? { count, resetMs: ttl > 0 ? ttl : windowMs } : null;
          });
        } catch {
          return names.map(() => null);
        }
      },
    };
  }
  const windows = new Map<string, { count: number; endsAt: number }>();
  return {
    hit(names, windowMs) {
      const now = Date.now();
      return names.map((name) => {
        let entry = windows.get(name);
        if (!entry || entry.endsAt <= now) {
          // Map keeps insertion order, so a renewed window goes to the end (delete, then set) and
          // dropping the first entries drops the oldest windows.
          if (entry) windows.delete(name);
          if (windows.size >= MAX_LOCAL_NAMES) windows.delete(windows.keys().next().value as string);
          entry = { count: 0, endsAt: now + windowMs };
          windows.set(name, entry);
        }
        entry.count += 1;
        return { count: entry.count, resetMs: entry.endsAt - now };
      });
    },
  };
}
