import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { WindowCounter, WindowHits } from './window-counter.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's limits per minute (`perMinute`); over one it answers 429 rate_limited. */
    rateLimit?: RouteRateLimit;
  }
}

/**
 * A route's limits per minute: per client address on this route and, with `by`, per a name read
 * from the request (a license key, say), counted across every route that reads the same names.
 */
export interface RouteRateLimit {
  max: number;
  by?: { max: number; name: (request: FastifyRequest) => string | null };
}

const MINUTE_MS = 60_000;

/** A per-minute limit per client address, counted before validation so bad bodies count too. */
export function perMinute(max: number, by?: RouteRateLimit['by']): RouteRateLimit {
  return by ? { max, by } : { max };
}

/**
 * Gives every route declaring `config.rateLimit` a hook that counts it. Counters live in Redis
 * when configured (shared by every node), in process memory otherwise; when Redis fails the
 * request is let through.
 *
 * Written here rather than with @fastify/rate-limit: verify is limited per address and per
 * license key, and that plugin counts one limit per request in a store it does not share, so two
 * limits meant two hooks, two Redis round trips and a chain of promises on the hot path. Here
 * both are one counter call: one MULTI through Redis, no promise at all in memory.
 */
export function registerRateLimits(app: FastifyInstance, counter: WindowCounter): void {
  app.addHook('onRoute', (route) => {
    const limit = route.config?.rateLimit;
    if (!limit) return;
    const own = route.preValidation;
    const hook = limitHook(counter, `${route.method}:${route.url}`, limit);
    // First among the route's preValidation hooks: a refused request goes no further.
    route.preValidation = own ? [hook, ...(Array.isArray(own) ? own : [own])] : hook;
  });
}

function limitHook(counter: WindowCounter, route: string, limit: RouteRateLimit): preValidationHookHandler {
  const { max, by } = limit;
  return (request, reply, done) => {
    const address = `address:${route}:${request.ip}`;
    const name = by ? by.name(request) : null;
    const judge = (hits: readonly WindowHits[]) => {
      const [perAddress, perName] = hits;
      if (perAddress) {
        reply.header('x-ratelimit-limit', max);
        reply.header('x-ratelimit-remaining', Math.max(0, max - perAddress.count));
        reply.header('x-ratelimit-reset', Math.ceil(perAddress.resetMs / 1000));
      }
      if (perAddress && perAddress.count > max) {
        refuse(reply, done, perAddress, 'from this address');
      } else if (by && perName && perName.count > by.max) {
        refuse(reply, done, perName, 'for this key');
      } else {
        done();
      }
    };
    const hits = counter.hit(name === null ? [address] : [address, name], MINUTE_MS);
    if (hits instanceof Promise) hits.then(judge, () => judge([]));
    else judge(hits);
  };
}

function refuse(
  reply: FastifyReply,
  done: (error?: Error) => void,
  hits: NonNullable<WindowHits>,
  what: string,
): void {
  const seconds = Math.ceil(hits.resetMs / 1000);
  reply.header('retry-after', seconds);
  done(new AppError('rate_limited', `Too many requests ${what}; retry in ${seconds} s`));
}
