import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Log } from '../log.js';
import type { Database } from './database.js';

/** The same folder from src/ (tsx), dist/ (compiled) and the suite's mirror (dist-test/run-<pid>/src). */
export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../migrations',
);

// Any constant works; it only has to be the same on every node.
const MIGRATION_LOCK_KEY = 727_274_001;

export interface MigrationFile {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  const files = fs
    .readdirSync(dir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      return {
        version: file.slice(0, 4),
        name: file.replace(/\.sql$/, ''),
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    });
  for (const [index, file] of files.entries()) {
    if (files[index - 1]?.version === file.version) {
      throw new Error(
        `two migrations share version ${file.version}: ${files[index - 1]?.name} and ${file.name}`,
      );
    }
  }
  return files;
}

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
