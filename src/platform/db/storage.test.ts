import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { IN_MEMORY_DATA_DIR, parseConfig } from '../config.js';
import { createLog } from '../log.js';
import { type Database, openDatabase } from './database.js';
import { MIGRATIONS_DIR, migrate, readMigrations } from './migrate.js';

const config = parseConfig({
  DATABASE_URL: process.env.DATABASE_URL,
  DATA_DIR: IN_MEMORY_DATA_DIR,
  LOG_LEVEL: 'silent',
});
const log = createLog(config);
let database: Database;

before(async () => {
  database = await openDatabase(config);
  await migrate(database, log);
});
after(() => database.close());

describe(`storage (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  test('both drivers return counts as numbers and decimals as exact strings', async () => {
    const { rows } = await sql<{ n: unknown; price: unknown; at: unknown }>`
      select count(*) as n, 19.990::numeric(12, 2) as price, now() as at from schema_migrations`.execute(
      database.db,
    );
    assert.equal(typeof rows[0]?.n, 'number');
    assert.equal(rows[0]?.price, '19.99');
    assert.ok(rows[0]?.at instanceof Date);
  });

  test('a transaction that fails leaves nothing behind', async () => {
    const id = '00000000-0000-7000-8000-00000000abcd';
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('users')
          .values({ id, email: `tx-${Date.now()}@example.com`, name: null, password_hash: 'x' })
          .execute();
        throw new Error('abort');
      }),
      /abort/,
    );
    const row = await database.db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst();
    assert.equal(row, undefined);
  });

  test('migrating again applies nothing', async () => {
    assert.deepEqual(await migrate(database, log), []);
  });

  test('an applied migration whose file changed stops start-up', async () => {
    const files = readMigrations().map((file, index) =>
      index === 0 ? { ...file, checksum: 'changed' } : file,
    );
    await assert.rejects(migrate(database, log, files), /was changed after it was applied/);
  });

  test('two migration files with one version are refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
    fs.writeFileSync(path.join(dir, '0001_a.sql'), 'select 1;');
    fs.writeFileSync(path.join(dir, '0001_b.sql'), 'select 2;');
    assert.throws(() => readMigrations(dir), /two migrations share version 0001/);
  });

  test('a failing migration is rolled back whole and not recorded', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
    for (const file of fs.readdirSync(MIGRATIONS_DIR))
      fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(dir, file));
    const table = `t_${Date.now()}`;
    fs.writeFileSync(
      path.join(dir, '9999_broken.sql'),
      `create table ${table} (a int); select no_such_function();`,
    );
    await assert.rejects(migrate(database, log, readMigrations(dir)));
    const { rows } = await sql<{
      exists: boolean;
    }>`select to_regclass(${table}) is not null as exists`.execute(database.db);
    assert.equal(rows[0]?.exists, false);
    const recorded = await sql<{
      n: number;
    }>`select count(*) as n from schema_migrations where version = '9999'`.execute(database.db);
    assert.equal(recorded.rows[0]?.n, 0);
  });
});
