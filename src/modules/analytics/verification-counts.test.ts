import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type KyselyPlugin, sql } from 'kysely';
import { type Db, openDatabase } from '../../platform/db/database.js';
import { classifyDriverError } from '../../platform/db/errors.js';
import { createLog } from '../../platform/log.js';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { testClock } from '../../testing/test-clock.js';
import { createVerificationCounter } from './verification-counts.js';

/**
 * Verification counts: tallied in memory on the verify path, added to the database by a flush.
 * The server has a database of its own, so the platform-wide figures are exact, and a flush
 * interval of an hour, so only the flushes a test asks for (or stopping) write.
 */
const NOW = '2026-05-20T10:00:00.000Z';
const TODAY = '2026-05-20T00:00:00.000Z';
const NEVER = '3600000';
let server: TestServer;
const clock = testClock(NOW);
const logLines: string[] = [];
let first: SellerWithApp;
let second: SellerWithApp;
const keys = { firstValid: '', firstRevoked: '', secondValid: '', secondSuspended: '', secondBound: '' };

before(async () => {
  server = await startTestServer(
    { VERIFICATION_FLUSH_MS: NEVER, LOG_LEVEL: 'info' },
    { clock, ownDatabase: true, logLines },
  );
  first = await sellerWithApp(server);
  second = await sellerWithApp(server);
  const token = (seller: SellerWithApp) => ({ token: seller.token });
  keys.firstValid = (await issueLicense(server, first)).key;
  const revoked = await issueLicense(server, first);
  (
    await server.api.post(`/apps/${first.appId}/licenses/${revoked.id}/revoke`, undefined, token(first))
  ).expect(200);
  keys.firstRevoked = revoked.key;
  keys.secondValid = (await issueLicense(server, second)).key;
  const suspended = await issueLicense(server, second);
  (
    await server.api.post(`/apps/${second.appId}/licenses/${suspended.id}/suspend`, undefined, token(second))
  ).expect(200);
  keys.secondSuspended = suspended.key;
  keys.secondBound = (await issueLicense(server, second, { maxDevices: 1 })).key;
});
after(() => server.stop());

const counter = () => server.service.modules.verificationCounts;

async function verify(key: string, valid: boolean, times = 1) {
  for (let i = 0; i < times; i++) {
    const body = (await server.api.post('/licenses/verify', { key })).expect(200).body;
    assert.equal(body.valid, valid, `${key}: ${JSON.stringify(body)}`);
  }
}

/** Today's verifications, platform-wide, as the admin analytics answer them. */
async function todayFigures() {
  const token = await server.adminToken();
  const series = (await server.api.get(`/analytics/licenses?from=${TODAY}`, { token })).expect(200).body;
  assert.equal(series.points.length, 1);
  assert.deepEqual(series.points[0].verifications, series.verifications);
  const stats = (await server.api.get('/analytics/stats', { token })).expect(200).body;
  assert.deepEqual(stats.licenses.verificationsLast30Days, series.verifications);
  return series.verifications as { valid: number; invalid: number };
}

/** The stored counts of one app (today is the only day counted here). */
async function stored(db: Db, appId: string) {
  const { rows } = await sql<{ day: string; valid: number; invalid: number }>`
    select day::text as day, valid, invalid from license_verification_counts where app_id = ${appId}
  `.execute(db);
  return rows;
}

const today = (valid: number, invalid: number) => [{ day: '2026-05-20', valid, invalid }];

describe('counting license verifications', () => {
  test('counts the verifications that found their license, per app and outcome, once flushed', async () => {
    await verify(keys.firstValid, true, 3);
    await verify(keys.firstRevoked, false, 2);
    await verify(keys.secondValid, true);
    await verify(keys.secondSuspended, false);
    // A license with a device limit: verifying without a hwuid, and a device never bound.
    await verify(keys.secondBound, false);
    const unbound = (
      await server.api.post('/licenses/validate-hardware', { key: keys.secondBound, hwuid: 'pc-1' })
    ).expect(200).body;
    assert.equal(unbound.code, 'device_not_bound');
    // Keys that match no license have no app to count for.
    await verify('NOPE-NOPE-NOPE-NOPE', false, 2);

    assert.deepEqual(await todayFigures(), { valid: 0, invalid: 0 }, 'nothing is written before a flush');
    assert.equal(await counter().flush(), true);
    assert.deepEqual(await todayFigures(), { valid: 4, invalid: 5 });
    assert.deepEqual(await stored(server.db, first.appId), today(3, 2));
    assert.deepEqual(await stored(server.db, second.appId), today(1, 3));
    assert.equal(await counter().flush(), true, 'a flush with nothing counted writes nothing');
    assert.deepEqual(await todayFigures(), { valid: 4, invalid: 5 });
  });

  test('a second flush adds to the day’s counts instead of replacing them', async () => {
    await verify(keys.firstValid, true, 2);
    await verify(keys.secondSuspended, false);
    assert.equal(await counter().flush(), true);
    assert.deepEqual(await stored(server.db, first.appId), today(5, 2));
    assert.deepEqual(await stored(server.db, second.appId), today(1, 4));
    assert.deepEqual(await todayFigures(), { valid: 6, invalid: 6 });
  });

  test('counts made while a flush writes are kept for the next flush', async () => {
    await verify(keys.firstValid, true);
    const writing = counter().flush();
    // Counted after the flush took its copy, before its write returned: one for an app in that
    // copy, one for an app that was not.
    counter().count(first.appId, true);
    counter().count(second.appId, false);
    assert.equal(await writing, true);
    assert.deepEqual(await stored(server.db, first.appId), today(6, 2));
    assert.deepEqual(await stored(server.db, second.appId), today(1, 4));

    assert.equal(await counter().flush(), true);
    assert.deepEqual(await stored(server.db, first.appId), today(7, 2));
    assert.deepEqual(await stored(server.db, second.appId), today(1, 5));
  });

  test('flushes asked during a write share the next write, which takes what the first left', async () => {
    counter().count(first.appId, true);
    const writing = counter().flush();
    counter().count(first.appId, false);
    const next = counter().flush();
    assert.equal(counter().flush(), next);
    assert.deepEqual(await Promise.all([writing, next]), [true, true]);
    assert.deepEqual(await stored(server.db, first.appId), today(8, 3));
  });

  test('a flush the database refuses keeps every count for the next one', async () => {
    // A real refusal from the database: adding to a count already at bigint's maximum overflows.
    await sql`update license_verification_counts set valid = 9223372036854775807
      where app_id = ${first.appId}`.execute(server.db);
    await verify(keys.firstValid, true);
    await verify(keys.secondValid, true);
    const logged = (msg: string) => logLines.filter((line) => JSON.parse(line).msg === msg).length;
    assert.equal(await counter().flush(), false);
    assert.equal(logged('license.verify.count_flush_failed'), 1, 'the failure is logged');
    // Flushes every few seconds through a long outage log it again once a minute, not each time.
    assert.equal(await counter().flush(), false);
    assert.equal(logged('license.verify.count_flush_failed'), 1);
    assert.deepEqual(await stored(server.db, second.appId), today(1, 5), 'the statement wrote nothing');

    await sql`update license_verification_counts set valid = 8 where app_id = ${first.appId}`.execute(
      server.db,
    );
    assert.equal(await counter().flush(), true);
    assert.equal(logged('license.verify.count_flush_recovered'), 1, 'the end of the failures is logged');
    assert.deepEqual(await stored(server.db, first.appId), today(9, 3));
    assert.deepEqual(await stored(server.db, second.appId), today(2, 5));
  });
});

describe('through a database outage', () => {
  test('flushes while the database is away keep every count, and the first flush after it writes them all', async () => {
    // The server's database, whose statements fail before they are sent, as a database gone
    // away makes them fail, while `away`.
    let away = false;
    const plugin: KyselyPlugin = {
      transformQuery: (args) => {
        if (away)
          throw classifyDriverError(
            Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
          );
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const clock = testClock(NOW);
    const counter = createVerificationCounter({
      db: server.db.withPlugin(plugin),
      clock,
      log: createLog(server.config),
    });
    const rowsBefore = await stored(server.db, second.appId);
    const [before] = rowsBefore;
    away = true;
    counter.count(second.appId, true);
    assert.equal(await counter.flush(), false);
    counter.count(second.appId, true);
    counter.count(second.appId, false);
    assert.equal(await counter.flush(), false);
    assert.deepEqual(await stored(server.db, second.appId), rowsBefore, 'nothing written meanwhile');
    away = false;
    assert.equal(await counter.flush(), true);
    assert.deepEqual(
      await stored(server.db, second.appId),
      today((before?.valid ?? 0) + 2, (before?.invalid ?? 0) + 1),
    );
    assert.equal(await counter.flush(), true);
    assert.deepEqual(
      await stored(server.db, second.appId),
      today((before?.valid ?? 0) + 2, (before?.invalid ?? 0) + 1),
      'written once',
    );
  });
});

describe('a license’s last verification', () => {
  /** The license's lastVerifiedAt as the seller's API answers it. */
  async function lastVerifiedAt(seller: SellerWithApp, licenseId: string): Promise<string | null> {
    const path = `/apps/${seller.appId}/licenses/${licenseId}`;
    return (await server.api.get(path, { token: seller.token })).expect(200).body.lastVerifiedAt;
  }

  test('is written at the first flush after it, then at most once a minute', async () => {
    const license = await issueLicense(server, first);
    const firstAt = clock.now().toISOString();
    await verify(license.key, true);
    assert.equal(await counter().flush(), true);
    assert.equal(await lastVerifiedAt(first, license.id), firstAt);

    clock.advance(10_000);
    const laterAt = clock.now().toISOString();
    await verify(license.key, true);
    assert.equal(await counter().flush(), true);
    assert.equal(await lastVerifiedAt(first, license.id), firstAt, 'within the minute: held back');
    clock.advance(50_000);
    assert.equal(await counter().flush(), true);
    assert.equal(await lastVerifiedAt(first, license.id), laterAt, 'the minute over: written');
  });
});

describe('writing the counts in the background', () => {
  test('a node writes its counts on a timer even when it runs no jobs', async () => {
    const node = await startTestServer({ VERIFICATION_FLUSH_MS: '100', JOBS: 'off' }, { ownDatabase: true });
    try {
      const seller = await sellerWithApp(node);
      const license = await issueLicense(node, seller);
      for (let i = 0; i < 2; i++) {
        (await node.api.post('/licenses/verify', { key: license.key })).expect(200);
      }
      // Waits for the event, not for a time: the timer writes on its own, no flush is asked.
      let rows = await stored(node.db, seller.appId);
      for (let polls = 0; rows[0]?.valid !== 2 && polls < 500; polls++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        rows = await stored(node.db, seller.appId);
      }
      assert.deepEqual(
        rows.map((row) => [row.valid, row.invalid]),
        [[2, 0]],
      );
    } finally {
      await node.stop();
    }
  });

  test('stopping a node writes the counts, last verifications and timeline entries it held, before the database closes', async () => {
    // The embedded database on disk (or a PostgreSQL database of its own) outlives the node.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verification-counts-'));
    const nodeClock = testClock(NOW);
    const node = await startTestServer(
      { VERIFICATION_FLUSH_MS: NEVER, DATA_DIR: dataDir },
      { ownDatabase: true, clock: nodeClock },
    );
    try {
      const seller = await sellerWithApp(node);
      const valid = await issueLicense(node, seller);
      const seen = await issueLicense(node, seller);
      (await node.api.post('/licenses/verify', { key: valid.key })).expect(200);
      (await node.api.post('/licenses/verify', { key: valid.key })).expect(200);
      assert.deepEqual(await stored(node.db, seller.appId), [], 'nothing flushed while running');
      // Written once; its next verification and timeline entry are held back a minute.
      (await node.api.post('/licenses/verify', { key: seen.key, hwuid: 'pc-1' })).expect(200);
      assert.equal(await node.service.modules.verificationCounts.flush(), true);
      assert.equal(await node.service.modules.timelineJournal.flush(), true);
      nodeClock.advance(5_000);
      (await node.api.post('/licenses/verify', { key: seen.key, hwuid: 'pc-1' })).expect(200);
      assert.equal(await node.service.modules.verificationCounts.flush(), true);
      assert.equal(await node.service.modules.timelineJournal.flush(), true);
      await node.service.stop();

      const reopened = await openDatabase(node.config);
      try {
        const rows = await stored(reopened.db, seller.appId);
        assert.deepEqual(
          rows.map((row) => [row.valid, row.invalid]),
          [[4, 0]],
        );
        const { rows: license } = await sql<{ at: Date }>`
          select last_verified_at as at from licenses where id = ${seen.id}
        `.execute(reopened.db);
        assert.equal(license[0]?.at.toISOString(), nodeClock.now().toISOString(), 'the held-back one');
        const { rows: entries } = await sql<{ occurred_at: Date }>`
          select occurred_at from license_events where license_id = ${seen.id} and type = 'verification'
          order by occurred_at
        `.execute(reopened.db);
        assert.deepEqual(
          entries.map((entry) => entry.occurred_at.toISOString()),
          [new Date(nodeClock.now().getTime() - 5_000).toISOString(), nodeClock.now().toISOString()],
        );
      } finally {
        await reopened.close();
      }
    } finally {
      await node.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
