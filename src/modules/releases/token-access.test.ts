import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type ArtifactBackend, openArtifactBackend } from '../../testing/artifact-backends.js';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { publishRelease, reachable } from '../../testing/releases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * A license token in place of the license key, over HTTP: the update check, download links and
 * the updater feeds take the token verify signed, check it as introspection does, and then apply
 * the release rules to the license as it stands in the store now.
 */
let server: TestServer;
let clock: TestClock;
let backend: ArtifactBackend;
const logLines: string[] = [];
before(async () => {
  backend = await openArtifactBackend('local');
  clock = testClock('2026-06-01T10:00:00.000Z');
  // A database of its own: the clock stands months before today, and on a shared database the
  // signing keys other files made today would not be valid yet at its time.
  server = await startTestServer(
    { ...backend.env, LOG_LEVEL: 'debug' },
    { clock, logLines, ownDatabase: true },
  );
});
after(async () => {
  await server.stop();
  await backend.close();
});

/** The license token of a valid verify of the key (and device). */
async function tokenOf(seller: SellerWithApp, key: string, hwuid?: string): Promise<string> {
  const answer = (
    await server.api.post('/licenses/verify', { appId: seller.appId, key, ...(hwuid ? { hwuid } : {}) })
  ).expect(200).body;
  assert.equal(answer.valid, true, JSON.stringify(answer));
  assert.equal(typeof answer.license_token, 'string');
  return answer.license_token as string;
}

const upgrade = (body: Record<string, unknown>) => server.api.post('/releases/upgrade', body);
const download = (body: Record<string, unknown>) => server.api.post('/releases/download', body);
const file = (bytes = randomBytes(64)) => ({ bytes });

describe('a license token in place of the key', () => {
  test('the update check and a download link take the token of a device-bound license, without the device', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    const bytes = randomBytes(5_000);
    await publishRelease(server, seller, '1.1.0', { 'tool-1.1.0.zip': file(bytes) });
    const token = await tokenOf(seller, license.key, 'pc-1');

    const offered = (await upgrade({ appId: seller.appId, token, currentVersion: '1.0.0' })).expect(200);
    assert.equal(offered.headers.get('cache-control'), 'no-store');
    assert.equal(offered.body.release.version, '1.1.0');
    assert.equal(offered.body.artifacts[0].filename, 'tool-1.1.0.zip');
    assert.equal((await upgrade({ appId: seller.appId, token, currentVersion: '1.1.0' })).status, 204);

    const link = (
      await download({ appId: seller.appId, token, version: '1.1.0', filename: 'tool-1.1.0.zip' })
    ).expect(200).body;
    const fetched = await fetch(reachable(server, link.downloadUrl));
    assert.equal(fetched.status, 200);
    assert.deepEqual(Buffer.from(await fetched.arrayBuffer()), bytes);

    // The token stood for pc-1: it took no device place, and the key still binds only that one.
    const devices = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/devices`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      devices.devices.map((device: { hwuid: string }) => device.hwuid),
      ['pc-1'],
    );
  });

  test('the entitlements are the license’s as stored now, whatever the token’s claims say', async () => {
    const seller = await sellerWithApp(server);
    await publishRelease(server, seller, '2.0.0', { 'base.zip': file() });
    await publishRelease(server, seller, '2.1.0', { 'pro.zip': file() }, { requiredFeatures: ['pro'] });
    const license = await issueLicense(server, seller);
    // Signed while the license granted nothing: the token has no features claim.
    const token = await tokenOf(seller, license.key);
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
    assert.equal(claims.features, undefined);
    const ask = () => upgrade({ appId: seller.appId, token, currentVersion: '1.0.0' });
    assert.equal((await ask()).expect(200).body.release.version, '2.0.0');
    const proLink = { appId: seller.appId, token, version: '2.1.0', filename: 'pro.zip' };
    assertError(await download(proLink), 403, 'feature_not_granted');

    const licensePath = `/apps/${seller.appId}/licenses/${license.id}`;
    (
      await server.api.patch(licensePath, { features: ['pro', 'channel:rc'] }, { token: seller.token })
    ).expect(200);
    assert.equal((await ask()).expect(200).body.release.version, '2.1.0', 'pro granted since');
    (await download(proLink)).expect(200);
    assertError(
      await upgrade({ appId: seller.appId, token, currentVersion: '1.0.0', channel: 'beta' }),
      403,
      'channel_not_granted',
    );
    (await server.api.patch(licensePath, { features: [] }, { token: seller.token })).expect(200);
    assertError(await download(proLink), 403, 'feature_not_granted');
  });

  test('a token of a license suspended or revoked since, or a revoked token, is refused', async () => {
    const seller = await sellerWithApp(server);
    await publishRelease(server, seller, '3.0.0', { 'x.zip': file() });
    const licensePath = (id: string) => `/apps/${seller.appId}/licenses/${id}`;
    const ask = (token: string) => upgrade({ appId: seller.appId, token, currentVersion: '1.0.0' });

    const suspended = await issueLicense(server, seller);
    const suspendedToken = await tokenOf(seller, suspended.key);
    (await ask(suspendedToken)).expect(200);
    (
      await server.api.post(`${licensePath(suspended.id)}/suspend`, undefined, { token: seller.token })
    ).expect(200);
    assertError(await ask(suspendedToken), 409, 'license_suspended');
    assertError(
      await download({ appId: seller.appId, token: suspendedToken, version: '3.0.0', filename: 'x.zip' }),
      409,
      'license_suspended',
    );
    (
      await server.api.post(`${licensePath(suspended.id)}/reinstate`, undefined, { token: seller.token })
    ).expect(200);
    (await ask(suspendedToken)).expect(200);

    const revoked = await issueLicense(server, seller);
    const revokedToken = await tokenOf(seller, revoked.key);
    (await server.api.post(`${licensePath(revoked.id)}/revoke`, undefined, { token: seller.token })).expect(
      200,
    );
    assertError(await ask(revokedToken), 409, 'license_revoked');

    const held = await issueLicense(server, seller);
    const heldToken = await tokenOf(seller, held.key);
    const otherToken = await tokenOf(seller, held.key);
    const { jti } = JSON.parse(Buffer.from(heldToken.split('.')[1] ?? '', 'base64url').toString());
    (await server.api.post('/licenses/revoke-token', { jti }, { token: seller.token })).expect(200);
    assertError(await ask(heldToken), 403, 'token_revoked');
    (await ask(otherToken)).expect(200);
  });

  test('an expired, forged or foreign token is refused with introspection’s code', async () => {
    const seller = await sellerWithApp(server);
    const other = await sellerWithApp(server);
    await publishRelease(server, seller, '4.0.0', { 'y.zip': file() });
    const license = await issueLicense(server, seller);
    const token = await tokenOf(seller, license.key);
    const foreignToken = await tokenOf(other, (await issueLicense(server, other)).key);
    const ask = (asked: string) => upgrade({ appId: seller.appId, token: asked, currentVersion: '1.0.0' });
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const [head = '', body = '', signature = ''] = token.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());

    const tampered = `${head}.${b64({ ...claims, features: ['pro'] })}.${signature}`;
    assertError(await ask(tampered), 403, 'invalid_signature');
    const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${body}.`;
    assertError(await ask(unsigned), 403, 'invalid_token');
    assertError(await ask(foreignToken), 404, 'license_not_found');

    (await ask(token)).expect(200);
    clock.advance(16 * 60_000);
    assertError(await ask(token), 403, 'token_expired');
    assertError(
      await download({ appId: seller.appId, token, version: '4.0.0', filename: 'y.zip' }),
      403,
      'token_expired',
    );
  });

  test('a license keeping access past its expiry: its token receives the releases published before it', async () => {
    const seller = await sellerWithApp(server);
    const expiresAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const kept = await issueLicense(server, seller, { expiresAt, expiryStrategy: 'maintain_access' });
    await publishRelease(server, seller, '5.0.0', { 'old.zip': file() });
    clock.advance(2 * 3_600_000);
    await publishRelease(server, seller, '5.1.0', { 'new.zip': file() });
    const token = await tokenOf(seller, kept.key);
    const offered = (await upgrade({ appId: seller.appId, token, currentVersion: '1.0.0' })).expect(200);
    assert.equal(offered.body.release.version, '5.0.0');
    assertError(
      await download({ appId: seller.appId, token, version: '5.1.0', filename: 'new.zip' }),
      409,
      'license_expired',
    );
  });

  test('the key and the token together, or neither, answer 400 naming the field', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const token = await tokenOf(seller, license.key);
    const base = { appId: seller.appId, currentVersion: '1.0.0' };
    const field = async (body: Record<string, unknown>, route = upgrade) =>
      assertError(await route(body), 400, 'validation_failed').details?.[0]?.field;
    assert.equal(await field({ ...base, key: license.key, token }), 'token');
    assert.equal(await field(base), 'key');
    assert.equal(await field({ ...base, token, hwuid: 'pc-1' }), 'hwuid');
    assert.equal(await field({ ...base, token: license.key }), 'token', 'a key is no token');
    const link = { appId: seller.appId, version: '1.0.0', filename: 'a.zip' };
    assert.equal(await field({ ...link, key: license.key, token }, download), 'token');
    assert.equal(await field(link, download), 'key');
  });
});

describe('updater feeds with Authorization: Bearer <license token>', () => {
  test('the channel file and its file take the token; a device id beside it is refused; the token is not logged', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    await publishRelease(server, seller, '6.0.0', {
      'Tool-6.0.0.AppImage': { bytes: randomBytes(128), platform: 'linux', arch: 'x64' },
    });
    const token = await tokenOf(seller, license.key, 'pc-1');
    const bearer = { authorization: `Bearer ${token}` };
    const feeds = `/releases/feeds/${seller.appId}`;
    const channel = (await server.api.get(`${feeds}/electron/latest-linux.yml`, { headers: bearer })).expect(
      200,
    );
    assert.match(channel.text, /^version: 6\.0\.0$/m);
    const fileAddress = `${feeds}/files/6.0.0/Tool-6.0.0.AppImage?platform=linux&arch=x64`;
    const redirect = await fetch(`${server.service.coreUrl}/v1${fileAddress}`, {
      headers: bearer,
      redirect: 'manual',
    });
    assert.equal(redirect.status, 303, await redirect.clone().text());
    assert.match(redirect.headers.get('location') ?? '', /\/releases\/files\//);

    const refused = await server.api.get(`${feeds}/electron/latest-linux.yml`, {
      headers: { ...bearer, 'x-device-id': 'pc-1' },
    });
    assert.equal(assertError(refused, 400, 'validation_failed').details?.[0]?.field, 'X-Device-Id');
    (
      await server.api.post(`/apps/${seller.appId}/licenses/${license.id}/suspend`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assertError(await server.api.get(fileAddress, { headers: bearer }), 409, 'license_suspended');

    const signature = token.split('.')[2] ?? '';
    assert.ok(
      logLines.some((line) => line.includes(`${feeds}/electron/`)),
      'the feed requests were logged',
    );
    assert.ok(!logLines.join('\n').includes(signature), 'a license token in the logs');
  });
});
