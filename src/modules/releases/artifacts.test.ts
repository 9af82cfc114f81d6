import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { requestsDrained } from '../../platform/http/create-http-app.js';
import {
  ARTIFACT_STORES,
  type ArtifactBackend,
  openArtifactBackend,
} from '../../testing/artifact-backends.js';
import {
  createApiKey,
  freePort,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';

/**
 * Uploads and the artifact store, over HTTP, on each store in turn: a folder, and S3 (an emulator
 * on loopback). The clock starts at the real time, as the stored files' times do, so that the
 * purge's "an hour ago" means the same to both.
 */
let server: TestServer;
let backend: ArtifactBackend;
let clock: TestClock;
const MiB = 1024 ** 2;

interface ArtifactBody {
  filename: string;
  platform: string | null;
  arch: string | null;
  filetype: string;
  size: number;
  sha256: string;
  sha512: string;
  url: string | null;
}

const sha = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');

async function draft(seller: SellerWithApp, version = '1.0.0') {
  return (
    await server.api.post(`/apps/${seller.appId}/releases`, { version }, { token: seller.token })
  ).expect(201).body;
}

/** PUT of raw bytes, as a CI job's curl --upload-file sends them: the status, headers and JSON answer. */
async function upload(seller: { token: string }, where: string, bytes: Buffer, query = '') {
  const res = await fetch(`${server.service.coreUrl}/v1${where}${query}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  // biome-ignore lint/suspicious/noExplicitAny: the answer is asserted field by field
  const body: any = await res.json();
  return { status: res.status, headers: res.headers, body };
}

async function artifactRows(releaseId: string) {
  return server.db.selectFrom('release_artifacts').selectAll().where('release_id', '=', releaseId).execute();
}

for (const kind of ARTIFACT_STORES) {
  describe(`release artifacts (${kind} store)`, () => {
    before(async () => {
      backend = await openArtifactBackend(kind);
      clock = testClock(new Date());
      // A low operator limit, so that passing it while streaming costs the test little.
      server = await startTestServer({ ...backend.env, ARTIFACT_MAX_BYTES: String(20 * MiB) }, { clock });
    });
    after(async () => {
      await server.stop();
      await backend.close();
    });

    test('an upload is stored whole, hashed by the service, listed and read back', async () => {
      const seller = await sellerWithApp(server);
      const release = await draft(seller);
      const bytes = randomBytes(300_000);
      const base = `/apps/${seller.appId}/releases/${release.id}/artifacts`;
      const res = await upload(seller, `${base}/Photo-Tool-1.0.0.tar.gz`, bytes, '?platform=linux&arch=x64');
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const artifact = res.body as ArtifactBody;
      assert.deepEqual(Object.keys(artifact).sort(), [
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
        [artifact.filename, artifact.platform, artifact.arch, artifact.filetype, artifact.size, artifact.url],
        ['Photo-Tool-1.0.0.tar.gz', 'linux', 'x64', 'tar.gz', bytes.length, null],
      );
      assert.equal(artifact.sha256, sha('sha256', bytes));
      assert.equal(artifact.sha512, sha('sha512', bytes));
      assert.equal(res.headers.get('location'), `/v1${base}/Photo-Tool-1.0.0.tar.gz?platform=linux&arch=x64`);
      // The stored file is the bytes sent, under their digest.
      assert.deepEqual(await backend.stored(artifact.sha256), bytes);

      const read = (
        await server.api.get(`${base}/Photo-Tool-1.0.0.tar.gz?platform=linux&arch=x64`, {
          token: seller.token,
        })
      ).expect(200);
      assert.deepEqual(read.body, artifact);
      assertError(
        await server.api.get(`${base}/Photo-Tool-1.0.0.tar.gz`, { token: seller.token }),
        404,
        'not_found',
      );
      const any = await upload(seller, `${base}/notes.txt`, Buffer.from('plain'));
      assert.equal(any.status, 201);
      assert.deepEqual(
        [any.body.platform, (await upload(seller, `${base}/setup`, Buffer.from('x'))).body.filetype],
        [null, ''],
      );
      const list = (await server.api.get(base, { token: seller.token })).expect(200).body;
      assert.equal(list.total, 3);
      assert.deepEqual(
        list.artifacts.map((a: { filename: string }) => a.filename),
        ['Photo-Tool-1.0.0.tar.gz', 'notes.txt', 'setup'],
      );
    });

    test('a draft’s file is replaced and removed; a published release keeps its files', async () => {
      const seller = await sellerWithApp(server);
      const release = await draft(seller);
      const base = `/apps/${seller.appId}/releases/${release.id}/artifacts`;
      assert.equal(
        (await upload(seller, `${base}/app.exe`, Buffer.from('first'), '?platform=windows')).status,
        201,
      );
      const replaced = await upload(seller, `${base}/app.exe`, Buffer.from('second'), '?platform=windows');
      assert.equal(replaced.status, 200);
      assert.equal(replaced.body.sha256, sha('sha256', Buffer.from('second')));
      assert.equal((await artifactRows(release.id)).length, 1);

      (
        await server.api.post(
          `/apps/${seller.appId}/releases/${release.id}/publish`,
          {},
          { token: seller.token },
        )
      ).expect(200);
      const same = await upload(seller, `${base}/app.exe`, Buffer.from('second'), '?platform=windows');
      assert.equal(same.status, 200, 'the same bytes again answer the artifact as it is');
      const other = await upload(seller, `${base}/app.exe`, Buffer.from('third'), '?platform=windows');
      assert.equal(other.status, 409);
      assert.equal(other.body.error.code, 'artifact_exists');
      assert.equal(
        (await upload(seller, `${base}/app.dmg`, Buffer.from('mac'), '?platform=macos')).status,
        201,
      );
      assertError(
        await server.api.delete(`${base}/app.exe?platform=windows`, { token: seller.token }),
        409,
        'release_not_draft',
      );
      (
        await server.api.post(
          `/apps/${seller.appId}/releases/${release.id}/yank`,
          {},
          { token: seller.token },
        )
      ).expect(200);
      const late = await upload(seller, `${base}/app.zip`, Buffer.from('late'));
      assert.equal(late.body.error.code, 'release_yanked');
      assert.equal((await artifactRows(release.id)).length, 2);

      const second = await draft(seller, '1.0.1');
      const path2 = `/apps/${seller.appId}/releases/${second.id}/artifacts/app.exe`;
      assert.equal((await upload(seller, path2, Buffer.from('x'))).status, 201);
      (await server.api.delete(path2, { token: seller.token })).expect(204);
      assert.equal((await artifactRows(second.id)).length, 0);
    });

    test('file names that name a folder, climb out of one or hide a file are refused before a byte is stored', async () => {
      const seller = await sellerWithApp(server);
      const release = await draft(seller);
      const base = `/apps/${seller.appId}/releases/${release.id}/artifacts`;
      for (const name of [
        '..%2Fescape.exe',
        '.hidden',
        'a%2Fb.zip',
        'a%5Cb.zip',
        'name%00.exe',
        'sp%20ace.zip',
        'x..y.zip',
      ]) {
        const res = await upload(seller, `${base}/${name}`, Buffer.from('nope'));
        assert.equal(res.status, 400, name);
        const { body } = res;
        assert.equal(body.error.code, 'validation_failed', name);
        assert.equal(body.error.details[0].field, 'filename', name);
      }
      for (const [query, field] of [
        ['?platform=Linux', 'platform'],
        ['?arch=x%2F64', 'arch'],
        ['?os=linux', 'os'],
      ] as const) {
        const res = await upload(seller, `${base}/ok.zip`, Buffer.from('nope'), query);
        assert.equal(res.status, 400, query);
        assert.match(JSON.stringify(res.body.error.details), new RegExp(field));
      }
      assert.equal((await artifactRows(release.id)).length, 0);
      assert.deepEqual(await backend.leftovers(), []);
    });

    test('an upload over the plan’s limit is refused, declared or not, and leaves nothing', async () => {
      const seller = await sellerWithApp(server);
      const release = await draft(seller);
      const where = `/v1/apps/${seller.appId}/releases/${release.id}/artifacts/big.bin`;
      // A free plan's limit is 100 MiB: a Content-Length above it is refused before the body is read.
      const declared = await rawPut(
        where,
        seller.token,
        { 'content-length': String(101 * 1024 * 1024) },
        Buffer.alloc(0),
        {
          endAfterHead: true,
        },
      );
      assert.match(declared, /^HTTP\/1\.1 413/);
      assert.match(declared, /payload_too_large/);
      assert.equal((await artifactRows(release.id)).length, 0);

      // Undeclared (chunked), it is refused at the first byte past the operator's limit (20 MiB here).
      const abortedBefore = backend.aborted();
      const streamed = await fetch(`${server.service.coreUrl}${where}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/octet-stream' },
        body: generated(21 * MiB),
        duplex: 'half',
      }).then(
        (res) => res.status,
        () => 'connection closed',
      );
      assert.ok(streamed === 413 || streamed === 'connection closed', String(streamed));
      await requestsDrained(server.service.core);
      assert.equal((await artifactRows(release.id)).length, 0);
      assert.deepEqual(await backend.leftovers(), []);
      if (kind === 's3')
        assert.equal(backend.aborted(), abortedBefore + 1, 'the multipart upload was aborted');
    });

    test('a connection dropped mid-upload leaves no artifact and no partial file', async () => {
      const seller = await sellerWithApp(server);
      const release = await draft(seller);
      const where = `/v1/apps/${seller.appId}/releases/${release.id}/artifacts/half.zip`;
      const abortedBefore = backend.aborted();
      // More than one part of an S3 multipart upload (8 MiB) arrives before the connection drops.
      await rawPut(where, seller.token, { 'content-length': String(16 * MiB) }, randomBytes(12 * MiB), {
        dropAfterBody: true,
      });
      // The service notices the closed connection on its own time: wait until its request is over.
      await requestsDrained(server.service.core);
      assert.deepEqual(await backend.leftovers(), []);
      if (kind === 's3')
        assert.equal(backend.aborted(), abortedBefore + 1, 'the multipart upload was aborted');
      assert.equal((await artifactRows(release.id)).length, 0);
      // The same name uploads whole afterwards.
      const whole = randomBytes(2048);
      const res = await upload(seller, where.replace(/^\/v1/, ''), whole);
      assert.equal(res.status, 201);
      assert.equal(res.body.size, 2048);
    });

    test('the app’s API key uploads; another seller reaches no release of it', async () => {
      const seller = await sellerWithApp(server);
      const release = await draft(seller);
      const key = (await createApiKey(server, seller.token, seller.appId)).key;
      const base = `/apps/${seller.appId}/releases/${release.id}/artifacts`;
      assert.equal((await upload({ token: key }, `${base}/ci.zip`, Buffer.from('ci'))).status, 201);
      const stranger = await sellerWithApp(server);
      const refused = await upload(stranger, `${base}/evil.zip`, Buffer.from('evil'));
      assert.equal(refused.status, 404);
      assertError(await server.api.get(`${base}/ci.zip`, { token: stranger.token }), 404, 'not_found');
      assert.deepEqual(
        (await artifactRows(release.id)).map((row) => row.filename),
        ['ci.zip'],
      );
    });

    if (kind === 's3') {
      test('a store that cannot be reached answers 503 artifact_store_unavailable and keeps nothing', async () => {
        const away = await startTestServer({
          ...backend.env,
          ARTIFACT_S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
        });
        try {
          const seller = await sellerWithApp(away);
          const release = (
            await away.api.post(
              `/apps/${seller.appId}/releases`,
              { version: '1.0.0' },
              { token: seller.token },
            )
          ).expect(201).body;
          const res = await fetch(
            `${away.service.coreUrl}/v1/apps/${seller.appId}/releases/${release.id}/artifacts/app.zip`,
            {
              method: 'PUT',
              headers: {
                authorization: `Bearer ${seller.token}`,
                'content-type': 'application/octet-stream',
              },
              body: randomBytes(1000),
            },
          );
          assert.equal(res.status, 503);
          assert.ok(Number(res.headers.get('retry-after')) > 0);
          assert.equal(
            ((await res.json()) as { error: { code: string } }).error.code,
            'artifact_store_unavailable',
          );
          const rows = await away.db
            .selectFrom('release_artifacts')
            .select('id')
            .where('release_id', '=', release.id)
            .execute();
          assert.deepEqual(rows, []);
        } finally {
          await away.stop();
        }
      });
    }

    // Last: it moves the clock two hours on.
    test('the purge deletes stored files no artifact names once they are an hour old, and what interrupted uploads left', async () => {
      const seller = await sellerWithApp(server);
      const kept = await draft(seller);
      const base = `/apps/${seller.appId}/releases/${kept.id}/artifacts`;
      const bytes = (label: string) => Buffer.concat([Buffer.from(label), randomBytes(64)]);
      const [keep, gone, first, second, shared] = ['keep', 'gone', 'first', 'second', 'shared'].map(
        bytes,
      ) as [Buffer, Buffer, Buffer, Buffer, Buffer];
      for (const [name, content] of [
        ['keep.zip', keep],
        ['gone.zip', gone],
        ['app.exe', first],
        ['app.exe', second],
        ['a.zip', shared],
        ['b.zip', shared],
      ] as const) {
        assert.ok([200, 201].includes((await upload(seller, `${base}/${name}`, content)).status), name);
      }
      (await server.api.delete(`${base}/gone.zip`, { token: seller.token })).expect(204);
      (await server.api.delete(`${base}/b.zip`, { token: seller.token })).expect(204);
      const deleted = await draft(seller, '2.0.0');
      const draftOnly = bytes('draft');
      const path2 = `/apps/${seller.appId}/releases/${deleted.id}/artifacts/d.zip`;
      assert.equal((await upload(seller, path2, draftOnly)).status, 201);
      (
        await server.api.delete(`/apps/${seller.appId}/releases/${deleted.id}`, { token: seller.token })
      ).expect(204);
      await backend.leaveUnfinishedUpload();
      const digest = (content: Buffer) => sha('sha256', content);
      const stored = async (content: Buffer) => (await backend.stored(digest(content))) !== null;

      const purge = server.service.modules.artifactPurge;
      await purge.purge();
      for (const content of [keep, gone, first, second, shared, draftOnly]) {
        assert.ok(await stored(content), 'nothing is deleted within the hour');
      }
      assert.notDeepEqual(await backend.leftovers(), []);

      clock.advance(2 * 60 * 60 * 1000);
      const purged = await purge.purge();
      assert.ok(purged.blobs >= 3 && purged.leftovers >= 1, JSON.stringify(purged));
      assert.deepEqual(
        await Promise.all([gone, first, draftOnly].map(stored)),
        [false, false, false],
        'the removed, the replaced and the deleted draft’s files are gone',
      );
      assert.deepEqual(await Promise.all([keep, second, shared].map(stored)), [true, true, true]);
      assert.deepEqual(await backend.leftovers(), []);
      // What is still named downloads as before: the bytes are there.
      assert.deepEqual(await backend.stored(digest(second)), second);
      assert.deepEqual(await purge.purge(), { blobs: 0, leftovers: 0 }, 'a second pass finds nothing');
    });
  });
}

/** `size` bytes made as they are read, a MiB at a time, never held whole. */
function generated(size: number): ReadableStream<Uint8Array> {
  let left = size;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const chunk = randomBytes(Math.min(MiB, left));
      left -= chunk.length;
      controller.enqueue(chunk);
    },
  });
}

/**
 * A PUT written by hand on a socket: its head, then `body`; `endAfterHead` waits for the answer
 * without sending a body, `dropAfterBody` destroys the connection once the body is written
 * (short of its Content-Length). Answers what the service sent before the end.
 */
function rawPut(
  where: string,
  token: string,
  headers: Record<string, string>,
  body: Buffer,
  how: { endAfterHead?: boolean; dropAfterBody?: boolean },
): Promise<string> {
  const url = new URL(server.service.coreUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('error', (error) => (how.dropAfterBody ? resolve(answer) : reject(error)));
    socket.on('close', () => resolve(answer));
    socket.on('connect', () => {
      const head = [
        `PUT ${where} HTTP/1.1`,
        `host: ${url.host}`,
        `authorization: Bearer ${token}`,
        'content-type: application/octet-stream',
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        '',
        '',
      ].join('\r\n');
      socket.write(head);
      if (how.endAfterHead) return;
      socket.write(body, () => {
        if (how.dropAfterBody) setTimeout(() => socket.destroy(), 50);
      });
    });
  });
}
