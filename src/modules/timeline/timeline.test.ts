import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createApiKey,
  createApp,
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { keptAddress } from './client-address.js';

/**
 * A license's timeline over HTTP: what the client's calls and the seller's changes leave in it,
 * and how it is paged. The server trusts one proxy hop, so a test says where a call came from
 * with X-Forwarded-For; it flushes only when a test asks (an hour apart otherwise), and has a
 * database of its own, so the retention purge sees only this file's entries.
 */
const NEVER = '3600000';
let server: TestServer;
let clock: TestClock;

before(async () => {
  clock = testClock('2026-05-20T10:00:00.000Z');
  server = await startTestServer(
    { VERIFICATION_FLUSH_MS: NEVER, TRUST_PROXY: '1', LICENSE_EVENTS_RETENTION_DAYS: '90' },
    { clock, ownDatabase: true },
  );
});
after(() => server.stop());

const flush = () => server.service.modules.timelineJournal.flush();

interface Entry {
  id: string;
  type: string;
  outcome: string | null;
  hwuid: string | null;
  clientAddress: string | null;
  appVersion: string | null;
  actor: { kind: string; id: string | null } | null;
  data: Record<string, unknown>;
  occurredAt: string;
  repeats: number;
  lastOccurredAt: string | null;
}

async function timeline(
  seller: { token: string; appId: string },
  licenseId: string,
  query = '',
): Promise<{ events: Entry[]; nextCursor: string | null }> {
  const path = `/apps/${seller.appId}/licenses/${licenseId}/events${query}`;
  return (await server.api.get(path, { token: seller.token })).expect(200).body;
}

async function verify(body: Record<string, unknown>, from: string, appVersion?: string) {
  const headers: Record<string, string> = { 'x-forwarded-for': from };
  if (appVersion) headers['x-app-version'] = appVersion;
  return (await server.api.post('/licenses/verify', body, { headers })).expect(200).body;
}

async function action(seller: SellerWithApp, licenseId: string, what: string, token = seller.token) {
  (await server.api.post(`/apps/${seller.appId}/licenses/${licenseId}/${what}`, undefined, { token })).expect(
    200,
  );
}

describe('what a license’s timeline records', () => {
  test('verifications appear once flushed, valid and refused, with device, address and app version', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    assert.equal((await verify({ key: license.key, hwuid: 'pc-1' }, '203.0.113.77', '2.4.1')).valid, true);
    const refused = await verify({ key: license.key, hwuid: 'pc-2' }, '198.51.100.9');
    assert.equal(refused.code, 'device_limit_reached');
    // Not a license: no timeline to record it in, and nothing fails.
    await verify({ key: 'NOPE-NOPE-NOPE-NOPE' }, '203.0.113.77');

    const unflushed = await timeline(seller, license.id, '?type=verification,device.activated');
    assert.deepEqual(unflushed.events, [], 'verifications are written by the flush, not the request');
    assert.equal(await flush(), true);

    const { events } = await timeline(seller, license.id, '?type=verification,device.activated');
    assert.deepEqual(
      events.map((e) => [e.type, e.outcome, e.hwuid, e.clientAddress, e.appVersion, e.actor]),
      [
        ['verification', 'device_limit_reached', 'pc-2', '198.51.100.0/24', null, null],
        ['verification', 'valid', 'pc-1', '203.0.113.0/24', '2.4.1', null],
        ['device.activated', null, 'pc-1', '203.0.113.0/24', '2.4.1', null],
      ],
    );
    const failures = await timeline(seller, license.id, '?outcome=failure');
    assert.deepEqual(
      failures.events.map((e) => [e.type, e.outcome]),
      [['verification', 'device_limit_reached']],
    );
    assert.deepEqual(Object.keys(events[0] as Entry).sort(), [
      'actor',
      'appVersion',
      'clientAddress',
      'data',
      'hwuid',
      'id',
      'lastOccurredAt',
      'occurredAt',
      'outcome',
      'repeats',
      'type',
    ]);
  });

  test('identical calls within a flush, or a minute after their entry’s write, are one entry counting them; any difference is an entry of its own', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 2 });
    const first = clock.now().toISOString();
    for (let call = 0; call < 5; call++) {
      await verify({ key: license.key, hwuid: 'loop-pc' }, '203.0.113.5', '1.0.0');
      clock.advance(1000);
    }
    const last = new Date(clock.now().getTime() - 1000).toISOString();
    await verify({ key: license.key, hwuid: 'loop-pc' }, '203.0.113.5', '1.0.1');
    await verify({ key: license.key, hwuid: 'other-pc' }, '203.0.113.5', '1.0.0');
    await verify({ key: license.key, hwuid: 'third-pc' }, '203.0.113.5', '1.0.0');
    assert.equal(await flush(), true);
    // After a flush the same call starts a new entry, written once the minute after the first
    // entry's write is over: until then its repeats add to it.
    const again = clock.now().toISOString();
    await verify({ key: license.key, hwuid: 'loop-pc' }, '203.0.113.5', '1.0.0');
    clock.advance(10_000);
    const againLast = clock.now().toISOString();
    await verify({ key: license.key, hwuid: 'loop-pc' }, '203.0.113.5', '1.0.0');
    assert.equal(await flush(), true);
    assert.equal((await timeline(seller, license.id, '?type=verification')).events.length, 4, 'held back');
    clock.advance(50_000);
    assert.equal(await flush(), true);

    const { events } = await timeline(seller, license.id, '?type=verification');
    assert.deepEqual(
      events.map((e) => [e.hwuid, e.outcome, e.appVersion, e.repeats]),
      [
        ['loop-pc', 'valid', '1.0.0', 2],
        ['third-pc', 'device_limit_reached', '1.0.0', 1],
        ['other-pc', 'valid', '1.0.0', 1],
        ['loop-pc', 'valid', '1.0.1', 1],
        ['loop-pc', 'valid', '1.0.0', 5],
      ],
    );
    const looped = events.at(-1) as Entry;
    assert.equal(looped.occurredAt, first);
    assert.equal(looped.lastOccurredAt, last);
    assert.equal(events[1]?.lastOccurredAt, null, 'one call has no last');
    assert.deepEqual([events[0]?.occurredAt, events[0]?.lastOccurredAt], [again, againLast]);
  });

  test('status changes name who made them: the seller, an API key, the expiry job', async () => {
    const seller = await sellerWithApp(server);
    const apiKey = await createApiKey(server, seller.token, seller.appId);
    const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
    const license = await issueLicense(server, seller, { expiresAt });
    await action(seller, license.id, 'suspend');
    await action(seller, license.id, 'reinstate', apiKey.key);
    clock.advance(120_000);
    assert.ok((await server.service.modules.licenses.expireDue()) >= 1);

    const { events } = await timeline(
      seller,
      license.id,
      '?type=license.created,license.suspended,license.reinstated,license.expired',
    );
    assert.deepEqual(
      events.map((e) => [e.type, e.actor]),
      [
        ['license.expired', { kind: 'system', id: null }],
        ['license.reinstated', { kind: 'api_key', id: apiKey.id }],
        ['license.suspended', { kind: 'seller', id: seller.user.id }],
        ['license.created', { kind: 'seller', id: seller.user.id }],
      ],
    );
    // Each change's webhook event is linked by its id.
    const linked = await timeline(seller, license.id, '?type=webhook.event');
    assert.deepEqual(
      linked.events.map((e) => e.data.eventType),
      ['license.expired', 'license.updated', 'license.revoked', 'license.created'],
    );
    for (const entry of linked.events) assert.match(String(entry.data.eventId), /^[0-9a-f-]{36}$/);
  });

  test('the app’s clientAddresses setting keeps all of an address, its network, or nothing', async () => {
    const seller = await sellerWithApp(server);
    const app = (await server.api.get(`/apps/${seller.appId}`, { token: seller.token })).expect(200).body;
    assert.equal(app.clientAddresses, 'truncated', 'truncated by default');
    const license = await issueLicense(server, seller);
    const setting = async (clientAddresses: string) =>
      (await server.api.patch(`/apps/${seller.appId}`, { clientAddresses }, { token: seller.token })).expect(
        200,
      ).body.clientAddresses;

    await verify({ key: license.key }, '2001:db8:1234:5678::1');
    assert.equal(await setting('full'), 'full');
    await verify({ key: license.key }, '203.0.113.77');
    assert.equal(await setting('none'), 'none');
    await verify({ key: license.key }, '203.0.113.77');
    await flush();

    const { events } = await timeline(seller, license.id, '?type=verification');
    assert.deepEqual(
      events.map((e) => e.clientAddress),
      [null, '203.0.113.77', '2001:db8:1234::/48'],
    );
    const refused = await server.api.patch(
      `/apps/${seller.appId}`,
      { clientAddresses: 'some' },
      { token: seller.token },
    );
    assert.equal(refused.expect(400).body.error.details[0].field, 'clientAddresses');
    assert.equal(await setting('none'), 'none', 'the refused change changed nothing');
  });

  test('the retention purge removes only entries older than the retention', async () => {
    const seller = await sellerWithApp(server);
    // A session lasts hours; the API key still works 91 days on.
    const apiKey = await createApiKey(server, seller.token, seller.appId);
    const old = await issueLicense(server, seller);
    await action(seller, old.id, 'suspend');
    clock.advance(91 * 86_400_000);
    await action(seller, old.id, 'reinstate', apiKey.key);
    assert.ok((await server.service.modules.timeline.purgeExpired()) >= 3);
    const { events } = await timeline({ token: apiKey.key, appId: seller.appId }, old.id);
    assert.deepEqual(events.map((e) => e.type).sort(), ['license.reinstated', 'webhook.event']);
    assert.equal(await server.service.modules.timeline.purgeExpired(), 0);
  });
});

describe('with LICENSE_TIMELINE_CALLS=off', () => {
  test('client calls leave no entry, and the seller’s changes still do', async () => {
    const quiet = await startTestServer({ VERIFICATION_FLUSH_MS: NEVER, LICENSE_TIMELINE_CALLS: 'off' });
    try {
      const seller = await sellerWithApp(quiet);
      const license = await issueLicense(quiet, seller, { maxDevices: 1 });
      const answer = await quiet.api.post('/licenses/verify', { key: license.key, hwuid: 'pc-1' });
      assert.equal(answer.expect(200).body.valid, true, 'verify answers as always');
      (
        await quiet.api.post(`/apps/${seller.appId}/licenses/${license.id}/suspend`, undefined, {
          token: seller.token,
        })
      ).expect(200);
      assert.equal(await quiet.service.modules.timelineJournal.flush(), true);
      const path = `/apps/${seller.appId}/licenses/${license.id}/events`;
      const { events } = (await quiet.api.get(path, { token: seller.token })).expect(200).body;
      const types = (events as Entry[]).map((e) => e.type);
      assert.ok(types.includes('license.suspended'), `the suspension is recorded: ${types.join(', ')}`);
      assert.ok(!types.includes('verification') && !types.includes('device.activated'), types.join(', '));
    } finally {
      await quiet.stop();
    }
  });
});

describe('reading a timeline', () => {
  let seller: SellerWithApp;
  let licenseId: string;

  before(async () => {
    seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    licenseId = license.id;
    for (let i = 0; i < 7; i++) await verify({ key: license.key }, '203.0.113.1', `1.0.${i}`);
    await action(seller, licenseId, 'suspend');
    await verify({ key: license.key }, '203.0.113.1');
    await flush();
  });

  test('pages newest first across pages, with no entry twice and none missed', async () => {
    const whole = await timeline(seller, licenseId, '?limit=200');
    assert.equal(whole.nextCursor, null);
    assert.ok(whole.events.length >= 11);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const page: { events: Entry[]; nextCursor: string | null } = await timeline(
        seller,
        licenseId,
        `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.ok(page.events.length <= 3);
      seen.push(...page.events.map((e) => e.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    assert.deepEqual(
      seen,
      whole.events.map((e) => e.id),
    );
    const times = whole.events.map((e) => e.occurredAt);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    const defaults = await timeline(seller, licenseId);
    assert.equal(defaults.events.length, whole.events.length, 'fewer than the default page of 50');
  });

  test('an only-failures filter answers the refused verifications', async () => {
    const { events } = await timeline(seller, licenseId, '?outcome=failure');
    assert.deepEqual(
      events.map((e) => [e.type, e.outcome]),
      [['verification', 'license_suspended']],
    );
  });

  test('refuses a bad query with a 400 naming the field', async () => {
    const base = `/apps/${seller.appId}/licenses/${licenseId}/events`;
    const fieldOf = async (query: string) => {
      const res = await server.api.get(`${base}${query}`, { token: seller.token });
      return res.expect(400).body.error.details[0].field;
    };
    assert.equal(await fieldOf('?limit=0'), 'limit');
    assert.equal(await fieldOf('?limit=201'), 'limit');
    assert.equal(await fieldOf('?type=verification,nonsense'), 'type');
    assert.equal(await fieldOf('?outcome=success'), 'outcome');
    assert.equal(await fieldOf('?cursor=not-a-cursor'), 'cursor');
    const real = (await timeline(seller, licenseId, '?limit=1')).nextCursor as string;
    const [payload, tag] = real.split('.') as [string, string];
    const moved = Buffer.from(
      Buffer.from(payload, 'base64url')
        .toString()
        .replace(/^\d+/, String(Date.now() + 1e9)),
    ).toString('base64url');
    assert.equal(await fieldOf(`?cursor=${moved}.${tag}`), 'cursor', 'a forged cursor');
    // A cursor of another license's timeline.
    const other = await issueLicense(server, seller);
    const res = await server.api.get(
      `/apps/${seller.appId}/licenses/${other.id}/events?cursor=${encodeURIComponent(real)}`,
      { token: seller.token },
    );
    assert.equal(res.expect(400).body.error.details[0].field, 'cursor');
  });

  test('refuses an X-App-Version that is not a short visible string, naming it', async () => {
    const license = await issueLicense(server, seller);
    const res = await server.api.post(
      '/licenses/verify',
      { key: license.key },
      { headers: { 'x-app-version': 'v'.repeat(65) } },
    );
    assert.equal(res.expect(400).body.error.details[0].field, 'X-App-Version');
  });

  test('another seller’s license is not found; the app’s API keys read it, another app’s keys may not', async () => {
    const stranger = await sellerWithApp(server);
    const path = `/apps/${seller.appId}/licenses/${licenseId}/events`;
    (await server.api.get(path, { token: stranger.token })).expect(404);
    const theirs = `/apps/${stranger.appId}/licenses/${licenseId}/events`;
    (await server.api.get(theirs, { token: stranger.token })).expect(404);
    const key = await createApiKey(server, seller.token, seller.appId);
    (await server.api.get(path, { token: key.key })).expect(200);
    const otherApp = await createApp(server, seller.token, 'Other');
    const otherKey = await createApiKey(server, seller.token, otherApp.id);
    (await server.api.get(path, { token: otherKey.key })).expect(403);
  });
});

describe('keeping a client’s address', () => {
  test('truncates IPv4 to its /24 and IPv6 to its /48, and keeps all or none as asked', () => {
    const cases: [string, 'full' | 'truncated' | 'none', string | null][] = [
      ['203.0.113.77', 'truncated', '203.0.113.0/24'],
      ['::ffff:203.0.113.77', 'truncated', '203.0.113.0/24'],
      ['::ffff:203.0.113.77', 'full', '203.0.113.77'],
      ['2001:db8:1234:5678::1', 'truncated', '2001:db8:1234::/48'],
      ['2001:db8::1', 'truncated', '2001:db8::/48'],
      ['2001:db8:1234:5678::1', 'full', '2001:db8:1234:5678::1'],
      ['203.0.113.77', 'none', null],
    ];
    for (const [address, policy, kept] of cases) assert.equal(keptAddress(address, policy), kept, address);
  });
});
