import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { IN_MEMORY_DATA_DIR, parseConfig } from '../config.js';
import { type Database, openDatabase } from './database.js';
import { namedStatement, preparedStatement } from './prepared.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
const config = parseConfig({
  DATABASE_URL: process.env.DATABASE_URL,
  DATA_DIR: IN_MEMORY_DATA_DIR,
  LOG_LEVEL: 'silent',
});
let database: Database;

before(async () => {
  database = await openDatabase(config);
});
after(() => database.close());

// Parameters used out of their declared order, twice, and beside a constant of the query's own.
const echo = preparedStatement('prepared_test_echo', ['a', 'b'], (executor, p) =>
  executor.selectNoFrom((eb) => [
    eb.val(p.b).as('second'),
    eb.val(p.a).as('first'),
    eb.val('fixed').as('constant'),
    eb.val(p.b).as('again'),
  ]),
);

describe(`prepared statements (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  test('each call runs with its own values in their places', async () => {
    for (const [a, b] of [
      ['one', 'two'],
      ['three', 'four'],
    ]) {
      const { rows } = await echo.run(database.db, { a, b });
      assert.deepEqual(rows, [{ second: b, first: a, constant: 'fixed', again: b }]);
    }
  });

  test('on PostgreSQL the statement is prepared by its name on the connection', async () => {
    const names = await database.db.transaction().execute(async (trx) => {
      await echo.run(trx, { a: 'x', b: 'y' });
      const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(trx);
      return rows.map((row) => row.name);
    });
    assert.equal(names.includes('prepared_test_echo'), onPostgres);
  });

  test('only statements carrying the marker are sent by name', () => {
    assert.deepEqual(namedStatement('select $1 /* prepared:lookup_one */', ['k']), {
      name: 'lookup_one',
      text: 'select $1 /* prepared:lookup_one */',
      values: ['k'],
    });
    assert.equal(namedStatement('select 1 /* a comment */', []), null);
    assert.equal(namedStatement('select 1', []), null);
    assert.equal(namedStatement({ text: 'select 1' }, []), null);
  });
});
