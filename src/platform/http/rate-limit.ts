import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { RedisClient } from '../redis.js';

/**
 * Rate limits are declared per route (`config.rateLimit`); this registers the counters once
 * per app: in Redis when configured (shared by every node), in process memory otherwise.
 * Counting never blocks a request when Redis fails (skipOnError).
 */
export function registerRateLimits(app: FastifyInstance, redis: RedisClient | null): void {
  // Registered before any route plugin, so its onRoute hook sees every route.
  app.register(rateLimit, {
    global: false,
    nameSpace: 'licensing:ratelimit:',
    skipOnError: true,
    ...(redis ? { redis } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Too many requests; retry in ${context.after}`),
  });
}

/** A per-minute limit per client address, counted before validation so bad bodies count too. */
export function perMinute(max: number): RateLimitOptions {
  return {
    max,
    timeWindow: 60_000,
    hook: 'preValidation',
    keyGenerator: (request: FastifyRequest) => request.ip,
  };
}
