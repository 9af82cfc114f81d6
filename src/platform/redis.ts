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
