import { sql } from 'kysely';
import type { Database, Db } from './database.js';

export type NamedLocks = ReturnType<typeof createNamedLocks>;

/**
 * A lock by name that every node sees, for work that must not interleave with other work on the
 * same thing across a call outside the database (a renewal charge at the card partner against a
 * cancel), where one conditional statement cannot reach.
 *
 * Holders of one name queue in this process first, so a node spends at most one lock connection
 * per name. On PostgreSQL the head of that queue then takes a session advisory lock on a
 * connection of the locks pool (`locksDb`, apart from the requests' pool, so a lock held across
 * a slow partner call starves no request), and `work` runs its statements on the main pool. On
 * PGlite one process owns the data folder (data-dir-lock.ts), so the queue is the whole lock.
 * A lock connection lost to a database fault releases the lock with its session (PostgreSQL
 * ends it); the work, on the same database, then most likely fails too.
 */
export function createNamedLocks(database: Pick<Database, 'db' | 'locksDb' | 'kind'>) {
  const queues = new Map<string, Promise<unknown>>();

  function acrossNodes<T>(name: string, work: (db: Db) => Promise<T>): Promise<T> {
    if (database.kind !== 'postgres') return work(database.db);
    return database.locksDb.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(hashtextextended(${name}, 0))`.execute(connection);
      try {
        return await work(database.db);
      } finally {
        // A failed unlock means the session is gone, and the lock with it: the work's outcome stands.
        await sql`select pg_advisory_unlock(hashtextextended(${name}, 0))`
          .execute(connection)
          .catch(() => {});
      }
    });
  }

  return {
    hold<T>(name: string, work: (db: Db) => Promise<T>): Promise<T> {
      const previous = queues.get(name) ?? Promise.resolve();
      const current = previous.catch(() => {}).then(() => acrossNodes(name, work));
      queues.set(name, current);
      return current.finally(() => {
        if (queues.get(name) === current) queues.delete(name);
      });
    },
  };
}
