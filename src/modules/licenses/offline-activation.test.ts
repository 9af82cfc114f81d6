import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { compactDecrypt, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import {
  createApiKey,
  createApp,
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  signUp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { licenseFileKey } from '../license-tokens/index.js';

let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  // Its own database: one test rotates the signing keys.
  server = await startTestServer({}, { clock, ownDatabase: true });
});
after(() => server.stop());

/** What client software writes offline: base64url JSON, as createOfflineActivationRequest does. */
function activationRequest(fields: Record<string, unknown>): string {
  return Buffer.from(
    JSON.stringify({
      v: 1,
      nonce: randomBytes(16).toString('base64url'),
      createdAt: new Date().toISOString(),
      ...fields,
    }),
  ).toString('base64url');
}

async function activateOffline(seller: { token: string }, body: Record<string, unknown>) {
  return server.api.post('/licenses/offline-activations', body, { token: seller.token });
}

const jwks = async () => (await server.api.get('/licenses/jwks')).expect(200).body;

async function verifyFile(file: string, appId: string) {
  return jwtVerify(file, createLocalJWKSet(await jwks()), {
    algorithms: ['RS256'],
    audience: appId,
    issuer: server.config.apiBaseUrl,
    currentDate: clock.now(),
  });
}

async function devicesOf(seller: SellerWithApp, licenseId: string) {
  return (
    await server.api.get(`/apps/${seller.appId}/licenses/${licenseId}/devices`, { token: seller.token })
  ).expect(200).body as {
    devices: { hwuid: string; activatedAt: string; offlineUntil: string | null }[];
    total: number;
  };
}

describe('offline activation', () => {
  test('binds the device like an online activation and answers a license file signed with the published keys', async () => {
    const seller = await sellerWithApp(server, 'business');
    const license = await issueLicense(server, seller, {
      maxDevices: 2,
      expiresAt: '2099-01-01T00:00:00.000Z',
      metadata: { plan: 'pro', features: ['export'], internal: 'stays private' },
    });
    const nonce = randomBytes(16).toString('base64url');
    const res = await activateOffline(seller, {
      request: activationRequest({ key: license.key, hwuid: 'air-gapped-1', nonce, appId: seller.appId }),
    });
    const body = res.expect(200).body;
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(body.licenseId, license.id);
    assert.equal(body.appId, seller.appId);
    assert.equal(body.hwuid, 'air-gapped-1');
    assert.equal(body.nonce, nonce);
    assert.equal(body.activated, true);
    assert.equal(body.encrypted, false);

    const { payload, protectedHeader } = await verifyFile(body.licenseFile, seller.appId);
    assert.equal(protectedHeader.alg, 'RS256');
    assert.ok(
      (await jwks()).keys.some((k: { kid: string }) => k.kid === protectedHeader.kid),
      'the kid is in the published key set',
    );
    const now = Math.floor(clock.now().getTime() / 1000);
    assert.equal(payload.token_use, 'service_license_file_v1');
    assert.equal(payload.sub, license.id);
    assert.equal(payload.hwuid, 'air-gapped-1');
    assert.equal(payload.nonce, nonce);
    assert.equal(payload.status, 'ACTIVE');
    assert.equal(payload.plan, 'pro');
    assert.deepEqual(payload.features, ['export']);
    assert.equal(payload.internal, undefined);
    assert.equal(payload.seller_tier, 'business');
    assert.equal(payload.svc_vt, 'advanced');
    assert.equal(payload.iat, now);
    assert.equal(payload.nbf, now);
    // A year by default, as the answer says.
    assert.equal(payload.exp, now + 365 * 86_400);
    assert.equal(body.expiresAt, new Date((now + 365 * 86_400) * 1000).toISOString());
    assert.equal(payload.license_exp, Math.floor(Date.parse('2099-01-01T00:00:00Z') / 1000));

    // The device holds a place: online, it is a known device, and only one place is taken.
    const devices = await devicesOf(seller, license.id);
    assert.deepEqual(
      devices.devices.map((d) => d.hwuid),
      ['air-gapped-1'],
    );
    const validated = (
      await server.api.post('/licenses/validate-hardware', {
        key: license.key,
        hwuid: 'air-gapped-1',
        appId: seller.appId,
      })
    ).expect(200).body;
    assert.equal(validated.valid, true);
    assert.equal(validated.hw_bound, true);

    // Handing in the same request again re-issues the file; nothing more is bound.
    const again = (
      await activateOffline(seller, {
        request: activationRequest({ key: license.key, hwuid: 'air-gapped-1' }),
      })
    ).expect(200).body;
    assert.equal(again.activated, false);
    assert.equal((await devicesOf(seller, license.id)).total, 1);

    // Both files are in the license's timeline, newest first, saying who asked and what it did.
    const timeline = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/events?type=license_file.issued`, {
        token: seller.token,
      })
    ).expect(200).body;
    assert.deepEqual(
      timeline.events.map((e: { hwuid: string; actor: unknown; data: Record<string, unknown> }) => [
        e.hwuid,
        e.actor,
        e.data.activated,
        e.data.expiresAt,
      ]),
      [
        ['air-gapped-1', { kind: 'seller', id: seller.user.id }, false, again.expiresAt],
        ['air-gapped-1', { kind: 'seller', id: seller.user.id }, true, body.expiresAt],
      ],
    );
  });

  test('a file is valid for validDays, and never past the license', async () => {
    const seller = await sellerWithApp(server);
    const expiresAt = new Date(clock.now().getTime() + 10 * 86_400_000);
    const license = await issueLicense(server, seller, { expiresAt: expiresAt.toISOString() });
    const short = (
      await activateOffline(seller, {
        request: activationRequest({ key: license.key, hwuid: 'pc-short' }),
        validDays: 3,
      })
    ).expect(200).body;
    const now = Math.floor(clock.now().getTime() / 1000);
    assert.equal((await verifyFile(short.licenseFile, seller.appId)).payload.exp, now + 3 * 86_400);
    const long = (
      await activateOffline(seller, {
        request: activationRequest({ key: license.key, hwuid: 'pc-long' }),
        validDays: 3650,
      })
    ).expect(200).body;
    assert.equal(
      (await verifyFile(long.licenseFile, seller.appId)).payload.exp,
      Math.floor(expiresAt.getTime() / 1000),
    );
  });

  test('the device is held until its latest file expires; the seller sees it and may still release it', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    const hand = async (validDays: number) =>
      (
        await activateOffline(seller, {
          request: activationRequest({ key: license.key, hwuid: 'air-1' }),
          validDays,
        })
      ).expect(200).body.expiresAt as string;
    const longer = await hand(20);
    // A shorter file later does not shorten the hold: the longer file still works.
    await hand(5);
    const held = await devicesOf(seller, license.id);
    assert.deepEqual(held.devices, [
      {
        hwuid: 'air-1',
        name: null,
        platform: null,
        activatedAt: held.devices[0]?.activatedAt,
        offlineUntil: longer,
      },
    ]);
    (
      await server.api.delete(`/apps/${seller.appId}/licenses/${license.id}/devices/air-1`, {
        token: seller.token,
      })
    ).expect(204);
    assert.equal((await devicesOf(seller, license.id)).total, 0);
    // Bound again online, the device holds nothing: the hold went with the release.
    (await server.api.post('/licenses/verify', { key: license.key, hwuid: 'air-1' })).expect(200);
    assert.deepEqual(
      (await devicesOf(seller, license.id)).devices.map((device) => device.offlineUntil),
      [null],
    );
  });

  test('the device limit holds: a full license answers 409 device_limit_reached and binds nothing', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    (await server.api.post('/licenses/verify', { key: license.key, hwuid: 'online-1' })).expect(200);
    const error = assertError(
      await activateOffline(seller, { request: activationRequest({ key: license.key, hwuid: 'offline-1' }) }),
      409,
      'device_limit_reached',
    );
    assert.match(error.message, /release a device/);
    assert.deepEqual(
      (await devicesOf(seller, license.id)).devices.map((d) => d.hwuid),
      ['online-1'],
    );
    const refused = await server.api.get(
      `/apps/${seller.appId}/licenses/${license.id}/events?type=license_file.issued`,
      { token: seller.token },
    );
    assert.deepEqual(refused.expect(200).body.events, [], 'a refused file leaves no entry');
    // A device already bound still gets its file.
    const bound = (
      await activateOffline(seller, { request: activationRequest({ key: license.key, hwuid: 'online-1' }) })
    ).expect(200).body;
    assert.equal(bound.activated, false);
  });

  test('concurrent offline and online activations never bind more devices than the limit', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 3 });
    const attempts = Array.from({ length: 12 }, (_, i) =>
      i % 2 === 0
        ? activateOffline(seller, {
            request: activationRequest({ key: license.key, hwuid: `offline-${i}` }),
          }).then((res) => res.status === 200)
        : server.api
            .post('/licenses/verify', { key: license.key, hwuid: `online-${i}` })
            .then((res) => res.expect(200).body.valid as boolean),
    );
    const outcomes = await Promise.all(attempts);
    assert.equal(outcomes.filter(Boolean).length, 3);
    const devices = await devicesOf(seller, license.id);
    assert.equal(devices.total, 3);
    const record = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}`, { token: seller.token })
    ).expect(200).body;
    assert.equal(record.deviceCount, 3);
  });

  test('an encrypted file opens only with its license key', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const other = await issueLicense(server, seller);
    const body = (
      await activateOffline(seller, {
        request: activationRequest({ key: license.key, hwuid: 'vault-1' }),
        encrypt: true,
      })
    ).expect(200).body;
    assert.equal(body.encrypted, true);
    const header = decodeProtectedHeader(body.licenseFile);
    assert.equal(header.alg, 'dir');
    assert.equal(header.enc, 'A256GCM');
    await assert.rejects(compactDecrypt(body.licenseFile, await licenseFileKey(other.key)));
    const { plaintext } = await compactDecrypt(body.licenseFile, await licenseFileKey(license.key));
    const { payload } = await verifyFile(new TextDecoder().decode(plaintext), seller.appId);
    assert.equal(payload.sub, license.id);
    assert.equal(payload.hwuid, 'vault-1');
  });

  test('a tampered file fails, and files and tokens are not taken for one another', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const file = (
      await activateOffline(seller, { request: activationRequest({ key: license.key, hwuid: 'pc-1' }) })
    ).expect(200).body.licenseFile as string;
    const [head, claims, signature] = file.split('.');
    const forged = JSON.parse(Buffer.from(claims ?? '', 'base64url').toString());
    forged.hwuid = 'pc-2';
    const tampered = `${head}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${signature}`;
    await assert.rejects(verifyFile(tampered, seller.appId));

    // Introspection knows license tokens only: a license file is not one.
    const introspected = (await server.api.post('/licenses/introspect', { license_token: file })).expect(
      200,
    ).body;
    assert.deepEqual(introspected, { active: false, reason: 'invalid_token' });
  });

  test('another seller, or a key of another app, cannot activate: 404, and nothing is bound', async () => {
    const owner = await sellerWithApp(server);
    const license = await issueLicense(server, owner);
    const stranger = await signUp(server);
    const request = activationRequest({ key: license.key, hwuid: 'thief-pc' });
    assertError(await activateOffline(stranger, { request }), 404, 'not_found');
    const sibling = await createApp(server, owner.token, 'Sibling');
    const siblingKey = await createApiKey(server, owner.token, sibling.id);
    assertError(await activateOffline({ token: siblingKey.key }, { request }), 404, 'not_found');
    // A request naming another app than the key's is refused the same way.
    assertError(
      await activateOffline(owner, {
        request: activationRequest({ key: license.key, hwuid: 'thief-pc', appId: sibling.id }),
      }),
      404,
      'not_found',
    );
    // A key nobody issued answers the same.
    assertError(
      await activateOffline(owner, {
        request: activationRequest({ key: '00000-00000-00000-00000-00000-00000', hwuid: 'x' }),
      }),
      404,
      'not_found',
    );
    assert.equal((await devicesOf(owner, license.id)).total, 0);

    // The app's own API key may.
    const appKey = await createApiKey(server, owner.token, owner.appId);
    (await activateOffline({ token: appKey.key }, { request })).expect(200);
  });

  test('the file carries the entitlements in force, as tokens do', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { features: ['sync.cloud', 'export'] });
    const body = (
      await activateOffline(seller, { request: activationRequest({ key: license.key, hwuid: 'pc-f' }) })
    ).expect(200).body;
    const { payload } = await verifyFile(body.licenseFile, seller.appId);
    assert.deepEqual(payload.features, ['sync.cloud', 'export']);
  });

  test('a floating license cannot be activated offline: 409 license_floating, and no seat or device is taken', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { floating: true, maxSeats: 2 });
    const error = assertError(
      await activateOffline(seller, { request: activationRequest({ key: license.key, hwuid: 'pc-1' }) }),
      409,
      'license_floating',
    );
    assert.match(error.message, /floating/);
    assert.equal((await devicesOf(seller, license.id)).total, 0);
    const seats = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/seats`, { token: seller.token })
    ).expect(200).body;
    assert.equal(seats.total, 0);
  });

  test('a suspended, revoked or expired license is refused with a 409 naming its status, and binds nothing', async () => {
    const seller = await sellerWithApp(server);
    const act = (id: string, action: string) =>
      server.api.post(`/apps/${seller.appId}/licenses/${id}/${action}`, {}, { token: seller.token });
    const suspended = await issueLicense(server, seller);
    (await act(suspended.id, 'suspend')).expect(200);
    const revoked = await issueLicense(server, seller);
    (await act(revoked.id, 'revoke')).expect(200);
    // Expired by the clock alone: no job has marked it yet.
    const expired = await issueLicense(server, seller, {
      expiresAt: new Date(clock.now().getTime() + 60_000).toISOString(),
    });
    clock.advance(61_000);
    for (const [license, code] of [
      [suspended, 'license_suspended'],
      [revoked, 'license_revoked'],
      [expired, 'license_expired'],
    ] as const) {
      const error = assertError(
        await activateOffline(seller, { request: activationRequest({ key: license.key, hwuid: 'pc-1' }) }),
        409,
        code,
      );
      assert.match(error.message, /cannot be activated offline/);
      assert.equal((await devicesOf(seller, license.id)).total, 0, code);
    }
    // Reinstated, the suspended one activates.
    (await act(suspended.id, 'reinstate')).expect(200);
    (
      await activateOffline(seller, { request: activationRequest({ key: suspended.key, hwuid: 'pc-1' }) })
    ).expect(200);
  });

  test('bad input answers 400 naming the field, and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const nonce = randomBytes(16).toString('base64url');
    const cases: [Record<string, unknown>, string][] = [
      [{ request: 'not base64url!' }, 'request'],
      [{ request: Buffer.from('not json').toString('base64url') }, 'request'],
      [{ request: encode(['an', 'array']) }, 'request'],
      [{ request: encode({ v: 2, key: license.key, hwuid: 'pc', nonce }) }, 'request.v'],
      [{ request: encode({ key: license.key, hwuid: 'pc', nonce }) }, 'request.v'],
      [{ request: encode({ v: 1, key: 'nope', hwuid: 'pc', nonce }) }, 'request.key'],
      [{ request: encode({ v: 1, key: license.key, hwuid: '   ', nonce }) }, 'request.hwuid'],
      [{ request: encode({ v: 1, key: license.key, hwuid: 'x'.repeat(201), nonce }) }, 'request.hwuid'],
      [{ request: encode({ v: 1, key: license.key, hwuid: 'pc', nonce: 'short' }) }, 'request.nonce'],
      [{ request: encode({ v: 1, key: license.key, hwuid: 'pc', nonce, appId: 'x' }) }, 'request.appId'],
      [
        { request: encode({ v: 1, key: license.key, hwuid: 'pc', nonce, createdAt: 'soon' }) },
        'request.createdAt',
      ],
      [{ request: activationRequest({ key: license.key, hwuid: 'pc' }), validDays: 0 }, 'validDays'],
      [{ request: activationRequest({ key: license.key, hwuid: 'pc' }), validDays: 3651 }, 'validDays'],
      [{ request: activationRequest({ key: license.key, hwuid: 'pc' }), encrypt: 'yes' }, 'encrypt'],
      [{}, 'request'],
    ];
    for (const [body, field] of cases) {
      const error = assertError(await activateOffline(seller, body), 400, 'validation_failed');
      assert.equal(error.details?.[0]?.field, field, JSON.stringify(body));
    }
    assert.equal((await devicesOf(seller, license.id)).total, 0);
  });
});

describe('revocation list', () => {
  async function revocations(appId: string, headers: Record<string, string> = {}) {
    return server.api.get(`/licenses/revocations?appId=${appId}`, { headers });
  }

  test('lists the app’s revoked and suspended licenses only, signed with the published keys', async () => {
    const seller = await sellerWithApp(server);
    const [revoked, suspended, active] = [
      await issueLicense(server, seller),
      await issueLicense(server, seller),
      await issueLicense(server, seller),
    ];
    const other = await sellerWithApp(server);
    const foreign = await issueLicense(server, other);
    const act = (owner: SellerWithApp, id: string, action: string) =>
      server.api.post(`/apps/${owner.appId}/licenses/${id}/${action}`, {}, { token: owner.token });
    (await act(seller, revoked.id, 'revoke')).expect(200);
    (await act(seller, suspended.id, 'suspend')).expect(200);
    (await act(other, foreign.id, 'revoke')).expect(200);

    const res = (await revocations(seller.appId)).expect(200);
    assert.match(res.headers.get('cache-control') ?? '', /max-age=\d+/);
    const body = res.body;
    assert.equal(body.appId, seller.appId);
    assert.equal(body.count, 2);
    const { payload } = await jwtVerify(body.revocationList, createLocalJWKSet(await jwks()), {
      algorithms: ['RS256'],
      audience: seller.appId,
      issuer: server.config.apiBaseUrl,
      currentDate: clock.now(),
    });
    assert.equal(payload.token_use, 'service_revocation_list_v1');
    assert.equal(payload.version, body.version);
    assert.equal(payload.iat, Math.floor(clock.now().getTime() / 1000), 'signed now, not on the hour');
    assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), 24 * 60 * 60);
    const listed = (payload.revoked as { sub: string; at: number }[]).map((entry) => entry.sub).sort();
    assert.deepEqual(listed, [revoked.id, suspended.id].sort());
    assert.ok(!listed.includes(active.id), 'an active license is not listed');
    assert.ok(!listed.includes(foreign.id), 'another app’s license is not listed');
    // Nothing beyond ids and times: no keys, no e-mail addresses.
    assert.doesNotMatch(
      Buffer.from(body.revocationList.split('.')[1], 'base64url').toString(),
      /key|email|@/,
    );

    // An unchanged list is named by its ETag; a reinstatement changes it and drops the license.
    const etag = res.headers.get('etag') ?? '';
    assert.ok(etag, 'the list has an ETag');
    (await revocations(seller.appId, { 'if-none-match': etag })).expect(304);
    clock.advance(1_000);
    (await act(seller, suspended.id, 'reinstate')).expect(200);
    const changed = (await revocations(seller.appId, { 'if-none-match': etag })).expect(200);
    assert.notEqual(changed.headers.get('etag'), etag);
    assert.ok(changed.body.version > body.version, 'the version moved');
    assert.equal(changed.body.count, 1);
  });

  test('the version grows with each change of the list, even one made on a node whose clock is behind, and stays while nothing changes', async () => {
    const seller = await sellerWithApp(server);
    const appKey = await createApiKey(server, seller.token, seller.appId);
    const license = await issueLicense(server, seller);
    const act = (action: string) =>
      server.api.post(`/apps/${seller.appId}/licenses/${license.id}/${action}`, {}, { token: appKey.key });
    const version = async () => (await revocations(seller.appId)).expect(200).body.version as number;

    const empty = await version();
    assert.equal(await version(), empty, 'unchanged');
    (await act('suspend')).expect(200);
    const suspended = await version();
    assert.ok(suspended > empty, 'a suspension moves it');
    clock.advance(1_000);
    (await act('reinstate')).expect(200);
    const reinstated = await version();
    assert.ok(reinstated > suspended, 'a reinstatement moves it');
    // Another node, its clock ten minutes behind, suspends it again: the latest change time of the
    // app's licenses goes back, the version does not.
    clock.advance(-10 * 60_000);
    (await act('suspend')).expect(200);
    clock.advance(10 * 60_000);
    const again = await version();
    assert.ok(again > reinstated, `${again} > ${reinstated}`);
    assert.equal(await version(), again);
  });

  test('an unknown app answers 404 and a missing or malformed appId 400', async () => {
    assertError(await revocations('00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    const missing = assertError(await server.api.get('/licenses/revocations'), 400, 'validation_failed');
    assert.equal(missing.details?.[0]?.field, 'appId');
    const malformed = assertError(await revocations('not-a-uuid'), 400, 'validation_failed');
    assert.equal(malformed.details?.[0]?.field, 'appId');
  });
});

describe('keys that signed license files', () => {
  test('files and revocation lists are signed with the offline key, which a rotation of the token keys leaves in place', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const before = (await jwks()).keys as { kid: string; purpose: string; alg: string }[];
    assert.equal(
      before.filter((key) => key.purpose === 'offline').length,
      2,
      'an offline key of each algorithm',
    );
    // The app signs with RS256, the default.
    const offline = before.filter((key) => key.purpose === 'offline' && key.alg === 'RS256');
    const fileKid = async (hwuid: string) =>
      decodeProtectedHeader(
        (await activateOffline(seller, { request: activationRequest({ key: license.key, hwuid }) })).expect(
          200,
        ).body.licenseFile,
      ).kid;
    const listKid = async () =>
      decodeProtectedHeader(
        (await server.api.get(`/licenses/revocations?appId=${seller.appId}`)).expect(200).body.revocationList,
      ).kid;
    assert.equal(await fileKid('pc-o1'), offline[0]?.kid);
    assert.equal(await listKid(), offline[0]?.kid);

    await server.service.modules.keyRing.rotate();
    // Past the new token key's activation and every node's key cache.
    clock.advance(5 * 60_000);
    const token = (await server.api.post('/licenses/verify', { key: license.key, hwuid: 'pc-o1' })).expect(
      200,
    ).body.license_token;
    assert.ok(
      !before.some((key) => key.kid === decodeProtectedHeader(token).kid),
      'tokens are signed with the new token key',
    );
    assert.equal(await fileKid('pc-o2'), offline[0]?.kid);
    assert.equal(await listKid(), offline[0]?.kid);
  });

  test('stay published after a rotation until the last file they signed expires', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const file = (
      await activateOffline(seller, {
        request: activationRequest({ key: license.key, hwuid: 'pc-1' }),
        validDays: 30,
      })
    ).expect(200).body.licenseFile as string;
    const { kid } = decodeProtectedHeader(file);
    // Replacing the offline key (it may have leaked), the one key that signs files.
    await server.service.modules.keyRing.rotate('offline');
    // Well past the day after which a rotated key leaves the set for tokens alone.
    clock.advance(3 * 86_400_000);
    const published = async () => ((await jwks()).keys as { kid: string }[]).some((key) => key.kid === kid);
    // The key ring re-reads the keys every 30 seconds of its clock.
    clock.advance(31_000);
    assert.ok(await published(), 'the key that signed a live file is still published');
    assert.equal((await verifyFile(file, seller.appId)).payload.sub, license.id);
    // Every file this key signed in this file lives a year at most.
    clock.advance(400 * 86_400_000);
    assert.equal(await published(), false, 'it leaves once the files it signed have expired');
  });
});
