import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { type Database, type Db, openDatabase } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import { createLog } from '../src/platform/log.js';

export type StorageKind = 'PGlite' | 'PostgreSQL';

/**
 * A database of the bench's own for one service: a PGlite folder, or a scratch database
 * (`licensing_bench_<random>`) on the server DATABASE_URL names, created and dropped here.
 * It is migrated by the service's own runner and written to directly with SQL while no service
 * has it open (PGlite belongs to one process at a time).
 */
export interface BenchStorage {
  kind: StorageKind;
  /** What the service gets: DATA_DIR, and DATABASE_URL on PostgreSQL. */
  env: Record<string, string>;
  /** A folder for this storage's logs and files. */
  dir: string;
  /** Opens the database in this process, runs `work`, closes it. */
  write<T>(work: (db: Db) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

export async function openStorage(kind: StorageKind, label: string): Promise<BenchStorage> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `licensing-bench-${label}-`));
  const dataDir = path.join(dir, 'data');
  let databaseUrl: string | null = null;
  let name = '';
  const server = process.env.DATABASE_URL;
  if (kind === 'PostgreSQL') {
    if (!server) throw new Error('DATABASE_URL must name a PostgreSQL server to bench on PostgreSQL');
    name = `licensing_bench_${randomBytes(5).toString('hex')}`;
    await admin(server, `create database ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    databaseUrl = url.href;
  }
  const use = async <T>(work: (database: Database) => Promise<T>) => {
    const database = await openDatabase({ databaseUrl, dataDir });
    try {
      return await work(database);
    } finally {
      await database.close();
    }
  };
  await use((database) => migrate(database, createLog({ logLevel: 'silent' })));
  return {
    kind,
    env: { DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    dir,
    write: (work) => use((database) => work(database.db)),
    async drop() {
      if (server && name) await admin(server, `drop database if exists ${name} with (force)`);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One statement on the server's maintenance connection (create or drop a scratch database). */
export async function admin(server: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * The key of bench license `i`: 30 hex digits of md5('bench-i'), grouped as the service writes
 * keys (hex digits are all in its alphabet). Derived, so the load generator knows every key, and
 * spread over the whole index like real random keys.
 */
export function benchKey(i: number): string {
  const hex = createHash('md5').update(`bench-${i}`).digest('hex').toUpperCase().slice(0, 30);
  return (hex.match(/.{5}/g) as string[]).join('-');
}

/** The hardware id bound to bench license `i` (each license has one device, already bound). */
export const benchDevice = (i: number) => `bench-device-${i}`;

/** A file of verify bodies for the load generator: `count` licenses, every `spread`th from the first, with their devices. */
export function writeBodies(
  storage: Pick<BenchStorage, 'dir'>,
  name: string,
  count: number,
  spread = 1,
): string {
  const file = path.join(storage.dir, name);
  const lines = Array.from({ length: count }, (_, k) => {
    const i = 1 + k * spread;
    return JSON.stringify({ key: benchKey(i), hwuid: benchDevice(i) });
  });
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

export interface Seller {
  userId: string;
  appId: string;
}

/**
 * One seller (tier pro) with one app, and licenses 1…count written with set-based SQL: active,
 * perpetual, no device limit, metadata as a seller would set it, one bound device each.
 */
export async function seedLicenses(db: Db, count: number): Promise<Seller> {
  const seller = { userId: randomUUID(), appId: randomUUID() };
  await sql
    .raw(`
    insert into users (id, email, password_hash, tier) values ('${seller.userId}', 'bench@bench.example', 'x', 'pro');
    insert into apps (id, user_id, name) values ('${seller.appId}', '${seller.userId}', 'Bench');
    insert into licenses (id, key, app_id, user_id, email, metadata)
    select gen_random_uuid(), ${groupedKey('h')}, '${seller.appId}', '${seller.userId}', 'buyer' || i || '@bench.example',
      '{"plan": "pro", "features": ["a", "b"]}'
    from (select i, upper(md5('bench-' || i)) as h from generate_series(1, ${count}) i) s;
    -- License i's e-mail is buyer<i>@…; its device is bench-device-<i>.
    insert into license_devices (license_id, hwuid)
    select id, 'bench-device-' || substr(email, 6, strpos(email, '@') - 6) from licenses;
  `)
    .execute(db);
  await sql.raw('vacuum analyze').execute(db);
  return seller;
}

/** SQL for the key whose 32 upper-case hex digits are in column `h`, as benchKey groups them. */
export function groupedKey(h: string): string {
  return `concat_ws('-', ${[0, 1, 2, 3, 4, 5].map((g) => `substr(${h}, ${g * 5 + 1}, 5)`).join(', ')})`;
}
