import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import {
  ArtifactVerificationError,
  type JsonWebKeySet,
  verifyArtifact,
} from '../../../packages/client/src/index.js';
import { issueLicense, signUp, startTestServer, type TestServer } from '../../testing/harness.js';
import { publishRelease, reachable } from '../../testing/releases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { ACTIVATION_DELAY_MS } from '../license-tokens/key-ring.js';

/**
 * Signed manifests over HTTP: what the update check and download answers carry, checked the way
 * client software checks them (the TypeScript SDK against the published key set), and what a
 * rotation of the offline keys does to them. Its own database: the rotation changes every key.
 */
let server: TestServer;
let clock: TestClock;
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-manifests-test-'));
before(async () => {
  clock = testClock('2026-06-01T10:00:00.000Z');
  server = await startTestServer({ ARTIFACT_DIR: artifactDir }, { clock, ownDatabase: true });
});
after(async () => {
  await server.stop();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

const keySet = async () => (await server.api.get('/licenses/jwks')).expect(200).body as JsonWebKeySet;

async function appSigningWith(algorithm: 'RS256' | 'EdDSA') {
  const seller = await signUp(server);
  const app = (
    await server.api.post(
      '/apps',
      { name: `Manifests ${algorithm}`, tokenAlgorithm: algorithm },
      { token: seller.token },
    )
  ).expect(201).body as { id: string };
  return { token: seller.token, appId: app.id };
}

interface Offered {
  filename: string;
  size: number;
  sha256: string;
  sha512: string;
  downloadUrl: string;
  manifest: string | null;
}

describe('signed manifests', () => {
  for (const algorithm of ['RS256', 'EdDSA'] as const) {
    test(`an ${algorithm} app’s files carry manifests its offline key signed, which the SDK checks against the key set`, async () => {
      const owner = await appSigningWith(algorithm);
      const license = await issueLicense(server, owner);
      const bytes = randomBytes(50_000);
      const release = await publishRelease(server, owner, '2.3.0', {
        'tool-2.3.0.tar.gz': { bytes, platform: 'linux', arch: 'x64' },
      });
      const offered = (
        await server.api.post('/releases/upgrade', {
          appId: owner.appId,
          key: license.key,
          currentVersion: '2.0.0',
          platform: 'linux',
        })
      ).expect(200).body.artifacts[0] as Offered;
      assert.ok(offered.manifest);
      const header = decodeProtectedHeader(offered.manifest);
      const published = (await keySet()).keys.find((key) => key.kid === header.kid);
      assert.equal(header.alg, algorithm);
      assert.equal(
        published?.purpose,
        'offline',
        'the key that signs license files, kept across token rotations',
      );
      assert.deepEqual(decodeJwt(offered.manifest), {
        iss: server.config.licenseTokenIssuer,
        iat: Date.parse('2026-06-01T10:00:00.000Z') / 1000,
        token_use: 'service_release_manifest_v1',
        app: owner.appId,
        release: release.id,
        version: '2.3.0',
        filename: 'tool-2.3.0.tar.gz',
        platform: 'linux',
        arch: 'x64',
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        sha512: createHash('sha512').update(bytes).digest('hex'),
      });

      // The client downloads the file and checks it, offline, against the key set it ships with.
      const downloaded = Buffer.from(
        await (await fetch(reachable(server, offered.downloadUrl))).arrayBuffer(),
      );
      const options = {
        keySet: await keySet(),
        appId: owner.appId,
        version: '2.3.0',
        filename: 'tool-2.3.0.tar.gz',
      };
      const checked = await verifyArtifact(downloaded, offered.manifest, options);
      assert.equal(checked.sha256, offered.sha256);
      const tampered = Buffer.from(downloaded);
      tampered[100] = (tampered[100] ?? 0) ^ 1;
      await assert.rejects(verifyArtifact(tampered, offered.manifest, options), codeIs('digest_mismatch'));

      const link = (
        await server.api.post('/releases/download', {
          appId: owner.appId,
          key: license.key,
          version: '2.3.0',
          filename: 'tool-2.3.0.tar.gz',
          platform: 'linux',
          arch: 'x64',
        })
      ).expect(200).body as Offered;
      assert.equal(
        link.manifest,
        offered.manifest,
        'one manifest per file: the same on every answer and node',
      );
    });
  }

  test('after the offline keys rotate, answers carry the new key’s manifests, and earlier ones check while the old key is published', async () => {
    const owner = await appSigningWith('EdDSA');
    const license = await issueLicense(server, owner);
    const bytes = randomBytes(1000);
    await publishRelease(server, owner, '1.0.0', { 'app.zip': { bytes } });
    const manifest = async () =>
      (
        (
          await server.api.post('/releases/upgrade', {
            appId: owner.appId,
            key: license.key,
            currentVersion: '0.9.0',
          })
        ).expect(200).body.artifacts[0] as Offered
      ).manifest as string;
    const before = await manifest();
    const shipped = await keySet();

    const { kids } = await server.service.modules.keyRing.rotate('offline');
    clock.advance(ACTIVATION_DELAY_MS + 1000);
    const after = await manifest();
    assert.equal(decodeProtectedHeader(after).kid, kids.EdDSA, 'signed by the new key once it signs');
    assert.notEqual(decodeProtectedHeader(before).kid, kids.EdDSA);

    const current = await keySet();
    await verifyArtifact(bytes, before, { keySet: current, appId: owner.appId });
    await verifyArtifact(bytes, after, { keySet: current, appId: owner.appId });
    // A key set shipped before the rotation lacks the new key: without the address to fetch the
    // current set it refuses, with it the SDK learns the new key.
    await assert.rejects(
      verifyArtifact(bytes, after, { keySet: shipped, appId: owner.appId }),
      codeIs('invalid_signature'),
    );
    const jwksUri = `${server.service.coreUrl}/v1/licenses/jwks`;
    const learnt = await verifyArtifact(bytes, after, { keySet: shipped, jwksUri, appId: owner.appId });
    assert.equal(learnt.filename, 'app.zip');
  });
});

function codeIs(code: string) {
  return (error: unknown) => {
    assert.ok(error instanceof ArtifactVerificationError, String(error));
    assert.equal(error.code, code);
    return true;
  };
}
