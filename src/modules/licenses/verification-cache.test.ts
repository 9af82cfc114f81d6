import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KyselyPlugin } from 'kysely';
import { sql } from 'kysely';
import { systemClock } from '../../platform/clock.js';
import { classifyDriverError, isDatabaseUnavailable } from '../../platform/db/errors.js';
import { LISTENER_APPLICATION_NAME } from '../../platform/db/notifications.js';
import { createLog } from '../../platform/log.js';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { scratchDatabase } from '../../testing/scratch-database.js';
import { createTokenDenylist } from '../license-tokens/index.js';
import { createVerification } from './verification.js';
import { createVerificationCache } from './verification-cache.js';

/**
 * Node A changes, node B answers. On PostgreSQL they are two servers over one database; on
 * PGlite (one node per store) both are the same server, which invalidates in process.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
const twoNodes = !onPostgres && 'needs DATABASE_URL (two nodes, one database)';
/** The interface promises every node learns of a change within a second. */
const WITHIN_MS = 1_000;

let nodeA: TestServer;
let nodeB: TestServer;
let database: Awaited<ReturnType<typeof scratchDatabase>>;
before(async () => {
  // A database of their own: this file ends listening connections, and must reach no other
  // file's servers (one closed mid-reconnect used to hold its process open).
  database = await scratchDatabase();
  const overrides: Record<string, string> = database.url ? { DATABASE_URL: database.url } : {};
  nodeA = await startTestServer(overrides);
  nodeB = onPostgres ? await startTestServer(overrides) : nodeA;
});
after(async () => {
  await Promise.all([nodeA.stop(), nodeB === nodeA ? null : nodeB.stop()]);
  await database.drop();
});

async function until<T>(what: string, attempt: () => Promise<T>, done: (value: T) => boolean, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt();
    if (done(value)) return value;
    assert.ok(Date.now() < deadline, `${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await sleep(20);
  }
}

const verify = async (node: TestServer, body: Record<string, unknown>) =>
  (await node.api.post('/licenses/verify', body)).expect(200).body;

/** Verifies on a node until its cache (started by the first verify) listens and holds the license. */
async function cachedOn(node: TestServer, body: Record<string, unknown>) {
  await until(
    'the cache listening',
    async () => (await verify(node, body)).valid && node.service.modules.verificationCache.listening,
    Boolean,
    10_000,
  );
  assert.equal((await verify(node, body)).valid, true);
}

/** Node B's answer for `body` shows `expected` within the promised second. */
async function seenOnB(body: Record<string, unknown>, field: 'code' | 'verificationType', expected: unknown) {
  const result = await until(
    `node B's ${field}`,
    () => verify(nodeB, body),
    (r) => r[field] === expected,
    WITHIN_MS,
  );
  if (field === 'code') assert.equal(result.valid, expected === undefined);
}

/**
 * A database handle that counts statements, can hold a read's answer back (`gate`), as a slow
 * read would be, so a change can land while the read is in flight, and can fail every statement
 * (`failure`), as a database gone away does.
 */
function observedDb(db: TestServer['db']) {
  // `queries`: every statement but the cache's listening probe (`pg_notify`, which a probe sent
  // while the node's listener reconnected may complete at any moment); `lookups`: the reads of
  // verification state only.
  const seen = {
    queries: 0,
    lookups: 0,
    gate: null as Promise<void> | null,
    held: false,
    failure: null as Error | null,
  };
  // Counted on results: statements compiled once (prepared.ts) are not transformed again.
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      if (seen.failure) throw seen.failure;
      if (!args.result.rows.some((row) => typeof row === 'object' && row !== null && 'pg_notify' in row))
        seen.queries++;
      if (args.result.rows.some((row) => typeof row === 'object' && row !== null && 'device_bound' in row)) {
        seen.lookups++;
      }
      if (seen.gate) {
        seen.held = true;
        await seen.gate;
      }
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), seen };
}

/** What the driver throws when the server is away, as the database adapter classifies it. */
const unreachable = () =>
  classifyDriverError(
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
  ) as Error;

/** The node's default: verifies answered from memory for 5 minutes of an outage. */
const GRACE_MS = 300_000;

/** A cache of its own over `db`, listening like the node's. */
async function listeningCache(
  db: TestServer['db'],
  options: Partial<
    Pick<
      Parameters<typeof createVerificationCache>[0],
      'now' | 'refreshEveryMs' | 'outageGraceMs' | 'notifications'
    >
  > = {},
) {
  const cache = createVerificationCache({
    db,
    log: createLog(nodeA.config),
    notifications: nodeA.service.modules.notifications,
    outageGraceMs: GRACE_MS,
    ...options,
  });
  await until(
    'the cache listening',
    async () => {
      await cache.find('NOT-A-KEY', null);
      return cache.listening;
    },
    Boolean,
    10_000,
  );
  return cache;
}

/** Verification over `db` and `cache`, tokens off; `counted` lists each outcome it counted. */
function countedVerification(db: TestServer['db'], cache: Parameters<typeof createVerification>[0]['cache']) {
  const counted: boolean[] = [];
  const verification = createVerification({
    db,
    clock: systemClock,
    log: createLog(nodeA.config),
    signer: null,
    denylist: createTokenDenylist({ db, clock: systemClock }),
    jwksUri: 'unused',
    counts: { count: (_appId, valid) => counted.push(valid) },
    cache,
    timeline: { record: () => {} },
  });
  return { verification, counted };
}

describe('what the cache holds', () => {
  test('a repeat verify of a known key and device reads nothing from the database, and is counted', async () => {
    const seller = await sellerWithApp(nodeA);
    const license = await issueLicense(nodeA, seller, { maxDevices: 2 });
    const { db, seen } = observedDb(nodeA.db);
    const { verification, counted } = countedVerification(db, await listeningCache(db));

    const first = await verification.verify({ key: license.key, hwuid: 'device-1', appId: seller.appId });
    assert.equal(first.valid, true);
    assert.ok(seen.queries > 0, 'the first verify reads and binds');
    seen.queries = 0;
    const answers = [
      await verification.verify({ key: license.key, hwuid: 'device-1', appId: seller.appId }),
      await verification.verify({ key: license.key.toLowerCase(), hwuid: 'device-1' }),
      await verification.verify({ key: license.key }),
      await verification.validateHardware({ key: license.key, hwuid: 'device-1' }),
      await verification.verify({
        key: license.key,
        hwuid: 'device-1',
        appId: '00000000-0000-4000-8000-000000000000',
      }),
    ];
    assert.equal(seen.queries, 0, 'answered from the cache');
    assert.deepEqual(answers[0], first, 'from memory, the same answer as read from the database');
    assert.deepEqual(
      answers.map((a) => a.code ?? 'valid'),
      ['valid', 'valid', 'hwuid_required', 'valid', 'license_not_found'],
    );
    assert.deepEqual(counted, [true, true, true, false, true], 'cached answers are counted as any other');

    assert.equal((await verification.verify({ key: license.key, hwuid: 'device-2' })).valid, true);
    assert.ok(seen.queries > 0, 'a device not seen bound is asked about in the database');
  });

  test('misses asked for together are read in one statement, each answered with its own license', async () => {
    const seller = await sellerWithApp(nodeA);
    const [first, second] = [
      await issueLicense(nodeA, seller, { maxDevices: 2 }),
      await issueLicense(nodeA, seller, { maxDevices: 2 }),
    ];
    await verify(nodeA, { key: first.key, hwuid: 'pc' });
    const { db, seen } = observedDb(nodeA.db);
    const cache = await listeningCache(db);
    seen.lookups = 0;
    const answers = await Promise.all([
      cache.find(second.key, null),
      cache.find(first.key, 'laptop'),
      cache.find('NOPE-NOPE-NOPE-NOPE', 'pc'),
      cache.find(first.key, 'pc'),
      cache.find(second.key, 'pc'),
    ]);
    assert.equal(seen.lookups, 1, 'one read');
    assert.deepEqual(
      answers.map((found) => found && [found.state.id, found.deviceBound]),
      [[second.id, false], [first.id, false], null, [first.id, true], [second.id, false]],
    );
  });

  test('a read that began before a change is not remembered after it', async () => {
    const { db, seen } = observedDb(nodeA.db);
    const cache = await listeningCache(db);
    const seller = await sellerWithApp(nodeA);
    const cases: [string, (license: { id: string }) => void, boolean][] = [
      ['nothing changed meanwhile', () => {}, true],
      ['the license changed meanwhile', (license) => cache.forgetLicense(license.id), false],
      ['another license changed meanwhile', () => cache.forgetLicense(crypto.randomUUID()), true],
      ['its seller changed meanwhile', () => cache.forgetSeller(seller.user.id), false],
      ['another seller changed meanwhile', () => cache.forgetSeller(crypto.randomUUID()), true],
      [
        'more changed meanwhile than the cache keeps track of',
        () => {
          for (let i = 0; i < 2_000; i++) cache.forgetLicense(crypto.randomUUID());
        },
        false,
      ],
    ];
    for (const [name, meanwhile, remembered] of cases) {
      const license = await issueLicense(nodeA, seller);
      let open = () => {};
      seen.gate = new Promise((resolve) => {
        open = resolve;
      });
      seen.held = false;
      const reading = cache.find(license.key, null);
      await until('the read held', async () => seen.held, Boolean, 10_000);
      meanwhile(license);
      seen.gate = null;
      open();
      assert.equal((await reading)?.state.id, license.id);
      seen.queries = 0;
      await cache.find(license.key, null);
      assert.equal(seen.queries === 0, remembered, name);
    }
  });
});

describe(`every node learns of a change (${onPostgres ? 'two nodes over PostgreSQL' : 'one PGlite node, in process'})`, () => {
  let seller: SellerWithApp;
  before(async () => {
    seller = await sellerWithApp(nodeA);
  });
  const post = (path: string) => nodeA.api.post(path, {}, { token: seller.token });

  test('a suspension, a reinstatement and a revocation', async () => {
    const license = await issueLicense(nodeA, seller);
    const body = { key: license.key, appId: seller.appId };
    await cachedOn(nodeB, body);
    (await post(`/apps/${seller.appId}/licenses/${license.id}/suspend`)).expect(200);
    await seenOnB(body, 'code', 'license_suspended');
    (await post(`/apps/${seller.appId}/licenses/${license.id}/reinstate`)).expect(200);
    await seenOnB(body, 'code', undefined);
    (await post(`/apps/${seller.appId}/licenses/${license.id}/revoke`)).expect(200);
    await seenOnB(body, 'code', 'license_revoked');
  });

  test('a released device, a device limit and an e-mail', async () => {
    const license = await issueLicense(nodeA, seller);
    const body = { key: license.key, hwuid: 'device-1', appId: seller.appId };
    await cachedOn(nodeB, body);
    const hw = await nodeB.api.post('/licenses/validate-hardware', body);
    assert.equal(hw.expect(200).body.valid, true);
    const devices = `/apps/${seller.appId}/licenses/${license.id}/devices`;
    (await nodeA.api.delete(`${devices}/device-1`, { token: seller.token })).expect(204);
    await until(
      'validate-hardware on node B',
      async () => (await nodeB.api.post('/licenses/validate-hardware', body)).expect(200).body,
      (r) => r.code === 'device_not_bound',
      WITHIN_MS,
    );

    const noDevice = { key: license.key, appId: seller.appId };
    await cachedOn(nodeB, noDevice);
    const patch = (changes: Record<string, unknown>) =>
      nodeA.api.patch(`/apps/${seller.appId}/licenses/${license.id}`, changes, { token: seller.token });
    (await patch({ maxDevices: 3 })).expect(200);
    await seenOnB(noDevice, 'code', 'hwuid_required');
    (await patch({ maxDevices: null, email: 'new@example.com' })).expect(200);
    const refreshed = await until(
      'the new e-mail',
      () => verify(nodeB, noDevice),
      (r) => r.email === 'new@example.com',
      WITHIN_MS,
    );
    assert.equal(refreshed.valid, true);
  });

  test('a seller’s tier change and deletion', async () => {
    const own = await sellerWithApp(nodeA);
    const license = await issueLicense(nodeA, own);
    const body = { key: license.key, appId: own.appId };
    await cachedOn(nodeB, body);
    assert.equal((await verify(nodeB, body)).verificationType, 'basic');
    const admin = { token: await nodeA.adminToken() };
    (await nodeA.api.patch(`/admin/users/${own.user.id}`, { tier: 'business' }, admin)).expect(200);
    await seenOnB(body, 'verificationType', 'advanced');
    (await nodeA.api.delete(`/admin/users/${own.user.id}`, admin)).expect(204);
    await seenOnB(body, 'code', 'license_not_found');
  });

  test('a product’s features and a license’s own', async () => {
    const product = (
      await nodeA.api.post(
        '/products',
        { appId: seller.appId, name: 'Suite', price: 10, currency: 'USD', features: ['export'] },
        { token: seller.token },
      )
    ).expect(201).body;
    const license = await issueLicense(nodeA, seller, { productId: product.id });
    const body = { key: license.key, appId: seller.appId };
    await cachedOn(nodeB, body);
    assert.deepEqual((await verify(nodeB, body)).features, ['export']);
    const features = (expected: string[]) =>
      until(
        'node B’s features',
        () => verify(nodeB, body),
        (r) => JSON.stringify(r.features) === JSON.stringify(expected),
        WITHIN_MS,
      );
    (
      await nodeA.api.patch(
        `/products/${product.id}`,
        { features: ['export', 'sync'] },
        { token: seller.token },
      )
    ).expect(200);
    await features(['export', 'sync']);
    (
      await nodeA.api.patch(
        `/apps/${seller.appId}/licenses/${license.id}`,
        { features: ['sync'] },
        { token: seller.token },
      )
    ).expect(200);
    await features(['sync']);
  });

  test('once node B answers suspended it never answers valid again, however many verifies were in flight', async () => {
    const license = await issueLicense(nodeA, seller);
    const body = { key: license.key, appId: seller.appId };
    await cachedOn(nodeB, body);
    const seen: boolean[][] = [];
    let suspendedAt = 0;
    const hammer = async (lane: boolean[]) => {
      while (suspendedAt === 0 || Date.now() < suspendedAt + WITHIN_MS)
        lane.push((await verify(nodeB, body)).valid);
    };
    const lanes = Array.from({ length: 8 }, () => {
      const lane: boolean[] = [];
      seen.push(lane);
      return hammer(lane);
    });
    await sleep(50);
    (await post(`/apps/${seller.appId}/licenses/${license.id}/suspend`)).expect(200);
    suspendedAt = Date.now();
    await Promise.all(lanes);
    for (const lane of seen) {
      const firstInvalid = lane.indexOf(false);
      assert.ok(firstInvalid >= 0, 'every lane saw the suspension within the second');
      assert.ok(!lane.slice(firstInvalid).includes(true), 'no valid answer after an invalid one');
    }
    assert.equal((await verify(nodeB, body)).code, 'license_suspended');
  });
});

describe('a lost listening connection', { skip: twoNodes }, () => {
  test('flushes the cache when it comes back, and later changes are still heard', async () => {
    const seller = await sellerWithApp(nodeA);
    const license = await issueLicense(nodeA, seller);
    const body = { key: license.key, appId: seller.appId };
    await cachedOn(nodeB, body);
    let gaps = 0;
    nodeB.service.modules.notifications.onGap(() => gaps++);
    // A change nobody announced, as if its message were lost: node B still holds the old state.
    await sql`update licenses set status = 'suspended' where id = ${license.id}`.execute(nodeA.db);
    assert.equal((await verify(nodeB, body)).valid, true, 'answered from the cache');
    // Found by name: its last statement may be a probe by now, not its LISTEN.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name = ${LISTENER_APPLICATION_NAME}`.execute(
      nodeA.db,
    );
    await until(
      'the gap report',
      async () => gaps,
      (n) => n > 0,
      10_000,
    );
    assert.equal((await verify(nodeB, body)).code, 'license_suspended', 'the flush dropped the stale entry');
    (
      await nodeA.api.post(
        `/apps/${seller.appId}/licenses/${license.id}/reinstate`,
        {},
        { token: seller.token },
      )
    ).expect(200);
    await cachedOn(nodeB, body);
    (
      await nodeA.api.post(`/apps/${seller.appId}/licenses/${license.id}/revoke`, {}, { token: seller.token })
    ).expect(200);
    await seenOnB(body, 'code', 'license_revoked');
  });
});

describe('entries in use are read again before they expire', () => {
  const TTL_MS = 120_000;

  /** A cache of its own on a clock moved by hand, whose refreshes the test runs itself. */
  async function cacheOnClock(db: TestServer['db']) {
    const clock = { at: 0 };
    const cache = await listeningCache(db, { now: () => clock.at, refreshEveryMs: 0 });
    return { cache, clock };
  }

  test('what is in use is read again in one statement and answers from memory; what is not is let go after 10 minutes', async () => {
    const seller = await sellerWithApp(nodeA);
    const [inUse, idle] = [
      await issueLicense(nodeA, seller, { maxDevices: 2 }),
      await issueLicense(nodeA, seller),
    ];
    await verify(nodeA, { key: inUse.key, hwuid: 'pc' });
    const { db, seen } = observedDb(nodeA.db);
    const { cache, clock } = await cacheOnClock(db);
    assert.equal((await cache.find(inUse.key, 'pc'))?.deviceBound, true);
    await cache.find(idle.key, null);

    const refreshed: number[] = [];
    // Each pass 10 s before the entries expire: they are due, all of them, at once.
    for (clock.at = 110_000; clock.at <= 800_000; clock.at += 110_000) {
      const found = await cache.find(inUse.key, 'pc');
      assert.deepEqual(
        [found?.deviceBound, found?.read],
        [true, null],
        `answered from memory at ${clock.at} ms`,
      );
      seen.queries = 0;
      refreshed.push(await cache.refreshDue());
      if (refreshed.at(-1)) assert.equal(seen.queries, 2, 'one read for the licenses, one for their devices');
      assert.equal(await cache.refreshDue(), 0, 'nothing is due twice');
    }
    // The idle license was last used at 0: kept warm up to 10 minutes, then left to expire.
    assert.deepEqual(refreshed, [2, 2, 2, 2, 2, 1, 1]);
    assert.notEqual((await cache.find(idle.key, null))?.read, null, 'read again as a new one');
  });

  test('entries read together are read again spread out, soonest first, each before it expires', async () => {
    const seller = await sellerWithApp(nodeA);
    const licenses = [];
    for (let i = 0; i < 12; i++) licenses.push(await issueLicense(nodeA, seller));
    const { cache, clock } = await cacheOnClock(nodeA.db);
    // Read together, 2 ms apart: they expire between TTL_MS and TTL_MS + 22.
    for (const license of licenses) {
      await cache.find(license.key, null);
      clock.at += 2;
    }
    // Passes every 5 s from 30 s before they expire, as the node's timer runs them.
    const counts: number[] = [];
    for (clock.at = TTL_MS - 30_000 + 22; clock.at <= TTL_MS; clock.at += 5_000) {
      counts.push(await cache.refreshDue());
      for (const license of licenses) {
        const found = await cache.find(license.key, null);
        assert.equal(found?.read, null, `answered from memory at ${clock.at} ms`);
      }
    }
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      12,
      `each read again once, before it expired (${counts})`,
    );
    assert.ok(Math.max(...counts) <= 4, `spread over the passes, not in one (${counts})`);
  });

  test('the safety net holds: an edit made by hand in SQL, announced to no one, is read at the refresh', async () => {
    const seller = await sellerWithApp(nodeA);
    const license = await issueLicense(nodeA, seller, { maxDevices: 2 });
    await verify(nodeA, { key: license.key, hwuid: 'pc' });
    const { cache, clock } = await cacheOnClock(nodeA.db);
    await cache.find(license.key, 'pc');
    clock.at = TTL_MS - 20_000;
    await cache.find(license.key, 'pc');

    await sql`update licenses set status = 'suspended' where id = ${license.id}`.execute(nodeA.db);
    await sql`delete from license_devices where license_id = ${license.id}`.execute(nodeA.db);
    assert.equal((await cache.find(license.key, 'pc'))?.state.status, 'active', 'not announced: still held');
    assert.equal(await cache.refreshDue(), 1);
    const found = await cache.find(license.key, null);
    assert.deepEqual([found?.state.status, found?.read], ['suspended', null]);
    const device = await cache.find(license.key, 'pc');
    assert.deepEqual(
      [device?.deviceBound, device?.read === null],
      [false, false],
      'a device gone is asked about',
    );
  });

  test('a key changed by hand does not stay valid through the refreshes', async () => {
    const seller = await sellerWithApp(nodeA);
    const license = await issueLicense(nodeA, seller);
    const { cache, clock } = await cacheOnClock(nodeA.db);
    await cache.find(license.key, null);
    clock.at = TTL_MS - 20_000;
    assert.equal((await cache.find(license.key, null))?.read, null, 'held');

    const replacement = `${license.key}-REPLACED`;
    await sql`update licenses set key = ${replacement} where id = ${license.id}`.execute(nodeA.db);
    assert.equal(await cache.refreshDue(), 0);
    assert.equal(await cache.find(license.key, null), null, 'the old key is unknown');
    assert.equal((await cache.find(replacement, null))?.state.id, license.id);
  });

  test('a refresh does not undo a change heard while it read, and forgets a license whose seller is gone', async () => {
    const seller = await sellerWithApp(nodeA);
    const [changed, kept] = [await issueLicense(nodeA, seller), await issueLicense(nodeA, seller)];
    const { db, seen } = observedDb(nodeA.db);
    const { cache, clock } = await cacheOnClock(db);
    for (const license of [changed, kept]) await cache.find(license.key, null);
    clock.at = TTL_MS - 10_000;
    for (const license of [changed, kept]) await cache.find(license.key, null);

    let open = () => {};
    seen.gate = new Promise((resolve) => {
      open = resolve;
    });
    seen.held = false;
    const refreshing = cache.refreshDue();
    await until('the refresh held', async () => seen.held, Boolean, 10_000);
    cache.forgetLicense(changed.id);
    seen.gate = null;
    open();
    assert.equal(await refreshing, 1, 'only the license nothing was heard about');
    assert.notEqual((await cache.find(changed.key, null))?.read, null, 'the changed license is read again');

    clock.at = 2 * TTL_MS - 20_000;
    await cache.find(kept.key, null);
    await sql`update users set deleted_at = now() where id = ${seller.user.id}`.execute(nodeA.db);
    assert.equal(await cache.refreshDue(), 0);
    seen.queries = 0;
    assert.equal(await cache.find(kept.key, null), null, 'a deleted seller’s license is not found');
    assert.ok(seen.queries > 0, 'asked of the database');
  });
});

describe('through a database outage', () => {
  const TTL_MS = 120_000;

  /**
   * The node's channel, with the loss of its listening connection and its return (the gap)
   * played by hand: messages are still heard, so the cache hears its own probe.
   */
  function handChannel() {
    const real = nodeA.service.modules.notifications;
    const lost: (() => void)[] = [];
    const gaps: (() => void)[] = [];
    return {
      notifications: {
        listen: (channel: string, handler: (payload: string) => void) => real.listen(channel, handler),
        onLost: (handler: () => void) => lost.push(handler),
        onGap: (handler: () => void) => gaps.push(handler),
      },
      lose: () => {
        for (const handler of lost) handler();
      },
      regain: () => {
        for (const handler of gaps) handler();
      },
    };
  }

  /** A license with device `pc` bound, and a cache of its own that has read both. */
  async function heldLicense(outageGraceMs = GRACE_MS) {
    const seller = await sellerWithApp(nodeA);
    const license = await issueLicense(nodeA, seller, { maxDevices: 2 });
    await verify(nodeA, { key: license.key, hwuid: 'pc' });
    const { db, seen } = observedDb(nodeA.db);
    const clock = { at: 0 };
    const channel = handChannel();
    const cache = await listeningCache(db, {
      now: () => clock.at,
      refreshEveryMs: 0,
      outageGraceMs,
      notifications: channel.notifications,
    });
    assert.equal((await cache.find(license.key, 'pc'))?.deviceBound, true);
    assert.equal((await cache.find(license.key, 'pc'))?.read, null, 'held');
    return { seller, license, db, seen, clock, channel, cache };
  }

  const fromMemory = (found: Awaited<ReturnType<ReturnType<typeof createVerificationCache>['find']>>) => [
    found?.state.status,
    found?.deviceBound,
    found?.read,
  ];

  test('a license it held answers from memory only when the database is away, for a device seen bound or none, within the grace', async () => {
    const { seller, license, seen, clock, channel, cache } = await heldLicense();
    const unread = await issueLicense(nodeA, seller);
    clock.at = 1_000;
    channel.lose();
    seen.lookups = 0;
    assert.notEqual(
      (await cache.find(license.key, 'pc'))?.read,
      null,
      'the channel lost, the database is asked',
    );
    assert.equal(seen.lookups, 1);

    seen.failure = unreachable();
    assert.deepEqual(fromMemory(await cache.find(license.key, 'pc')), ['active', true, null]);
    assert.deepEqual(fromMemory(await cache.find(license.key, null)), ['active', false, null]);
    for (const [key, hwuid, what] of [
      [license.key, 'laptop', 'a device not seen bound'],
      [unread.key, null, 'a license never read'],
    ] as const) {
      await assert.rejects(Promise.resolve(cache.find(key, hwuid)), isDatabaseUnavailable, what);
    }
    clock.at = 1_000 + GRACE_MS - 1;
    assert.deepEqual(fromMemory(await cache.find(license.key, 'pc')), ['active', true, null]);
    clock.at = 1_000 + GRACE_MS;
    await assert.rejects(
      Promise.resolve(cache.find(license.key, 'pc')),
      isDatabaseUnavailable,
      'past the grace',
    );
  });

  test('when the database answers, its answer wins, and is what memory says afterwards', async () => {
    const { license, seen, channel, cache } = await heldLicense();
    channel.lose();
    // Changes nobody hears of (the channel is down): the database's answer shows them.
    await sql`update licenses set status = 'suspended' where id = ${license.id}`.execute(nodeA.db);
    assert.deepEqual(
      [(await cache.find(license.key, null))?.state.status, seen.failure],
      ['suspended', null],
    );
    seen.failure = unreachable();
    assert.deepEqual(fromMemory(await cache.find(license.key, 'pc')), ['suspended', true, null]);

    seen.failure = null;
    await sql`delete from license_devices where license_id = ${license.id}`.execute(nodeA.db);
    assert.equal((await cache.find(license.key, 'pc'))?.deviceBound, false);
    seen.failure = unreachable();
    await assert.rejects(
      Promise.resolve(cache.find(license.key, 'pc')),
      isDatabaseUnavailable,
      'a device the database said is gone',
    );
  });

  test('a license changed before the outage is never answered from memory, nor anything once the channel is back', async () => {
    const { seller, license: changed, seen, channel, cache } = await heldLicense();
    const kept = await issueLicense(nodeA, seller);
    await cache.find(kept.key, null);
    // As the announcement of a revocation does, heard before the channel broke.
    cache.forgetLicense(changed.id);
    channel.lose();
    seen.failure = unreachable();
    await assert.rejects(Promise.resolve(cache.find(changed.key, null)), isDatabaseUnavailable);
    assert.equal((await cache.find(kept.key, null))?.state.id, kept.id);
    // The gap: what was missed meanwhile is unknown, so everything goes.
    channel.regain();
    await assert.rejects(Promise.resolve(cache.find(kept.key, null)), isDatabaseUnavailable);
  });

  test('the channel up, an entry past its deadline answers while the database is away, for the grace after it', async () => {
    const { license, seen, clock, cache } = await heldLicense();
    clock.at = TTL_MS;
    seen.failure = new Error('a failure that is not the database being away');
    await assert.rejects(Promise.resolve(cache.find(license.key, 'pc')), /not the database being away/);
    seen.failure = unreachable();
    assert.deepEqual(fromMemory(await cache.find(license.key, 'pc')), ['active', true, null]);
    clock.at = TTL_MS + GRACE_MS;
    await assert.rejects(Promise.resolve(cache.find(license.key, 'pc')), isDatabaseUnavailable);
    seen.failure = null;
    assert.notEqual((await cache.find(license.key, 'pc'))?.read, null, 'read again once it is back');
  });

  test('with no grace, nothing is answered from memory in an outage', async () => {
    const { license, seen, channel, cache } = await heldLicense(0);
    channel.lose();
    seen.failure = unreachable();
    await assert.rejects(Promise.resolve(cache.find(license.key, null)), isDatabaseUnavailable);
  });

  test('a verification in the outage is valid and counted; a new device and a floating license still need the database', async () => {
    const { seller, license, db, seen, channel, cache } = await heldLicense();
    const floating = await issueLicense(nodeA, seller, { floating: true, maxSeats: 1 });
    await cache.find(floating.key, null);
    const { verification, counted } = countedVerification(db, cache);
    channel.lose();
    seen.failure = unreachable();
    const answers = [
      await verification.verify({ key: license.key, hwuid: 'pc', appId: seller.appId }),
      await verification.validateHardware({ key: license.key, hwuid: 'pc' }),
      await verification.verify({ key: license.key }),
    ];
    assert.deepEqual(
      answers.map((a) => [a.valid, a.code ?? 'valid', a.hw_bound]),
      [
        [true, 'valid', true],
        [true, 'valid', true],
        [false, 'hwuid_required', false],
      ],
    );
    assert.deepEqual(counted, [true, true, false]);
    for (const call of [
      () => verification.verify({ key: license.key, hwuid: 'laptop' }),
      () => verification.verify({ key: floating.key, hwuid: 'pc' }),
      () => verification.checkout({ key: floating.key, hwuid: 'pc' }),
    ]) {
      await assert.rejects(Promise.resolve().then(call), isDatabaseUnavailable);
    }
  });
});
