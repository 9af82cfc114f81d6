import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { load } from 'js-yaml';
import { issueLicense, sellerWithApp, startTestServer, type TestServer } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { publishRelease, reachable, type TestFile } from '../../testing/releases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * The updater feeds over HTTP: electron-updater's channel files as electron-builder writes them,
 * Tauri's dynamic format, the file addresses they name, and the license refusals they answer.
 */
let server: TestServer;
let clock: TestClock;
const logLines: string[] = [];
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-feeds-test-'));
before(async () => {
  clock = testClock('2026-06-01T10:00:00.000Z');
  server = await startTestServer({ ARTIFACT_DIR: artifactDir, LOG_LEVEL: 'debug' }, { clock, logLines });
});
after(async () => {
  await server.stop();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

/**
 * latest.yml and latest-mac.yml as electron-builder 24–26 writes them (js-yaml, lineWidth 8000):
 * the files with their base64 SHA-512 and size, path and sha512 repeating the first file for
 * electron-updater before 2.15, release notes from the release info, and the date quoted so it
 * stays a string.
 */
const ELECTRON_BUILDER_LATEST_YML = `version: 1.4.0
files:
  - url: PhotoTool-Setup-1.4.0.exe
    sha512: 9JnVrxL8P/Z9nwd5bOHlbTRKmH6m0q3e3YAnj0sXbOfcFPqXsZQ+cOtRZ2GqPEmRlVfnhOXl7Ct8kZuYT6wZLw==
    size: 85384688
path: PhotoTool-Setup-1.4.0.exe
sha512: 9JnVrxL8P/Z9nwd5bOHlbTRKmH6m0q3e3YAnj0sXbOfcFPqXsZQ+cOtRZ2GqPEmRlVfnhOXl7Ct8kZuYT6wZLw==
releaseNotes: |-
  Faster exports.
  A dark theme.
releaseDate: '2026-05-14T09:12:44.517Z'
`;
const ELECTRON_BUILDER_LATEST_MAC_YML = `version: 1.4.0
files:
  - url: PhotoTool-1.4.0-arm64-mac.zip
    sha512: 3oQ6cVmK5w1yq4Ly0Dk8XhV5+HQ2yYF0p8rE8mJm7mY8v0s2n8bJYQwQk8q1b9kS7mV9yW3f5m3y4nWl2mQ0rQ==
    size: 94227139
  - url: PhotoTool-1.4.0-mac.zip
    sha512: kq9H3rF6m2Lr4nW8xY1b5p0sQ7c2dV9e4fG6hJ8kL3mN5oP7qR9sT1uV3wX5yZ7aB9cD1eF3gH5iJ7kL9mN1oP==
    size: 97118866
  - url: PhotoTool-1.4.0-arm64.dmg
    sha512: zX8cV6bN4mL2kJ0hG8fD6sA4pO2iU0yT8rE6wQ4aS2dF0gH8jK6lZ4xC2vB0nM8qW6eR4tY2uI0oP8aS6dF4gQ==
    size: 98765432
path: PhotoTool-1.4.0-arm64-mac.zip
sha512: 3oQ6cVmK5w1yq4Ly0Dk8XhV5+HQ2yYF0p8rE8mJm7mY8v0s2n8bJYQwQk8q1b9kS7mV9yW3f5m3y4nWl2mQ0rQ==
releaseNotes: |-
  Faster exports.
  A dark theme.
releaseDate: '2026-05-14T09:12:44.517Z'
`;

/**
 * A channel file's shape: per line, its indentation, its key and the kind of its value (quoted,
 * block, number, plain), so two files of different values can be compared line by line.
 */
function shapeOf(yaml: string): string[] {
  return yaml.split('\n').map((line) => {
    const keyed = /^(\s*(?:- )?)([A-Za-z0-9]+):(?: (.*))?$/.exec(line);
    if (!keyed) return line.trim() === '' ? '' : `${/^\s*/.exec(line)?.[0]}text`;
    const value = keyed[3];
    const kind =
      value === undefined
        ? 'mapping'
        : value.startsWith("'")
          ? 'quoted'
          : value === '|-'
            ? 'block'
            : /^\d+$/.test(value)
              ? 'number'
              : 'plain';
    return `${keyed[1]}${keyed[2]}: ${kind}`;
  });
}

const licenseHeaders = (key: string, device?: string) => ({
  authorization: `License ${key}`,
  ...(device ? { 'x-device-id': device } : {}),
});

/**
 * A channel file as electron-updater asks for it (with a cache-busting query of its own, which it
 * adds when its headers carry no Authorization: accepted either way).
 */
function feed(appId: string, file: string, key: string, device?: string) {
  return server.api.get(`/releases/feeds/${appId}/electron/${file}?noCache=1ikq2f3`, {
    headers: licenseHeaders(key, device),
  });
}

interface ElectronFile {
  url: string;
  sha512: string;
  size: number;
}
interface ChannelFile {
  version: string;
  files: ElectronFile[];
  path: string;
  sha512: string;
  releaseNotes?: string;
  releaseDate: string;
}

/** Follows a feed's file address as an updater does: the license headers, then the redirect. */
async function download(url: string, headers: Record<string, string>) {
  const first = await fetch(reachable(server, url), { headers, redirect: 'manual' });
  assert.equal(first.status, 303, await first.clone().text());
  assert.equal(first.headers.get('cache-control'), 'no-store');
  const link = first.headers.get('location') ?? '';
  const res = await fetch(reachable(server, link));
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

const sha512base64 = (bytes: Buffer) => createHash('sha512').update(bytes).digest('base64');

describe('electron-updater feeds', () => {
  test('latest.yml, latest-mac.yml and latest-linux.yml are what electron-builder writes, and their files download with the digests they state', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    const bytes = (size: number) => randomBytes(size);
    const files: Record<string, TestFile> = {
      'PhotoTool-Setup-1.4.0.exe': { bytes: bytes(3000), platform: 'windows', arch: 'x64' },
      'PhotoTool-Setup-1.4.0.exe.blockmap': { bytes: bytes(50), platform: 'windows', arch: 'x64' },
      'PhotoTool-1.4.0-arm64-mac.zip': { bytes: bytes(2000), platform: 'macos', arch: 'arm64' },
      'PhotoTool-1.4.0-mac.zip': { bytes: bytes(2100), platform: 'macos', arch: 'x64' },
      'PhotoTool-1.4.0-arm64.dmg': { bytes: bytes(2200), platform: 'macos', arch: 'arm64' },
      'PhotoTool-1.4.0.AppImage': { bytes: bytes(2300), platform: 'linux', arch: 'x64' },
      'PhotoTool-1.4.0-arm64.AppImage': { bytes: bytes(2400), platform: 'linux', arch: 'arm64' },
      'README.txt': { bytes: Buffer.from('read me') },
    };
    await publishRelease(server, seller, '1.3.0', {
      'PhotoTool-Setup-1.3.0.exe': { bytes: bytes(10), platform: 'windows' },
    });
    await publishRelease(server, seller, '1.4.0', files, { notes: 'Faster exports.\nA dark theme.' });
    const device = 'pc-1';

    const windows = feed(seller.appId, 'latest.yml', license.key, device);
    const latest = (await windows).expect(200);
    assert.match(latest.headers.get('content-type') ?? '', /^text\/yaml/);
    assert.equal(latest.headers.get('cache-control'), 'no-store');
    assert.deepEqual(shapeOf(latest.text), shapeOf(ELECTRON_BUILDER_LATEST_YML));
    const parsed = load(latest.text) as ChannelFile;
    const sample = load(ELECTRON_BUILDER_LATEST_YML) as ChannelFile;
    assert.deepEqual(Object.keys(parsed), Object.keys(sample), 'the fields, in electron-builder’s order');
    assert.deepEqual(Object.keys(parsed.files[0] ?? {}), Object.keys(sample.files[0] ?? {}));
    assert.equal(typeof parsed.releaseDate, 'string', 'a quoted date stays a string');
    assert.equal(parsed.releaseDate, '2026-06-01T10:00:00.000Z');
    assert.equal(parsed.version, '1.4.0');
    assert.equal(parsed.releaseNotes, 'Faster exports.\nA dark theme.');
    assert.deepEqual(
      parsed.files.map((file) => path.basename(new URL(file.url).pathname)),
      ['PhotoTool-Setup-1.4.0.exe'],
      'only what electron-updater installs on Windows: no blockmap, no readme',
    );
    assert.equal(parsed.path, parsed.files[0]?.url);
    assert.equal(parsed.sha512, parsed.files[0]?.sha512);

    const macText = (await feed(seller.appId, 'latest-mac.yml', license.key, device)).expect(200).text;
    assert.deepEqual(
      shapeOf(macText),
      shapeOf(ELECTRON_BUILDER_LATEST_MAC_YML),
      'three files, like electron-builder’s',
    );
    const mac = load(macText) as ChannelFile;
    assert.deepEqual(
      mac.files.map((file) => path.basename(new URL(file.url).pathname)),
      ['PhotoTool-1.4.0-arm64-mac.zip', 'PhotoTool-1.4.0-mac.zip', 'PhotoTool-1.4.0-arm64.dmg'],
      'the zips first, as electron-builder orders them: electron-updater updates a Mac from a zip',
    );
    assert.equal(mac.path, mac.files[0]?.url);
    const linux = load(
      (await feed(seller.appId, 'latest-linux.yml', license.key, device)).expect(200).text,
    ) as ChannelFile;
    assert.deepEqual(
      linux.files.map((file) => path.basename(new URL(file.url).pathname)),
      ['PhotoTool-1.4.0.AppImage'],
    );
    const arm = load(
      (await feed(seller.appId, 'latest-linux-arm64.yml', license.key, device)).expect(200).text,
    ) as ChannelFile;
    assert.deepEqual(
      arm.files.map((file) => path.basename(new URL(file.url).pathname)),
      ['PhotoTool-1.4.0-arm64.AppImage'],
    );

    for (const file of [...parsed.files, ...mac.files, ...linux.files, ...arm.files]) {
      const got = await download(file.url, licenseHeaders(license.key, device));
      const name = decodeURIComponent(path.basename(new URL(file.url).pathname));
      assert.deepEqual(got, files[name]?.bytes, name);
      assert.equal(file.size, got.length);
      assert.equal(file.sha512, sha512base64(got), `${name}: the sha512 electron-updater checks`);
    }
    // The feed is a verification like the update check: the device is bound, another refused.
    assertError(await feed(seller.appId, 'latest.yml', license.key, 'pc-2'), 409, 'device_limit_reached');
  });

  test('a channel file offers its channel and the more stable ones; drafts and yanked releases never appear', async () => {
    const seller = await sellerWithApp(server);
    const anyone = await issueLicense(server, seller);
    const rcOnly = await issueLicense(server, seller, { metadata: { features: ['channel:rc'] } });
    const exe = (version: string) => ({
      [`App-Setup-${version}.exe`]: { bytes: randomBytes(64), platform: 'win32' },
    });
    await publishRelease(server, seller, '2.0.0', {
      ...exe('2.0.0'),
      'App-Setup-2.0.0-arm64.exe': { bytes: randomBytes(64), platform: 'windows', arch: 'arm64' },
    });
    await publishRelease(server, seller, '2.0.1', {
      'app_2.0.1_amd64.deb': { bytes: randomBytes(64), platform: 'linux', arch: 'amd64' },
    });
    const beta = await publishRelease(server, seller, '2.1.0-beta.1', exe('2.1.0-beta.1'));
    await publishRelease(server, seller, '3.0.0', exe('3.0.0'), { draft: true });
    const versionOf = async (file: string, key = anyone.key) =>
      (load((await feed(seller.appId, file, key)).expect(200).text) as ChannelFile).version;

    assert.equal(await versionOf('latest.yml'), '2.0.0', 'a Windows file named win32 is found too');
    const windows = load(
      (await feed(seller.appId, 'latest.yml', anyone.key)).expect(200).text,
    ) as ChannelFile;
    assert.deepEqual(
      windows.files.map((file) => path.basename(new URL(file.url).pathname)),
      ['App-Setup-2.0.0.exe', 'App-Setup-2.0.0-arm64.exe'],
      'electron-updater installs the first .exe: the one for every architecture before the arm64 one',
    );
    assert.equal(await versionOf('latest-linux.yml'), '2.0.1', 'a .deb alone updates Linux installs');
    assert.equal(await versionOf('beta.yml'), '2.1.0-beta.1');
    assert.equal(await versionOf('alpha.yml'), '2.1.0-beta.1');
    assert.equal(await versionOf('rc.yml', rcOnly.key), '2.0.0');
    assertError(await feed(seller.appId, 'beta.yml', rcOnly.key), 403, 'channel_not_granted');

    (
      await server.api.post(`/apps/${seller.appId}/releases/${beta.id}/yank`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assert.equal(await versionOf('beta.yml'), '2.0.0', 'yanked: gone from the feed');
    assertError(await feed(seller.appId, 'latest-mac.yml', anyone.key), 404, 'not_found');
  });
});

describe('the Tauri feed', () => {
  function tauri(appId: string, target: string, key: string, query = '') {
    return server.api.get(`/releases/feeds/${appId}/tauri/${target}${query}`, {
      headers: licenseHeaders(key),
    });
  }

  test('answers the dynamic format with the seller’s signature of the file, and 204 when up to date', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller);
    const signature = (name: string) =>
      Buffer.from(`dW50cnVzdGVkIGNvbW1lbnQ6IHNpZ25hdHVyZSBmcm9tIHRhdXJpIHNlY3JldCBrZXkK${name}\n`);
    const exe = randomBytes(4000);
    const files: Record<string, TestFile> = {
      'PhotoTool_1.1.0_x64-setup.exe': { bytes: exe, platform: 'windows', arch: 'x64' },
      'PhotoTool_1.1.0_x64-setup.exe.sig': { bytes: signature('exe'), platform: 'windows', arch: 'x64' },
      'PhotoTool_1.1.0_x64_en-US.msi': { bytes: randomBytes(3000), platform: 'windows', arch: 'x64' },
      'PhotoTool_1.1.0_x64_en-US.msi.sig': { bytes: signature('msi'), platform: 'windows', arch: 'x64' },
      'PhotoTool_universal.app.tar.gz': { bytes: randomBytes(2000), platform: 'macos', arch: 'universal' },
      'PhotoTool_universal.app.tar.gz.sig': { bytes: signature('app'), platform: 'macos', arch: 'universal' },
      'PhotoTool_1.1.0_amd64.AppImage': { bytes: randomBytes(2500), platform: 'linux', arch: 'x64' },
      'PhotoTool_1.1.0_amd64.AppImage.sig': { bytes: signature('appimage'), platform: 'linux', arch: 'x64' },
      // No signature: Tauri could not install it, so the feed passes over this release for it.
      'PhotoTool_1.1.0_aarch64.AppImage': { bytes: randomBytes(2500), platform: 'linux', arch: 'arm64' },
    };
    await publishRelease(server, seller, '1.0.5', {
      'PhotoTool_1.0.5_aarch64.AppImage': { bytes: randomBytes(100), platform: 'linux', arch: 'arm64' },
      'PhotoTool_1.0.5_aarch64.AppImage.sig': { bytes: signature('old'), platform: 'linux', arch: 'arm64' },
    });
    await publishRelease(server, seller, '1.1.0', files, { notes: 'Faster exports.' });

    const windows = (await tauri(seller.appId, 'windows/x86_64/1.0.0', license.key)).expect(200);
    assert.equal(windows.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(windows.body).sort(), ['notes', 'pub_date', 'signature', 'url', 'version']);
    assert.equal(windows.body.version, '1.1.0');
    assert.equal(windows.body.notes, 'Faster exports.');
    assert.equal(windows.body.pub_date, '2026-06-01T10:00:00.000Z');
    assert.equal(windows.body.signature, signature('exe').toString().trim(), 'the .sig beside the file');
    assert.deepEqual(await download(windows.body.url, licenseHeaders(license.key)), exe);

    const msi = (await tauri(seller.appId, 'windows/x86_64/1.0.0', license.key, '?bundleType=msi')).expect(
      200,
    );
    assert.match(msi.body.url, /PhotoTool_1\.1\.0_x64_en-US\.msi\?/);
    assert.equal(msi.body.signature, signature('msi').toString().trim());
    const mac = (await tauri(seller.appId, 'darwin/aarch64/1.0.0', license.key)).expect(200);
    assert.match(
      mac.body.url,
      /PhotoTool_universal\.app\.tar\.gz/,
      'a universal build for an Apple silicon Mac',
    );
    const arm = (await tauri(seller.appId, 'linux/aarch64/1.0.0', license.key)).expect(200);
    assert.equal(arm.body.version, '1.0.5', 'the newest release with a signed file for it');
    assert.equal(arm.body.signature, signature('old').toString().trim());

    assert.equal((await tauri(seller.appId, 'windows/x86_64/1.1.0', license.key)).status, 204);
    assert.equal((await tauri(seller.appId, 'linux/aarch64/1.0.5', license.key)).status, 204);
    assert.equal(
      (await tauri(seller.appId, 'windows/i686/1.0.0', license.key)).status,
      204,
      'no 32-bit build',
    );
  });

  test('refusals carry the verification’s codes; bad input names its field; the key never reaches the logs', async () => {
    const seller = await sellerWithApp(server);
    const suspended = await issueLicense(server, seller);
    (
      await server.api.post(`/apps/${seller.appId}/licenses/${suspended.id}/suspend`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    const bound = await issueLicense(server, seller, { maxDevices: 1 });
    const basic = await issueLicense(server, seller);
    const other = await sellerWithApp(server);
    const foreign = await issueLicense(server, other);
    await publishRelease(
      server,
      seller,
      '5.0.0',
      { 'Pro-5.0.0.exe': { bytes: randomBytes(32), platform: 'windows' } },
      { requiredFeatures: ['pro'] },
    );
    const ask = (key: string, device?: string) =>
      server.api.get(`/releases/feeds/${seller.appId}/tauri/windows/x86_64/1.0.0`, {
        headers: licenseHeaders(key, device),
      });
    assertError(await ask(suspended.key), 409, 'license_suspended');
    assertError(await ask(bound.key), 400, 'hwuid_required');
    assertError(await ask(foreign.key), 404, 'license_not_found');
    assertError(await ask('NOPE-NOPE-NOPE-NOPE'), 404, 'license_not_found');
    const fileAddress = `/releases/feeds/${seller.appId}/files/5.0.0/Pro-5.0.0.exe?platform=windows`;
    assertError(
      await server.api.get(fileAddress, { headers: licenseHeaders(basic.key) }),
      403,
      'feature_not_granted',
    );
    assertError(
      await server.api.get(`/releases/feeds/${seller.appId}/files/9.9.9/Pro-5.0.0.exe`, {
        headers: licenseHeaders(basic.key),
      }),
      404,
      'not_found',
    );

    const field = async (url: string, headers: Record<string, string>) =>
      assertError(await server.api.get(url, { headers }), 400, 'validation_failed').details?.[0]?.field;
    const feeds = `/releases/feeds/${seller.appId}`;
    assert.equal(await field(`${feeds}/electron/latest.yml`, {}), 'Authorization');
    assert.equal(
      await field(`${feeds}/electron/latest.yml`, { authorization: `Bearer ${basic.key}` }),
      'Authorization',
    );
    assert.equal(await field(`${feeds}/electron/nightly.yml`, licenseHeaders(basic.key)), 'channelFile');
    assert.equal(await field(`${feeds}/tauri/beos/x86_64/1.0.0`, licenseHeaders(basic.key)), 'target');
    assert.equal(
      await field(`${feeds}/tauri/linux/x86_64/latest`, licenseHeaders(basic.key)),
      'currentVersion',
    );
    assert.equal(
      await field(`${feeds}/tauri/linux/x86_64/1.0.0?channel=nightly`, licenseHeaders(basic.key)),
      'channel',
    );

    const keys = [suspended.key, bound.key, basic.key, foreign.key].map((key: string) =>
      key.replace(/-/g, ''),
    );
    const logged = logLines.join('\n').replace(/-/g, '');
    assert.ok(
      logLines.some((line) => line.includes('/releases/feeds/')),
      'the feed requests were logged',
    );
    for (const key of keys) assert.ok(!logged.includes(key), 'a license key in the logs');
  });
});
