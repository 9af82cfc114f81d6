import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { sql } from 'kysely';
import { verifyLicenseFile } from '../../../packages/client/src/index.js';
import { ConfigError } from '../../platform/config.js';
import {
  createApiKey,
  issueLicense,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { createKeySealer, keyEncryptionKeyId } from './key-sealing.js';

/**
 * Signing keys at rest: what a copy of the database (or a backup of it) holds is no usable
 * private key, and keys an earlier version stored as PEM are sealed by the next start.
 */
let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  // Its own database: a test adds a signing key as an earlier version stored it.
  server = await startTestServer({}, { clock, ownDatabase: true });
});
after(() => server.stop());

const jwks = async () => (await server.api.get('/licenses/jwks')).expect(200).body;

describe('signing keys at rest', () => {
  test('a key stored in the database is not a usable PEM, and the service signs with it all the same', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const verified = (
      await server.api.post('/licenses/verify', { key: license.key, appId: seller.appId })
    ).expect(200).body;
    const { payload } = await jwtVerify(verified.license_token, createLocalJWKSet(await jwks()), {
      algorithms: ['RS256'],
      currentDate: clock.now(),
    });
    assert.equal(payload.sub, license.id);

    const rows = await server.db.selectFrom('signing_keys').select(['kid', 'sealed_private_key']).execute();
    assert.ok(rows.length >= 2, 'a token key and the offline key');
    for (const row of rows) {
      assert.doesNotMatch(row.sealed_private_key, /BEGIN|PRIVATE KEY/);
      assert.match(row.sealed_private_key, /^v1\.[\w-]{12}\.[\w-]+\.[\w-]+$/);
      // What an attacker holding the row could try: it is neither PEM nor DER.
      assert.throws(() => createPrivateKey(row.sealed_private_key));
      const [, , , sealed] = row.sealed_private_key.split('.');
      assert.throws(() =>
        createPrivateKey({ key: Buffer.from(sealed ?? '', 'base64url'), format: 'der', type: 'pkcs8' }),
      );
    }
  });

  test('keys an earlier version stored as PEM are sealed at the next start, and the license files they signed still verify', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    // Outlives the seller's session, which the clock moves past.
    const appKey = await createApiKey(server, seller.token, seller.appId);
    // As the version before sealing left it: a token key kept as PEM, rotated out an hour from now,
    // that signed a license file valid 300 days (so it stays published for the file).
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const { n, e } = publicKey.export({ format: 'jwk' });
    const kid = `legacy-${uniqueSuffix()}`;
    const now = clock.now();
    await server.db
      .insertInto('signing_keys')
      .values({
        kid,
        purpose: 'token',
        algorithm: 'RS256',
        sealed_private_key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
        public_jwk: JSON.stringify({ kty: 'RSA', n, e, kid, alg: 'RS256', use: 'sig' }),
        published_at: new Date(now.getTime() - 86_400_000),
        activates_at: new Date(now.getTime() - 86_400_000),
        unpublish_at: new Date(now.getTime() + 3_600_000),
      })
      .execute();
    const iat = Math.floor(now.getTime() / 1000);
    await sql`insert into license_file_keys (kid, files_valid_until)
      values (${kid}, ${new Date((iat + 300 * 86_400) * 1000)})`.execute(server.db);
    const legacyFile = await new SignJWT({
      iss: server.config.licenseTokenIssuer,
      sub: license.id,
      aud: seller.appId,
      iat,
      nbf: iat,
      exp: iat + 300 * 86_400,
      token_use: 'service_license_file_v1',
      hwuid: 'old-pc',
      nonce: 'legacy-nonce-0123456789',
      status: 'ACTIVE',
      svc_vt: 'basic',
      seller_tier: 'free',
    })
      .setProtectedHeader({ alg: 'RS256', kid })
      .sign(privateKey);

    // What every start does first.
    assert.equal(await server.service.modules.keyRing.sealStoredKeys(), 1);
    const row = await server.db
      .selectFrom('signing_keys')
      .select('sealed_private_key')
      .where('kid', '=', kid)
      .executeTakeFirstOrThrow();
    assert.doesNotMatch(row.sealed_private_key, /BEGIN/);
    assert.equal(await server.service.modules.keyRing.sealStoredKeys(), 0, 'sealed once');

    // Two days on, well past its retirement for tokens, the key set still has it for the file.
    clock.advance(2 * 86_400_000 + 31_000);
    const keySet = await jwks();
    const published = keySet.keys.find((key: { kid: string }) => key.kid === kid);
    assert.equal(published?.purpose, 'token');
    const claims = await verifyLicenseFile(legacyFile, {
      keySet,
      appId: seller.appId,
      hwuid: 'old-pc',
      now: () => clock.now(),
    });
    assert.equal(claims.sub, license.id);

    // Files issued now are signed by the offline key.
    const request = Buffer.from(
      JSON.stringify({
        v: 1,
        key: license.key,
        hwuid: 'new-pc',
        nonce: randomBytes(16).toString('base64url'),
      }),
    ).toString('base64url');
    const fresh = (
      await server.api.post('/licenses/offline-activations', { request }, { token: appKey.key })
    ).expect(200).body;
    // The app signs with RS256, the default.
    const offline = keySet.keys.find(
      (key: { purpose: string; alg: string }) => key.purpose === 'offline' && key.alg === 'RS256',
    );
    assert.equal(decodeProtectedHeader(fresh.licenseFile).kid, offline.kid);
  });
});

describe('the key sealer', () => {
  const kekA = randomBytes(32);
  const kekB = randomBytes(32);
  const der = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    format: 'der',
    type: 'pkcs8',
  });
  const sealed = createKeySealer([kekA]).seal('kid-1', der);

  test('opens what it sealed, under any key-encryption key it is given, and seals under the first', () => {
    assert.deepEqual(createKeySealer([kekA]).open('kid-1', sealed), der);
    const rotating = createKeySealer([kekB, kekA]);
    assert.deepEqual(rotating.open('kid-1', sealed), der);
    assert.equal(rotating.sealedUnderCurrent(sealed), false);
    assert.equal(rotating.sealedUnderCurrent(rotating.seal('kid-1', der)), true);
    assert.notEqual(createKeySealer([kekA]).seal('kid-1', der), sealed, 'a fresh IV each time');
  });

  const refusals: [string, () => unknown, RegExp][] = [
    [
      'another key-encryption key, named by its id and the setting',
      () => createKeySealer([kekB]).open('kid-1', sealed),
      new RegExp(`SIGNING_KEY_ENCRYPTION_KEY: .*${keyEncryptionKeyId(kekA)}`),
    ],
    ['a sealed key moved onto another kid', () => createKeySealer([kekA]).open('kid-2', sealed), /altered/],
    [
      'a changed byte',
      () =>
        createKeySealer([kekA]).open('kid-1', `${sealed.slice(0, -3)}${sealed.endsWith('A') ? 'B' : 'A'}AA`),
      /altered/,
    ],
    ['something else', () => createKeySealer([kekA]).open('kid-1', 'not sealed'), /does not read/],
  ];
  for (const [what, open, message] of refusals) {
    test(`refuses ${what}`, () => {
      assert.throws(open, message);
    });
  }

  test('a key-encryption key of another length is refused, naming the setting', () => {
    assert.throws(
      () => createKeySealer([randomBytes(16)]),
      (error: unknown) => error instanceof ConfigError && error.variable === 'SIGNING_KEY_ENCRYPTION_KEY',
    );
  });
});
