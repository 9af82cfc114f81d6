import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader, SignJWT } from 'jose';
import {
  startTestServer,
  storedSigningKey,
  type TestServer,
  uniqueSuffix,
} from '../../../src/testing/harness.js';
import { type TestClock, testClock } from '../../../src/testing/test-clock.js';
import {
  checkRevocations,
  createOfflineActivationRequest,
  fetchKeySet,
  type JsonWebKeySet,
  LicenseFileError,
  LicenseTokenError,
  LicenseTokenVerifier,
  LicensingClient,
  verifyLicenseFile,
} from './index.js';

/** The SDK's checks of tokens, files and lists an app signs with RS256 or with EdDSA (Ed25519). */
let server: TestServer;
let clock: TestClock;
let seller: LicensingClient;
let edAppId: string;
let rsaAppId: string;
const origin = () => server.service.coreUrl;
const client = () => new LicensingClient({ baseUrl: origin() });

before(async () => {
  clock = testClock(new Date());
  // Its own database: one test rotates the signing keys.
  server = await startTestServer({}, { clock, ownDatabase: true });
  const session = await client().auth.register({
    email: `sdk-eddsa-${uniqueSuffix()}@example.com`,
    password: 'sdk password 1',
  });
  seller = client().withToken(session.token);
  const ed = await seller.apps.create({ name: 'Fast app', tokenAlgorithm: 'EdDSA' });
  assert.equal(ed.tokenAlgorithm, 'EdDSA');
  edAppId = ed.id;
  rsaAppId = (await seller.apps.create({ name: 'Default app' })).id;
});
after(() => server.stop());

async function tokenFor(appId: string): Promise<{ token: string; licenseId: string }> {
  const license = await seller.licenses.issue(appId);
  const answer = await client().verify({ key: license.key, appId });
  return { token: answer.license_token as string, licenseId: license.id };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function tokenError(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('accepted'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof LicenseTokenError, String(error));
  return error.code;
}

describe('LicenseTokenVerifier with both algorithms', () => {
  test('checks an EdDSA app’s token and an RS256 app’s token alike, online and from a stored key set', async () => {
    const ed = await tokenFor(edAppId);
    const rsa = await tokenFor(rsaAppId);
    assert.equal(decodeProtectedHeader(ed.token).alg, 'EdDSA');
    assert.equal(decodeProtectedHeader(rsa.token).alg, 'RS256');
    assert.ok(ed.token.length < rsa.token.length - 200, 'the Ed25519 signature is the shorter');

    const stored = JSON.parse(JSON.stringify(await fetchKeySet(client().jwksUri))) as JsonWebKeySet;
    for (const [appId, { token, licenseId }] of [
      [edAppId, ed],
      [rsaAppId, rsa],
    ] as const) {
      const online = new LicenseTokenVerifier({ jwksUri: client().jwksUri, appId, now: () => clock.now() });
      assert.equal((await online.verify(token)).sub, licenseId);
      const offline = new LicenseTokenVerifier({ keySet: stored, appId, now: () => clock.now() });
      assert.equal((await offline.verify(token)).sub, licenseId);
    }
  });

  test('refuses a token whose header names an algorithm its key does not have', async () => {
    const { token, licenseId } = await tokenFor(edAppId);
    const keySet = await fetchKeySet(client().jwksUri);
    const edKid = decodeProtectedHeader(token).kid as string;
    const rsaKid = keySet.keys.find((key) => key.purpose === 'token' && key.alg === 'RS256')?.kid as string;
    const [, body = '', signature = ''] = token.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const verifier = new LicenseTokenVerifier({
      jwksUri: client().jwksUri,
      appId: edAppId,
      refetchCooldownMs: 0,
      now: () => clock.now(),
    });
    assert.equal((await verifier.verify(token)).sub, licenseId, 'the token as signed');

    // Signed by our own RSA token key, but under the Ed25519 key's kid.
    const crossed = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: edKid })
      .sign(await storedSigningKey(server, rsaKid));
    // The Ed25519 signature presented as RS256, and as EdDSA under the RSA key's kid.
    const relabelled = `${b64({ alg: 'RS256', typ: 'JWT', kid: edKid })}.${body}.${signature}`;
    const underRsa = `${b64({ alg: 'EdDSA', typ: 'JWT', kid: rsaKid })}.${body}.${signature}`;
    // And algorithms the service never signs with.
    const hs = `${b64({ alg: 'HS256', typ: 'JWT', kid: edKid })}.${body}.${signature}`;
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${body}.`;
    for (const forged of [crossed, relabelled, underRsa]) {
      assert.equal(await tokenError(verifier.verify(forged)), 'invalid_signature');
    }
    for (const forged of [hs, none]) {
      assert.equal(await tokenError(verifier.verify(forged)), 'invalid_token');
    }

    // A key set copied without alg members: the key's kind alone still decides.
    const bare = { keys: keySet.keys.map(({ alg: _alg, ...key }) => key) };
    const fromBare = new LicenseTokenVerifier({ keySet: bare, appId: edAppId, now: () => clock.now() });
    assert.equal((await fromBare.verify(token)).sub, licenseId);
    for (const forged of [crossed, relabelled, underRsa]) {
      assert.equal(await tokenError(fromBare.verify(forged)), 'invalid_signature');
    }
  });
});

describe('license files and revocation lists of an EdDSA app', () => {
  test('a file checks offline with the stored key set, and a list revoking it is taken', async () => {
    const license = await seller.licenses.issue(edAppId);
    const keySet = JSON.parse(JSON.stringify(await fetchKeySet(client().jwksUri))) as JsonWebKeySet;
    const written = createOfflineActivationRequest({ key: license.key, hwuid: 'air-ed', appId: edAppId });
    const { licenseFile } = await seller.licenses.activateOffline({ request: written.request });
    const header = decodeProtectedHeader(licenseFile);
    assert.equal(header.alg, 'EdDSA');
    assert.equal(keySet.keys.find((key) => key.kid === header.kid)?.purpose, 'offline');

    let held: Awaited<ReturnType<typeof checkRevocations>> | undefined;
    const store = {
      load: async () => held,
      save: async (snapshot: NonNullable<typeof held>) => {
        held = snapshot;
      },
    };
    const check = () =>
      verifyLicenseFile(licenseFile, {
        keySet,
        appId: edAppId,
        hwuid: 'air-ed',
        nonce: written.nonce,
        issuer: server.config.apiBaseUrl,
        revocations: store,
        now: () => clock.now(),
      });
    assert.equal((await check()).sub, license.id);

    // Relabelled RS256 under its own kid: refused, as a file is checked like a token.
    const [, body = '', signature = ''] = licenseFile.split('.');
    const relabelled = `${b64({ alg: 'RS256', typ: 'JWT', kid: header.kid })}.${body}.${signature}`;
    const refused = await verifyLicenseFile(relabelled, { keySet, appId: edAppId, hwuid: 'air-ed' }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(refused instanceof LicenseFileError && refused.code === 'bad_signature', String(refused));

    await seller.licenses.revoke(edAppId, license.id);
    const list = await client().revocations(edAppId);
    assert.equal(decodeProtectedHeader(list.revocationList).alg, 'EdDSA');
    const snapshot = await checkRevocations(list, { keySet, appId: edAppId, store, now: () => clock.now() });
    assert.ok(snapshot.revoked.includes(license.id));
    const revoked = await check().then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(revoked instanceof LicenseFileError && revoked.code === 'revoked', String(revoked));
  });
});

describe('rotation', () => {
  test('a verifier learns the new keys of both kinds and keeps accepting tokens of the old ones', async () => {
    const verifiers = Object.fromEntries(
      [edAppId, rsaAppId].map((appId) => [
        appId,
        new LicenseTokenVerifier({
          jwksUri: client().jwksUri,
          appId,
          refetchCooldownMs: 0,
          now: () => clock.now(),
        }),
      ]),
    );
    const old = [await tokenFor(edAppId), await tokenFor(rsaAppId)];
    for (const [index, appId] of [edAppId, rsaAppId].entries()) {
      await verifiers[appId]?.verify(old[index]?.token ?? ''); // caches the current key set
    }
    const { kids } = await server.service.modules.keyRing.rotate();
    clock.advance(121_000);
    const fresh = [await tokenFor(edAppId), await tokenFor(rsaAppId)];
    assert.deepEqual(
      fresh.map(({ token }) => decodeProtectedHeader(token).kid),
      [kids.EdDSA, kids.RS256],
    );
    for (const [index, appId] of [edAppId, rsaAppId].entries()) {
      for (const issued of [fresh[index], old[index]]) {
        assert.equal((await verifiers[appId]?.verify(issued?.token ?? ''))?.sub, issued?.licenseId);
      }
    }
  });
});
