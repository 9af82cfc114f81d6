import assert from 'node:assert/strict';
import { createHmac, createPublicKey, generateKeyPairSync, verify as verifySignature } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import {
  createApiKey,
  createApp,
  issueLicense,
  sellerWithApp,
  signUp,
  startTestServer,
  storedSigningKey,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { eventsForUser } from '../events/index.js';

let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({}, { clock, ownDatabase: true });
});
after(() => server.stop());

type Tier = 'free' | 'pro' | 'business' | 'enterprise';

async function verifyKey(key: string, hwuid?: string) {
  return (await server.api.post('/licenses/verify', { key, ...(hwuid ? { hwuid } : {}) })).expect(200).body;
}

const jwks = async () =>
  (await server.api.get('/licenses/jwks')).expect(200).body as { keys: Record<string, string>[] };
const introspect = async (token: string) =>
  (await server.api.post('/licenses/introspect', { license_token: token })).expect(200).body;
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Verifies RS256 by hand with node:crypto, independently of jose. */
function verifyIndependently(token: string, keySet: { keys: Record<string, string>[] }) {
  const [head = '', body = '', signature = ''] = token.split('.');
  const header = JSON.parse(Buffer.from(head, 'base64url').toString());
  assert.equal(header.alg, 'RS256');
  const jwk = keySet.keys.find((k) => k.kid === header.kid);
  assert.ok(jwk, 'the kid is in the published key set');
  const publicKey = createPublicKey({ key: { kty: jwk.kty, n: jwk.n, e: jwk.e } as never, format: 'jwk' });
  const ok = verifySignature(
    'sha256',
    Buffer.from(`${head}.${body}`),
    publicKey,
    Buffer.from(signature, 'base64url'),
  );
  assert.ok(ok, 'the signature verifies');
  return JSON.parse(Buffer.from(body, 'base64url').toString());
}

describe('license tokens', () => {
  test('carry the documented claims and verify offline against the key set', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, {
      expiresAt: '2099-01-01T00:00:00.000Z',
      metadata: { plan: 'pro', features: ['export'], internal: 'not in the token' },
      maxDevices: 1,
    });
    const result = await verifyKey(license.key, 'pc-1');
    const keySet = await jwks();
    const { payload, protectedHeader } = await jwtVerify(
      result.license_token,
      createLocalJWKSet(keySet as never),
      {
        algorithms: ['RS256'],
        audience: seller.appId,
        issuer: server.config.apiBaseUrl,
        currentDate: clock.now(),
      },
    );
    assert.equal(protectedHeader.alg, 'RS256');
    assert.ok(keySet.keys.some((k) => k.kid === protectedHeader.kid));
    const now = seconds(clock.now());
    assert.equal(payload.sub, license.id);
    assert.equal(payload.token_use, 'service_license_v1');
    assert.equal(payload.svc_vt, 'basic');
    assert.equal(payload.seller_tier, 'free');
    assert.equal(payload.status, 'ACTIVE');
    assert.equal(payload.hw_bound, true);
    assert.equal(payload.plan, 'pro');
    assert.deepEqual(payload.features, ['export']);
    assert.equal(payload.internal, undefined);
    assert.equal(payload.license_exp, seconds(new Date('2099-01-01T00:00:00.000Z')));
    assert.equal(payload.iat, now);
    assert.equal(payload.nbf, now);
    assert.equal(payload.exp, now + 15 * 60);
    assert.equal(result.license_token_expires_at, new Date((now + 15 * 60) * 1000).toISOString());
    assert.equal(typeof payload.jti, 'string');

    // An implementation that is not jose agrees.
    assert.equal(verifyIndependently(result.license_token, keySet).sub, license.id);

    // Each issuance has its own jti.
    const again = await verifyKey(license.key, 'pc-1');
    assert.notEqual(decodeClaims(again.license_token).jti, payload.jti);
  });

  test('live as long as the seller’s tier allows, never past the license', async () => {
    const cases: [Tier, string, number][] = [
      ['pro', 'basic', 15 * 60],
      ['business', 'advanced', 60 * 60],
      ['enterprise', 'custom', 24 * 60 * 60],
    ];
    for (const [tier, verificationTier, lifetime] of cases) {
      const seller = await sellerWithApp(server, tier);
      const result = await verifyKey((await issueLicense(server, seller)).key);
      const claims = decodeClaims(result.license_token);
      assert.equal(result.verificationType, verificationTier);
      assert.equal(claims.svc_vt, verificationTier);
      assert.equal(claims.seller_tier, tier);
      assert.equal(claims.exp - claims.iat, lifetime, tier);
      assert.equal(claims.license_exp, undefined);
    }
    const seller = await sellerWithApp(server, 'enterprise');
    const soon = new Date(clock.now().getTime() + 10 * 60_000);
    const claims = decodeClaims(
      (await verifyKey((await issueLicense(server, seller, { expiresAt: soon.toISOString() })).key))
        .license_token,
    );
    assert.equal(claims.exp, seconds(soon));
  });

  test('the key set is cacheable briefly and holds public keys only', async () => {
    const res = (await server.api.get('/licenses/jwks')).expect(200);
    assert.match(res.headers.get('cache-control') ?? '', /max-age=60\b/);
    for (const key of res.body.keys) {
      assert.deepEqual(
        Object.keys(key).sort(),
        key.kty === 'RSA'
          ? ['alg', 'e', 'kid', 'kty', 'n', 'purpose', 'use']
          : ['alg', 'crv', 'kid', 'kty', 'purpose', 'use', 'x'],
      );
    }
    // Of each algorithm a token key, and the offline key that signs license files and revocation lists.
    assert.deepEqual(
      res.body.keys.map((key: { purpose: string; alg: string }) => `${key.alg} ${key.purpose}`).sort(),
      ['EdDSA offline', 'EdDSA token', 'RS256 offline', 'RS256 token'],
    );
    assert.ok(!res.text.includes('PRIVATE'));
  });
});

describe('introspection', () => {
  test('reports the live state of a good token', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const { license_token } = await verifyKey(license.key);
    const active = await introspect(license_token);
    assert.equal(active.active, true);
    assert.equal(active.sub, license.id);
    assert.equal(active.aud, seller.appId);
    assert.equal(active.status, 'ACTIVE');

    const base = `/apps/${seller.appId}/licenses/${license.id}`;
    (await server.api.post(`${base}/suspend`, undefined, { token: seller.token })).expect(200);
    assert.deepEqual(await introspect(license_token), {
      active: false,
      reason: 'license_suspended',
      status: 'SUSPENDED',
    });
    (await server.api.post(`${base}/revoke`, undefined, { token: seller.token })).expect(200);
    assert.equal((await introspect(license_token)).reason, 'license_revoked');
  });

  test('refuses forged, foreign, confused and expired tokens', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const { license_token } = await verifyKey(license.key);
    const [head = '', body = '', signature = ''] = license_token.split('.');
    const claims = decodeClaims(license_token);
    const kid = decodeProtectedHeader(license_token).kid as string;
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

    const tampered = `${head}.${b64({ ...claims, sub: '00000000-0000-7000-8000-000000000000' })}.${signature}`;
    assert.equal((await introspect(tampered)).reason, 'invalid_signature');

    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${body}.`;
    assert.equal((await introspect(none)).reason, 'invalid_token');

    // HS256 "signed" with the public key as the HMAC secret (algorithm confusion).
    const jwk = (await jwks()).keys.find((k) => k.kid === kid) as Record<string, string>;
    const publicPem = createPublicKey({ key: jwk as never, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const hsHead = b64({ alg: 'HS256', typ: 'JWT', kid });
    const hsSig = createHmac('sha256', publicPem).update(`${hsHead}.${body}`).digest('base64url');
    assert.equal((await introspect(`${hsHead}.${body}.${hsSig}`)).reason, 'invalid_token');

    // Signed by a key that is not ours, under our kid and under its own.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    for (const foreignKid of [kid, 'not-our-key']) {
      const foreign = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: foreignKid })
        .sign(privateKey);
      assert.equal((await introspect(foreign)).reason, 'invalid_signature');
    }

    // Our own key, but not a license token.
    const ours = await storedSigningKey(server, kid);
    const wrongUse = await new SignJWT({ ...claims, token_use: 'something_else' })
      .setProtectedHeader({ alg: 'RS256', kid })
      .sign(ours);
    assert.equal((await introspect(wrongUse)).reason, 'invalid_token');
    const rightUse = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(ours);
    assert.equal((await introspect(rightUse)).active, true, 'the control case with our key passes');

    // The offline key signs license files and revocation lists, never a license token.
    const keySet = (await server.api.get('/licenses/jwks')).expect(200).body;
    const offlineKid = keySet.keys.find(
      (key: { purpose: string; alg: string }) => key.purpose === 'offline' && key.alg === 'RS256',
    ).kid;
    const byOfflineKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: offlineKid })
      .sign(await storedSigningKey(server, offlineKid));
    assert.equal((await introspect(byOfflineKey)).reason, 'invalid_token');

    clock.advance(16 * 60_000);
    assert.equal((await introspect(license_token)).reason, 'token_expired');
  });
});

describe('revoking tokens by jti', () => {
  test('the owner revokes a token once; introspection then says token_revoked', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const first = (await verifyKey(license.key)).license_token;
    const second = (await verifyKey(license.key)).license_token;
    const { jti, exp } = decodeClaims(first);
    const res = (await server.api.post('/licenses/revoke-token', { jti }, { token: seller.token })).expect(
      200,
    ).body;
    assert.deepEqual(res, { jti, revoked: true, expiresAt: new Date(exp * 1000).toISOString() });
    (await server.api.post('/licenses/revoke-token', { jti }, { token: seller.token })).expect(200);
    assert.deepEqual(await introspect(first), { active: false, reason: 'token_revoked' });
    assert.equal((await introspect(second)).active, true, 'other tokens of the license stay valid');

    // Dropped from the denylist once the token has expired anyway.
    const count = async () =>
      Number(
        (
          await server.db
            .selectFrom('revoked_tokens')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('jti', '=', jti)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await count(), 1);
    const { denylist } = server.service.modules;
    await denylist.purge();
    assert.equal(await count(), 1);
    clock.set(new Date((exp + 10) * 1000));
    await denylist.purge();
    assert.equal(await count(), 1, 'kept while introspection still tolerates the expired token');
    clock.set(new Date((exp + 31) * 1000));
    await denylist.purge();
    assert.equal(await count(), 0);
  });

  test('a jti claiming an expiry no token can have is refused', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const bytes = Buffer.alloc(32);
    Buffer.from(license.id.replace(/-/g, ''), 'hex').copy(bytes);
    bytes.writeUInt32BE(4_000_000_000, 16);
    const forged = bytes.toString('base64url');
    assertError(
      await server.api.post('/licenses/revoke-token', { jti: forged }, { token: seller.token }),
      404,
      'not_found',
    );
  });

  test('only the owning seller may revoke, through a session or the app’s key', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const { jti } = decodeClaims((await verifyKey(license.key)).license_token);
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.post('/licenses/revoke-token', { jti }, { token: stranger.token }),
      404,
      'not_found',
    );
    assertError(
      await server.api.post('/licenses/revoke-token', { jti: 'garbage' }, { token: seller.token }),
      404,
      'not_found',
    );
    assertError(await server.api.post('/licenses/revoke-token', { jti }), 401, 'unauthorized');
    const sibling = await createApp(server, seller.token, 'Sibling');
    const siblingKey = await createApiKey(server, seller.token, sibling.id);
    assertError(
      await server.api.post('/licenses/revoke-token', { jti }, { token: siblingKey.key }),
      404,
      'not_found',
    );
    const { key } = await createApiKey(server, seller.token, seller.appId);
    (await server.api.post('/licenses/revoke-token', { jti }, { token: key })).expect(200);
  });
});

describe('key rotation', () => {
  test('a new key is published first, signs after the delay, and old tokens verify until they expire', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const license = await issueLicense(server, seller);
    const oldToken = (await verifyKey(license.key)).license_token;
    const oldKid = decodeProtectedHeader(oldToken).kid;

    const { RS256: newKid } = (await server.service.modules.keyRing.rotate()).kids;
    const published = (await jwks()).keys.map((k) => k.kid);
    assert.ok(published.includes(newKid) && published.includes(oldKid as string));
    assert.equal(
      decodeProtectedHeader((await verifyKey(license.key)).license_token).kid,
      oldKid,
      'old key signs until activation',
    );

    clock.advance(121_000);
    const newToken = (await verifyKey(license.key)).license_token;
    assert.equal(decodeProtectedHeader(newToken).kid, newKid);
    // Both verify offline against the key set, and live.
    for (const token of [oldToken, newToken]) {
      const keySet = await jwks();
      await jwtVerify(token, createLocalJWKSet(keySet as never), {
        algorithms: ['RS256'],
        currentDate: clock.now(),
      });
      assert.equal((await introspect(token)).active, true);
    }

    // A day later every token the old key signed has expired, and the key leaves the set.
    clock.advance(24 * 60 * 60_000 + 6 * 60_000);
    const after = (await jwks()).keys.map((k) => k.kid);
    assert.ok(!after.includes(oldKid as string));
    assert.ok(after.includes(newKid));
  });
});

describe('expiry', () => {
  test('an expired license fails verification at once and the job records license.expired exactly once', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, {
      expiresAt: new Date(clock.now().getTime() + 60 * 60_000).toISOString(),
    });
    clock.advance(2 * 60 * 60_000);
    const result = await verifyKey(license.key);
    assert.equal(result.valid, false);
    assert.equal(result.code, 'license_expired');
    assert.equal(result.status, 'EXPIRED');

    await Promise.all([
      server.service.modules.licenses.expireDue(),
      server.service.modules.licenses.expireDue(),
    ]);
    await server.service.modules.licenses.expireDue();
    const path = `/apps/${seller.appId}/licenses/${license.id}`;
    assert.equal((await server.api.get(path, { token: seller.token })).expect(200).body.status, 'expired');
    const expired = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.expired',
    );
    assert.equal(expired.length, 1);
    assert.equal(expired[0]?.data.status, 'expired');

    // Extending the expiry brings it back.
    const future = new Date(clock.now().getTime() + 30 * 24 * 60 * 60_000).toISOString();
    const revived = (await server.api.patch(path, { expiresAt: future }, { token: seller.token })).expect(
      200,
    ).body;
    assert.equal(revived.status, 'active');
    assert.equal((await verifyKey(license.key)).valid, true);
  });
});

function decodeClaims(token: string) {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
}

describe('private keys', () => {
  test('never reach a response or a log, through generation, rotation and signing', async () => {
    const logLines: string[] = [];
    const logged = await startTestServer({ LOG_LEVEL: 'trace' }, { logLines });
    try {
      await logged.service.modules.keyRing.rotate();
      const seller = await signUp(logged);
      const app = await createApp(logged, seller.token);
      const license = (await logged.api.post(`/apps/${app.id}/licenses`, {}, { token: seller.token })).expect(
        201,
      ).body;
      const verified = (await logged.api.post('/licenses/verify', { key: license.key })).expect(200);
      const jwksText = (await logged.api.get('/licenses/jwks')).text;
      const rows = await logged.db.selectFrom('signing_keys').select('kid').execute();
      for (const { kid } of rows) {
        const pem = (await storedSigningKey(logged, kid)).export({ format: 'pem', type: 'pkcs8' }).toString();
        const body = pem.split('\n').slice(1, 3).join('');
        for (const text of [logLines.join(''), verified.text, jwksText]) {
          assert.ok(!text.includes(body), 'private key material leaked');
        }
      }
      assert.ok(!logLines.join('').includes('PRIVATE KEY'));
      assert.ok(logLines.some((line) => line.includes('license_token.key.rotated')));
    } finally {
      await logged.stop();
    }
  });
});

describe('with LICENSE_TOKENS=off', () => {
  test('verification answers without token fields and the key set is empty', async () => {
    const plain = await startTestServer({ LICENSE_TOKENS: 'off' });
    try {
      const seller = await signUp(plain);
      const app = await createApp(plain, seller.token);
      const license = (await plain.api.post(`/apps/${app.id}/licenses`, {}, { token: seller.token })).expect(
        201,
      ).body;
      const result = (await plain.api.post('/licenses/verify', { key: license.key })).expect(200).body;
      assert.equal(result.valid, true);
      for (const field of ['license_token', 'license_token_expires_at', 'license_jwks_uri'])
        assert.equal(result[field], undefined);
      const keySet = (await plain.api.get('/licenses/jwks')).expect(200).body;
      assert.ok(Array.isArray(keySet.keys));
      assert.equal(
        (await plain.api.post('/licenses/introspect', { license_token: 'a.b.c' })).expect(200).body.active,
        false,
      );
    } finally {
      await plain.stop();
    }
  });
});
