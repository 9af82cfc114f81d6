import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { IN_MEMORY_DATA_DIR, parseConfig } from '../../platform/config.js';
import { type Database, openDatabase } from '../../platform/db/database.js';
import { migrate, readMigrations } from '../../platform/db/migrate.js';
import { newId } from '../../platform/ids.js';
import { createLog } from '../../platform/log.js';
import { scratchDatabase } from '../../testing/scratch-database.js';

/**
 * Migration 0012 on a database that already holds licenses: the backfill of when each license
 * stopped being active, then the trigger that keeps it. Rows are written in SQL because they
 * must exist before the migration, when the service's code for them is newer than the schema.
 */
let database: Database;
let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
const log = createLog(parseConfig({ LOG_LEVEL: 'silent', DATA_DIR: IN_MEMORY_DATA_DIR }));

const at = (iso: string) => new Date(iso);
const ids = { user: newId(), app: newId() };
const licenses = {
  perpetual: newId(),
  expiring: newId(),
  expired: newId(),
  suspendedWithEvent: newId(),
  revokedWithoutEvent: newId(),
  revokedAfterExpiry: newId(),
};

interface Ended {
  deactivated_at: Date | null;
  ended_at: Date | null;
}

async function endOf(id: string): Promise<Ended> {
  const { rows } = await sql<Ended>`
    select deactivated_at, ended_at from licenses where id = ${id}`.execute(database.db);
  assert.ok(rows[0], `license ${id} exists`);
  return rows[0];
}

before(async () => {
  scratch = await scratchDatabase();
  database = await openDatabase(
    parseConfig({ DATABASE_URL: scratch.url, DATA_DIR: IN_MEMORY_DATA_DIR, LOG_LEVEL: 'silent' }),
  );
  await migrate(
    database,
    log,
    readMigrations().filter((file) => file.version < '0012'),
  );
  const db = database.db;
  await db
    .insertInto('users')
    .values({ id: ids.user, email: `m12-${ids.user}@example.com`, name: null, password_hash: 'x' })
    .execute();
  await db.insertInto('apps').values({ id: ids.app, user_id: ids.user, name: 'App' }).execute();
  const license = (
    id: string,
    status: 'active' | 'suspended' | 'revoked' | 'expired',
    expiresAt: string | null,
    updatedAt: string,
  ) => ({
    id,
    key: `KEY-${id}`,
    app_id: ids.app,
    user_id: ids.user,
    status,
    expires_at: expiresAt ? at(expiresAt) : null,
    created_at: at('2026-01-01T00:00:00.000Z'),
    updated_at: at(updatedAt),
  });
  await db
    .insertInto('licenses')
    .values([
      license(licenses.perpetual, 'active', null, '2026-01-01T00:00:00.000Z'),
      license(licenses.expiring, 'active', '2027-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
      license(licenses.expired, 'expired', '2026-03-01T00:00:00.000Z', '2026-03-01T00:05:00.000Z'),
      license(licenses.suspendedWithEvent, 'suspended', null, '2026-05-01T00:00:00.000Z'),
      license(licenses.revokedWithoutEvent, 'revoked', null, '2026-06-01T00:00:00.000Z'),
      license(licenses.revokedAfterExpiry, 'revoked', '2026-02-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'),
    ])
    .execute();
  // The suspension's event is the record of when it happened; updated_at moved on since.
  await db
    .insertInto('events')
    .values({
      id: newId(),
      type: 'license.revoked',
      user_id: ids.user,
      app_id: ids.app,
      data: JSON.stringify({ id: licenses.suspendedWithEvent, status: 'suspended' }),
      created_at: at('2026-04-15T00:00:00.000Z'),
    })
    .execute();
  assert.deepEqual(
    await migrate(
      database,
      log,
      readMigrations().filter((file) => file.version <= '0012'),
    ),
    ['0012_analytics'],
  );
});
after(async () => {
  await database?.close();
  await scratch?.drop();
});

describe('migration 0012 on existing licenses', () => {
  test('records when each license stopped being active', async () => {
    assert.deepEqual(await endOf(licenses.perpetual), { deactivated_at: null, ended_at: null });
    assert.deepEqual(await endOf(licenses.expiring), {
      deactivated_at: null,
      ended_at: at('2027-01-01T00:00:00.000Z'),
    });
    assert.deepEqual(await endOf(licenses.expired), {
      deactivated_at: null,
      ended_at: at('2026-03-01T00:00:00.000Z'),
    });
    assert.deepEqual(await endOf(licenses.suspendedWithEvent), {
      deactivated_at: at('2026-04-15T00:00:00.000Z'),
      ended_at: at('2026-04-15T00:00:00.000Z'),
    });
    assert.deepEqual(await endOf(licenses.revokedWithoutEvent), {
      deactivated_at: at('2026-06-01T00:00:00.000Z'),
      ended_at: at('2026-06-01T00:00:00.000Z'),
    });
    // Expired first, revoked later: it stopped being active at its expiry.
    assert.deepEqual(await endOf(licenses.revokedAfterExpiry), {
      deactivated_at: at('2026-04-01T00:00:00.000Z'),
      ended_at: at('2026-02-01T00:00:00.000Z'),
    });
  });

  test('keeps the times on every later write of the status or the expiry', async () => {
    const db = database.db;
    const write = (id: string, set: { status?: 'active' | 'suspended' | 'revoked'; expires?: string }) =>
      db
        .updateTable('licenses')
        .set({
          ...(set.status ? { status: set.status } : {}),
          ...(set.expires ? { expires_at: at(set.expires) } : {}),
          updated_at: at('2026-07-01T00:00:00.000Z'),
        })
        .where('id', '=', id)
        .execute();

    await write(licenses.perpetual, { status: 'suspended' });
    assert.deepEqual(await endOf(licenses.perpetual), {
      deactivated_at: at('2026-07-01T00:00:00.000Z'),
      ended_at: at('2026-07-01T00:00:00.000Z'),
    });
    // Suspended, then revoked: it stopped being active when it was suspended.
    await db
      .updateTable('licenses')
      .set({ status: 'revoked', updated_at: at('2026-08-01T00:00:00.000Z') })
      .where('id', '=', licenses.perpetual)
      .execute();
    assert.equal((await endOf(licenses.perpetual)).deactivated_at?.toISOString(), '2026-07-01T00:00:00.000Z');

    await write(licenses.suspendedWithEvent, { status: 'active' });
    assert.deepEqual(await endOf(licenses.suspendedWithEvent), { deactivated_at: null, ended_at: null });

    await write(licenses.expiring, { expires: '2028-01-01T00:00:00.000Z' });
    assert.equal((await endOf(licenses.expiring)).ended_at?.toISOString(), '2028-01-01T00:00:00.000Z');
  });
});
