import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ARTIFACT_STORES,
  type ArtifactBackend,
  openArtifactBackend,
} from '../../testing/artifact-backends.js';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * Releases as client software receives them, over HTTP: the update check, download links and the
 * files behind them (ranges, expiry, yanking), and every refusal a license can meet; on each
 * artifact store in turn (a folder: the service sends the file; S3, an emulator on loopback: the
 * link redirects to a presigned URL of the store, which fetch follows).
 */
let server: TestServer;
let clock: TestClock;
let backend: ArtifactBackend;

interface Offered {
  filename: string;
  platform: string | null;
  arch: string | null;
  size: number;
  sha256: string;
  downloadUrl: string;
  downloadUrlExpiresAt: string;
}

/** A release with the given files (name → [platform, arch, bytes]), published unless `draft`. */
async function release(
  seller: SellerWithApp,
  version: string,
  files: Record<string, [string | null, string | null, Buffer]>,
  options: { channel?: string; requiredFeatures?: string[]; draft?: boolean } = {},
) {
  const { draft, ...fields } = options;
  const created = (
    await server.api.post(`/apps/${seller.appId}/releases`, { version, ...fields }, { token: seller.token })
  ).expect(201).body;
  for (const [filename, [platform, arch, bytes]] of Object.entries(files)) {
    const query = new URLSearchParams({ ...(platform ? { platform } : {}), ...(arch ? { arch } : {}) });
    const res = await fetch(
      `${server.service.coreUrl}/v1/apps/${seller.appId}/releases/${created.id}/artifacts/${filename}?${query}`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/octet-stream' },
        body: bytes,
      },
    );
    assert.equal(res.status, 201, await res.text());
  }
  if (!draft) {
    (
      await server.api.post(`/apps/${seller.appId}/releases/${created.id}/publish`, undefined, {
        token: seller.token,
      })
    ).expect(200);
  }
  return created as { id: string; version: string };
}

function upgrade(body: Record<string, unknown>) {
  return server.api.post('/releases/upgrade', body);
}

/**
 * A link is built on PUBLIC_BASE_URL, as a client outside sees the service; the test server's is
 * not where it listens, so the test reaches the same path on the listener.
 */
function reachable(url: string): string {
  assert.ok(url.startsWith(`${server.config.apiBaseUrl}/releases/files/`), url);
  return `${server.service.coreUrl}/v1${url.slice(server.config.apiBaseUrl.length)}`;
}

async function bytesOf(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(reachable(url), { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

for (const kind of ARTIFACT_STORES) {
  describe(`releases for client software (${kind} store)`, () => {
    before(async () => {
      backend = await openArtifactBackend(kind);
      clock = testClock('2026-06-01T10:00:00.000Z');
      server = await startTestServer(backend.env, { clock });
    });
    after(async () => {
      await server.stop();
      await backend.close();
    });

    describe('the update check', () => {
      test('offers the newest published release past the current version, for the platform, with working links', async () => {
        const seller = await sellerWithApp(server);
        const license = await issueLicense(server, seller, { maxDevices: 1 });
        const linux = randomBytes(40_000);
        await release(seller, '1.1.0', { 'tool-1.1.0.tar.gz': ['linux', 'x64', randomBytes(10)] });
        await release(seller, '1.2.0', {
          'tool-1.2.0.tar.gz': ['linux', 'x64', linux],
          'tool-1.2.0.dmg': ['macos', null, randomBytes(10)],
          'notes-1.2.0.txt': [null, null, Buffer.from('what is new')],
        });
        await release(
          seller,
          '1.3.0',
          { 'tool-1.3.0.tar.gz': ['linux', 'x64', randomBytes(10)] },
          { draft: true },
        );
        await release(seller, '1.2.1', { 'tool-1.2.1.dmg': ['macos', null, randomBytes(10)] });

        const ask = { appId: seller.appId, key: license.key, hwuid: 'pc-1', platform: 'linux', arch: 'x64' };
        const answer = (await upgrade({ ...ask, currentVersion: '1.0.0' })).expect(200);
        assert.equal(answer.headers.get('cache-control'), 'no-store');
        const offered = answer.body;
        // 1.2.1 has nothing for linux, 1.3.0 is a draft.
        assert.equal(offered.release.version, '1.2.0');
        assert.equal(offered.release.channel, 'stable');
        assert.deepEqual(
          (offered.artifacts as Offered[]).map((a) => a.filename).sort(),
          ['notes-1.2.0.txt', 'tool-1.2.0.tar.gz'],
          'the platform’s files and those for every platform',
        );
        const tarball = (offered.artifacts as Offered[]).find(
          (a) => a.filename === 'tool-1.2.0.tar.gz',
        ) as Offered;
        assert.equal(tarball.size, linux.length);
        const file = await bytesOf(tarball.downloadUrl);
        assert.equal(file.status, 200);
        assert.deepEqual(file.body, linux);
        assert.equal(file.headers.get('content-type'), 'application/octet-stream');
        assert.equal(file.headers.get('content-disposition'), 'attachment; filename="tool-1.2.0.tar.gz"');
        assert.equal(file.headers.get('accept-ranges'), 'bytes');

        assert.equal((await upgrade({ ...ask, currentVersion: '1.2.0' })).status, 204, 'up to date');
        assert.equal((await upgrade({ ...ask, currentVersion: 'v1.2.0+build.7' })).status, 204);
        const mac = (
          await upgrade({ ...ask, platform: 'macos', arch: 'arm64', currentVersion: '1.0.0' })
        ).expect(200);
        assert.equal(mac.body.release.version, '1.2.1');
        // The check verified the device like verify: it is bound now, and a second one is refused.
        const second = await upgrade({ ...ask, hwuid: 'pc-2', currentVersion: '1.0.0' });
        assertError(second, 409, 'device_limit_reached');
      });

      test('a channel receives itself and the more stable ones; yanked releases are never offered', async () => {
        const seller = await sellerWithApp(server);
        const license = await issueLicense(server, seller);
        const any = (version: string): Record<string, [null, null, Buffer]> => ({
          [`app-${version}.zip`]: [null, null, randomBytes(8)],
        });
        await release(seller, '2.0.0', any('2.0.0'));
        await release(seller, '2.1.0-rc.1', any('2.1.0-rc.1'));
        await release(seller, '2.2.0-beta.1', any('2.2.0-beta.1'));
        const alpha = await release(seller, '2.3.0-alpha.1', any('2.3.0-alpha.1'));
        const ask = (channel: string) =>
          upgrade({ appId: seller.appId, key: license.key, currentVersion: '1.0.0', channel });
        assert.equal((await ask('stable')).expect(200).body.release.version, '2.0.0');
        assert.equal((await ask('rc')).expect(200).body.release.version, '2.1.0-rc.1');
        assert.equal((await ask('beta')).expect(200).body.release.version, '2.2.0-beta.1');
        assert.equal((await ask('dev')).expect(200).body.release.version, '2.3.0-alpha.1');

        const offered = (await ask('alpha')).expect(200).body.artifacts[0] as Offered;
        (
          await server.api.post(`/apps/${seller.appId}/releases/${alpha.id}/yank`, undefined, {
            token: seller.token,
          })
        ).expect(200);
        assert.equal((await ask('alpha')).expect(200).body.release.version, '2.2.0-beta.1');
        assertError(
          await server.api.get(reachable(offered.downloadUrl).replace(/^.*\/v1/, '')),
          404,
          'not_found',
        );
      });

      test('entitlements: a release requiring one is passed over, and channel: entitlements limit the channels', async () => {
        const seller = await sellerWithApp(server);
        await release(seller, '3.0.0', { 'a.zip': [null, null, randomBytes(8)] });
        await release(
          seller,
          '3.1.0',
          { 'b.zip': [null, null, randomBytes(8)] },
          { requiredFeatures: ['pro'] },
        );
        const basic = await issueLicense(server, seller);
        // A channel entitlement is a feature like any other (`features` takes `channel:<name>`).
        const pro = await issueLicense(server, seller, { features: ['pro', 'channel:rc'] });
        const ask = (key: string, channel = 'stable') =>
          upgrade({ appId: seller.appId, key, currentVersion: '1.0.0', channel });
        assert.equal((await ask(basic.key)).expect(200).body.release.version, '3.0.0');
        assert.equal((await ask(pro.key)).expect(200).body.release.version, '3.1.0');
        assert.equal((await ask(pro.key, 'rc')).status, 200);
        assertError(await ask(pro.key, 'beta'), 403, 'channel_not_granted');
        assert.equal((await ask(basic.key, 'dev')).status, 200, 'no channel: entitlement, every channel');

        const link = (key: string, version: string, filename: string) =>
          server.api.post('/releases/download', { appId: seller.appId, key, version, filename });
        assertError(await link(basic.key, '3.1.0', 'b.zip'), 403, 'feature_not_granted');
        const granted = (await link(pro.key, '3.1.0', 'b.zip')).expect(200).body as Offered;
        assert.equal((await bytesOf(granted.downloadUrl)).status, 200);
        assertError(await link(pro.key, '3.1.0', 'missing.zip'), 404, 'not_found');
        assertError(await link(pro.key, '9.9.9', 'b.zip'), 404, 'not_found');
      });

      test('a license keeping access past its expiry receives the releases published before it', async () => {
        const seller = await sellerWithApp(server);
        const expiresAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
        const kept = await issueLicense(server, seller, { expiresAt, expiryStrategy: 'maintain_access' });
        const restricted = await issueLicense(server, seller, { expiresAt });
        await release(seller, '4.0.0', { 'old.zip': [null, null, randomBytes(8)] });
        clock.advance(2 * 3_600_000);
        await release(seller, '4.1.0', { 'new.zip': [null, null, randomBytes(8)] });
        const ask = (key: string) => upgrade({ appId: seller.appId, key, currentVersion: '1.0.0' });
        assert.equal((await ask(kept.key)).expect(200).body.release.version, '4.0.0');
        assertError(await ask(restricted.key), 409, 'license_expired');
        const late = await server.api.post('/releases/download', {
          appId: seller.appId,
          key: kept.key,
          version: '4.1.0',
          filename: 'new.zip',
        });
        assertError(late, 409, 'license_expired');
      });

      test('refusals carry the verification’s codes; another app’s key is unknown here', async () => {
        const seller = await sellerWithApp(server);
        const other = await sellerWithApp(server);
        await release(seller, '5.0.0', { 'x.zip': [null, null, randomBytes(8)] });
        const suspended = await issueLicense(server, seller);
        (
          await server.api.post(`/apps/${seller.appId}/licenses/${suspended.id}/suspend`, undefined, {
            token: seller.token,
          })
        ).expect(200);
        const bound = await issueLicense(server, seller, { maxDevices: 1 });
        const foreign = await issueLicense(server, other);
        const ask = (body: Record<string, unknown>) =>
          upgrade({ appId: seller.appId, currentVersion: '1.0.0', ...body });
        assertError(await ask({ key: suspended.key }), 409, 'license_suspended');
        assertError(await ask({ key: bound.key }), 400, 'hwuid_required');
        assertError(await ask({ key: foreign.key }), 404, 'license_not_found');
        assertError(await ask({ key: 'NOPE-NOPE-NOPE-NOPE' }), 404, 'license_not_found');
        const foreignLink = await server.api.post('/releases/download', {
          appId: seller.appId,
          key: foreign.key,
          version: '5.0.0',
          filename: 'x.zip',
        });
        assertError(foreignLink, 404, 'license_not_found');
      });

      test('bad input answers 400 naming the field', async () => {
        const seller = await sellerWithApp(server);
        const license = await issueLicense(server, seller);
        const base = { appId: seller.appId, key: license.key, currentVersion: '1.0.0' };
        const field = async (body: Record<string, unknown>) =>
          assertError(await upgrade(body), 400, 'validation_failed').details?.[0]?.field;
        assert.equal(await field({ ...base, currentVersion: 'latest' }), 'currentVersion');
        assert.equal(await field({ ...base, channel: 'nightly' }), 'channel');
        assert.equal(await field({ ...base, appId: 'not-a-uuid' }), 'appId');
        assert.equal(await field({ ...base, platform: 'x'.repeat(33) }), 'platform');
        assert.equal(await field({ ...base, surprise: true }), 'surprise');
      });
    });

    describe('download links', () => {
      test('serve ranges, so a download resumes; a whole download counts once', async () => {
        const seller = await sellerWithApp(server);
        const license = await issueLicense(server, seller);
        const bytes = randomBytes(100_000);
        const created = await release(seller, '6.0.0', { 'big.bin': [null, null, bytes] });
        const link = (
          await server.api.post('/releases/download', {
            appId: seller.appId,
            key: license.key,
            version: '6.0.0',
            filename: 'big.bin',
          })
        ).expect(200).body as Offered;

        const head = await bytesOf(link.downloadUrl, { range: 'bytes=0-999' });
        assert.equal(head.status, 206);
        assert.equal(head.headers.get('content-range'), `bytes 0-999/${bytes.length}`);
        assert.deepEqual(head.body, bytes.subarray(0, 1000));
        const rest = await bytesOf(link.downloadUrl, { range: 'bytes=1000-' });
        assert.equal(rest.status, 206);
        assert.deepEqual(Buffer.concat([head.body, rest.body]), bytes, 'the resumed download is the file');
        const outside = await fetch(reachable(link.downloadUrl), {
          headers: { range: `bytes=${bytes.length + 10}-` },
        });
        assert.equal(outside.status, 416);
        if (kind === 'local') {
          // S3 answers its own 416, in its own words.
          assert.equal(outside.headers.get('content-range'), `bytes */${bytes.length}`);
          const refusal = (await outside.json()) as { error: { code: string } };
          assert.equal(refusal.error.code, 'range_not_satisfiable');
        }

        const artifacts = (
          await server.api.get(`/apps/${seller.appId}/releases/${created.id}/artifacts`, {
            token: seller.token,
          })
        ).expect(200).body.artifacts;
        assert.equal(artifacts[0].downloads, 1, 'the resumed download counted once');
      });

      test('a changed or expired link does not work', async () => {
        const seller = await sellerWithApp(server);
        const license = await issueLicense(server, seller);
        await release(seller, '7.0.0', {
          'a.bin': [null, null, randomBytes(100)],
          'b.bin': [null, null, randomBytes(100)],
        });
        const linkTo = async (filename: string) =>
          (
            await server.api.post('/releases/download', {
              appId: seller.appId,
              key: license.key,
              version: '7.0.0',
              filename,
            })
          ).expect(200).body as Offered;
        const a = new URL(reachable((await linkTo('a.bin')).downloadUrl));
        const b = new URL(reachable((await linkTo('b.bin')).downloadUrl));
        const pathOf = (url: URL) => `${url.pathname.replace(/^\/v1/, '')}${url.search}`;

        const swapped = new URL(a);
        swapped.searchParams.set('signature', b.searchParams.get('signature') ?? '');
        assertError(await server.api.get(pathOf(swapped)), 403, 'download_link_invalid');
        const longer = new URL(a);
        longer.searchParams.set('expires', String(Number(a.searchParams.get('expires')) + 3600));
        assertError(await server.api.get(pathOf(longer)), 403, 'download_link_invalid');
        const otherFile = new URL(a);
        otherFile.pathname = b.pathname;
        assertError(await server.api.get(pathOf(otherFile)), 403, 'download_link_invalid');

        assert.equal((await server.api.get(pathOf(a))).status, kind === 'local' ? 200 : 302);
        clock.advance(3_601_000);
        assertError(await server.api.get(pathOf(a)), 410, 'download_link_expired');
      });

      if (kind === 's3') {
        test('on S3 a link redirects to a fresh presigned URL of the store, for the rest of its hour', async () => {
          const seller = await sellerWithApp(server);
          const license = await issueLicense(server, seller);
          const bytes = randomBytes(1000);
          await release(seller, '8.0.0', { 'Tool-Setup_8.0+win.exe': [null, null, bytes] });
          const link = (
            await server.api.post('/releases/download', {
              appId: seller.appId,
              key: license.key,
              version: '8.0.0',
              filename: 'Tool-Setup_8.0+win.exe',
            })
          ).expect(200).body as Offered;
          const redirect = await fetch(reachable(link.downloadUrl), { redirect: 'manual' });
          assert.equal(redirect.status, 302);
          assert.equal(redirect.headers.get('cache-control'), 'no-store');
          const presigned = new URL(redirect.headers.get('location') ?? '');
          assert.equal(presigned.origin, backend.env.ARTIFACT_S3_ENDPOINT);
          assert.equal(presigned.searchParams.get('X-Amz-Expires'), '3600');
          assert.equal(
            presigned.searchParams.get('response-content-disposition'),
            'attachment; filename="Tool-Setup_8.0+win.exe"',
          );
          const file = await fetch(presigned, { headers: { range: 'bytes=10-19' } });
          assert.equal(file.status, 206);
          assert.deepEqual(Buffer.from(await file.arrayBuffer()), bytes.subarray(10, 20));
          // Half an hour on, the redirect is good for the half hour left, no longer than the link.
          clock.advance(30 * 60 * 1000);
          const later = await fetch(reachable(link.downloadUrl), { redirect: 'manual' });
          assert.equal(
            new URL(later.headers.get('location') ?? '').searchParams.get('X-Amz-Expires'),
            '1800',
          );
        });
      }
    });
  });
}
