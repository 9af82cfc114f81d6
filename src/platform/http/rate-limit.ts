import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { WindowCounter, WindowHits } from './window-counter.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's limits per minute (`perMinute`); over one it answers 429 rate_limited. */
    rateLimit?: RouteRateLimit;
  }
  interface FastifyRequest {
    /** The name's hits when past `by.max` but within `by.ceiling`: the handler judges (`overNameLimit`). */
    nameHitsOverLimit: NonNullable<WindowHits> | null;
  }
}

/**
 * A route's limits per minute: per client address on this route and, with `by`, per a name read
 * from the request (a license key, say), counted across every route that reads the same names.
 * With `by.ceiling`, a name past `by.max` is let on up to the ceiling, for the handler to refuse
 * against a limit it learns later (`overNameLimit`); past the ceiling it is refused here.
 */
export interface RouteRateLimit {
  max: number;
  by?: { max: number; ceiling?: number; name: (request: FastifyRequest) => string | null };
}

/** A request past its route's per-name limit that the handler may still allow. */
export interface NameLimitExcess {
  /** Calls counted on the name in this window. */
  count: number;
  /** The route's per-name limit (`by.max`), which the count is over. */
  max: number;
  /** Refuses the request as the limiter would have: 429 rate_limited with Retry-After. */
  refuse(): never;
}

const MINUTE_MS = 60_000;

/**
 * The per-address limit, as the IETF's RateLimit fields name it (draft-ietf-httpapi-ratelimit-
 * headers-11: `RateLimit-Policy: "address";q=600;w=60`, `RateLimit: "address";r=42;t=30`), beside
 * the X-RateLimit-* fields clients already read. The per-key limit is not advertised: a floating
 * license's is only known once the handler has read the license, after these are written.
 */
const POLICY = 'address';

/** The headers every answer of a limited route carries, as the API reference shows them. */
export const RATE_LIMIT_HEADERS = {
  ratelimit: {
    type: 'string',
    description: `This address's standing in the route's window (draft-ietf-httpapi-ratelimit-headers-11): \`"${POLICY}";r=<requests left>;t=<seconds until the window starts again>\``,
  },
  'ratelimit-policy': {
    type: 'string',
    description: `The route's limit per address (draft-ietf-httpapi-ratelimit-headers-11): \`"${POLICY}";q=<requests>;w=60\``,
  },
  'x-ratelimit-limit': { type: 'integer', description: 'Requests allowed per address in a minute' },
  'x-ratelimit-remaining': { type: 'integer', description: 'Requests left in this minute’s window' },
  'x-ratelimit-reset': { type: 'integer', description: 'Seconds until the window starts again' },
} as const;

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
  app.decorateRequest('nameHitsOverLimit', null);
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
  const policy = `"${POLICY}";q=${max};w=${MINUTE_MS / 1000}`;
  return (request, reply, done) => {
    const address = `address:${route}:${request.ip}`;
    const name = by ? by.name(request) : null;
    const judge = (hits: readonly WindowHits[]) => {
      const [perAddress, perName] = hits;
      if (perAddress) {
        const remaining = Math.max(0, max - perAddress.count);
        const reset = Math.ceil(perAddress.resetMs / 1000);
        reply.header('x-ratelimit-limit', max);
        reply.header('x-ratelimit-remaining', remaining);
        reply.header('x-ratelimit-reset', reset);
        reply.header('ratelimit-policy', policy);
        reply.header('ratelimit', `"${POLICY}";r=${remaining};t=${reset}`);
      }
      if (perAddress && perAddress.count > max) {
        done(refusal(reply, perAddress, 'from this address'));
      } else if (by && perName && perName.count > (by.ceiling ?? by.max)) {
        done(refusal(reply, perName, 'for this key'));
      } else {
        if (by && perName && perName.count > by.max) request.nameHitsOverLimit = perName;
        done();
      }
    };
    const hits = counter.hit(name === null ? [address] : [address, name], MINUTE_MS);
    if (hits instanceof Promise) hits.then(judge, () => judge([]));
    else judge(hits);
  };
}

/**
 * For a handler of a route whose per-name limit has a ceiling: undefined while the name is
 * within `by.max` (the common case, nothing made), else its count and how to refuse it.
 */
export function overNameLimit(request: FastifyRequest, reply: FastifyReply): NameLimitExcess | undefined {
  const hits = request.nameHitsOverLimit;
  const max = request.routeOptions.config.rateLimit?.by?.max;
  if (!hits || max === undefined) return undefined;
  return {
    count: hits.count,
    max,
    refuse: () => {
      throw refusal(reply, hits, 'for this key');
    },
  };
}

function refusal(reply: FastifyReply, hits: NonNullable<WindowHits>, what: string): AppError {
  const seconds = Math.ceil(hits.resetMs / 1000);
  reply.header('retry-after', seconds);
  return new AppError('rate_limited', `Too many requests ${what}; retry in ${seconds} s`);
}
