import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../../src/testing/harness.js';
import { publishRelease } from '../../../src/testing/releases.js';
import { PGLITE_PASS_ONLY } from '../../../src/testing/store-pass.js';
import { generateVectors } from '../../conformance/src/generate.js';
import { VECTOR_KINDS, type Vector } from '../../conformance/src/vectors.js';
import { verifyArtifact as verifyArtifactInMemory } from './artifact-manifest.js';
import {
  ArtifactVerificationError,
  type ClockState,
  checkRevocations,
  type JsonWebKeySet,
  LicenseFileError,
  LicenseTokenError,
  LicenseTokenVerifier,
  type RevocationSnapshot,
  verifyArtifact,
  verifyLicenseFile,
  verifyWebhook,
  WebhookVerificationError,
} from './index.js';
import { machineFingerprint } from './machine-fingerprint.js';

/**
 * The conformance suite (packages/conformance): vectors the real service writes at the start of
 * the run, the verdict this SDK reaches on each, and the Python and Go SDKs' verdicts on the same
 * files.
 */
let dir: string;
let vectors: Vector[];

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'conformance-'));
  await generateVectors(dir);
  vectors = [];
  for (const kind of VECTOR_KINDS) {
    vectors.push(...JSON.parse(await readFile(path.join(dir, `${kind}.json`), 'utf8')).vectors);
  }
});
after(() => rm(dir, { recursive: true, force: true }));

interface Outcome {
  valid: boolean;
  error?: string;
  claims?: Record<string, unknown>;
  clock?: ClockState;
  revocations?: RevocationSnapshot;
}

/** The vector as a program using this SDK would check it. */
async function outcomeOf(vector: Vector): Promise<Outcome> {
  const clock = vector.context.clock ? { ...vector.context.clock } : undefined;
  const now = () => new Date(vector.context.now * 1000);
  const keySet = 'jwks' in vector.keys ? (vector.keys.jwks as JsonWebKeySet) : { keys: [] };
  const appId = vector.context.appId ?? '';
  // Revocation lists: the store the snapshot in force is kept in.
  let held: RevocationSnapshot | undefined;
  async function check(): Promise<Record<string, unknown>> {
    const input = vector.input as Record<string, string>;
    switch (vector.kind) {
      case 'license_token':
      case 'seat_token': {
        const verifier = new LicenseTokenVerifier({ appId, keySet, now, ...(clock ? { clock } : {}) });
        return { ...(await verifier.verify(input.token ?? '')) };
      }
      case 'license_file':
        return {
          ...(await verifyLicenseFile(input.file ?? '', {
            keySet,
            appId,
            hwuid: vector.context.hwuid ?? '',
            now,
            ...(vector.context.nonce !== undefined ? { nonce: vector.context.nonce } : {}),
            ...(vector.context.licenseKey !== undefined ? { licenseKey: vector.context.licenseKey } : {}),
            ...(vector.context.revocations ? { revocations: vector.context.revocations } : {}),
            ...(clock ? { clock } : {}),
          })),
        };
      case 'revocation_list': {
        held = vector.context.revocations;
        const store = {
          load: () => held,
          save: (value: RevocationSnapshot) => {
            held = value;
          },
        };
        await checkRevocations(input.list ?? '', { keySet, appId, now, store, ...(clock ? { clock } : {}) });
        return {};
      }
      case 'release_manifest': {
        const { manifest, artifact } = vector.input as { manifest: string; artifact: string };
        const options = {
          keySet,
          appId,
          ...(vector.context.version !== undefined ? { version: vector.context.version } : {}),
          ...(vector.context.filename !== undefined ? { filename: vector.context.filename } : {}),
        };
        const bytes = Buffer.from(artifact, 'base64');
        // The root entry (WebCrypto, bytes held) and /server (node:crypto, a stream) must agree.
        const [inMemory, streamed] = await Promise.allSettled([
          verifyArtifactInMemory(new Blob([bytes]), manifest, options),
          verifyArtifact(Readable.from([bytes.subarray(0, 7), bytes.subarray(7)]), manifest, options),
        ]);
        const codeOf = (settled: PromiseSettledResult<unknown>) =>
          settled.status === 'fulfilled' ? 'valid' : (settled.reason as { code?: string }).code;
        assert.equal(codeOf(inMemory), codeOf(streamed), 'both entries reach one verdict');
        if (streamed.status === 'rejected') throw streamed.reason;
        return { ...streamed.value };
      }
      case 'webhook': {
        const { body, headers } = vector.input as { body: string; headers: Record<string, string> };
        return {
          ...verifyWebhook({
            secret: (vector.keys as { secret: string }).secret,
            body,
            signature: headers['x-webhook-signature'],
            timestamp: headers['x-webhook-timestamp'],
            now: now(),
          }),
        };
      }
    }
  }
  try {
    const claims = await check();
    return { valid: true, claims, ...(clock ? { clock } : {}), ...(held ? { revocations: held } : {}) };
  } catch (error) {
    if (
      error instanceof LicenseTokenError ||
      error instanceof LicenseFileError ||
      error instanceof WebhookVerificationError ||
      error instanceof ArtifactVerificationError
    ) {
      return { valid: false, error: error.code, ...(clock ? { clock } : {}) };
    }
    throw error;
  }
}

/** Whether the outcome is the verdict: the same validity and code, the claims and states asked. */
function assertVerdict(vector: Vector, outcome: Outcome): void {
  const expected = vector.expect;
  if (!expected.valid) {
    assert.deepEqual({ valid: outcome.valid, error: outcome.error }, { valid: false, error: expected.error });
  } else {
    assert.equal(outcome.valid, true, `refused with ${outcome.error}`);
    for (const [claim, value] of Object.entries(expected.claims ?? {})) {
      assert.deepEqual(outcome.claims?.[claim], value, `claim ${claim}`);
    }
    if (expected.revocations) assert.deepEqual(outcome.revocations, expected.revocations);
  }
  if (expected.clock) assert.deepEqual(outcome.clock, expected.clock, 'the clock guard after');
}

describe('conformance vectors', () => {
  test('the service wrote vectors of every kind, valid and refused', () => {
    for (const kind of VECTOR_KINDS) {
      const ofKind = vectors.filter((vector) => vector.kind === kind);
      assert.ok(
        ofKind.some((vector) => vector.expect.valid),
        `${kind}: a valid one`,
      );
      assert.ok(
        ofKind.some((vector) => !vector.expect.valid),
        `${kind}: a refused one`,
      );
    }
    const codes = new Set(vectors.flatMap((vector) => (vector.expect.valid ? [] : [vector.expect.error])));
    for (const code of [
      'invalid_signature',
      'wrong_audience',
      'wrong_device',
      'wrong_nonce',
      'wrong_token_use',
    ]) {
      assert.ok(codes.has(code), code);
    }
    for (const code of ['token_expired', 'expired', 'revoked', 'clock_rollback', 'decryption_failed']) {
      assert.ok(codes.has(code), code);
    }
    for (const code of [
      'size_mismatch',
      'digest_mismatch',
      'wrong_app',
      'wrong_version',
      'invalid_manifest',
    ]) {
      assert.ok(codes.has(code), code);
    }
  });

  test('the TypeScript SDK reaches every verdict', async () => {
    const wrong: string[] = [];
    for (const vector of vectors) {
      try {
        assertVerdict(vector, await outcomeOf(vector));
      } catch (error) {
        wrong.push(`${vector.name}: ${(error as Error).message}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('the Python SDK reaches every verdict', (context) => {
    const python = PYTHON_PACKAGE();
    const python3 = pythonWith('cryptography');
    if (python3 === undefined) {
      context.skip('python3 with its cryptography package is not installed (.ci/run installs both)');
      return;
    }
    const run = spawnSync(python3, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], {
      cwd: python,
      encoding: 'utf8',
      env: { ...process.env, CONFORMANCE_VECTORS: dir, PYTHONDONTWRITEBYTECODE: '1' },
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, /conformance: \d+ vectors, 0 wrong/);
  });

  test('the Python SDK passes mypy --strict', (context) => {
    const python = PYTHON_PACKAGE();
    const run = spawnSync('mypy', ['--cache-dir=/dev/null'], { cwd: python, encoding: 'utf8' });
    if (run.error) {
      context.skip("mypy is not installed (.ci/run installs Debian's mypy)");
      return;
    }
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  });

  test('the Go SDK reaches every verdict, and go vet is clean', (context) => {
    if (!goInstalled()) {
      context.skip('go is not installed (.ci/run installs golang-go)');
      return;
    }
    const vet = spawnSync('go', ['vet', './...'], { cwd: GO_PACKAGE(), encoding: 'utf8', env: GO_ENV() });
    assert.equal(vet.status, 0, `${vet.stdout}\n${vet.stderr}`);
    const run = spawnSync('go', ['test', '-count=1', '-v', './...'], {
      cwd: GO_PACKAGE(),
      encoding: 'utf8',
      env: { ...GO_ENV(), CONFORMANCE_VECTORS: dir },
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout + run.stderr, /conformance: \d+ vectors, 0 wrong/);
  });
});

const GO_PACKAGE = () => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../go');

/**
 * The module has no dependency: nothing is fetched, and the installed toolchain is the one used.
 * go needs a build cache; a CI job without HOME gets one in the temporary folder.
 */
const GO_ENV = () => ({
  ...process.env,
  GOPROXY: 'off',
  GOFLAGS: '-mod=mod',
  GOTOOLCHAIN: 'local',
  ...(process.env.HOME || process.env.XDG_CACHE_HOME || process.env.GOCACHE
    ? {}
    : { GOCACHE: path.join(os.tmpdir(), 'go-build-cache') }),
});

function goInstalled(): boolean {
  return spawnSync('go', ['version']).status === 0;
}

const PYTHON_PACKAGE = () => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../python');

/**
 * The first python3 that imports `modules`: the one on the PATH, else Debian's (which .ci/run
 * provides with python3-cryptography and python3-build), so a pyenv python3 without them does
 * not skip the checks.
 */
function pythonWith(modules: string): string | undefined {
  return ['python3', '/usr/bin/python3'].find(
    (candidate) => spawnSync(candidate, ['-c', `import ${modules}`]).status === 0,
  );
}

/** A published release of the seller's app with one Linux file, for the SDKs' update checks. */
async function releaseForUpdates(server: TestServer, seller: SellerWithApp) {
  await publishRelease(server, seller, '1.2.0', {
    'live-1.2.0.tar.gz': { bytes: randomBytes(40_000), platform: 'linux' },
  });
  // Download links are built on the service's public address; the SDKs' tests reach the listener.
  return { LICENSING_LIVE_PUBLIC_API: server.config.apiBaseUrl };
}

/** The SDK's verifications of the license are in its timeline with the version it was given. */
async function sentItsVersion(server: TestServer, seller: SellerWithApp, licenseId: string, version: string) {
  await server.service.modules.timelineJournal.flush();
  const path = `/apps/${seller.appId}/licenses/${licenseId}/events?type=verification`;
  const { events } = (await server.api.get(path, { token: seller.token })).expect(200).body;
  assert.ok(events.length > 0, 'the SDK’s verifications are recorded');
  assert.deepEqual([...new Set(events.map((e: { appVersion: string | null }) => e.appVersion))], [version]);
}

describe('the Python SDK online, against a real service', () => {
  test('verify, validate-hardware, seat checkout and checkin, usage consume, the fetched key set, an update checked against its manifest and the service’s error codes', async (context) => {
    const python3 = pythonWith('cryptography');
    if (python3 === undefined) {
      context.skip('python3 with its cryptography package is not installed (.ci/run installs both)');
      return;
    }
    const server = await startTestServer();
    try {
      const seller = await sellerWithApp(server);
      const license = await issueLicense(server, seller);
      const floating = await issueLicense(server, seller, { floating: true, maxSeats: 1 });
      const seat = await issueLicense(server, seller, { floating: true, maxSeats: 1 });
      const usage = await issueLicense(server, seller, { maxUses: 5 });
      const updates = await releaseForUpdates(server, seller);
      // Asynchronous: the service answers from this process while Python waits for it.
      const run = await promisify(execFile)(python3, ['-m', 'unittest', '-v', 'tests.test_live'], {
        cwd: PYTHON_PACKAGE(),
        env: {
          ...process.env,
          PYTHONDONTWRITEBYTECODE: '1',
          LICENSING_LIVE_URL: server.service.coreUrl,
          LICENSING_LIVE_APP_ID: seller.appId,
          LICENSING_LIVE_KEY: license.key,
          LICENSING_LIVE_LICENSE_ID: license.id,
          LICENSING_LIVE_FLOATING_KEY: floating.key,
          LICENSING_LIVE_SEAT_KEY: seat.key,
          LICENSING_LIVE_USAGE_KEY: usage.key,
          ...updates,
        },
      }).catch((error: { stdout: string; stderr: string }) =>
        assert.fail(`${error.stdout}\n${error.stderr}`),
      );
      assert.match(run.stderr, /Ran 8 tests/);
      assert.doesNotMatch(run.stderr, /skipped/);
      await sentItsVersion(server, seller, license.id, 'python-live/1.0');
    } finally {
      await server.stop();
    }
  });
});

describe('the Go SDK online, against a real service', () => {
  test('verify, validate-hardware, seats with a heartbeat, usage consume, the revocation list, the device id, an update checked against its manifest and the service’s error codes', async (context) => {
    if (!goInstalled()) {
      context.skip('go is not installed (.ci/run installs golang-go)');
      return;
    }
    const server = await startTestServer();
    try {
      const seller = await sellerWithApp(server);
      const license = await issueLicense(server, seller);
      const floating = await issueLicense(server, seller, { floating: true, maxSeats: 1 });
      const seat = await issueLicense(server, seller, { floating: true, maxSeats: 1 });
      const usage = await issueLicense(server, seller, { maxUses: 3 });
      const updates = await releaseForUpdates(server, seller);
      // Asynchronous: the service answers from this process while the Go tests wait for it.
      const run = await promisify(execFile)('go', ['test', '-count=1', '-v', '-run', '^TestLive', '.'], {
        cwd: GO_PACKAGE(),
        env: {
          ...GO_ENV(),
          LICENSING_LIVE_URL: server.service.coreUrl,
          LICENSING_LIVE_APP_ID: seller.appId,
          LICENSING_LIVE_KEY: license.key,
          LICENSING_LIVE_LICENSE_ID: license.id,
          LICENSING_LIVE_FLOATING_KEY: floating.key,
          LICENSING_LIVE_SEAT_KEY: seat.key,
          LICENSING_LIVE_USAGE_KEY: usage.key,
          // The device id the TypeScript SDK computes here: Go's must be the same.
          LICENSING_LIVE_FINGERPRINT: await machineFingerprint(seller.appId),
          ...updates,
        },
      }).catch((error: { stdout: string; stderr: string }) =>
        assert.fail(`${error.stdout}\n${error.stderr}`),
      );
      assert.equal(run.stdout.match(/^--- PASS: TestLive/gm)?.length, 10, run.stdout);
      assert.doesNotMatch(run.stdout, /--- SKIP/);
      await sentItsVersion(server, seller, license.id, 'go-live/1.0');
    } finally {
      await server.stop();
    }
  });
});

describe('the Python package builds', { skip: PGLITE_PASS_ONLY }, () => {
  test('a wheel and an sdist with the typed package in them', async (context) => {
    const python = pythonWith('build, setuptools');
    if (python === undefined) {
      context.skip('no python3 with build and setuptools (.ci/run installs python3-build)');
      return;
    }
    const out = await mkdtemp(path.join(os.tmpdir(), 'python-dist-'));
    try {
      const run = spawnSync(python, ['-m', 'build', '--no-isolation', '--outdir', out, '.'], {
        cwd: PYTHON_PACKAGE(),
        encoding: 'utf8',
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      });
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
      const built = (await readdir(out)).sort();
      assert.deepEqual(built, ['licensing-client-0.1.0.tar.gz', 'licensing_client-0.1.0-py3-none-any.whl']);
      const listing = spawnSync(python, ['-m', 'zipfile', '-l', path.join(out, built[1] ?? '')], {
        encoding: 'utf8',
      }).stdout;
      for (const file of ['py.typed', 'tokens.py', 'license_file.py', 'webhooks.py', 'fingerprint.py']) {
        assert.match(listing, new RegExp(`licensing_client/${file.replace('.', '\\.')}`), file);
      }
      assert.doesNotMatch(listing, /tests\//, 'no tests in the wheel');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
