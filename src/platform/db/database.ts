import fs from 'node:fs';
import path from 'node:path';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { IN_MEMORY_DATA_DIR } from '../config.js';
import { lockDataDir } from './data-dir-lock.js';
import { seedFromTemplate } from './database-template.js';
import { classifyDriverError } from './errors.js';
import type { Db, QueryObserver } from './executor.js';
import type { ListenTarget } from './notifications.js';
import { PGlitePool } from './pglite-pool.js';
import { namedStatement } from './prepared.js';
import type { Schema } from './schema.js';

export type { Db, Executor, QueryObserver } from './executor.js';

export interface Database {
  readonly db: Db;
  /**
   * Where named locks take their session advisory locks (named-lock.ts): a small pool of its own
   * on PostgreSQL, so a lock held across a partner call never takes a connection from requests.
   */
  readonly locksDb: Db;
  /** Where this node's LISTEN connection goes (notifications.ts). */
  readonly listenTarget: ListenTarget;
  readonly kind: 'pglite' | 'postgres';
  /**
   * How an embedded cluster came to be when this open made it: copied from the build's template
   * (database-template.ts) or created by PGlite's initdb. Null: it was there already, or
   * PostgreSQL.
   */
  readonly createdFrom: 'template' | 'initdb' | null;
  /** Connections of each PostgreSQL pool, for the metrics (none on PGlite). */
  poolStats(): PoolStats[];
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseSettings {
  databaseUrl: string | null;
  dataDir: string;
  /** PostgreSQL: a statement without an answer after this long fails (0: wait forever). */
  databaseQueryTimeoutMs?: number;
  /**
   * In memory only: start from this image of a data folder (PGlite's `dumpDataDir`) instead of
   * an empty cluster. The test suite starts its servers from one migrated image, which spares
   * each an initdb; the service itself never sets it.
   */
  memoryImage?: Blob;
  /** An empty DATA_DIR: copy the build's template (database-template.ts) unless false. */
  databaseTemplate?: boolean;
}

export interface PoolStats {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
}

const PG_INT8 = 20;
const CONNECT_TIMEOUT_MS = 5_000;
/** What `pg` rejects a statement with when `query_timeout` passes. */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * The pool as Kysely sees it, with the driver's connection failures rethrown as
 * DatabaseUnavailableError (the only place they are told apart from a bad statement).
 */
function classifying(pool: pg.Pool, observeQuery?: QueryObserver): pg.Pool {
  const wrappers = new WeakMap<pg.PoolClient, Pick<pg.PoolClient, 'query' | 'release'>>();
  const wrapperOf = (client: pg.PoolClient) => {
    let wrapper = wrappers.get(client);
    if (!wrapper) {
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      // A statement that timed out may still hold the connection: it must not serve anyone else.
      let broken = false;
      wrapper = {
        query: ((...args: unknown[]) => {
          const started = observeQuery ? performance.now() : 0;
          const named = namedStatement(args[0], args[1]);
          const done = (named ? query(named) : query(...args)).catch((error: unknown) => {
            if (error instanceof Error && error.message === QUERY_TIMEOUT_MESSAGE) broken = true;
            throw classifyDriverError(error);
          });
          if (!observeQuery) return done;
          const observe = () => observeQuery((performance.now() - started) / 1000);
          return done.finally(observe);
        }) as pg.PoolClient['query'],
        release: (err?: Error | boolean) => client.release(broken || err),
      };
      wrappers.set(client, wrapper);
    }
    return wrapper;
  };
  const connect = async () => {
    try {
      return wrapperOf(await pool.connect());
    } catch (error) {
      throw classifyDriverError(error);
    }
  };
  // PostgresDialect only calls connect() and end() on its pool.
  return { connect, end: () => pool.end() } as unknown as pg.Pool;
}

/**
 * Opens PostgreSQL when a URL is given, embedded PGlite otherwise. Both drivers are made
 * to return the same JS types: int8 as number (counts fit), numeric as an exact string,
 * timestamptz as Date.
 */
export async function openDatabase(
  settings: DatabaseSettings,
  onConnectionError?: (error: Error) => void,
  observeQuery?: QueryObserver,
): Promise<Database> {
  if (settings.databaseUrl) {
    const main = postgresPool(
      settings,
      { max: 10, connectTimeoutMs: CONNECT_TIMEOUT_MS },
      onConnectionError,
      observeQuery,
    );
    // Named locks wait on connections of their own, so work holding one never starves requests.
    const locks = postgresPool(
      settings,
      { max: 5, connectTimeoutMs: 60_000 },
      onConnectionError,
      observeQuery,
    );
    return wrap(
      main.db,
      'postgres',
      { kind: 'postgres', url: settings.databaseUrl },
      {
        locksDb: locks.db,
        poolStats: () => [statsOf('main', main.pool), statsOf('locks', locks.pool)],
      },
    );
  }

  const inMemory = settings.dataDir === IN_MEMORY_DATA_DIR;
  let unlock = () => {};
  if (!inMemory) {
    fs.mkdirSync(settings.dataDir, { recursive: true });
    unlock = lockDataDir(settings.dataDir);
  }
  try {
    const pgdata = path.join(settings.dataDir, 'pgdata');
    const createdFrom = inMemory
      ? null
      : settings.databaseTemplate !== false && seedFromTemplate(pgdata)
        ? 'template'
        : fs.existsSync(path.join(pgdata, 'PG_VERSION'))
          ? null
          : 'initdb';
    const pglite = await PGlite.create(inMemory ? 'memory://' : pgdata, {
      parsers: { [pgliteTypes.INT8]: (value: string) => Number(value) },
      ...(inMemory && settings.memoryImage ? { loadDataDir: settings.memoryImage } : {}),
    });
    const pool = new PGlitePool(pglite, observeQuery);
    // PostgresDialect only needs connect/end from its pool and query/release from a client.
    const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) });
    return wrap(db, 'pglite', { kind: 'pglite', pglite }, { afterClose: unlock, createdFrom });
  } catch (error) {
    unlock();
    throw error;
  }
}

function wrap(
  db: Db,
  kind: Database['kind'],
  listenTarget: ListenTarget,
  {
    locksDb = db,
    afterClose = () => {},
    poolStats = () => [],
    createdFrom = null,
  }: {
    locksDb?: Db;
    afterClose?: () => void;
    poolStats?: () => PoolStats[];
    createdFrom?: Database['createdFrom'];
  } = {},
): Database {
  let closed: Promise<void> | null = null;
  return {
    db,
    locksDb,
    listenTarget,
    kind,
    createdFrom,
    poolStats,
    async ping() {
      await sql`select 1`.execute(db);
    },
    close() {
      closed ??= Promise.all([db.destroy(), locksDb === db ? null : locksDb.destroy()])
        .then(() => {})
        .finally(afterClose);
      return closed;
    },
  };
}

/** A Kysely over a `pg` pool that survives the server's faults and classifies its failures. */
function postgresPool(
  settings: DatabaseSettings,
  { max, connectTimeoutMs }: { max: number; connectTimeoutMs: number },
  onConnectionError?: (error: Error) => void,
  observeQuery?: QueryObserver,
): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: settings.databaseUrl ?? undefined,
    max,
    // During an outage a request waits this long for a connection at most, then answers 503.
    connectionTimeoutMillis: connectTimeoutMs,
    // A server that stopped answering (frozen, or cut off without a reset) fails the statement
    // instead of holding the request forever.
    ...(settings.databaseQueryTimeoutMs ? { query_timeout: settings.databaseQueryTimeoutMs } : {}),
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // The server may end any connection (restart, failover, pg_terminate_backend), idle or
  // checked out: a client without a listener would emit 'error' unhandled and end the
  // process. pg-pool listens on idle clients only, so every client gets its own listener;
  // a broken client is dropped by the pool when released (it is no longer queryable).
  pool.on('connect', (client) => client.on('error', (err) => onConnectionError?.(err)));
  pool.on('error', () => {}); // already reported by the client's own listener above
  return {
    db: new Kysely<Schema>({ dialect: new PostgresDialect({ pool: classifying(pool, observeQuery) }) }),
    pool,
  };
}

function statsOf(name: string, pool: pg.Pool): PoolStats {
  return { pool: name, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}
