import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../../src/testing/harness.js';
import { publishRelease, reachable } from '../../../src/testing/releases.js';
import { verifyArtifact as verifyInMemory } from './artifact-manifest.js';
import {
  ArtifactVerificationError,
  type AvailableUpdate,
  LicensingApiError,
  LicensingClient,
  verifyArtifact,
} from './index.js';

/**
 * The update check and the manifest check through the SDK, against the real service: the answer
 * or null, a refusal's code, and a downloaded file checked as bytes, a Blob, a web stream, a Node
 * stream and a path, with the key set fetched from the service.
 */
let server: TestServer;
let seller: SellerWithApp;
let client: LicensingClient;
let folder: string;
const bytes = randomBytes(300_000);

before(async () => {
  server = await startTestServer();
  seller = await sellerWithApp(server);
  client = new LicensingClient({ baseUrl: server.service.coreUrl, retries: 0 });
  folder = await mkdtemp(path.join(os.tmpdir(), 'sdk-artifacts-'));
  await publishRelease(server, seller, '3.1.0', {
    'tool-3.1.0.AppImage': { bytes, platform: 'linux', arch: 'x64' },
  });
});
after(async () => {
  await server.stop();
  await rm(folder, { recursive: true, force: true });
});

async function offered(): Promise<AvailableUpdate> {
  const license = await issueLicense(server, seller);
  const update = await client.checkForUpdate({
    appId: seller.appId,
    key: license.key,
    currentVersion: '3.0.0',
    platform: 'linux',
    arch: 'x64',
  });
  assert.ok(update);
  return update;
}

describe('checkForUpdate', () => {
  test('answers the newer release with its files, null when up to date, and a refusal’s code', async () => {
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    const ask = { appId: seller.appId, key: license.key, hwuid: 'pc-1', platform: 'linux' };
    const update = await client.checkForUpdate({ ...ask, currentVersion: '3.0.0' });
    assert.equal(update?.release.version, '3.1.0');
    assert.deepEqual(
      update?.artifacts.map((file) => [file.filename, file.size, typeof file.manifest]),
      [['tool-3.1.0.AppImage', bytes.length, 'string']],
    );
    assert.equal(await client.checkForUpdate({ ...ask, currentVersion: '3.1.0' }), null);
    const refused = await client
      .checkForUpdate({ ...ask, hwuid: 'pc-2', currentVersion: '3.0.0' })
      .catch((e) => e);
    assert.ok(refused instanceof LicensingApiError);
    assert.deepEqual([refused.status, refused.code], [409, 'device_limit_reached']);
  });

  test('takes a license token from verify in place of the key and the device', async () => {
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    const verified = await client.verify({ appId: seller.appId, key: license.key, hwuid: 'pc-1' });
    const token = verified.license_token;
    assert.ok(token);
    const ask = { appId: seller.appId, token, platform: 'linux' };
    assert.equal(
      (await client.checkForUpdate({ ...ask, currentVersion: '3.0.0' }))?.release.version,
      '3.1.0',
    );
    assert.equal(await client.checkForUpdate({ ...ask, currentVersion: '3.1.0' }), null);
    const [head, , signature] = token.split('.');
    const refused = await client
      .checkForUpdate({ ...ask, token: `${head}.${head}.${signature}`, currentVersion: '3.0.0' })
      .catch((e) => e);
    assert.ok(refused instanceof LicensingApiError);
    assert.deepEqual([refused.status, refused.code], [403, 'invalid_signature']);
  });
});

describe('verifyArtifact', () => {
  test('checks the downloaded file as bytes, a Blob, a web stream, a Node stream or a path, with the fetched key set', async () => {
    const update = await offered();
    const [file] = update.artifacts;
    assert.ok(file?.manifest);
    const res = await fetch(reachable(server, file.downloadUrl));
    const options = {
      appId: seller.appId,
      jwksUri: client.jwksUri,
      version: update.release.version,
      filename: file.filename,
    };
    // Straight from the download, streamed.
    assert.equal(
      (await verifyArtifact(res.body as ReadableStream<Uint8Array>, file.manifest, options)).size,
      bytes.length,
    );
    const saved = path.join(folder, file.filename);
    await writeFile(saved, bytes);
    assert.equal((await verifyArtifact(saved, file.manifest, options)).sha256, file.sha256);
    assert.equal(
      (await verifyArtifact(Readable.from([bytes]), file.manifest, options)).filename,
      file.filename,
    );
    assert.equal((await verifyInMemory(new Blob([bytes]), file.manifest, options)).version, '3.1.0');
    assert.equal(
      (
        await verifyInMemory(
          bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
          file.manifest,
          options,
        )
      ).size,
      bytes.length,
    );

    const refusal = async (run: Promise<unknown>) => {
      const error = await run.then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof ArtifactVerificationError, String(error));
      return error.code;
    };
    const longer = Buffer.concat([bytes, Buffer.from([0])]);
    assert.equal(await refusal(verifyArtifact(longer, file.manifest, options)), 'size_mismatch');
    assert.equal(
      await refusal(verifyArtifact(bytes, file.manifest, { ...options, version: '3.0.0' })),
      'wrong_version',
    );
    assert.equal(
      await refusal(
        verifyArtifact(bytes, file.manifest, { ...options, jwksUri: 'http://127.0.0.1:9/v1/licenses/jwks' }),
      ),
      'key_set_unavailable',
    );
    await assert.rejects(verifyArtifact(path.join(folder, 'missing'), file.manifest, options), {
      code: 'ENOENT',
    });
    await assert.rejects(verifyArtifact(bytes, file.manifest, { appId: seller.appId }), TypeError);
  });
});
