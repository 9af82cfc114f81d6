import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type {
  DownloadDay as Day,
  ReleaseDownloads as Downloads,
} from '../../../packages/client/src/release-types.js';
import {
  ARTIFACT_STORES,
  type ArtifactBackend,
  openArtifactBackend,
} from '../../testing/artifact-backends.js';
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
 * A release's downloads per UTC day over HTTP: links followed by clients on several days (whole,
 * and a download resumed across midnight), then the seller's per-day figures of the release and
 * of each file, and the period's checks; on each artifact store (on S3 the link counts the
 * download, then redirects to the store).
 */
let server: TestServer;
let clock: TestClock;
let backend: ArtifactBackend;

/** The two files of the release below, by their addresses (name, platform, architecture). */
const FILES = {
  'tool.tar.gz': { filename: 'tool.tar.gz', platform: 'linux', arch: 'x64' },
  'tool.dmg': { filename: 'tool.dmg', platform: 'macos' },
};

/** A fresh download link of one of the release's files for the license. */
async function linkTo(
  seller: SellerWithApp,
  key: string,
  version: string,
  file: keyof typeof FILES,
): Promise<string> {
  const link = (
    await server.api.post('/releases/download', { appId: seller.appId, key, version, ...FILES[file] })
  ).expect(200).body;
  return reachable(server, link.downloadUrl);
}

async function fetched(url: string, range?: string): Promise<number> {
  const res = await fetch(url, range ? { headers: { range } } : {});
  await res.arrayBuffer();
  return res.status;
}

/** Only the days that had downloads, as `YYYY-MM-DD: n`. */
const counted = (points: Day[]) =>
  points
    .filter((point) => point.downloads > 0)
    .map((point) => `${point.start.slice(0, 10)}: ${point.downloads}`);

for (const kind of ARTIFACT_STORES)
  describe(`downloads per day (${kind} store)`, () => {
    before(async () => {
      backend = await openArtifactBackend(kind);
      clock = testClock('2026-06-01T10:00:00.000Z');
      server = await startTestServer(backend.env, { clock });
    });
    after(async () => {
      await server.stop();
      await backend.close();
    });

    test('count each download on its UTC day, a resumed one once on the day it started, per release and per file', async () => {
      const seller = await sellerWithApp(server);
      const license = await issueLicense(server, seller);
      const big = randomBytes(50_000);
      const release = await publishRelease(server, seller, '1.0.0', {
        'tool.tar.gz': { bytes: big, platform: 'linux', arch: 'x64' },
        'tool.dmg': { bytes: randomBytes(100), platform: 'macos' },
      });
      const downloadsPath = `/apps/${seller.appId}/releases/${release.id}/downloads`;
      // The app's API key reads the figures: a session would end over the days the test spans.
      const reader = { token: (await createApiKey(server, seller.token, seller.appId)).key };

      clock.set('2026-06-01T12:00:00.000Z');
      assert.equal(await fetched(await linkTo(seller, license.key, '1.0.0', 'tool.tar.gz')), 200);
      assert.equal(await fetched(await linkTo(seller, license.key, '1.0.0', 'tool.dmg')), 200);
      // Started before midnight, resumed after: one download, on the day it started.
      clock.set('2026-06-02T23:40:00.000Z');
      const resumed = await linkTo(seller, license.key, '1.0.0', 'tool.tar.gz');
      assert.equal(await fetched(resumed, 'bytes=0-9999'), 206);
      clock.set('2026-06-03T00:10:00.000Z');
      assert.equal(await fetched(resumed, 'bytes=10000-'), 206);
      clock.set('2026-06-03T09:00:00.000Z');
      assert.equal(await fetched(await linkTo(seller, license.key, '1.0.0', 'tool.tar.gz')), 200);
      assert.equal(await fetched(await linkTo(seller, license.key, '1.0.0', 'tool.tar.gz')), 200);

      const query = new URLSearchParams({ from: '2026-05-31T00:00:00Z', to: '2026-06-03T23:59:59.999Z' });
      const answer = (await server.api.get(`${downloadsPath}?${query}`, reader)).expect(200)
        .body as Downloads;
      assert.equal(answer.releaseId, release.id);
      assert.equal(answer.from, '2026-05-31T00:00:00.000Z');
      assert.equal(answer.to, '2026-06-03T23:59:59.999Z');
      assert.equal(answer.days, 4);
      assert.deepEqual(
        answer.points.map((point) => point.start),
        ['2026-05-31', '2026-06-01', '2026-06-02', '2026-06-03'].map((day) => `${day}T00:00:00.000Z`),
        'every day, empty ones too',
      );
      assert.deepEqual(counted(answer.points), ['2026-06-01: 2', '2026-06-02: 1', '2026-06-03: 2']);
      assert.equal(answer.downloads, 5);
      const [dmg, tarball] = answer.artifacts;
      assert.deepEqual(
        [tarball?.filename, tarball?.platform, tarball?.arch, tarball?.downloads],
        ['tool.tar.gz', 'linux', 'x64', 4],
      );
      assert.deepEqual(counted(tarball?.points ?? []), ['2026-06-01: 1', '2026-06-02: 1', '2026-06-03: 2']);
      assert.deepEqual([dmg?.filename, dmg?.arch, dmg?.downloads], ['tool.dmg', null, 1]);
      assert.deepEqual(counted(dmg?.points ?? []), ['2026-06-01: 1']);

      // The running totals agree with the days.
      const artifacts = (
        await server.api.get(`/apps/${seller.appId}/releases/${release.id}/artifacts`, reader)
      ).expect(200).body.artifacts as { filename: string; downloads: number }[];
      assert.deepEqual(
        artifacts.map((artifact) => [artifact.filename, artifact.downloads]),
        [
          ['tool.dmg', 1],
          ['tool.tar.gz', 4],
        ],
      );

      // By default: today and the 29 days before.
      const recent = (await server.api.get(downloadsPath, reader)).expect(200).body as Downloads;
      assert.equal(recent.days, 30);
      assert.equal(recent.from, '2026-05-05T00:00:00.000Z');
      assert.equal(recent.to, '2026-06-03T09:00:00.000Z');
      assert.equal(recent.points.at(-1)?.start, '2026-06-03T00:00:00.000Z');
      assert.equal(recent.downloads, 5);
      const oneDay = new URLSearchParams({ from: '2026-06-02T05:00:00Z', to: '2026-06-02T06:00:00Z' });
      const second = (await server.api.get(`${downloadsPath}?${oneDay}`, reader)).expect(200)
        .body as Downloads;
      assert.deepEqual([second.days, second.downloads], [1, 1]);
    });

    test('a draft has every day at zero; another seller’s release is not found; the period is checked', async () => {
      clock.set('2026-07-01T10:00:00.000Z');
      const seller = await sellerWithApp(server);
      const other = await sellerWithApp(server);
      const draft = await publishRelease(
        server,
        seller,
        '2.0.0',
        { 'a.zip': { bytes: randomBytes(10) } },
        { draft: true },
      );
      const downloadsPath = `/apps/${seller.appId}/releases/${draft.id}/downloads`;
      const zero = (await server.api.get(downloadsPath, { token: seller.token })).expect(200)
        .body as Downloads;
      assert.equal(zero.downloads, 0);
      assert.deepEqual(
        zero.artifacts.map((artifact) => [artifact.filename, artifact.downloads, artifact.points.length]),
        [['a.zip', 0, 30]],
      );
      assertError(await server.api.get(downloadsPath, { token: other.token }), 404, 'not_found');

      const field = async (query: Record<string, string>) =>
        assertError(
          await server.api.get(`${downloadsPath}?${new URLSearchParams(query)}`, { token: seller.token }),
          400,
          'validation_failed',
        ).details?.[0]?.field;
      assert.equal(await field({ from: '2026-07-02T00:00:00Z', to: '2026-07-01T00:00:00Z' }), 'from');
      assert.equal(
        await field({ from: '2025-01-01T00:00:00Z', to: '2026-07-01T00:00:00Z' }),
        'from',
        'over 366 days',
      );
      assert.equal(await field({ to: '2026-07-01' }), 'to', 'a date without its time and zone');
      assert.equal(await field({ from: 'yesterday' }), 'from');
      assert.equal(await field({ days: '7' }), 'days');
    });
  });
