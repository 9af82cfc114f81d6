import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader, SignJWT } from 'jose';
import {
  createApiKey,
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  storedSigningKey,
  type TestServer,
} from '../../../src/testing/harness.js';
import { type TestClock, testClock } from '../../../src/testing/test-clock.js';
import {
  type ClockState,
  checkRevocations,
  createOfflineActivationRequest,
  type JsonWebKeySet,
  LicenseFileError,
  LicenseTokenError,
  LicenseTokenVerifier,
  LicensingApiError,
  LicensingClient,
  REVOCATION_LIST_USE,
  type RevocationSnapshot,
  verifyLicenseFile,
} from './index.js';

/** The SDK's offline checks against files and lists the real service signed. */
let server: TestServer;
let clock: TestClock;
let seller: SellerWithApp;
let keySet: JsonWebKeySet;

before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({}, { clock, ownDatabase: true });
  seller = await sellerWithApp(server);
  keySet = (await server.api.get('/licenses/jwks')).expect(200).body;
});
after(() => server.stop());

/** What the seller's support does with a request: hand it in, send back the file. */
async function handIn(request: string, extra: Record<string, unknown> = {}, token = seller.token) {
  return (await server.api.post('/licenses/offline-activations', { request, ...extra }, { token })).expect(
    200,
  ).body as { licenseFile: string; nonce: string };
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('accepted'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof LicenseFileError, String(error));
  return error.code;
}

const at = (seconds: number) => () => new Date(seconds * 1000);
const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

describe('license files in the SDK', () => {
  test('a request written offline comes back as a file the machine checks with the key set', async () => {
    const license = await issueLicense(server, seller, { metadata: { plan: 'pro' } });
    // Typed the way a person would: lower case, no dashes.
    const written = createOfflineActivationRequest({
      key: license.key.toLowerCase().replace(/-/g, ''),
      hwuid: 'air-1',
      appId: seller.appId,
    });
    const answer = await handIn(written.request);
    assert.equal(answer.nonce, written.nonce);
    const claims = await verifyLicenseFile(answer.licenseFile, {
      keySet,
      appId: seller.appId,
      hwuid: 'air-1',
      nonce: written.nonce,
      issuer: server.config.apiBaseUrl,
      now: () => clock.now(),
    });
    assert.equal(claims.sub, license.id);
    assert.equal(claims.plan, 'pro');
    assert.equal(claims.token_use, 'service_license_file_v1');

    const check = (options: Record<string, unknown>) =>
      verifyLicenseFile(answer.licenseFile, {
        keySet,
        appId: seller.appId,
        hwuid: 'air-1',
        now: () => clock.now(),
        ...options,
      });
    assert.equal(await rejection(check({ hwuid: 'air-2' })), 'wrong_device');
    assert.equal(await rejection(check({ appId: 'another-app' })), 'wrong_app');
    assert.equal(await rejection(check({ nonce: 'another-request-nonce' })), 'wrong_nonce');
    assert.equal(await rejection(check({ keySet: { keys: [] } })), 'bad_signature');
    assert.equal(await rejection(check({ now: at(nowSeconds() + 366 * 86_400) })), 'expired');

    const [head, body, signature] = answer.licenseFile.split('.');
    const forged = JSON.parse(Buffer.from(body ?? '', 'base64url').toString());
    forged.exp += 10 * 365 * 86_400;
    const tampered = `${head}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${signature}`;
    assert.equal(
      await rejection(verifyLicenseFile(tampered, { keySet, appId: seller.appId, hwuid: 'air-1' })),
      'bad_signature',
    );
  });

  test('files and license tokens are not taken for one another', async () => {
    const license = await issueLicense(server, seller);
    const { licenseFile } = await handIn(
      createOfflineActivationRequest({ key: license.key, hwuid: 'pc-1' }).request,
    );
    const verified = (
      await server.api.post('/licenses/verify', { key: license.key, hwuid: 'pc-1', appId: seller.appId })
    ).expect(200).body;
    const options = { keySet, appId: seller.appId, hwuid: 'pc-1', now: () => clock.now() };
    assert.equal(await rejection(verifyLicenseFile(verified.license_token, options)), 'wrong_token_use');
    const tokenVerifier = new LicenseTokenVerifier({ appId: seller.appId, keySet, now: () => clock.now() });
    const refused = await tokenVerifier.verify(licenseFile).then(
      () => 'accepted',
      (error: unknown) => error instanceof LicenseTokenError && error.code,
    );
    assert.notEqual(refused, 'accepted');
  });

  test('an encrypted file opens only with its license key', async () => {
    const license = await issueLicense(server, seller);
    const other = await issueLicense(server, seller);
    const { licenseFile } = await handIn(
      createOfflineActivationRequest({ key: license.key, hwuid: 'vault' }).request,
      { encrypt: true },
    );
    const options = { keySet, appId: seller.appId, hwuid: 'vault', now: () => clock.now() };
    assert.equal(await rejection(verifyLicenseFile(licenseFile, options)), 'decryption_failed');
    assert.equal(
      await rejection(verifyLicenseFile(licenseFile, { ...options, licenseKey: other.key })),
      'decryption_failed',
    );
    const claims = await verifyLicenseFile(licenseFile, {
      ...options,
      licenseKey: license.key.toLowerCase(),
    });
    assert.equal(claims.sub, license.id);
  });

  test('a clock set back before the file’s issue time or the last time seen is refused', async () => {
    const license = await issueLicense(server, seller);
    const { licenseFile } = await handIn(
      createOfflineActivationRequest({ key: license.key, hwuid: 'pc-9' }).request,
    );
    const issued = nowSeconds();
    const state: ClockState = { lastSeen: 0 };
    const check = (seconds: number) =>
      verifyLicenseFile(licenseFile, {
        keySet,
        appId: seller.appId,
        hwuid: 'pc-9',
        clock: state,
        now: at(seconds),
      });
    assert.equal(await rejection(check(issued - 3600)), 'clock_rollback');
    // Accepted a month on; the machine remembers it.
    await check(issued + 30 * 86_400);
    assert.equal(state.lastSeen, (issued + 30 * 86_400) * 1000);
    // Setting the clock back a week is refused, a few seconds of drift is not.
    assert.equal(await rejection(check(issued + 23 * 86_400)), 'clock_rollback');
    await check(issued + 30 * 86_400 - 10);
    assert.equal(state.lastSeen, (issued + 30 * 86_400) * 1000, 'the latest time seen never moves back');

    // The same guard through a store (a file, the registry…).
    let saved: ClockState | undefined = { lastSeen: (issued + 40 * 86_400) * 1000 };
    const store = {
      load: () => saved,
      save: (value: ClockState) => {
        saved = value;
      },
    };
    assert.equal(
      await rejection(
        verifyLicenseFile(licenseFile, {
          keySet,
          appId: seller.appId,
          hwuid: 'pc-9',
          clock: store,
          now: at(issued + 86_400),
        }),
      ),
      'clock_rollback',
    );
    await verifyLicenseFile(licenseFile, {
      keySet,
      appId: seller.appId,
      hwuid: 'pc-9',
      clock: store,
      now: at(issued + 41 * 86_400),
    });
    assert.equal(saved?.lastSeen, (issued + 41 * 86_400) * 1000);
  });

  test('a revocation list learnt online refuses the revoked license offline, and an older list cannot lift it', async () => {
    const kept = await issueLicense(server, seller);
    const revoked = await issueLicense(server, seller);
    const files = await Promise.all(
      [kept, revoked].map(
        async (license) =>
          (await handIn(createOfflineActivationRequest({ key: license.key, hwuid: 'pc-r' }).request))
            .licenseFile,
      ),
    );
    const fetchList = async () =>
      (await server.api.get(`/licenses/revocations?appId=${seller.appId}`)).expect(200).body;
    let saved: RevocationSnapshot | undefined;
    const store = {
      load: () => saved,
      save: (value: RevocationSnapshot) => {
        saved = value;
      },
    };
    const options = { keySet, appId: seller.appId, store, now: () => clock.now() };
    const before = await fetchList();
    await checkRevocations(before, options);
    assert.deepEqual(saved?.revoked.includes(revoked.id), false);

    (
      await server.api.post(
        `/apps/${seller.appId}/licenses/${revoked.id}/revoke`,
        {},
        { token: seller.token },
      )
    ).expect(200);
    clock.advance(3600_000);
    const snapshot = await checkRevocations(await fetchList(), options);
    assert.ok(snapshot.revoked.includes(revoked.id), 'the revoked license is on the list');

    const verify = (file: string) =>
      verifyLicenseFile(file, {
        keySet,
        appId: seller.appId,
        hwuid: 'pc-r',
        revocations: store,
        now: () => clock.now(),
      });
    assert.equal(await rejection(verify(files[1] ?? '')), 'revoked');
    assert.equal((await verify(files[0] ?? '')).sub, kept.id);

    // Replaying the list from before the revocation keeps the newer one in force.
    const inForce = await checkRevocations(before, options);
    assert.ok(inForce.revoked.includes(revoked.id), 'the newer list stays in force');
    assert.equal(await rejection(verify(files[1] ?? '')), 'revoked');

    // Another app's list, or a license file passed as a list, is refused.
    const other = await sellerWithApp(server);
    const foreign = (await server.api.get(`/licenses/revocations?appId=${other.appId}`)).expect(200).body;
    assert.equal(await rejection(checkRevocations(foreign, options)), 'wrong_app');
    assert.equal(await rejection(checkRevocations(files[0] ?? '', options)), 'wrong_token_use');
    // A list a day old has expired.
    clock.advance(25 * 3600_000);
    assert.equal(await rejection(checkRevocations(before, { ...options, store: undefined })), 'expired');
  });

  test('LicensingClient hands a request in for its file and fetches the list that revokes it', async () => {
    // Its own seller: a test above moved the clock past the shared seller's session.
    const owner = await sellerWithApp(server);
    const backend = new LicensingClient({ baseUrl: server.service.coreUrl, token: owner.token });
    const machine = new LicensingClient({ baseUrl: server.service.coreUrl });
    const license = await backend.licenses.issue(owner.appId, { maxDevices: 1, features: ['render'] });
    const written = createOfflineActivationRequest({ key: license.key, hwuid: 'lab-1', appId: owner.appId });
    const answer = await backend.licenses.activateOffline({ request: written.request, validDays: 30 });
    assert.deepEqual(
      [answer.licenseId, answer.hwuid, answer.nonce, answer.activated, answer.encrypted],
      [license.id, 'lab-1', written.nonce, true, false],
    );
    let saved: RevocationSnapshot | undefined;
    const revocations = {
      load: () => saved,
      save: (value: RevocationSnapshot) => {
        saved = value;
      },
    };
    const check = () =>
      verifyLicenseFile(answer.licenseFile, {
        keySet,
        appId: owner.appId,
        hwuid: 'lab-1',
        nonce: written.nonce,
        revocations,
        now: () => clock.now(),
      });
    const claims = await check();
    assert.deepEqual([claims.sub, claims.features], [license.id, ['render']]);
    assert.equal(claims.exp, Math.floor(Date.parse(answer.expiresAt) / 1000));

    // The place is taken: the same request again binds nothing, another machine is refused.
    assert.equal((await backend.licenses.activateOffline({ request: written.request })).activated, false);
    const another = createOfflineActivationRequest({ key: license.key, hwuid: 'lab-2' });
    await assert.rejects(
      backend.licenses.activateOffline({ request: another.request }),
      (error: unknown) =>
        error instanceof LicensingApiError && error.status === 409 && error.code === 'device_limit_reached',
    );
    // A floating license has no offline file.
    const floating = await backend.licenses.issue(owner.appId, { floating: true, maxSeats: 1 });
    await assert.rejects(
      backend.licenses.activateOffline({
        request: createOfflineActivationRequest({ key: floating.key, hwuid: 'lab-1' }).request,
      }),
      (error: unknown) => error instanceof LicensingApiError && error.code === 'license_floating',
    );

    await backend.licenses.suspend(owner.appId, license.id);
    // The public list, fetched with no credential, passed to checkRevocations as it is.
    const list = await machine.revocations(owner.appId);
    assert.equal(list.appId, owner.appId);
    assert.ok(list.count >= 1);
    const snapshot = await checkRevocations(list, { keySet, appId: owner.appId, store: revocations });
    assert.ok(snapshot.revoked.includes(license.id));
    assert.equal(await rejection(check()), 'revoked');
    await assert.rejects(
      machine.revocations('00000000-0000-4000-8000-000000000000'),
      (error: unknown) => error instanceof LicensingApiError && error.status === 404,
    );
  });

  test('createOfflineActivationRequest refuses what the service would refuse', () => {
    assert.throws(() => createOfflineActivationRequest({ key: 'nope', hwuid: 'pc' }), /key/);
    assert.throws(
      () => createOfflineActivationRequest({ key: '00000-00000-00000-00000-00000-00000', hwuid: ' ' }),
      /hwuid/,
    );
    const { request, nonce } = createOfflineActivationRequest({
      key: '00000-00000-00000-00000-00000-00000',
      hwuid: 'pc',
    });
    const decoded = JSON.parse(Buffer.from(request, 'base64url').toString());
    assert.equal(decoded.v, 1);
    assert.equal(decoded.nonce, nonce);
    assert.match(nonce, /^[A-Za-z0-9_-]{22}$/);
  });
});

/** A revocation store as a machine keeps one (a file, the registry), in memory here. */
function revocationStore() {
  const store = {
    saved: undefined as RevocationSnapshot | undefined,
    load: () => store.saved,
    save: (value: RevocationSnapshot) => {
      store.saved = value;
    },
  };
  return store;
}

/** A seller with an app, and an API key for it that outlives the session when the clock moves far. */
async function owner() {
  const who = await sellerWithApp(server);
  return { ...who, apiKey: (await createApiKey(server, who.token, who.appId)).key };
}

const fetchList = async (appId: string) =>
  (await server.api.get(`/licenses/revocations?appId=${appId}`)).expect(200).body;

const act = async (who: { appId: string; apiKey: string }, licenseId: string, action: string) =>
  (
    await server.api.post(`/apps/${who.appId}/licenses/${licenseId}/${action}`, {}, { token: who.apiKey })
  ).expect(200);

describe('revocation lists an offline machine can rely on', () => {
  test('an earlier list of the same hour replayed does not lift a revocation, nor does one made on a node whose clock is behind get lost', async () => {
    const who = await owner();
    const revoked = await issueLicense(server, who);
    const later = await issueLicense(server, who);
    const fileOf = async (license: { key: string }) =>
      (
        await handIn(
          createOfflineActivationRequest({ key: license.key, hwuid: 'pc-h' }).request,
          {},
          who.token,
        )
      ).licenseFile;
    const revokedFile = await fileOf(revoked);
    const laterFile = await fileOf(later);
    const store = revocationStore();
    const options = { keySet, appId: who.appId, store, now: () => clock.now() };
    const verify = (file: string) =>
      verifyLicenseFile(file, {
        keySet,
        appId: who.appId,
        hwuid: 'pc-h',
        revocations: store,
        now: () => clock.now(),
      });

    const before = await fetchList(who.appId);
    await act(who, revoked.id, 'revoke');
    const after = await fetchList(who.appId);
    assert.equal(after.issuedAt, before.issuedAt, 'both signed in the same second');
    await checkRevocations(after, options);
    assert.equal(await rejection(verify(revokedFile)), 'revoked');
    // Handed the list from before the revocation, the machine keeps the one that has it.
    assert.ok((await checkRevocations(before, options)).revoked.includes(revoked.id), 'still revoked');
    assert.equal(await rejection(verify(revokedFile)), 'revoked');

    // Suspended and reinstated; then suspended again by a node whose clock is ten minutes behind,
    // so every change time of the app is older than the reinstatement's.
    clock.advance(1_000);
    await act(who, later.id, 'suspend');
    clock.advance(1_000);
    await act(who, later.id, 'reinstate');
    const reinstated = await fetchList(who.appId);
    await checkRevocations(reinstated, options);
    assert.equal((await verify(laterFile)).sub, later.id);
    clock.advance(-10 * 60_000);
    await act(who, later.id, 'suspend');
    clock.advance(10 * 60_000);
    const suspendedAgain = await fetchList(who.appId);
    assert.ok(suspendedAgain.version > reinstated.version, 'the version never goes back');
    await checkRevocations(suspendedAgain, options);
    assert.equal(await rejection(verify(laterFile)), 'revoked');
    assert.ok((await checkRevocations(reinstated, options)).revoked.includes(later.id), 'still suspended');
    assert.equal(await rejection(verify(laterFile)), 'revoked');
  });

  test('a list signed with a token key is refused once the key set holds the offline key', async () => {
    const who = await owner();
    const license = await issueLicense(server, who);
    const { licenseFile } = await handIn(
      createOfflineActivationRequest({ key: license.key, hwuid: 'pc-t' }).request,
      {},
      who.token,
    );
    await act(who, license.id, 'revoke');
    const store = revocationStore();
    const options = { keySet, appId: who.appId, store, now: () => clock.now() };
    await checkRevocations(await fetchList(who.appId), options);

    // Someone holding a token key (from a backup made before keys were sealed, say) forges a list
    // that revokes nothing, with a version no real list would pass.
    const tokenKid = keySet.keys.find((key) => key.purpose === 'token' && key.alg === 'RS256')?.kid as string;
    const iat = Math.floor(clock.now().getTime() / 1000);
    const forged = await new SignJWT({
      iss: server.config.licenseTokenIssuer,
      aud: who.appId,
      iat,
      nbf: iat,
      exp: iat + 86_400,
      token_use: REVOCATION_LIST_USE,
      version: Number.MAX_SAFE_INTEGER,
      revoked: [],
    })
      .setProtectedHeader({ alg: 'RS256', kid: tokenKid })
      .sign(await storedSigningKey(server, tokenKid));
    assert.equal(await rejection(checkRevocations(forged, options)), 'bad_signature');
    assert.equal(
      await rejection(
        verifyLicenseFile(licenseFile, {
          keySet,
          appId: who.appId,
          hwuid: 'pc-t',
          revocations: store,
          now: () => clock.now(),
        }),
      ),
      'revoked',
    );

    // Nor does a license token signed with the offline key pass for one.
    const offlineKid = keySet.keys.find((key) => key.purpose === 'offline' && key.alg === 'RS256')
      ?.kid as string;
    const token = await new SignJWT({
      iss: server.config.licenseTokenIssuer,
      sub: license.id,
      aud: who.appId,
      iat,
      exp: iat + 600,
      jti: 'not-issued',
      token_use: 'service_license_v1',
    })
      .setProtectedHeader({ alg: 'RS256', kid: offlineKid })
      .sign(await storedSigningKey(server, offlineKid));
    const verifier = new LicenseTokenVerifier({ appId: who.appId, keySet, now: () => clock.now() });
    await assert.rejects(
      verifier.verify(token),
      (error: unknown) => error instanceof LicenseTokenError && error.code === 'invalid_signature',
    );
  });

  test('a clock once set ahead by mistake is forgiven by a newer license file or a fresh revocation list, never by an older one', async () => {
    const who = await owner();
    const license = await issueLicense(server, who);
    const request = () => createOfflineActivationRequest({ key: license.key, hwuid: 'pc-c' }).request;
    const first = (await handIn(request(), {}, who.token)).licenseFile;
    const issued = nowSeconds();
    const state: ClockState = { lastSeen: 0 };
    const check = (file: string, seconds: number) =>
      verifyLicenseFile(file, { keySet, appId: who.appId, hwuid: 'pc-c', clock: state, now: at(seconds) });
    await check(first, issued + 60);
    // Set 200 days ahead by mistake while the file was checked, then set right again.
    await check(first, issued + 200 * 86_400);
    assert.equal(await rejection(check(first, issued + 120)), 'clock_rollback');
    assert.equal(
      await rejection(check(first, issued + 180)),
      'clock_rollback',
      'the same file forgives nothing',
    );

    // Support sends a file issued an hour later: it is checked, and the old one with it.
    clock.advance(3_600_000);
    const second = (await handIn(request(), {}, who.token)).licenseFile;
    await check(second, issued + 3_660);
    await check(first, issued + 3_720);
    // Still a guard: not before the newer file's issue time.
    assert.equal(await rejection(check(first, issued + 1_800)), 'clock_rollback');

    // Ahead by mistake again; this time the machine goes online for the revocation list.
    await check(first, issued + 300 * 86_400);
    assert.equal(await rejection(check(first, issued + 3_780)), 'clock_rollback');
    clock.advance(3_600_000);
    const list = await fetchList(who.appId);
    await checkRevocations(list, { keySet, appId: who.appId, clock: state, now: at(issued + 7_260) });
    assert.equal((await check(first, issued + 7_320)).sub, license.id);
    // A list no newer than what the machine has seen forgives nothing.
    await check(first, issued + 330 * 86_400);
    await checkRevocations(list, { keySet, appId: who.appId, clock: state, now: at(issued + 7_380) });
    assert.equal(await rejection(check(first, issued + 7_440)), 'clock_rollback');

    // A guard an earlier SDK kept (no vouchedAt) starts keeping it at its next check, refused or
    // not, and the newer file then resets it.
    const kept: ClockState = { lastSeen: (issued + 300 * 86_400) * 1000 };
    const checkKept = (file: string, seconds: number) =>
      verifyLicenseFile(file, { keySet, appId: who.appId, hwuid: 'pc-c', clock: kept, now: at(seconds) });
    assert.equal(await rejection(checkKept(first, issued + 7_500)), 'clock_rollback');
    assert.equal(kept.vouchedAt, issued * 1000);
    assert.equal((await checkKept(second, issued + 7_560)).sub, license.id);

    // Ahead by mistake once more; a successful online verify's token forgives it as a list does,
    // and the same token shown again forgives nothing more.
    await check(first, issued + 340 * 86_400);
    assert.equal(await rejection(check(first, issued + 10_900)), 'clock_rollback');
    clock.advance(3_600_000);
    const online = (await server.api.post('/licenses/verify', { key: license.key, hwuid: 'pc-c' })).expect(
      200,
    ).body as { license_token: string };
    const tokens = new LicenseTokenVerifier({
      appId: who.appId,
      keySet,
      clock: state,
      now: at(issued + 10_860),
    });
    assert.equal((await tokens.verify(online.license_token)).sub, license.id);
    assert.equal((await check(first, issued + 10_920)).sub, license.id);
    await check(first, issued + 350 * 86_400);
    await tokens.verify(online.license_token);
    assert.equal(await rejection(check(first, issued + 10_980)), 'clock_rollback');
  });
});

describe('offline trust across key rotations', () => {
  // Last: it rotates the token keys the tests above hold a copy of.
  test('a machine given its file before the token keys rotate accepts revocation lists made after, and refuses the revoked file', async () => {
    const who = await owner();
    const license = await issueLicense(server, who);
    // What the machine holds: the key set as it was when its file was issued.
    const held = (await server.api.get('/licenses/jwks')).expect(200).body as JsonWebKeySet;
    const { licenseFile } = await handIn(
      createOfflineActivationRequest({ key: license.key, hwuid: 'far-1' }).request,
      {},
      who.token,
    );
    const store = revocationStore();
    const check = () =>
      verifyLicenseFile(licenseFile, {
        keySet: held,
        appId: who.appId,
        hwuid: 'far-1',
        revocations: store,
        now: () => clock.now(),
      });
    assert.equal((await check()).sub, license.id);

    // `licensing keys rotate`, and two days on: the old token key has left the set.
    const { RS256: newKid } = (await server.service.modules.keyRing.rotate()).kids;
    clock.advance(2 * 86_400_000);
    const verified = (
      await server.api.post('/licenses/verify', { key: license.key, hwuid: 'far-1', appId: who.appId })
    ).expect(200).body;
    assert.equal(decodeProtectedHeader(verified.license_token).kid, newKid, 'the new token key signs');
    assert.ok(!held.keys.some((key) => key.kid === newKid), 'a key the machine does not hold');

    await act(who, license.id, 'revoke');
    const snapshot = await checkRevocations(await fetchList(who.appId), {
      keySet: held,
      appId: who.appId,
      store,
      now: () => clock.now(),
    });
    assert.ok(snapshot.revoked.includes(license.id), 'the list made after the rotation is taken');
    assert.equal(await rejection(check()), 'revoked');
  });
});
