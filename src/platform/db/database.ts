import fs from 'node:fs';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { IN_MEMORY_DATA_DIR } from '../config.js';
import { lockDataDir } from './data-dir-lock.js';
import { PGlitePool } from './pglite-pool.js';
import type { Schema } from './schema.js';

export type Db = Kysely<Schema>;
/** What a store function runs on: the database itself or an open transaction. */
export type Executor = Kysely<Schema> | Transaction<Schema>;

export interface Database {
  readonly db: Db;
  readonly kind: 'pglite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseSettings {
  databaseUrl: string | null;
  dataDir: string;
}

const PG_INT8 = 20;

/**
 * Opens PostgreSQL when a URL is given, embedded PGlite otherwise. Both drivers are made
 * to return the same JS types: int8 as number (counts fit), numeric as an exact string,
 * timestamptz as Date.
 */
export async function openDatabase(
  settings: DatabaseSettings,
  onIdleError?: (error: Error) => void,
): Promise<Database> {
  if (settings.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: settings.databaseUrl,
      max: 10,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === PG_INT8
            ? (value: string) => Number(value)
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // The server may end idle connections (restart, failover, admin): the pool replaces them on
    // the next query. Without a listener that event would crash the process.
    pool.on('error', (err) => onIdleError?.(err));
    return wrap(new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) }), 'postgres');
  }

  const inMemory = settings.dataDir === IN_MEMORY_DATA_DIR;
  let unlock = () => {};
  if (!inMemory) {
    fs.mkdirSync(settings.dataDir, { recursive: true });
    unlock = lockDataDir(settings.dataDir);
  }
  try {
    const pglite = await PGlite.create(inMemory ? 'memory://' : `${settings.dataDir}/pgdata`, {
      parsers: { [pgliteTypes.INT8]: (value: string) => Number(value) },
    });
    const pool = new PGlitePool(pglite);
    // PostgresDialect only needs connect/end from its pool and query/release from a client.
    const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) });
    return wrap(db, 'pglite', unlock);
  } catch (error) {
    unlock();
    throw error;
  }
}

function wrap(db: Db, kind: Database['kind'], afterClose: () => void = () => {}): Database {
  let closed: Promise<void> | null = null;
  return {
    db,
    kind,
    async ping() {
      await sql`select 1`.execute(db);
    },
    close() {
      closed ??= db.destroy().finally(afterClose);
      return closed;
    },
  };
}
