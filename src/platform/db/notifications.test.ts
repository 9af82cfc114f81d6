import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { holdingProxy } from '../../testing/pg-proxy.js';
import { IN_MEMORY_DATA_DIR, parseConfig } from '../config.js';
import { createLog } from '../log.js';
import { type Database, openDatabase } from './database.js';
import { type Notifications, notify, openNotifications, type ProbeTimes } from './notifications.js';

const config = parseConfig({
  DATABASE_URL: process.env.DATABASE_URL,
  DATA_DIR: IN_MEMORY_DATA_DIR,
  LOG_LEVEL: 'silent',
});
let database: Database;
let notifications: Notifications;

before(async () => {
  database = await openDatabase(config);
  notifications = openNotifications(database.listenTarget, createLog(config));
});
after(async () => {
  await notifications.close();
  await database.close();
});

const noConnection = process.env.DATABASE_URL ? false : 'PGlite has no connection to lose';

async function until(condition: () => boolean, what: string) {
  for (let waited = 0; !condition(); waited += 20) {
    assert.ok(waited < 10_000, `gave up waiting for ${what}`);
    await sleep(20);
  }
}

describe(`notifications (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, () => {
  test('a notification sent in a transaction arrives once it commits, and never when it rolls back', async () => {
    const channel = `test_${Date.now()}`;
    const heard: string[] = [];
    await notifications.listen(channel, (payload) => heard.push(payload));
    await database.db
      .transaction()
      .execute(async (trx) => {
        await notify(trx, channel, 'rolled back');
        throw new Error('roll back');
      })
      .catch(() => {});
    await database.db.transaction().execute((trx) => notify(trx, channel, 'committed'));
    await until(() => heard.length > 0, 'the committed notification');
    // A later notification arrives too, so the rolled-back one would have had time to.
    await notify(database.db, channel, 'later');
    await until(() => heard.length > 1, 'the later notification');
    assert.deepEqual(heard, ['committed', 'later']);
  });

  test('a channel is listened to once listen() resolves: the very next notification is heard', async () => {
    await sql`select 1`.execute(database.db); // the sender's connection is open before the listener's
    const fresh = openNotifications(database.listenTarget, createLog(config));
    try {
      const channel = `test_first_${Date.now()}`;
      const heard: string[] = [];
      await fresh.listen(channel, (payload) => heard.push(payload));
      await notify(database.db, channel, 'first');
      await until(() => heard.length > 0, 'the first notification');
      assert.deepEqual(heard, ['first']);
    } finally {
      await fresh.close();
    }
  });

  test('a listener whose connection is killed reconnects, reports the gap and hears again', {
    skip: noConnection,
  }, async () => {
    const channel = `test_gap_${Date.now()}`;
    const heard: string[] = [];
    let gaps = 0;
    notifications.onGap(() => gaps++);
    await notifications.listen(channel, (payload) => heard.push(payload));
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where query ilike ${`listen "${channel}"%`} or query ilike 'listen "test_%'`.execute(database.db);
    await until(() => gaps > 0, 'the gap report');
    await notify(database.db, channel, 'after the gap');
    await until(() => heard.includes('after the gap'), 'a notification after reconnecting');
  });

  test('closed while it reconnects, a listener leaves no connection open', {
    skip: noConnection,
  }, async () => {
    // The proxy holds the new connection back, so close() is sure to run while the reconnect is
    // under way.
    const { proxy, node } = await listeningBehindProxy('test_close');
    try {
      assert.equal(proxy.open(), 1);
      proxy.hold();
      proxy.cutAll();
      await until(() => proxy.held() === 1, 'the reconnect attempt');
      const closing = node.close();
      proxy.release();
      await closing;
      // Kept, the connection that completed after close() would hold the process open for good.
      await until(() => proxy.open() === 0, 'the reconnected connection to end');
    } finally {
      await node.close();
      await proxy.close();
    }
  });

  test('a listener whose connection falls silent notices within its probe bound, reconnects and hears again', {
    skip: noConnection,
  }, async () => {
    const { proxy, node } = await listeningBehindProxy('test_silent', { everyMs: 100, timeoutMs: 300 });
    try {
      const channel = `test_silent_heard_${Date.now()}`;
      const heard: string[] = [];
      let lost = 0;
      let gaps = 0;
      node.onLost(() => lost++);
      node.onGap(() => gaps++);
      await node.listen(channel, (payload) => heard.push(payload));
      assert.equal(proxy.freezeListeners(), 1, 'the listening connection, and only it, falls silent');
      await notify(database.db, channel, 'unheard');
      // Without probes nothing would be noticed until TCP keepalive gave up, minutes later.
      await until(() => lost === 1, 'the silent connection to be given up');
      await until(() => gaps === 1, 'the reconnect and its gap report');
      assert.equal(heard.length, 0, 'nothing came through the silent connection');
      await notify(database.db, channel, 'after the gap');
      await until(() => heard.includes('after the gap'), 'a notification after reconnecting');
    } finally {
      await node.close();
      await proxy.close();
    }
  });

  test('closed while a server that stopped answering has its reconnect, a listener ends it', {
    skip: noConnection,
  }, async () => {
    const { proxy, node } = await listeningBehindProxy('test_frozen');
    try {
      // The reconnect gets its connection, but its LISTEN is never answered (no timeout covers it).
      proxy.swallowListen();
      proxy.cutAll();
      await until(() => proxy.swallowed() === 1, 'the unanswered LISTEN');
      const outcome = await Promise.race([
        node.close(),
        sleep(20_000, 'close() still waiting', { ref: false }),
      ]);
      assert.equal(outcome, undefined, 'close() returned');
      await until(() => proxy.open() === 0, 'the attempt to be ended');
    } finally {
      await proxy.close();
    }
  });
});

/** A listener of its own that reaches PostgreSQL through a proxy, listening to one channel. */
async function listeningBehindProxy(prefix: string, probe?: ProbeTimes) {
  const proxy = await holdingProxy(new URL(process.env.DATABASE_URL as string));
  const node = openNotifications({ kind: 'postgres', url: proxy.url }, createLog(config), probe);
  await node.listen(`${prefix}_${Date.now()}`, () => {});
  return { proxy, node };
}
