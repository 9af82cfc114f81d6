import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import {
  createApp,
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * Floating (concurrent) licenses through HTTP: seats taken, refused, kept by heartbeats, given
 * back, and freed by a lapsed lease with no job run (the test clock moves, nothing else).
 */
let server: TestServer;
let clock: TestClock;
let receiver: Receiver;
before(async () => {
  clock = testClock(new Date());
  receiver = await startReceiver();
  // Delivery passes are run by hand; the file owns its database so only its events are sent.
  server = await startTestServer(
    { WEBHOOK_POLL_MS: '60000', USER_TOKEN_TTL: '2592000' },
    { clock, ownDatabase: true },
  );
});
after(async () => {
  await server.stop();
  await receiver.close();
});

const checkout = async (body: Record<string, unknown>) =>
  (await server.api.post('/licenses/checkout', body)).expect(200).body;
const checkin = async (body: Record<string, unknown>) =>
  (await server.api.post('/licenses/checkin', body)).expect(200).body;
const seatsOf = async (seller: SellerWithApp, licenseId: string) =>
  (await server.api.get(`/apps/${seller.appId}/licenses/${licenseId}/seats`, { token: seller.token })).expect(
    200,
  ).body;
const inSeconds = (seconds: number) => new Date(clock.now().getTime() + seconds * 1000).toISOString();

async function floatingLicense(body: Record<string, unknown> = {}) {
  const seller = await sellerWithApp(server);
  const license = await issueLicense(server, seller, { floating: true, maxSeats: 2, ...body });
  return { seller, license };
}

describe('taking and giving back seats', () => {
  test('lends seats up to maxSeats, refuses the next with no_seat_available, and a checkin frees one', async () => {
    const { seller, license } = await floatingLicense();
    assert.deepEqual(
      [license.floating, license.maxSeats, license.leaseSeconds, license.maxDevices],
      [true, 2, 600, null],
    );
    const { key } = license;

    for (const hwuid of ['pc-1', 'pc-2']) {
      const taken = await checkout({ key, hwuid, appId: seller.appId });
      assert.equal(taken.valid, true, JSON.stringify(taken));
      assert.equal(taken.hw_bound, true);
      assert.equal(taken.lease_expires_at, inSeconds(600));
      assert.equal(typeof taken.license_token, 'string');
    }
    const refused = await checkout({ key, hwuid: 'pc-3', appId: seller.appId });
    assert.deepEqual(
      [refused.valid, refused.code, refused.license_token],
      [false, 'no_seat_available', undefined],
    );

    const held = await seatsOf(seller, license.id);
    assert.deepEqual(
      [held.total, held.maxSeats, held.seats.map((s: { hwuid: string }) => s.hwuid).sort()],
      [2, 2, ['pc-1', 'pc-2']],
    );

    assert.deepEqual(await checkin({ key, hwuid: 'pc-1' }), { released: true });
    assert.equal((await checkout({ key, hwuid: 'pc-3' })).valid, true);
    // Giving back a seat the device does not hold changes nothing and says so.
    assert.deepEqual(await checkin({ key, hwuid: 'pc-1' }), { released: false, code: 'seat_not_held' });
    assert.equal((await seatsOf(seller, license.id)).total, 2);
  });

  test('a heartbeat extends the lease, and a lapsed lease frees its seat with no job run', async () => {
    const { seller, license } = await floatingLicense({ maxSeats: 1, leaseSeconds: 120 });
    const { key } = license;
    const first = await checkout({ key, hwuid: 'desk' });
    const acquiredAt = (await seatsOf(seller, license.id)).seats[0].acquiredAt;
    clock.advance(60_000);
    const beat = await checkout({ key, hwuid: 'desk' });
    assert.equal(beat.valid, true);
    assert.equal(beat.lease_expires_at, inSeconds(120));
    assert.ok(beat.lease_expires_at > first.lease_expires_at);
    // The renewed seat keeps when it was taken.
    assert.equal((await seatsOf(seller, license.id)).seats[0].acquiredAt, acquiredAt);
    assert.equal((await checkout({ key, hwuid: 'laptop' })).code, 'no_seat_available');

    // Past the renewed lease: the seat is free for another device, and the lapsed one is gone.
    clock.advance(121_000);
    assert.equal((await seatsOf(seller, license.id)).total, 0);
    const laptop = await checkout({ key, hwuid: 'laptop' });
    assert.equal(laptop.valid, true);
    assert.equal((await checkout({ key, hwuid: 'desk' })).code, 'no_seat_available');
    assert.deepEqual(await checkin({ key, hwuid: 'desk' }), { released: false, code: 'seat_not_held' });
  });

  test('the token handed out with a seat expires with the lease, never later', async () => {
    const { license } = await floatingLicense({ leaseSeconds: 300 });
    const taken = await checkout({ key: license.key, hwuid: 'pc-1' });
    const claims = decodeJwt(taken.license_token);
    assert.equal(claims.exp, Math.floor(Date.parse(taken.lease_expires_at) / 1000));
    // Whole seconds, rounded down: never a moment past the lease.
    assert.equal(taken.license_token_expires_at, new Date((claims.exp as number) * 1000).toISOString());
    assert.ok(Date.parse(taken.lease_expires_at) - (claims.exp as number) * 1000 < 1000);

    // A lease longer than the plan's token lifetime (15 minutes on free) keeps the shorter one.
    const { license: long } = await floatingLicense({ leaseSeconds: 3600 });
    const longTaken = await checkout({ key: long.key, hwuid: 'pc-1' });
    assert.equal(decodeJwt(longTaken.license_token).exp, Math.floor(Date.parse(inSeconds(900)) / 1000));
    assert.equal(longTaken.lease_expires_at, inSeconds(3600));
  });

  test('verify and validate-hardware take no seat: valid only for a device holding one', async () => {
    const { seller, license } = await floatingLicense({ maxSeats: 1 });
    const { key } = license;
    assert.equal((await server.api.post('/licenses/verify', { key })).expect(200).body.code, 'seat_required');
    const before = (await server.api.post('/licenses/verify', { key, hwuid: 'pc-1' })).expect(200).body;
    assert.deepEqual([before.valid, before.code], [false, 'seat_required']);
    assert.equal((await seatsOf(seller, license.id)).total, 0);

    const taken = await checkout({ key, hwuid: 'pc-1' });
    for (const route of ['/licenses/verify', '/licenses/validate-hardware']) {
      const held = (await server.api.post(route, { key, hwuid: 'pc-1' })).expect(200).body;
      assert.equal(held.valid, true, route);
      assert.equal(held.lease_expires_at, taken.lease_expires_at);
      assert.ok((decodeJwt(held.license_token).exp as number) <= Date.parse(taken.lease_expires_at) / 1000);
      const other = (await server.api.post(route, { key, hwuid: 'pc-2' })).expect(200).body;
      assert.equal(other.code, 'seat_required', route);
    }
    clock.advance(601_000);
    assert.equal(
      (await server.api.post('/licenses/verify', { key, hwuid: 'pc-1' })).expect(200).body.code,
      'seat_required',
    );
  });

  test('a node-locked license has no seats, and a license that stops being active lends none', async () => {
    const seller = await sellerWithApp(server);
    const locked = await issueLicense(server, seller, { maxDevices: 2 });
    const answer = await checkout({ key: locked.key, hwuid: 'pc-1' });
    assert.deepEqual([answer.valid, answer.code], [false, 'not_floating']);
    assert.deepEqual(await checkin({ key: locked.key, hwuid: 'pc-1' }), {
      released: false,
      code: 'not_floating',
    });
    assert.deepEqual(await checkin({ key: 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF', hwuid: 'pc-1' }), {
      released: false,
      code: 'license_not_found',
    });

    const { seller: owner, license } = await floatingLicense();
    assert.equal((await checkout({ key: license.key, hwuid: 'pc-1' })).valid, true);
    (
      await server.api.post(`/apps/${owner.appId}/licenses/${license.id}/suspend`, undefined, {
        token: owner.token,
      })
    ).expect(200);
    const suspended = await checkout({ key: license.key, hwuid: 'pc-1' });
    assert.deepEqual([suspended.valid, suspended.code], [false, 'license_suspended']);

    const { license: expiring } = await floatingLicense({ expiresAt: inSeconds(120) });
    clock.advance(121_000);
    assert.equal((await checkout({ key: expiring.key, hwuid: 'pc-1' })).code, 'license_expired');
  });
});

describe('seat settings', () => {
  test('bad input answers 400 naming the field and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const path = `/apps/${seller.appId}/licenses`;
    const cases: [Record<string, unknown>, string][] = [
      [{ floating: true, maxSeats: 2, maxDevices: 2 }, 'maxDevices'],
      [{ floating: true }, 'maxSeats'],
      [{ maxSeats: 2 }, 'maxSeats'],
      [{ floating: false, leaseSeconds: 600 }, 'leaseSeconds'],
      [{ floating: true, maxSeats: 0 }, 'maxSeats'],
      [{ floating: true, maxSeats: 2, leaseSeconds: 59 }, 'leaseSeconds'],
      [{ floating: true, maxSeats: 2, leaseSeconds: 86_401 }, 'leaseSeconds'],
      [{ floating: 'yes', maxSeats: 2 }, 'floating'],
    ];
    for (const [body, field] of cases) {
      const error = assertError(
        await server.api.post(path, body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(error)}`,
      );
    }
    assert.equal((await server.api.get(path, { token: seller.token })).expect(200).body.total, 0);

    const floating = await issueLicense(server, seller, { floating: true, maxSeats: 2 });
    const locked = await issueLicense(server, seller, {});
    const patches: [string, Record<string, unknown>, string][] = [
      [floating.id, { maxDevices: 3 }, 'maxDevices'],
      [locked.id, { maxSeats: 3 }, 'maxSeats'],
      [locked.id, { leaseSeconds: 300 }, 'leaseSeconds'],
      [floating.id, { floating: false }, 'floating'],
    ];
    for (const [id, body, field] of patches) {
      const error = assertError(
        await server.api.patch(`${path}/${id}`, body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(error)}`,
      );
    }
    const unchanged = (await server.api.get(`${path}/${floating.id}`, { token: seller.token })).expect(
      200,
    ).body;
    assert.deepEqual([unchanged.floating, unchanged.maxSeats, unchanged.maxDevices], [true, 2, null]);

    for (const [route, body, field] of [
      ['/licenses/checkout', { key: floating.key }, 'hwuid'],
      ['/licenses/checkin', { key: floating.key, hwuid: '   ' }, 'hwuid'],
      ['/licenses/checkout', { key: floating.key, hwuid: 'x', extra: 1 }, 'extra'],
    ] as const) {
      const error = assertError(await server.api.post(route, body), 400, 'validation_failed');
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${route}: ${JSON.stringify(error)}`,
      );
    }
    assert.equal((await seatsOf(seller, floating.id)).total, 0);
  });

  test('maxSeats and leaseSeconds change with PATCH; fewer seats refuse newcomers, not holders', async () => {
    const { seller, license } = await floatingLicense({ maxSeats: 2 });
    const { key } = license;
    await checkout({ key, hwuid: 'a' });
    await checkout({ key, hwuid: 'b' });
    const patched = (
      await server.api.patch(
        `/apps/${seller.appId}/licenses/${license.id}`,
        { maxSeats: 1, leaseSeconds: 60 },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.deepEqual([patched.maxSeats, patched.leaseSeconds], [1, 60]);
    // Both holders keep their seats by heartbeat (each now for 60 s); nobody new gets in.
    assert.equal((await checkout({ key, hwuid: 'a' })).lease_expires_at, inSeconds(60));
    assert.equal((await checkout({ key, hwuid: 'b' })).valid, true);
    await checkin({ key, hwuid: 'a' });
    assert.equal((await checkout({ key, hwuid: 'c' })).code, 'no_seat_available');
    await checkin({ key, hwuid: 'b' });
    assert.equal((await checkout({ key, hwuid: 'c' })).valid, true);
  });
});

describe('seats across sellers', () => {
  test('another seller cannot see a license’s seats, and appId keeps keys to their app', async () => {
    const { seller, license } = await floatingLicense();
    await checkout({ key: license.key, hwuid: 'pc-1' });
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/seats`, { token: stranger.token }),
      404,
      'not_found',
    );
    const otherApp = await createApp(server, seller.token, 'Other');
    const foreign = await checkout({ key: license.key, hwuid: 'pc-2', appId: otherApp.id });
    assert.deepEqual([foreign.valid, foreign.code, foreign.appId], [false, 'license_not_found', null]);
    assert.deepEqual(await checkin({ key: license.key, hwuid: 'pc-1', appId: stranger.appId }), {
      released: false,
      code: 'license_not_found',
    });
    assert.equal((await seatsOf(seller, license.id)).total, 1);
  });
});

describe('seat names and platforms', () => {
  const labels = (seats: { hwuid: string; name: string | null; platform: string | null }[]) =>
    seats.map((seat) => [seat.hwuid, seat.name, seat.platform]);

  test('a seat carries the name and platform its client sends: heartbeats leaving them out keep them, others replace them', async () => {
    const { seller, license } = await floatingLicense({ maxSeats: 3 });
    const { key } = license;
    (
      await server.api.post(
        '/webhooks',
        { url: `${receiver.url}/named-seats`, events: ['license.seat.acquired'], appId: seller.appId },
        { token: seller.token },
      )
    ).expect(201);
    assert.equal(
      (await checkout({ key, hwuid: 'mac', name: 'Studio iMac', platform: 'macOS 15' })).valid,
      true,
    );
    assert.equal((await checkout({ key, hwuid: 'pc' })).valid, true);
    assert.deepEqual(labels((await seatsOf(seller, license.id)).seats), [
      ['mac', 'Studio iMac', 'macOS 15'],
      ['pc', null, null],
    ]);

    clock.advance(60_000);
    await checkout({ key, hwuid: 'mac' });
    await checkout({ key, hwuid: 'pc', name: 'Front desk', platform: 'Windows 11' });
    // verify on a floating license takes no seat, but names the one the device holds.
    assert.equal(
      (await server.api.post('/licenses/verify', { key, hwuid: 'mac', platform: 'macOS 26' })).expect(200)
        .body.valid,
      true,
    );
    const held = (await seatsOf(seller, license.id)).seats;
    assert.deepEqual(labels(held), [
      ['mac', 'Studio iMac', 'macOS 26'],
      ['pc', 'Front desk', 'Windows 11'],
    ]);
    assert.equal(held[0].leaseExpiresAt, inSeconds(600), 'the heartbeat renewed the lease');

    await server.service.modules.deliveryWorker.runOnce();
    const acquired = receiver.requests
      .filter((r) => r.path === '/named-seats' && r.json.data.licenseId === license.id)
      .map((r) => [r.json.data.hwuid, r.json.data.name, r.json.data.platform]);
    assert.deepEqual(acquired.sort(), [
      ['mac', 'Studio iMac', 'macOS 15'],
      ['pc', null, null],
    ]);
  });

  test('a bad name or platform on checkout answers 400 naming the field, and takes no seat', async () => {
    const { seller, license } = await floatingLicense();
    for (const [body, field] of [
      [{ key: license.key, hwuid: 'a', name: 'n'.repeat(101) }, 'name'],
      [{ key: license.key, hwuid: 'a', platform: '\u0000' }, 'platform'],
    ] as const) {
      const error = assertError(await server.api.post('/licenses/checkout', body), 400, 'validation_failed');
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(error)}`,
      );
    }
    assert.equal((await seatsOf(seller, license.id)).total, 0);
  });
});

describe('seat events', () => {
  test('license.seat.acquired and license.seat.released reach a subscribed webhook, heartbeats do not', async () => {
    const seller = await sellerWithApp(server);
    (
      await server.api.post(
        '/webhooks',
        {
          url: `${receiver.url}/seats`,
          events: ['license.seat.acquired', 'license.seat.released'],
          appId: seller.appId,
        },
        { token: seller.token },
      )
    ).expect(201);
    const license = await issueLicense(server, seller, { floating: true, maxSeats: 1 });
    const taken = await checkout({ key: license.key, hwuid: 'pc-1' });
    await checkout({ key: license.key, hwuid: 'pc-1' });
    await checkout({ key: license.key, hwuid: 'pc-2' });
    await checkin({ key: license.key, hwuid: 'pc-1' });
    await checkin({ key: license.key, hwuid: 'pc-1' });
    await server.service.modules.deliveryWorker.runOnce();

    const received = receiver.requests
      .filter((r) => r.path === '/seats' && r.json.data.licenseId === license.id)
      .map((r) => r.json)
      .sort((a, b) => a.type.localeCompare(b.type));
    assert.deepEqual(
      received.map((e) => e.type),
      ['license.seat.acquired', 'license.seat.released'],
    );
    assert.deepEqual(received[0]?.data, {
      licenseId: license.id,
      licenseKey: license.key,
      productId: null,
      hwuid: 'pc-1',
      name: null,
      platform: null,
      acquiredAt: clock.now().toISOString(),
      leaseExpiresAt: taken.lease_expires_at,
    });
    assert.deepEqual(received[1]?.data, {
      licenseId: license.id,
      licenseKey: license.key,
      productId: null,
      hwuid: 'pc-1',
      releasedAt: clock.now().toISOString(),
      reason: 'checkin',
    });
  });

  test('the seller takes a stuck seat back at once, with license.seat.released, reason seller', async () => {
    const seller = await sellerWithApp(server);
    (
      await server.api.post(
        '/webhooks',
        { url: `${receiver.url}/taken-back`, events: ['license.seat.released'], appId: seller.appId },
        { token: seller.token },
      )
    ).expect(201);
    const license = await issueLicense(server, seller, { floating: true, maxSeats: 1 });
    assert.equal((await checkout({ key: license.key, hwuid: 'crashed-pc' })).valid, true);
    assert.equal((await checkout({ key: license.key, hwuid: 'new-pc' })).code, 'no_seat_available');

    const release = (hwuid: string, token = seller.token) =>
      server.api.delete(`/apps/${seller.appId}/licenses/${license.id}/seats/${hwuid}`, { token });
    (await release('crashed-pc')).expect(204);
    assert.equal((await seatsOf(seller, license.id)).total, 0);
    assert.equal((await checkout({ key: license.key, hwuid: 'new-pc' })).valid, true, 'the seat is free');
    assertError(await release('crashed-pc'), 404, 'not_found');
    assertError(await release('nobody'), 404, 'not_found');
    const stranger = await sellerWithApp(server);
    assertError(await release('new-pc', stranger.token), 404, 'not_found');
    assert.equal((await seatsOf(seller, license.id)).total, 1, 'a refused release frees nothing');

    await server.service.modules.deliveryWorker.runOnce();
    const released = receiver.requests.filter((r) => r.path === '/taken-back').map((r) => r.json.data);
    assert.deepEqual(released, [
      {
        licenseId: license.id,
        licenseKey: license.key,
        productId: null,
        hwuid: 'crashed-pc',
        releasedAt: clock.now().toISOString(),
        reason: 'seller',
      },
    ]);
  });
});
