import type { Kysely, Transaction } from 'kysely';
import type { Schema } from './schema.js';

/*
 * The database's types, below everything that implements it (database.ts, the PGlite pool,
 * prepared statements, notifications), so each imports them from here and none from another.
 */

export type Db = Kysely<Schema>;
/** What a store function runs on: the database itself or an open transaction. */
export type Executor = Kysely<Schema> | Transaction<Schema>;

/** Told the seconds each statement took, answered or failed (the query-time metric). */
export type QueryObserver = (seconds: number) => void;
