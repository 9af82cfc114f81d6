import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { IN_MEMORY_DATA_DIR, parseConfig } from '../config.js';
import { type Database, type Executor, openDatabase } from './database.js';
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

  test('the statement is prepared by its name on the connection, on both stores', async () => {
    const names = await database.db.transaction().execute(async (trx) => {
      await echo.run(trx, { a: 'x', b: 'y' });
      const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(trx);
      return rows.map((row) => row.name);
    });
    assert.ok(names.includes('prepared_test_echo'), `prepared: ${names.join(', ')}`);
  });

  test('values come back as the same JS types as from an ordinary statement', async () => {
    const typed = (executor: Executor, p: Record<'ids' | 'at' | 'doc' | 'none', string>) =>
      executor.selectNoFrom([
        sql<number>`cardinality(${p.ids}::uuid[])::int8`.as('count'),
        sql<string[]>`${p.ids}::uuid[]`.as('ids'),
        sql<Date>`${p.at}::timestamptz`.as('at'),
        sql<unknown>`${p.doc}::jsonb`.as('doc'),
        sql<string>`1.10::numeric`.as('exact'),
        sql<string | null>`${p.none}::text`.as('none'),
      ]);
    const prepared = preparedStatement('prepared_test_types', ['ids', 'at', 'doc', 'none'], typed);
    const values = {
      ids: ['6f1c1a4e-0b1e-4a53-9d3c-1f2e3d4c5b6a', '0b0c2b8e-8c7d-4e5f-a6b7-c8d9e0f1a2b3'],
      at: new Date('2026-11-27T12:00:00.000Z'),
      doc: JSON.stringify({ plan: 'pro', seats: [1, 2] }),
      none: null,
    };
    const { rows } = await prepared.run(database.db, values);
    const ordinary = await typed(database.db, values as never).execute();
    assert.deepEqual(rows, ordinary);
    assert.deepEqual(rows, [
      {
        count: 2,
        ids: values.ids,
        at: values.at,
        doc: { plan: 'pro', seats: [1, 2] },
        exact: '1.10',
        none: null,
      },
    ]);
  });

  test('a failing call rejects with its SQLSTATE and leaves the database usable', async () => {
    const cast = preparedStatement('prepared_test_cast', ['id'], (executor, p) =>
      executor.selectNoFrom(sql<string>`${p.id}::uuid`.as('id')),
    );
    await assert.rejects(cast.run(database.db, { id: 'not-a-uuid' }), { code: '22P02' });
    const id = '6f1c1a4e-0b1e-4a53-9d3c-1f2e3d4c5b6a';
    // Prepared inside a transaction that is rolled back: a prepared statement outlives it.
    const inside = preparedStatement('prepared_test_rolled_back', ['id'], (executor, p) =>
      executor.selectNoFrom(sql<string>`${p.id}::uuid`.as('id')),
    );
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await inside.run(trx, { id });
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual((await inside.run(database.db, { id })).rows, [{ id }]);
    assert.deepEqual((await cast.run(database.db, { id })).rows, [{ id }]);
    assert.deepEqual((await sql<{ one: number }>`select 1::int as one`.execute(database.db)).rows, [
      { one: 1 },
    ]);
  });

  test('a write through a prepared statement reports the rows it changed, inside its transaction', async () => {
    const bump = preparedStatement('prepared_test_bump', ['from'], (executor, p) =>
      (executor as unknown as Kysely<{ prepared_test_counter: { n: number } }>)
        .updateTable('prepared_test_counter')
        .set({ n: sql`n + 1` })
        .where('n', '>=', sql<number>`${p.from}::int`),
    );
    const changed = await database.db.transaction().execute(async (trx) => {
      await sql`create temporary table prepared_test_counter (n int) on commit drop`.execute(trx);
      await sql`insert into prepared_test_counter values (1), (5), (9)`.execute(trx);
      const result = await bump.run(trx, { from: 5 });
      const { rows } = await sql<{ n: number }>`select n from prepared_test_counter order by n`.execute(trx);
      return { result, rows };
    });
    assert.equal(changed.result.numAffectedRows, 2n);
    assert.deepEqual(
      changed.rows.map((row) => row.n),
      [1, 6, 10],
    );
  });

  test('a name is bound to one text, and must be one PostgreSQL keeps whole', async () => {
    const first = preparedStatement('prepared_test_one_name', ['a'], (executor, p) =>
      executor.selectNoFrom(sql<string>`${p.a}::text`.as('a')),
    );
    const second = preparedStatement('prepared_test_one_name', ['a'], (executor, p) =>
      executor.selectNoFrom(sql<string>`upper(${p.a}::text)`.as('a')),
    );
    // On one connection: on PostgreSQL each connection prepares for itself.
    await database.db.transaction().execute(async (trx) => {
      assert.deepEqual((await first.run(trx, { a: 'x' })).rows, [{ a: 'x' }]);
      await assert.rejects(second.run(trx, { a: 'x' }), /prepared/);
      assert.deepEqual((await first.run(trx, { a: 'y' })).rows, [{ a: 'y' }]);
    });
    const build = (executor: Executor) => executor.selectNoFrom(sql<number>`1`.as('one'));
    assert.throws(() => preparedStatement('x'.repeat(64), [], build), /1-63/);
    assert.throws(() => preparedStatement('Upper', [], build), /1-63/);
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
