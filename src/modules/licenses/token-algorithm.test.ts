import assert from 'node:assert/strict';
import { createPublicKey, randomBytes, verify as verifySignature } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import {
  issueLicense,
  type SellerWithApp,
  signUp,
  startTestServer,
  storedSigningKey,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * An app's tokenAlgorithm: RS256 by default, EdDSA (Ed25519) where the seller chooses it, for its
 * license tokens, license files and revocation lists; the key set publishes both kinds of key.
 */
let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  // Its own database: one test rotates the signing keys.
  server = await startTestServer({}, { clock, ownDatabase: true });
});
after(() => server.stop());

type Jwk = { kid: string; kty: string; alg: string; purpose: string; crv?: string; x?: string };

const jwks = async () => (await server.api.get('/licenses/jwks')).expect(200).body as { keys: Jwk[] };
const introspect = async (token: string) =>
  (await server.api.post('/licenses/introspect', { license_token: token })).expect(200).body;
const tokenOf = async (key: string, appId?: string) =>
  (await server.api.post('/licenses/verify', { key, ...(appId ? { appId } : {}) })).expect(200).body
    .license_token as string;
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());

async function sellerWithAppOf(tokenAlgorithm?: string, tier?: 'enterprise'): Promise<SellerWithApp> {
  const seller = await signUp(server, tier ? { tier } : {});
  const app = (
    await server.api.post(
      '/apps',
      { name: 'Signed app', ...(tokenAlgorithm ? { tokenAlgorithm } : {}) },
      { token: seller.token },
    )
  ).expect(201).body;
  return { ...seller, appId: app.id };
}

/** jose against the published key set, allowing only `algorithms`. */
async function verifyWithKeySet(token: string, algorithms: string[], audience?: string) {
  return jwtVerify(token, createLocalJWKSet((await jwks()) as never), {
    algorithms,
    ...(audience ? { audience } : {}),
    issuer: server.config.apiBaseUrl,
    currentDate: clock.now(),
  });
}

/** Base64url JSON, for hand-made tokens. */
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('an app’s tokenAlgorithm', () => {
  test('is RS256 unless chosen, EdDSA when chosen, and read back on every route that shows the app', async () => {
    const seller = await signUp(server);
    const plain = (await server.api.post('/apps', { name: 'Plain' }, { token: seller.token })).expect(
      201,
    ).body;
    assert.equal(plain.tokenAlgorithm, 'RS256');
    const fast = (
      await server.api.post('/apps', { name: 'Fast', tokenAlgorithm: 'EdDSA' }, { token: seller.token })
    ).expect(201).body;
    assert.equal(fast.tokenAlgorithm, 'EdDSA');
    assert.equal(
      (await server.api.get(`/apps/${fast.id}`, { token: seller.token })).expect(200).body.tokenAlgorithm,
      'EdDSA',
    );
    const listed = (await server.api.get('/apps', { token: seller.token })).expect(200).body.apps;
    assert.deepEqual(
      listed.map((app: { tokenAlgorithm: string }) => app.tokenAlgorithm),
      ['RS256', 'EdDSA'],
    );
    const changed = (
      await server.api.patch(`/apps/${plain.id}`, { tokenAlgorithm: 'EdDSA' }, { token: seller.token })
    ).expect(200).body;
    assert.equal(changed.tokenAlgorithm, 'EdDSA');
    assert.equal(changed.name, 'Plain', 'nothing else changes');
  });

  test('anything but RS256 or EdDSA is refused with a 400 naming the field, and changes nothing', async () => {
    const seller = await signUp(server);
    const app = (
      await server.api.post('/apps', { name: 'Kept', tokenAlgorithm: 'EdDSA' }, { token: seller.token })
    ).expect(201).body;
    for (const tokenAlgorithm of ['ES256', 'eddsa', 'HS256', 'none', '', 5, null]) {
      for (const res of [
        await server.api.patch(`/apps/${app.id}`, { tokenAlgorithm }, { token: seller.token }),
        await server.api.post('/apps', { name: 'New', tokenAlgorithm }, { token: seller.token }),
      ]) {
        const error = assertError(res, 400, 'validation_failed');
        assert.deepEqual(
          error.details?.map((detail) => detail.field),
          ['tokenAlgorithm'],
          JSON.stringify(tokenAlgorithm),
        );
        assert.match(error.details?.[0]?.message ?? '', /RS256 or EdDSA/);
      }
    }
    assert.equal(
      (await server.api.get(`/apps/${app.id}`, { token: seller.token })).expect(200).body.tokenAlgorithm,
      'EdDSA',
    );
    assert.equal((await server.api.get('/apps', { token: seller.token })).expect(200).body.total, 1);
  });
});

describe('tokens of an EdDSA app', () => {
  test('verify against the key set as EdDSA with an Ed25519 token key, and are refused as RS256', async () => {
    const seller = await sellerWithAppOf('EdDSA');
    const license = await issueLicense(server, seller, { metadata: { plan: 'pro' } });
    const token = await tokenOf(license.key);
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'EdDSA');
    const key = (await jwks()).keys.find((k) => k.kid === header.kid);
    assert.deepEqual(
      key && [key.kty, key.crv, key.alg, key.purpose],
      ['OKP', 'Ed25519', 'EdDSA', 'token'],
      'a published Ed25519 token key',
    );

    const { payload } = await verifyWithKeySet(token, ['EdDSA'], seller.appId);
    assert.equal(payload.sub, license.id);
    assert.equal(payload.token_use, 'service_license_v1');
    assert.equal(payload.plan, 'pro');
    await assert.rejects(verifyWithKeySet(token, ['RS256'], seller.appId), errors.JOSEAlgNotAllowed);

    // An implementation that is not jose agrees: Ed25519 over the signing input, 64 bytes.
    const [head = '', body = '', signature = ''] = token.split('.');
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: key?.x } as never,
      format: 'jwk',
    });
    const bytes = Buffer.from(signature, 'base64url');
    assert.equal(bytes.length, 64);
    assert.ok(verifySignature(null, Buffer.from(`${head}.${body}`), publicKey, bytes));

    const live = await introspect(token);
    assert.deepEqual([live.active, live.sub, live.aud], [true, license.id, seller.appId]);
  });

  test('an RS256 app beside it signs as before', async () => {
    const seller = await sellerWithAppOf();
    const license = await issueLicense(server, seller);
    const token = await tokenOf(license.key);
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'RS256');
    assert.equal((await jwks()).keys.find((k) => k.kid === header.kid)?.kty, 'RSA');
    assert.equal((await verifyWithKeySet(token, ['RS256'], seller.appId)).payload.sub, license.id);
    await assert.rejects(verifyWithKeySet(token, ['EdDSA'], seller.appId), errors.JOSEAlgNotAllowed);
    assert.equal(Buffer.from(token.split('.')[2] ?? '', 'base64url').length, 256);
    assert.equal((await introspect(token)).active, true);
  });

  test('a change of algorithm signs the next token at once; tokens signed before stay valid', async () => {
    const seller = await sellerWithAppOf();
    const license = await issueLicense(server, seller);
    const before = await tokenOf(license.key);
    // Verified once more, so the license sits in the node's verification cache.
    await tokenOf(license.key);
    (
      await server.api.patch(`/apps/${seller.appId}`, { tokenAlgorithm: 'EdDSA' }, { token: seller.token })
    ).expect(200);
    const after = await tokenOf(license.key, seller.appId);
    assert.deepEqual(
      [decodeProtectedHeader(before).alg, decodeProtectedHeader(after).alg],
      ['RS256', 'EdDSA'],
    );
    for (const token of [before, after]) {
      assert.equal((await verifyWithKeySet(token, ['RS256', 'EdDSA'], seller.appId)).payload.sub, license.id);
      assert.equal((await introspect(token)).active, true);
    }
    (
      await server.api.patch(`/apps/${seller.appId}`, { tokenAlgorithm: 'RS256' }, { token: seller.token })
    ).expect(200);
    assert.equal(decodeProtectedHeader(await tokenOf(license.key)).alg, 'RS256');
  });

  test('introspection takes a token only in its key’s own algorithm and purpose', async () => {
    const seller = await sellerWithAppOf('EdDSA');
    const license = await issueLicense(server, seller);
    const token = await tokenOf(license.key);
    const claims = claimsOf(token);
    const keys = (await jwks()).keys;
    const edKid = decodeProtectedHeader(token).kid as string;
    const rsaKid = keys.find((k) => k.purpose === 'token' && k.alg === 'RS256')?.kid as string;
    const edOfflineKid = keys.find((k) => k.purpose === 'offline' && k.alg === 'EdDSA')?.kid as string;

    // The control case: our Ed25519 token key, signing through jose.
    const edKey = await storedSigningKey(server, edKid);
    const control = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: edKid }).sign(edKey);
    assert.equal((await introspect(control)).active, true);

    // Our RSA key's signature under the Ed25519 key's kid, and the EdDSA token relabelled RS256.
    const rsaKey = await storedSigningKey(server, rsaKid);
    const crossed = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: edKid }).sign(rsaKey);
    assert.equal((await introspect(crossed)).active, false);
    const [, body = '', signature = ''] = token.split('.');
    const relabelled = `${b64({ alg: 'RS256', typ: 'JWT', kid: edKid })}.${body}.${signature}`;
    assert.equal((await introspect(relabelled)).active, false);
    // EdDSA claimed under the RSA key's kid.
    const underRsa = `${b64({ alg: 'EdDSA', typ: 'JWT', kid: rsaKid })}.${body}.${signature}`;
    assert.equal((await introspect(underRsa)).active, false);

    // The Ed25519 offline key signs license files and revocation lists, never a license token.
    const byOffline = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: edOfflineKid })
      .sign(await storedSigningKey(server, edOfflineKid));
    assert.equal((await introspect(byOffline)).reason, 'invalid_token');
  });
});

describe('license files and revocation lists of an EdDSA app', () => {
  test('are signed with the Ed25519 offline key; an RS256 app’s with the RSA one', async () => {
    for (const algorithm of ['EdDSA', 'RS256']) {
      const seller = await sellerWithAppOf(algorithm);
      const license = await issueLicense(server, seller);
      const request = Buffer.from(
        JSON.stringify({
          v: 1,
          key: license.key,
          hwuid: 'air-1',
          nonce: randomBytes(16).toString('base64url'),
        }),
      ).toString('base64url');
      const file = (
        await server.api.post('/licenses/offline-activations', { request }, { token: seller.token })
      ).expect(200).body.licenseFile as string;
      (
        await server.api.post(
          `/apps/${seller.appId}/licenses/${license.id}/revoke`,
          {},
          { token: seller.token },
        )
      ).expect(200);
      const list = (await server.api.get(`/licenses/revocations?appId=${seller.appId}`)).expect(200).body
        .revocationList as string;
      const keys = (await jwks()).keys;
      for (const signed of [file, list]) {
        const header = decodeProtectedHeader(signed);
        assert.equal(header.alg, algorithm);
        const key = keys.find((k) => k.kid === header.kid);
        assert.deepEqual([key?.alg, key?.purpose], [algorithm, 'offline']);
        assert.equal((await verifyWithKeySet(signed, [algorithm], seller.appId)).payload.aud, seller.appId);
      }
    }
  });

  test('a revocation list fetched again after the app changes algorithm is a new one, not a 304', async () => {
    const seller = await sellerWithAppOf();
    const first = (await server.api.get(`/licenses/revocations?appId=${seller.appId}`)).expect(200);
    (
      await server.api.patch(`/apps/${seller.appId}`, { tokenAlgorithm: 'EdDSA' }, { token: seller.token })
    ).expect(200);
    const again = (
      await server.api.get(`/licenses/revocations?appId=${seller.appId}`, {
        headers: { 'if-none-match': first.headers.get('etag') ?? '' },
      })
    ).expect(200);
    assert.equal(decodeProtectedHeader(again.body.revocationList).alg, 'EdDSA');
  });
});

describe('key rotation with both algorithms', () => {
  test('publishes a new key of each kind; tokens of the old keys verify until they expire', async () => {
    const ed = await sellerWithAppOf('EdDSA', 'enterprise');
    const rsa = await sellerWithAppOf('RS256', 'enterprise');
    const edLicense = await issueLicense(server, ed);
    const rsaLicense = await issueLicense(server, rsa);
    const old = [await tokenOf(edLicense.key), await tokenOf(rsaLicense.key)];

    const { kids } = await server.service.modules.keyRing.rotate();
    const published = (await jwks()).keys;
    const kindOf = (kid: string) => {
      const key = published.find((k) => k.kid === kid);
      return key && [key.kty, key.alg, key.purpose];
    };
    assert.deepEqual(kindOf(kids.EdDSA), ['OKP', 'EdDSA', 'token']);
    assert.deepEqual(kindOf(kids.RS256), ['RSA', 'RS256', 'token']);
    for (const token of old) assert.ok(published.some((k) => k.kid === decodeProtectedHeader(token).kid));

    // Past the new keys' activation and every node's key cache.
    clock.advance(121_000);
    const fresh = [await tokenOf(edLicense.key), await tokenOf(rsaLicense.key)];
    assert.deepEqual(
      fresh.map((token) => decodeProtectedHeader(token).kid),
      [kids.EdDSA, kids.RS256],
    );
    for (const token of [...old, ...fresh]) {
      await verifyWithKeySet(token, ['RS256', 'EdDSA']);
      assert.equal((await introspect(token)).active, true);
    }

    // A day later every token the old keys signed has expired, and they leave the set.
    clock.advance(24 * 60 * 60_000 + 6 * 60_000);
    const after = (await jwks()).keys.map((k) => k.kid);
    for (const token of old) assert.ok(!after.includes(decodeProtectedHeader(token).kid as string));
    assert.ok(after.includes(kids.EdDSA) && after.includes(kids.RS256));
  });
});
