import { Redis } from 'ioredis';

export type RedisClient = Redis;

/**
 * The optional Redis connection (shared rate-limit counters). Commands fail fast instead of
 * queueing while Redis is away, so a Redis outage never stalls a request.
 */
export function openRedis(url: string, keyPrefix = ''): RedisClient {
  return new Redis(url, {
    keyPrefix,
    connectTimeout: 2000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectionName: 'licensing',
  });
}

/**
 * Resolves once the connection is ready, or after `timeoutMs` (or its first error) when it is
 * not: a node waits for its counters before it listens, so its first requests are counted, but
 * never more than that for a Redis that is away (it then lets requests through until it is back).
 */
export function connected(redis: RedisClient, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      resolve(ready);
    };
    const onReady = () => settle(true);
    const onError = () => settle(false);
    const timer = setTimeout(() => settle(false), timeoutMs);
    redis.once('ready', onReady);
    redis.once('error', onError);
  });
}
