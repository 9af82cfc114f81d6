import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { RedisClient } from '../redis.js';

/**
 * Fixed-window counters for limits keyed by something other than the client address (a
 * license key, say). Written here because @fastify/rate-limit runs a single limiter per request
 * and does not export its stores. Shared through Redis when configured; if Redis fails, the
 * request is let through, as with the address limits.
 */
export interface WindowCounter {
  /**
   * Counts one hit; returns the hits in the current window and ms until it ends. In process
   * memory the answer is immediate (no promise: this runs on every verify); through Redis, a
   * promise.
   */
  hit(key: string, windowMs: number): WindowHits | Promise<WindowHits>;
}

/** The hits in the current window and ms until it ends; null when they could not be counted. */
export type WindowHits = { count: number; resetMs: number } | null;

const MAX_LOCAL_KEYS = 50_000;

export function createWindowCounter(redis: RedisClient | null): WindowCounter {
  if (redis) {
    return {
      async hit(key, windowMs) {
        try {
          const name = `licensing:window:${key}`;
          const results = await redis.multi().incr(name).pexpire(name, windowMs, 'NX').pttl(name).exec();
          const count = Number(results?.[0]?.[1]);
          const ttl = Number(results?.[2]?.[1]);
          return Number.isFinite(count) ? { count, resetMs: ttl > 0 ? ttl : windowMs } : null;
        } catch {
          return null;
        }
      },
    };
  }
  const windows = new Map<string, { count: number; endsAt: number }>();
  return {
    hit(key, windowMs) {
      const now = Date.now();
      let entry = windows.get(key);
      if (!entry || entry.endsAt <= now) {
        // Map keeps insertion order: dropping the first entries drops the oldest windows.
        if (windows.size >= MAX_LOCAL_KEYS) windows.delete(windows.keys().next().value as string);
        entry = { count: 0, endsAt: now + windowMs };
        windows.set(key, entry);
      }
      entry.count += 1;
      return { count: entry.count, resetMs: entry.endsAt - now };
    },
  };
}

/** A hook refusing with 429 once `key(request)` has been seen `max` times this minute. */
export function limitPerMinuteBy(
  counter: WindowCounter,
  max: number,
  key: (request: FastifyRequest) => string | null,
): preValidationHookHandler {
  return (request, reply, done) => {
    const name = key(request);
    if (name === null) {
      done();
      return;
    }
    const judge = (hits: WindowHits) => {
      if (!hits || hits.count <= max) {
        done();
        return;
      }
      reply.header('retry-after', Math.ceil(hits.resetMs / 1000));
      done(
        new AppError(
          'rate_limited',
          `Too many requests for this key; retry in ${Math.ceil(hits.resetMs / 1000)} s`,
        ),
      );
    };
    const hits = counter.hit(name, 60_000);
    if (hits instanceof Promise) hits.then(judge, () => judge(null));
    else judge(hits);
  };
}
