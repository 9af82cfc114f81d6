import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createApiKey,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

let server: TestServer;
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-artifacts-test-'));
before(async () => {
  server = await startTestServer({ ARTIFACT_DIR: artifactDir });
});
after(async () => {
  await server.stop();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

interface ArtifactBody {
  filename: string;
  platform: string | null;
  arch: string | null;
  filetype: string;
  size: number;
  sha256: string;
  sha512: string;
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

const tmpFiles = () =>
  fs.existsSync(path.join(artifactDir, 'tmp')) ? fs.readdirSync(path.join(artifactDir, 'tmp')) : [];

describe('release artifacts', () => {
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
    ]);
    assert.deepEqual(
      [artifact.filename, artifact.platform, artifact.arch, artifact.filetype, artifact.size],
      ['Photo-Tool-1.0.0.tar.gz', 'linux', 'x64', 'tar.gz', bytes.length],
    );
    assert.equal(artifact.sha256, sha('sha256', bytes));
    assert.equal(artifact.sha512, sha('sha512', bytes));
    assert.equal(res.headers.get('location'), `/v1${base}/Photo-Tool-1.0.0.tar.gz?platform=linux&arch=x64`);
    // The stored file is the bytes sent, under their digest.
    const stored = path.join(artifactDir, artifact.sha256.slice(0, 2), artifact.sha256);
    assert.ok(fs.readFileSync(stored).equals(bytes));

    const read = (
      await server.api.get(`${base}/Photo-Tool-1.0.0.tar.gz?platform=linux&arch=x64`, { token: seller.token })
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
      await server.api.post(`/apps/${seller.appId}/releases/${release.id}/yank`, {}, { token: seller.token })
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
    assert.deepEqual(tmpFiles(), []);
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
    assert.deepEqual(tmpFiles(), []);
  });

  test('a connection dropped mid-upload leaves no artifact and no partial file', async () => {
    const seller = await sellerWithApp(server);
    const release = await draft(seller);
    const where = `/v1/apps/${seller.appId}/releases/${release.id}/artifacts/half.zip`;
    await rawPut(
      where,
      seller.token,
      { 'content-length': String(4 * 1024 * 1024) },
      randomBytes(1024 * 1024),
      {
        dropAfterBody: true,
      },
    );
    // The service notices the closed connection on its own time: wait until its temporary file is gone.
    for (let i = 0; i < 100 && tmpFiles().length > 0; i++) await sleep(50);
    assert.deepEqual(tmpFiles(), []);
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
});

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
