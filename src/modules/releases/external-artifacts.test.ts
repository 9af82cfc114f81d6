import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { load } from 'js-yaml';
import {
  ArtifactVerificationError,
  type JsonWebKeySet,
  verifyArtifact,
} from '../../../packages/client/src/index.js';
import {
  createApiKey,
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
 * Files the seller hosts, over HTTP: created by a JSON request naming their https address,
 * refused by name when the request is wrong, handed to licensed clients as a redirect from the
 * service's own download link (counted like a stored file's), signed into manifests and listed in
 * updater feeds only with what the seller declared, and never holding stored bytes from the purge.
 * The clock starts at the real time, as the stored files' times do, for the purge's hour.
 */
let server: TestServer;
let clock: TestClock;
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-external-artifacts-'));
before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({ ARTIFACT_DIR: artifactDir }, { clock });
});
after(async () => {
  await server.stop();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

const digest = (algorithm: 'sha256' | 'sha512', bytes: Buffer, encoding: 'hex' | 'base64' = 'hex') =>
  createHash(algorithm).update(bytes).digest(encoding);

/** What a seller declares of bytes they host: their size and both digests. */
const declared = (bytes: Buffer) => ({
  size: bytes.length,
  sha256: digest('sha256', bytes),
  sha512: digest('sha512', bytes),
});

async function draft(seller: SellerWithApp, version: string, fields: Record<string, unknown> = {}) {
  return (
    await server.api.post(`/apps/${seller.appId}/releases`, { version, ...fields }, { token: seller.token })
  ).expect(201).body as { id: string };
}

function addHosted(seller: { appId: string; token: string }, releaseId: string, body: unknown) {
  return server.api.post(`/apps/${seller.appId}/releases/${releaseId}/artifacts`, body, {
    token: seller.token,
  });
}

async function publish(seller: SellerWithApp, releaseId: string) {
  (
    await server.api.post(`/apps/${seller.appId}/releases/${releaseId}/publish`, undefined, {
      token: seller.token,
    })
  ).expect(200);
}

async function upload(seller: SellerWithApp, releaseId: string, filename: string, bytes: Buffer, query = '') {
  const res = await fetch(
    `${server.service.coreUrl}/v1/apps/${seller.appId}/releases/${releaseId}/artifacts/${filename}${query}`,
    {
      method: 'PUT',
      headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    },
  );
  // biome-ignore lint/suspicious/noExplicitAny: the answer is asserted field by field
  return { status: res.status, body: (await res.json()) as any };
}

async function artifactsOf(seller: SellerWithApp, releaseId: string) {
  return (
    await server.api.get(`/apps/${seller.appId}/releases/${releaseId}/artifacts`, { token: seller.token })
  ).expect(200).body.artifacts as {
    id: string;
    filename: string;
    url: string | null;
    size: number | null;
    downloads: number;
  }[];
}

/** Follows a download link as far as the service goes: its answer, not the seller's host. */
function follow(link: string, headers: Record<string, string> = {}) {
  return fetch(reachable(server, link), { headers, redirect: 'manual' });
}

describe('creating a file the seller hosts', () => {
  test('records the address and what the seller declared, answers 201 with its Location, and lists it beside uploads', async () => {
    const seller = await sellerWithApp(server);
    const release = await draft(seller, '1.0.0');
    const bytes = randomBytes(1000);
    const res = await addHosted(seller, release.id, {
      filename: 'PhotoTool-1.0.0.dmg',
      platform: 'macos',
      arch: 'universal',
      url: 'https://downloads.example.com/photo tool/1.0.0.dmg'.replace(' ', '%20'),
      size: bytes.length,
      sha256: digest('sha256', bytes).toUpperCase(),
      // As electron-builder writes it in latest.yml: base64.
      sha512: digest('sha512', bytes, 'base64'),
    });
    res.expect(201);
    assert.equal(
      res.headers.get('location'),
      `/v1/apps/${seller.appId}/releases/${release.id}/artifacts/PhotoTool-1.0.0.dmg?platform=macos&arch=universal`,
    );
    assert.deepEqual(Object.keys(res.body).sort(), [
      'arch',
      'createdAt',
      'downloads',
      'filename',
      'filetype',
      'id',
      'platform',
      'releaseId',
      'sha256',
      'sha512',
      'size',
      'url',
    ]);
    assert.deepEqual(
      [res.body.url, res.body.filetype, res.body.size, res.body.sha256, res.body.sha512, res.body.downloads],
      [
        'https://downloads.example.com/photo%20tool/1.0.0.dmg',
        'dmg',
        1000,
        digest('sha256', bytes),
        digest('sha512', bytes),
        0,
      ],
      'digests kept as hex, lower case, as a stored file’s',
    );
    const read = await server.api.get(
      `/apps/${seller.appId}/releases/${release.id}/artifacts/PhotoTool-1.0.0.dmg?platform=macos&arch=universal`,
      { token: seller.token },
    );
    assert.deepEqual(read.expect(200).body, res.body);

    // Nothing but the address and the name: size and digests null, as declared.
    const bare = (
      await addHosted(seller, release.id, {
        filename: 'Readme.pdf',
        url: 'https://cdn.example.net/notes.pdf',
      })
    ).expect(201).body;
    assert.deepEqual(
      [bare.platform, bare.arch, bare.size, bare.sha256, bare.sha512],
      [null, null, null, null, null],
    );
    assert.equal((await upload(seller, release.id, 'Tool.tar.gz', randomBytes(10))).status, 201);
    const listed = await artifactsOf(seller, release.id);
    assert.deepEqual(
      listed.map((artifact) => [artifact.filename, artifact.url]),
      [
        ['PhotoTool-1.0.0.dmg', 'https://downloads.example.com/photo%20tool/1.0.0.dmg'],
        ['Readme.pdf', 'https://cdn.example.net/notes.pdf'],
        ['Tool.tar.gz', null],
      ],
    );
  });

  test('an API key of the app adds one; another seller reaches no release of it', async () => {
    const seller = await sellerWithApp(server);
    const release = await draft(seller, '1.0.0');
    const key = (await createApiKey(server, seller.token, seller.appId)).key;
    const body = { filename: 'ci.zip', url: 'https://downloads.example.com/ci.zip' };
    (await addHosted({ appId: seller.appId, token: key }, release.id, body)).expect(201);
    const stranger = await sellerWithApp(server);
    assertError(
      await addHosted({ appId: seller.appId, token: stranger.token }, release.id, body),
      404,
      'not_found',
    );
    assert.deepEqual(
      (await artifactsOf(seller, release.id)).map((artifact) => artifact.filename),
      ['ci.zip'],
    );
  });

  test('bad input is refused with a 400 naming the field, and nothing is added', async () => {
    const seller = await sellerWithApp(server);
    const release = await draft(seller, '1.0.0');
    const good = { filename: 'app.zip', url: 'https://downloads.example.com/app.zip' };
    const cases: [Record<string, unknown>, string][] = [
      [{ url: 'http://downloads.example.com/app.zip' }, 'url'],
      [{ url: 'ftp://downloads.example.com/app.zip' }, 'url'],
      [{ url: '/app.zip' }, 'url'],
      [{ url: 'downloads.example.com/app.zip' }, 'url'],
      [{ url: 'https://user:secret@downloads.example.com/app.zip' }, 'url'],
      [{ url: 'https://token@downloads.example.com/app.zip' }, 'url'],
      [{ url: 'https://downloads.example.com/a pp.zip' }, 'url'],
      [{ url: ' https://downloads.example.com/app.zip' }, 'url'],
      [{ url: 'https://downloads.example.com/app.zip\r\nSet-Cookie: x=1' }, 'url'],
      [{ url: `https://downloads.example.com/${'a'.repeat(2100)}` }, 'url'],
      [{ url: '' }, 'url'],
      [{ url: 42 }, 'url'],
      [{ filename: '../app.zip' }, 'filename'],
      [{ filename: '.hidden' }, 'filename'],
      [{ filename: 'a b.zip' }, 'filename'],
      [{ platform: 'Linux' }, 'platform'],
      [{ arch: 'x/64' }, 'arch'],
      [{ size: -1 }, 'size'],
      [{ size: 1.5 }, 'size'],
      [{ size: '100' }, 'size'],
      [{ sha256: 'abc' }, 'sha256'],
      [{ sha256: 'g'.repeat(64) }, 'sha256'],
      [{ sha512: 'a'.repeat(127) }, 'sha512'],
      [{ sha512: 'not base64 at all' }, 'sha512'],
      [{ source: 'elsewhere' }, 'source'],
    ];
    for (const [change, field] of cases) {
      const error = assertError(
        await addHosted(seller, release.id, { ...good, ...change }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((detail) => detail.field === field),
        `${JSON.stringify(change).slice(0, 80)}: ${JSON.stringify(error.details)}`,
      );
    }
    for (const missing of ['url', 'filename']) {
      const { [missing]: _gone, ...rest } = good as Record<string, string>;
      const error = assertError(await addHosted(seller, release.id, rest), 400, 'validation_failed');
      assert.ok(
        error.details?.some((detail) => detail.field === missing),
        missing,
      );
    }
    assert.deepEqual(await artifactsOf(seller, release.id), []);
  });

  test('a draft’s file is replaced, a published release’s is not, a yanked release takes none, and a draft’s is removed', async () => {
    const seller = await sellerWithApp(server);
    const release = await draft(seller, '1.0.0');
    const first = {
      filename: 'app.exe',
      platform: 'windows',
      url: 'https://downloads.example.com/1/app.exe',
    };
    const made = (await addHosted(seller, release.id, first)).expect(201).body;
    const again = (await addHosted(seller, release.id, first)).expect(201).body;
    assert.equal(again.id, made.id, 'the same declaration again answers the artifact as it is');
    const moved = (
      await addHosted(seller, release.id, { ...first, url: 'https://downloads.example.com/2/app.exe' })
    ).expect(201).body;
    assert.notEqual(moved.id, made.id, 'another address replaces a draft’s file');
    // An upload replaces a hosted file on a draft, and a hosted file an upload.
    assert.equal(
      (await upload(seller, release.id, 'app.exe', randomBytes(20), '?platform=windows')).status,
      200,
    );
    const back = (await addHosted(seller, release.id, { ...first, size: 20 })).expect(201).body;
    assert.equal(back.url, first.url);
    assert.equal((await artifactsOf(seller, release.id)).length, 1);

    await publish(seller, release.id);
    assert.equal((await addHosted(seller, release.id, { ...first, size: 20 })).expect(201).body.id, back.id);
    assertError(
      await addHosted(seller, release.id, { ...first, url: 'https://downloads.example.com/3/app.exe' }),
      409,
      'artifact_exists',
    );
    assertError(await addHosted(seller, release.id, { ...first, size: 21 }), 409, 'artifact_exists');
    // The hosted file's declared digest is not bytes the service holds: an upload there is refused too.
    const bytes = randomBytes(30);
    const withDigest = {
      filename: 'app.zip',
      url: 'https://downloads.example.com/app.zip',
      ...declared(bytes),
    };
    (await addHosted(seller, release.id, withDigest)).expect(201);
    const over = await upload(seller, release.id, 'app.zip', bytes);
    assert.equal(over.status, 409);
    assert.equal(over.body.error.code, 'artifact_exists');
    assertError(
      await server.api.delete(`/apps/${seller.appId}/releases/${release.id}/artifacts/app.zip`, {
        token: seller.token,
      }),
      409,
      'release_not_draft',
    );
    (
      await server.api.post(`/apps/${seller.appId}/releases/${release.id}/yank`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assertError(
      await addHosted(seller, release.id, {
        filename: 'late.zip',
        url: 'https://downloads.example.com/late.zip',
      }),
      409,
      'release_yanked',
    );
    assert.equal((await artifactsOf(seller, release.id)).length, 2);

    const next = await draft(seller, '1.0.1');
    (await addHosted(seller, next.id, first)).expect(201);
    (
      await server.api.delete(
        `/apps/${seller.appId}/releases/${next.id}/artifacts/app.exe?platform=windows`,
        {
          token: seller.token,
        },
      )
    ).expect(204);
    assert.deepEqual(await artifactsOf(seller, next.id), []);
  });
});

describe('downloading a file the seller hosts', () => {
  test('a licensed download link redirects to the seller’s address and counts; refusals carry the verification’s codes', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    const url = 'https://downloads.example.com/PhotoTool-1.2.0-x64.AppImage?token=abc';
    const release = await publishRelease(server, seller, '1.2.0', {
      'PhotoTool-1.2.0.AppImage': { platform: 'linux', arch: 'x64', url, size: 5 },
    });
    const ask = { appId: seller.appId, key: license.key, hwuid: 'pc-1' };

    // The update check offers it, with what the seller declared and no manifest (no digests).
    const update = (
      await server.api.post('/releases/upgrade', {
        ...ask,
        currentVersion: '1.0.0',
        platform: 'linux',
        arch: 'x64',
      })
    ).expect(200).body;
    assert.equal(update.release.version, '1.2.0');
    const [offered] = update.artifacts;
    assert.deepEqual(
      [offered.filename, offered.size, offered.sha256, offered.sha512, offered.manifest],
      ['PhotoTool-1.2.0.AppImage', 5, null, null, null],
    );
    assert.ok(!JSON.stringify(update).includes('downloads.example.com'), 'the address only behind the link');
    assert.ok(offered.downloadUrl.startsWith(`${server.config.apiBaseUrl}/releases/files/`));

    const first = await follow(offered.downloadUrl);
    assert.equal(first.status, 302);
    assert.equal(first.headers.get('location'), url, 'on to the seller’s address, never proxied');
    assert.equal(first.headers.get('cache-control'), 'no-store');
    const link = (
      await server.api.post('/releases/download', {
        ...ask,
        version: '1.2.0',
        filename: 'PhotoTool-1.2.0.AppImage',
        platform: 'linux',
        arch: 'x64',
      })
    ).expect(200).body;
    assert.equal((await follow(link.downloadUrl)).headers.get('location'), url);
    // A resumed download (a range past the first byte) is redirected but not counted again.
    const resumed = await follow(link.downloadUrl, { range: 'bytes=100-' });
    assert.equal(resumed.status, 302);
    const [counted] = await artifactsOf(seller, release.id);
    assert.equal(counted?.downloads, 2);

    // Refusals: the license check is the update check's.
    const download = (body: Record<string, unknown>) =>
      server.api.post('/releases/download', {
        ...ask,
        version: '1.2.0',
        filename: 'PhotoTool-1.2.0.AppImage',
        platform: 'linux',
        arch: 'x64',
        ...body,
      });
    assertError(await download({ key: 'NOPE-NOPE-NOPE' }), 404, 'license_not_found');
    assertError(await download({ hwuid: 'pc-2' }), 409, 'device_limit_reached');
    await publishRelease(
      server,
      seller,
      '1.3.0',
      { 'pro.zip': { url: 'https://downloads.example.com/pro.zip' } },
      { requiredFeatures: ['pro'] },
    );
    assertError(
      await download({ version: '1.3.0', filename: 'pro.zip', platform: undefined, arch: undefined }),
      403,
      'feature_not_granted',
    );
    (
      await server.api.post(`/apps/${seller.appId}/licenses/${license.id}/suspend`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assertError(await download({}), 409, 'license_suspended');

    // A link stops with a forged signature, past its hour, and once the release is yanked.
    const forged = new URL(link.downloadUrl);
    forged.searchParams.set('signature', 'x'.repeat(43));
    const refused = await follow(forged.toString());
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'download_link_invalid');
    (
      await server.api.post(`/apps/${seller.appId}/releases/${release.id}/yank`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assert.equal((await follow(link.downloadUrl)).status, 404);
    assert.equal((await artifactsOf(seller, release.id))[0]?.downloads, 2, 'refusals count nothing');
  });
});

describe('manifests and updater feeds of a file the seller hosts', () => {
  test('a manifest signs what the seller declared, only when they declared size, sha256 and sha512', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const bytes = randomBytes(4000);
    const base = { platform: 'linux', url: 'https://downloads.example.com/full.tar.gz' };
    await publishRelease(server, seller, '2.0.0', {
      'full.tar.gz': { ...base, ...declared(bytes) },
      'partial.tar.gz': { ...base, size: bytes.length, sha256: digest('sha256', bytes) },
    });
    const offered = (
      await server.api.post('/releases/upgrade', {
        appId: seller.appId,
        key: license.key,
        currentVersion: '1.0.0',
        platform: 'linux',
      })
    ).expect(200).body.artifacts as { filename: string; manifest: string | null }[];
    const byName = Object.fromEntries(offered.map((file) => [file.filename, file.manifest]));
    assert.equal(byName['partial.tar.gz'], null, 'no sha512 declared: no manifest');
    const manifest = byName['full.tar.gz'];
    assert.ok(manifest);
    const claims = decodeJwt(manifest);
    assert.deepEqual(
      [claims.size, claims.sha256, claims.sha512, claims.filename],
      [bytes.length, digest('sha256', bytes), digest('sha512', bytes), 'full.tar.gz'],
    );
    // Client software checks the bytes it fetched from the seller's host against the declaration.
    const keySet = (await server.api.get('/licenses/jwks')).expect(200).body as JsonWebKeySet;
    const options = { appId: seller.appId, keySet, version: '2.0.0', filename: 'full.tar.gz' };
    assert.equal((await verifyArtifact(bytes, manifest, options)).sha256, digest('sha256', bytes));
    const tampered = Buffer.from(bytes);
    tampered[0] = (tampered[0] ?? 0) ^ 1;
    await assert.rejects(
      verifyArtifact(tampered, manifest, options),
      (error) => error instanceof ArtifactVerificationError && error.code === 'digest_mismatch',
    );
  });

  test('electron-updater’s channel file lists a hosted file only with its declared size and sha512', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const bytes = randomBytes(3000);
    const url = 'https://downloads.example.com/PhotoTool-Setup-2.0.0.exe';
    await publishRelease(server, seller, '2.0.0', {
      'PhotoTool-Setup-2.0.0.exe': {
        platform: 'windows',
        arch: 'x64',
        url,
        size: bytes.length,
        sha512: digest('sha512', bytes),
      },
    });
    // Newer, but without a sha512: electron-updater could not check it, so the feed passes it over.
    await publishRelease(server, seller, '2.1.0', {
      'PhotoTool-Setup-2.1.0.exe': { platform: 'windows', url: `${url}?v=2.1.0`, size: 10 },
    });

    const headers = { authorization: `License ${license.key}` };
    const text = (
      await server.api.get(`/releases/feeds/${seller.appId}/electron/latest.yml`, { headers })
    ).expect(200).text;
    const channel = load(text) as { version: string; files: { url: string; sha512: string; size: number }[] };
    assert.equal(channel.version, '2.0.0');
    assert.deepEqual(
      channel.files.map((file) => [path.basename(new URL(file.url).pathname), file.sha512, file.size]),
      [['PhotoTool-Setup-2.0.0.exe', digest('sha512', bytes, 'base64'), bytes.length]],
    );
    // The file address checks the license, then the link sends the updater to the seller's host.
    const viaFeed = await fetch(reachable(server, channel.files[0]?.url as string), {
      headers,
      redirect: 'manual',
    });
    assert.equal(viaFeed.status, 303);
    const onward = await follow(viaFeed.headers.get('location') as string);
    assert.equal(onward.status, 302);
    assert.equal(onward.headers.get('location'), url);
  });

  test('Tauri’s feed offers a hosted file with its uploaded .sig, never one whose .sig is hosted too', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const headers = { authorization: `License ${license.key}` };
    const signature = 'dW50cnVzdGVkIGNvbW1lbnQ6IHNpZ25hdHVyZSBmcm9tIHRhdXJpIHNlY3JldCBrZXkK';
    const url = 'https://downloads.example.com/PhotoTool.app.tar.gz';
    const place = { platform: 'macos', arch: 'aarch64' };
    await publishRelease(server, seller, '3.0.0', {
      'PhotoTool.app.tar.gz': { ...place, url },
      'PhotoTool.app.tar.gz.sig': { ...place, bytes: Buffer.from(signature) },
    });
    await publishRelease(server, seller, '3.1.0', {
      'PhotoTool.app.tar.gz': { ...place, url },
      'PhotoTool.app.tar.gz.sig': { ...place, url: `${url}.sig`, size: 100 },
    });

    const tauri = (current: string) =>
      server.api.get(`/releases/feeds/${seller.appId}/tauri/darwin/aarch64/${current}`, { headers });
    const update = (await tauri('2.0.0')).expect(200).body;
    assert.equal(update.version, '3.0.0', '3.1.0’s signature is not one the service holds');
    assert.equal(update.signature, signature);
    const viaFeed = await fetch(reachable(server, update.url), { headers, redirect: 'manual' });
    assert.equal(viaFeed.status, 303);
    assert.equal((await follow(viaFeed.headers.get('location') as string)).headers.get('location'), url);
    assert.equal((await tauri('3.0.0')).status, 204);
  });
});

describe('the purge and files the seller hosts', () => {
  // Last: it moves the clock two hours on.
  test('stored bytes a hosted file declares the digest of are still purged once no upload names them', async () => {
    const seller = await sellerWithApp(server);
    const release = await draft(seller, '1.0.0');
    const bytes = randomBytes(500);
    const where = path.join(artifactDir, digest('sha256', bytes).slice(0, 2), digest('sha256', bytes));
    assert.equal((await upload(seller, release.id, 'stored.zip', bytes)).status, 201);
    (
      await addHosted(seller, release.id, {
        filename: 'hosted.zip',
        url: 'https://downloads.example.com/hosted.zip',
        ...declared(bytes),
      })
    ).expect(201);
    (
      await server.api.delete(`/apps/${seller.appId}/releases/${release.id}/artifacts/stored.zip`, {
        token: seller.token,
      })
    ).expect(204);
    const purge = server.service.modules.artifactPurge;
    await purge.purge();
    assert.ok(fs.existsSync(where), 'kept within the hour');
    clock.advance(2 * 60 * 60 * 1000);
    await purge.purge();
    assert.ok(!fs.existsSync(where), 'the hosted file’s declaration keeps no stored bytes');
    assert.deepEqual(
      (await artifactsOf(seller, release.id)).map((artifact) => artifact.filename),
      ['hosted.zip'],
      'the hosted file stays',
    );
  });
});
