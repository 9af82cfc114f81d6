import { sql } from 'kysely';
import type { Log } from '../log.js';
import type { Database } from './database.js';
import { readMigrations } from './migration-files.js';

export { MIGRATIONS_DIR, type MigrationFile, readMigrations } from './migration-files.js';

// Any constant works; it only has to be the same on every node.
const MIGRATION_LOCK_KEY = 727_274_001;

/**
 * Forward-only: applies, in order, every migration file not yet recorded, each in its own
 * transaction. A session-level advisory lock makes nodes that start together take turns, so
 * each file runs exactly once. An applied file whose content changed stops start-up.
 */
export async function migrate(database: Database, log: Log, files = readMigrations()): Promise<string[]> {
  return database.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
    try {
      await sql`create table if not exists schema_migrations (
        version text primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`.execute(conn);
      const applied = new Map(
        (
          await sql<{
            version: string;
            checksum: string;
          }>`select version, checksum from schema_migrations`.execute(conn)
        ).rows.map((row) => [row.version, row.checksum]),
      );
      const done: string[] = [];
      for (const file of files) {
        const checksum = applied.get(file.version);
        if (checksum !== undefined) {
          if (checksum !== file.checksum) {
            throw new Error(
              `migration ${file.name} was changed after it was applied; add a new migration instead`,
            );
          }
          continue;
        }
        await sql`begin`.execute(conn);
        try {
          await sql.raw(file.sql).execute(conn);
          await sql`insert into schema_migrations (version, name, checksum) values (${file.version}, ${file.name}, ${file.checksum})`.execute(
            conn,
          );
          await sql`commit`.execute(conn);
        } catch (error) {
          await sql`rollback`.execute(conn);
          throw error;
        }
        log.info({ migration: file.name }, 'db.migration.applied');
        done.push(file.name);
      }
      return done;
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn);
    }
  });
}
