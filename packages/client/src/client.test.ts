import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader, SignJWT } from 'jose';
import {
  startTestServer,
  storedSigningKey,
  type TestServer,
  uniqueSuffix,
} from '../../../src/testing/harness.js';
import { startReceiver } from '../../../src/testing/receiver.js';
import { type TestClock, testClock } from '../../../src/testing/test-clock.js';
import {
  fetchKeySet,
  LicenseTokenError,
  LicenseTokenVerifier,
  LicensingApiError,
  LicensingClient,
  responseInfo,
  verifyWebhook,
  WebhookVerificationError,
} from './index.js';

/** The SDK against the real service: every call here crosses HTTP to a running server. */
let server: TestServer;
let clock: TestClock;
let seller: LicensingClient;
let appId: string;
const origin = () => server.service.coreUrl;
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-sdk-artifacts-'));

before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({ ARTIFACT_DIR: artifactDir }, { clock, ownDatabase: true });
  const anonymous = new LicensingClient({ baseUrl: origin() });
  const session = await anonymous.auth.register({
    email: `sdk-${uniqueSuffix()}@example.com`,
    password: 'sdk password 1',
  });
  seller = anonymous.withToken(session.token);
  appId = (await seller.apps.create({ name: 'SDK app' })).id;
});
after(async () => {
  await server.stop();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

describe('the typed API client', () => {
  test('drives apps, keys, products and licenses under /v1', async () => {
    const me = await seller.auth.me();
    assert.equal(me.credential.kind, 'user_token');
    const app = await seller.apps.get(appId);
    assert.equal(
      app.clientAddresses,
      'truncated',
      'timelines keep truncated addresses unless the seller chooses',
    );
    const private_ = await seller.apps.create({ name: 'Private', clientAddresses: 'none' });
    assert.equal(private_.clientAddresses, 'none');
    const key = await seller.apiKeys.create(appId, { name: 'backend' });
    const backend = new LicensingClient({ baseUrl: `${origin()}/v1/`, token: key.key });
    assert.equal((await backend.auth.me()).credential.appId, appId);

    const product = await backend.products.create({ name: 'Pro', price: 29.9, currency: 'EUR' });
    assert.equal(product.appId, appId);
    assert.equal((await backend.products.update(product.id, { active: false })).active, false);
    assert.equal((await backend.products.list({ active: false })).products.length, 1);

    const license = await backend.licenses.issue(appId, {
      productId: product.id,
      maxDevices: 1,
      metadata: { plan: 'pro' },
    });
    assert.equal((await backend.licenses.list(appId, { productId: product.id })).total, 1);
    const byKey = await backend.licenses.list(appId, { key: license.key.toLowerCase() });
    assert.deepEqual(
      byKey.licenses.map((found) => found.id),
      [license.id],
    );
    assert.equal(product.checkoutUrl.endsWith(`/checkout/${product.id}`), true);
    assert.equal((await backend.licenses.suspend(appId, license.id)).status, 'suspended');
    assert.equal((await backend.licenses.reinstate(appId, license.id)).status, 'active');

    // The product's policy, applied to the license issued before it; a new key for the license.
    await backend.products.update(product.id, {
      licensePolicy: { ...product.licensePolicy, model: 'node_locked', maxDevices: 4 },
    });
    assert.deepEqual(await backend.products.applyLicensePolicy(product.id), { updated: 1, skipped: 0 });
    const renewed = await backend.licenses.regenerateKey(appId, license.id);
    assert.deepEqual([renewed.id, renewed.maxDevices], [license.id, 4]);
    assert.notEqual(renewed.key, license.key);
    const pilot = await backend.licenses.issue(appId, { trialDays: 14, floating: true, maxSeats: 1 });
    assert.equal(pilot.status, 'trial');
    assert.equal((await backend.checkout({ key: pilot.key, hwuid: 'pc', appId })).valid, true);
    await backend.licenses.releaseSeat(appId, pilot.id, 'pc');
    assert.equal((await backend.licenses.seats(appId, pilot.id)).total, 0);
  });

  test('drives an app’s releases: a draft, published, listed newest first, yanked; a draft deleted', async () => {
    const key = await seller.apiKeys.create(appId, { name: 'ci' });
    const ci = new LicensingClient({ baseUrl: origin(), token: key.key });
    const first = await ci.releases.create(appId, { version: 'v1.9.0', notes: 'Stable' });
    assert.deepEqual([first.version, first.channel, first.status], ['1.9.0', 'stable', 'draft']);
    const beta = await ci.releases.create(appId, { version: '1.10.0-beta.1' });
    assert.equal(beta.channel, 'beta');
    const published = await ci.releases.publish(appId, first.id);
    assert.equal(published.status, 'published');
    assert.equal((await ci.releases.publish(appId, first.id)).publishedAt, published.publishedAt);
    const listed = await ci.releases.list(appId);
    assert.deepEqual(
      listed.releases.map((release) => release.version),
      ['1.10.0-beta.1', '1.9.0'],
    );
    assert.equal((await ci.releases.list(appId, { status: 'published' })).total, 1);
    assert.equal(
      (await ci.releases.update(appId, beta.id, { version: '1.10.0-rc.1', channel: 'rc' })).channel,
      'rc',
    );
    assert.equal((await ci.releases.yank(appId, first.id)).status, 'yanked');
    await ci.releases.remove(appId, beta.id);
    await assert.rejects(
      ci.releases.get(appId, beta.id),
      (error: unknown) => error instanceof LicensingApiError && error.code === 'not_found',
    );
    await assert.rejects(
      ci.releases.create(appId, { version: '1.9.0' }),
      (error: unknown) => error instanceof LicensingApiError && error.code === 'release_exists',
    );
  });

  test('uploads a release’s files from a Buffer, a Blob and a stream; lists, gets and removes them', async () => {
    const key = await seller.apiKeys.create(appId, { name: 'ci uploads' });
    const ci = new LicensingClient({ baseUrl: origin(), token: key.key });
    const release = await ci.releases.create(appId, { version: '3.0.0' });
    const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const [linux, mac, notes] = [randomBytes(200_000), randomBytes(50_000), Buffer.from('what is new')];

    const fromBuffer = await ci.releases.uploadArtifact(
      appId,
      release.id,
      { filename: 'tool-3.0.0.tar.gz', platform: 'linux', arch: 'x64' },
      linux,
    );
    assert.deepEqual(
      [fromBuffer.filename, fromBuffer.platform, fromBuffer.arch, fromBuffer.filetype, fromBuffer.size],
      ['tool-3.0.0.tar.gz', 'linux', 'x64', 'tar.gz', linux.length],
    );
    assert.equal(fromBuffer.sha256, sha256(linux));
    assert.equal(responseInfo(fromBuffer)?.status, 201);
    // In chunks, as a file read from disk arrives: the service hashes the whole of it.
    const fromStream = await ci.releases.uploadArtifact(
      appId,
      release.id,
      { filename: 'Tool-3.0.0.dmg', platform: 'macos' },
      Readable.from([mac.subarray(0, 20_000), mac.subarray(20_000)]),
    );
    assert.equal(fromStream.sha256, sha256(mac));
    assert.equal(fromStream.arch, null);
    const fromBlob = await ci.releases.uploadArtifact(
      appId,
      release.id,
      { filename: 'notes.txt' },
      new Blob([notes]),
    );
    assert.equal(fromBlob.size, notes.length);
    const again = await ci.releases.uploadArtifact(appId, release.id, { filename: 'notes.txt' }, notes);
    assert.equal(responseInfo(again)?.status, 200, 'the same bytes again: the artifact as it is');

    const listed = await ci.releases.listArtifacts(appId, release.id);
    assert.deepEqual(
      listed.artifacts.map((artifact) => [artifact.filename, artifact.downloads]),
      [
        ['Tool-3.0.0.dmg', 0],
        ['notes.txt', 0],
        ['tool-3.0.0.tar.gz', 0],
      ],
    );
    const got = await ci.releases.getArtifact(appId, release.id, {
      filename: 'tool-3.0.0.tar.gz',
      platform: 'linux',
      arch: 'x64',
    });
    assert.equal(got.sha512, createHash('sha512').update(linux).digest('hex'));
    await assert.rejects(
      ci.releases.getArtifact(appId, release.id, { filename: 'tool-3.0.0.tar.gz' }),
      (error: unknown) => error instanceof LicensingApiError && error.code === 'not_found',
      'the platform and architecture are part of its address',
    );
    await ci.releases.removeArtifact(appId, release.id, { filename: 'notes.txt' });
    assert.equal((await ci.releases.listArtifacts(appId, release.id)).total, 2);

    await assert.rejects(
      ci.releases.uploadArtifact(appId, release.id, { filename: 'bad name.zip' }, notes),
      (error: unknown) =>
        error instanceof LicensingApiError && error.status === 400 && error.details[0]?.field === 'filename',
    );
    await ci.releases.publish(appId, release.id);
    await assert.rejects(
      ci.releases.removeArtifact(appId, release.id, { filename: 'Tool-3.0.0.dmg', platform: 'macos' }),
      (error: unknown) => error instanceof LicensingApiError && error.code === 'release_not_draft',
    );
    await assert.rejects(
      ci.releases.uploadArtifact(appId, release.id, { filename: 'Tool-3.0.0.dmg', platform: 'macos' }, notes),
      (error: unknown) => error instanceof LicensingApiError && error.code === 'artifact_exists',
    );
  });

  test('adds a file the seller hosts by its address, with what they declare of it', async () => {
    const key = await seller.apiKeys.create(appId, { name: 'ci hosted' });
    const ci = new LicensingClient({ baseUrl: origin(), token: key.key });
    const release = await ci.releases.create(appId, { version: '3.1.0' });
    const bytes = randomBytes(1000);
    const input = {
      filename: 'Tool-3.1.0.dmg',
      platform: 'macos',
      url: 'https://downloads.example.com/Tool-3.1.0.dmg',
      size: bytes.length,
      sha512: createHash('sha512').update(bytes).digest('base64'),
    };
    const hosted = await ci.releases.addExternalArtifact(appId, release.id, input);
    assert.deepEqual(
      [hosted.url, hosted.size, hosted.sha256, hosted.sha512],
      [input.url, bytes.length, null, createHash('sha512').update(bytes).digest('hex')],
    );
    assert.equal(responseInfo(hosted)?.status, 201);
    const again = await ci.releases.addExternalArtifact(appId, release.id, input);
    assert.equal(again.id, hosted.id, 'the same declaration again: the artifact as it is');
    assert.equal(
      (await ci.releases.getArtifact(appId, release.id, { filename: 'Tool-3.1.0.dmg', platform: 'macos' }))
        .url,
      input.url,
    );
    await assert.rejects(
      ci.releases.addExternalArtifact(appId, release.id, {
        ...input,
        url: 'http://downloads.example.com/x.dmg',
      }),
      (error: unknown) =>
        error instanceof LicensingApiError && error.status === 400 && error.details[0]?.field === 'url',
    );
  });

  test('turns error answers into LicensingApiError with code, status and request id', async () => {
    await assert.rejects(
      seller.products.create({ name: 'Bad', price: -1, currency: 'USD', appId }),
      (error: unknown) =>
        error instanceof LicensingApiError &&
        error.status === 400 &&
        error.code === 'validation_failed' &&
        error.details.some((d) => d.field === 'price') &&
        typeof error.requestId === 'string',
    );
    const stranger = new LicensingClient({ baseUrl: origin(), token: `sk_${'0'.repeat(48)}` });
    await assert.rejects(
      stranger.apps.list(),
      (error: unknown) => error instanceof LicensingApiError && error.status === 401,
    );
  });
});

describe('verification from client software', () => {
  test('verifies online, checks the token offline, and introspects it', async () => {
    const license = await seller.licenses.issue(appId, {
      maxDevices: 2,
      metadata: { plan: 'pro', features: ['sync'] },
    });
    const client = new LicensingClient({ baseUrl: origin() });
    const result = await client.verify({ key: license.key, hwuid: 'laptop', appId });
    assert.equal(result.appId, appId);
    assert.equal(result.valid, true);
    // Built from PUBLIC_BASE_URL (the test server listens on a port chosen at start).
    assert.equal(result.license_jwks_uri, `${server.config.apiBaseUrl}/licenses/jwks`);

    const verifier = new LicenseTokenVerifier({
      jwksUri: client.jwksUri,
      appId,
      issuer: server.config.apiBaseUrl,
      now: () => clock.now(),
    });
    const claims = await verifier.verify(result.license_token as string);
    assert.equal(claims.sub, license.id);
    assert.equal(claims.plan, 'pro');
    assert.deepEqual(claims.features, ['sync']);
    assert.equal(claims.hw_bound, true);

    assert.equal((await client.introspect(result.license_token as string)).active, true);
    await seller.revokeToken(claims.jti);
    assert.deepEqual(await client.introspect(result.license_token as string), {
      active: false,
      reason: 'token_revoked',
    });
  });

  test('sends its appVersion, which the seller reads in the license’s timeline, found across apps', async () => {
    assert.throws(
      () => new LicensingClient({ baseUrl: origin(), appVersion: 'two words' }),
      /appVersion: must be 1 to 64 visible ASCII characters/,
    );
    const license = await seller.licenses.issue(appId, { email: `timeline-${uniqueSuffix()}@example.com` });
    const client = new LicensingClient({ baseUrl: origin(), appVersion: '3.1.4-sdk' });
    assert.equal((await client.verify({ key: license.key, hwuid: 'desk', appId })).valid, true);
    await server.service.modules.timelineJournal.flush();

    const found = await seller.licenses.search({ email: license.email?.slice(0, 12).toUpperCase() });
    assert.deepEqual(
      found.licenses.map((l) => l.id),
      [license.id],
    );
    const page = await seller.licenses.events(appId, license.id, {
      type: ['verification', 'license.created'],
    });
    assert.deepEqual(
      page.events.map((e) => [e.type, e.outcome, e.hwuid, e.appVersion]),
      [
        ['verification', 'valid', 'desk', '3.1.4-sdk'],
        ['license.created', null, null, null],
      ],
    );
    assert.equal(page.nextCursor, null);
    const first = await seller.licenses.events(appId, license.id, { limit: 1 });
    assert.equal(first.events.length, 1);
    const rest = await seller.licenses.events(appId, license.id, { cursor: first.nextCursor ?? '' });
    assert.ok(!rest.events.some((e) => e.id === first.events[0]?.id), 'the next page starts after the first');
  });

  test('takes, renews and gives back a floating seat, with the entitlements in force', async () => {
    const product = await seller.products.create({
      appId,
      name: 'Team',
      price: 99,
      currency: 'USD',
      features: ['export'],
    });
    const license = await seller.licenses.issue(appId, {
      productId: product.id,
      floating: true,
      maxSeats: 1,
      leaseSeconds: 120,
    });
    assert.deepEqual(
      [license.floating, license.maxSeats, license.leaseSeconds, license.maxDevices, license.features],
      [true, 1, 120, null, null],
    );
    const client = new LicensingClient({ baseUrl: origin() });
    const taken = await client.checkout({
      key: license.key,
      hwuid: 'desk',
      appId,
      name: 'Reception desk',
      platform: 'Windows 11',
    });
    assert.deepEqual([taken.valid, taken.features], [true, ['export']]);
    assert.equal(taken.lease_expires_at, new Date(clock.now().getTime() + 120_000).toISOString());
    assert.equal(
      (await client.checkout({ key: license.key, hwuid: 'laptop', appId })).code,
      'no_seat_available',
    );
    const held = await seller.licenses.seats(appId, license.id);
    assert.deepEqual(held, {
      seats: [
        {
          hwuid: 'desk',
          name: 'Reception desk',
          platform: 'Windows 11',
          acquiredAt: clock.now().toISOString(),
          leaseExpiresAt: taken.lease_expires_at,
        },
      ],
      total: 1,
      maxSeats: 1,
    });

    // A second seat, a longer lease and the license's own entitlements, all through update.
    const changed = await seller.licenses.update(appId, license.id, {
      maxSeats: 2,
      leaseSeconds: 900,
      features: ['export', 'sync'],
    });
    assert.deepEqual(
      [changed.maxSeats, changed.leaseSeconds, changed.features],
      [2, 900, ['export', 'sync']],
    );
    const second = await client.checkout({ key: license.key, hwuid: 'laptop', appId });
    assert.deepEqual([second.valid, second.features], [true, ['export', 'sync']]);
    assert.equal(second.lease_expires_at, new Date(clock.now().getTime() + 900_000).toISOString());
    assert.equal((await seller.licenses.seats(appId, license.id)).total, 2);
    // Seat settings on update are checked like on issue.
    await assert.rejects(
      seller.licenses.update(appId, license.id, { leaseSeconds: 30 }),
      (error: unknown) =>
        error instanceof LicensingApiError && error.details.some((d) => d.field === 'leaseSeconds'),
    );

    assert.deepEqual(await client.checkin({ key: license.key, hwuid: 'desk', appId }), { released: true });
    assert.deepEqual(await client.checkin({ key: license.key, hwuid: 'desk', appId }), {
      released: false,
      code: 'seat_not_held',
    });
    assert.deepEqual(
      (await seller.licenses.seats(appId, license.id)).seats.map((seat) => seat.hwuid),
      ['laptop'],
    );
  });

  test('refuses a token for another app, one that is not a license token, and an expired one', async () => {
    const license = await seller.licenses.issue(appId);
    const client = new LicensingClient({ baseUrl: origin() });
    const token = (await client.verify({ key: license.key, appId })).license_token as string;
    const wrongApp = new LicenseTokenVerifier({
      jwksUri: client.jwksUri,
      appId: '00000000-0000-7000-8000-000000000000',
      now: () => clock.now(),
    });
    await assert.rejects(
      wrongApp.verify(token),
      (e: unknown) => e instanceof LicenseTokenError && e.code === 'wrong_audience',
    );

    const kid = decodeProtectedHeader(token).kid as string;
    const privateKey = await storedSigningKey(server, kid);
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
    const other = await new SignJWT({ ...claims, token_use: 'id_token' })
      .setProtectedHeader({ alg: 'RS256', kid })
      .sign(privateKey);
    const verifier = new LicenseTokenVerifier({ jwksUri: client.jwksUri, appId, now: () => clock.now() });
    await assert.rejects(
      verifier.verify(other),
      (e: unknown) => e instanceof LicenseTokenError && e.code === 'wrong_token_use',
    );

    const tampered = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await assert.rejects(
      verifier.verify(tampered),
      (e: unknown) => e instanceof LicenseTokenError && e.code === 'invalid_signature',
    );

    const later = new LicenseTokenVerifier({
      jwksUri: client.jwksUri,
      appId,
      now: () => new Date(clock.now().getTime() + 16 * 60_000),
    });
    await assert.rejects(
      later.verify(token),
      (e: unknown) => e instanceof LicenseTokenError && e.code === 'token_expired',
    );
  });

  test('learns a rotated key on its own and keeps accepting tokens of the old one', async () => {
    const license = await seller.licenses.issue(appId);
    const client = new LicensingClient({ baseUrl: origin() });
    const verifier = new LicenseTokenVerifier({
      jwksUri: client.jwksUri,
      appId,
      refetchCooldownMs: 0,
      now: () => clock.now(),
    });
    const oldToken = (await client.verify({ key: license.key, appId })).license_token as string;
    await verifier.verify(oldToken); // caches the current key set

    const { RS256: kid } = (await server.service.modules.keyRing.rotate()).kids;
    clock.advance(121_000);
    const newToken = (await client.verify({ key: license.key, appId })).license_token as string;
    assert.equal(decodeProtectedHeader(newToken).kid, kid);
    assert.equal(
      (await verifier.verify(newToken)).sub,
      license.id,
      'the unknown kid made it fetch the set again',
    );
    assert.equal((await verifier.verify(oldToken)).sub, license.id, 'old tokens verify until they expire');
  });
});

describe('offline checks from a stored key set', () => {
  test('checks a token with no network, and learns a rotated key only when it may go online', async () => {
    const license = await seller.licenses.issue(appId);
    const client = new LicensingClient({ baseUrl: origin() });
    const keySet = await fetchKeySet(client.jwksUri);
    const stored = JSON.parse(JSON.stringify(keySet)); // as read back from disk
    const oldToken = (await client.verify({ key: license.key, appId })).license_token as string;
    const offline = new LicenseTokenVerifier({ appId, keySet: stored, now: () => clock.now() });
    assert.equal((await offline.verify(oldToken)).sub, license.id);

    const { RS256: kid } = (await server.service.modules.keyRing.rotate()).kids;
    clock.advance(121_000);
    const newToken = (await client.verify({ key: license.key, appId })).license_token as string;
    assert.equal(decodeProtectedHeader(newToken).kid, kid);
    await assert.rejects(
      offline.verify(newToken),
      (e: unknown) => e instanceof LicenseTokenError && e.code === 'invalid_signature',
      'a verifier without jwksUri never goes online',
    );

    const unreachable = new LicenseTokenVerifier({
      appId,
      keySet: stored,
      jwksUri: 'http://127.0.0.1:9/v1/licenses/jwks',
      now: () => clock.now(),
    });
    assert.equal((await unreachable.verify(oldToken)).sub, license.id, 'known keys need no network');
    await assert.rejects(
      unreachable.verify(newToken),
      (e: unknown) => e instanceof LicenseTokenError && e.code === 'key_set_unavailable',
    );

    const saved: unknown[] = [];
    const online = new LicenseTokenVerifier({
      appId,
      keySet: stored,
      jwksUri: client.jwksUri,
      onKeySet: (fresh) => void saved.push(fresh),
      now: () => clock.now(),
    });
    assert.equal((await online.verify(newToken)).sub, license.id);
    assert.equal(saved.length, 1, 'the fetched set is handed over to be stored');
    assert.ok(online.currentKeySet?.keys.some((key) => key.kid === kid));
  });

  test('refuses to start without a key set or an address, or without an app id', () => {
    assert.throws(() => new LicenseTokenVerifier({ appId }), /jwksUri or keySet/);
    assert.throws(
      () => new LicenseTokenVerifier({ appId: '', jwksUri: 'https://api.example.com/v1/licenses/jwks' }),
      /appId: must be your app id/,
    );
  });
});

describe('receiving webhooks', () => {
  test('verifyWebhook called the wrong way says how to call it', () => {
    const misuse = (args: unknown[], message: RegExp) =>
      assert.throws(() => (verifyWebhook as (...a: unknown[]) => unknown)(...args), message);
    const call = /verifyWebhook\(\{ secret, body, signature, timestamp \}\) takes one object/;
    misuse(['{"id":"1"}', 'sha256=ab', 'whsec_1'], call);
    misuse(['{"id":"1"}', 'sha256=ab', 'whsec_1'], /the first argument is a string, not that object/);
    misuse([Buffer.from('{}'), {}], /the first argument is a Buffer/);
    misuse([{ body: '{}', signature: 'a', timestamp: '1' }], /secret must be the endpoint's webhook secret/);
    misuse(
      [{ secret: 'whsec_1', body: { id: '1' }, signature: 'a', timestamp: '1' }],
      /body must be the raw request body as a string or Buffer \(got an object\)/,
    );
    misuse(
      [{ secret: 'whsec_1', body: '{}', signature: ['a'], timestamp: '1' }],
      /signature must be the X-Webhook-Signature header as a string/,
    );
  });

  test('verifyWebhook accepts a real delivery and refuses a tampered or replayed one', async () => {
    const receiver = await startReceiver();
    try {
      const webhook = await seller.request<{ id: string; secret: string }>('POST', '/webhooks', {
        url: `${receiver.url}/sdk`,
        events: ['license.created'],
      });
      await seller.licenses.issue(appId);
      await server.service.modules.deliveryWorker.runOnce();
      const [delivery] = await receiver.waitFor(1);
      assert.ok(delivery);
      const headers = {
        signature: String(delivery.headers['x-webhook-signature']),
        timestamp: String(delivery.headers['x-webhook-timestamp']),
      };
      const now = new Date(Number(headers.timestamp) * 1000);
      const envelope = verifyWebhook({ secret: webhook.secret, body: delivery.body, ...headers, now });
      assert.equal(envelope.type, 'license.created');
      const bare = headers.signature.replace(/^sha256=/, '');
      assert.equal(
        verifyWebhook({
          secret: webhook.secret,
          body: delivery.body,
          signature: bare,
          timestamp: headers.timestamp,
          now,
        }).id,
        envelope.id,
      );

      const refuse = (input: Parameters<typeof verifyWebhook>[0], code: string) =>
        assert.throws(
          () => verifyWebhook(input),
          (e: unknown) => e instanceof WebhookVerificationError && e.code === code,
        );
      refuse(
        {
          secret: webhook.secret,
          body: delivery.body.replace('license.created', 'license.revoked'),
          ...headers,
          now,
        },
        'bad_signature',
      );
      refuse({ secret: 'whsec_other', body: delivery.body, ...headers, now }, 'bad_signature');
      refuse(
        { secret: webhook.secret, body: delivery.body, ...headers, now: new Date(now.getTime() + 3_600_000) },
        'stale_timestamp',
      );
      refuse(
        {
          secret: webhook.secret,
          body: delivery.body,
          signature: undefined,
          timestamp: headers.timestamp,
          now,
        },
        'malformed',
      );
    } finally {
      await receiver.close();
    }
  });
});
