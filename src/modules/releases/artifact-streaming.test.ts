import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { ARTIFACT_STORES, openArtifactBackend } from '../../testing/artifact-backends.js';
import { processStorage, serve } from '../../testing/cli-process.js';
import { httpClient } from '../../testing/http-client.js';

/**
 * Uploads and downloads stream, whatever the file's size: the service as its own process with a
 * 96 MB JavaScript heap takes a 200 MB artifact and gives it back through a download link, and
 * its peak memory (the kernel's high-water mark of its resident set) grows by far less than the
 * file, on each artifact store. The test makes the file as it sends it and hashes what it gets
 * back as it arrives: it never holds the file either.
 */
const MiB = 1024 ** 2;
const FILE_BYTES = 200 * MiB;
/**
 * Well under the file, and above what the service itself keeps live: at 64 MB a node spends its
 * time collecting garbage, whatever it is doing.
 */
const HEAP_MB = 96;
const PASSWORD = 'stream me gently please';

const storage = await processStorage();
const backends: { close(): Promise<void> }[] = [];
after(async () => {
  for (const backend of backends) await backend.close();
});

/** The process's peak resident memory so far, in bytes (Linux: VmHWM in /proc/<pid>/status). */
function peakMemory(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmHWM:'));
  const kilobytes = Number(/(\d+)\s*kB/.exec(line ?? '')?.[1]);
  assert.ok(kilobytes > 0, `no VmHWM for process ${pid}`);
  return kilobytes * 1024;
}

/**
 * `size` bytes made a MiB at a time as they are read, `digest()` once all are read: one random MiB,
 * each copy numbered, so no two are alike and the test spends little on making them.
 */
function generated(size: number) {
  const block = randomBytes(MiB);
  const hash = createHash('sha256');
  let made = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (made >= size) return controller.close();
      const chunk = Buffer.from(block.subarray(0, Math.min(MiB, size - made)));
      chunk.writeUInt32BE(made / MiB);
      made += chunk.length;
      hash.update(chunk);
      controller.enqueue(chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

/** The SHA-256 and size of a response's body, read as it arrives. */
async function digestOf(res: Response): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of res.body ?? []) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

for (const kind of ARTIFACT_STORES) {
  test(`on the ${kind} store, a ${FILE_BYTES / MiB} MB artifact goes in and out of a service with a ${HEAP_MB} MB heap, its memory growing by far less than the file`, async () => {
    const backend = await openArtifactBackend(kind);
    backends.push(backend);
    const adminEmail = `ops-${randomBytes(4).toString('hex')}@example.com`;
    const node = await serve({
      DATA_DIR: await storage.migratedDataDir(),
      DATABASE_URL: storage.DATABASE_URL,
      NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
      // File I/O runs on libuv's pool, niced by default: on a machine busy with other work that
      // would make this test slow, not prove anything more.
      THREADPOOL_NICE: '0',
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL: adminEmail,
      ADMIN_PASSWORD: PASSWORD,
      ...backend.env,
    });
    const pid = node.proc.child.pid as number;
    const api = httpClient(`${node.api}/v1`);
    try {
      const admin = (await api.post('/auth/login', { email: adminEmail, password: PASSWORD })).expect(
        200,
      ).body;
      const seller = (
        await api.post('/auth/register', {
          email: `seller-${randomBytes(4).toString('hex')}@example.com`,
          password: PASSWORD,
        })
      ).expect(201).body;
      // Pro: uploads up to 512 MiB.
      (await api.patch(`/admin/users/${seller.user.id}`, { tier: 'pro' }, { token: admin.token })).expect(
        200,
      );
      const token: string = seller.token;
      const app = (await api.post('/apps', { name: 'Streams' }, { token })).expect(201).body;
      const release = (await api.post(`/apps/${app.id}/releases`, { version: '1.0.0' }, { token })).expect(
        201,
      ).body;
      const license = (await api.post(`/apps/${app.id}/licenses`, {}, { token })).expect(201).body;
      const put = (filename: string, body: ReadableStream<Uint8Array>) =>
        fetch(`${api.baseUrl}/apps/${app.id}/releases/${release.id}/artifacts/${filename}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
          body,
          duplex: 'half',
        });
      const download = async (filename: string) => {
        const offered = (
          await api.post('/releases/download', {
            appId: app.id,
            key: license.key,
            version: '1.0.0',
            filename,
          })
        ).expect(200).body;
        // The link names the public address (PUBLIC_BASE_URL); the process listens on its own.
        const link = new URL(offered.downloadUrl);
        const res = await fetch(`${node.api}${link.pathname}${link.search}`);
        assert.equal(res.status, 200);
        return digestOf(res);
      };

      // A small file first, so that what any upload and download loads (the S3 client) is in the baseline.
      const small = generated(MiB);
      assert.equal((await put('small.bin', small.stream)).status, 201);
      (await api.post(`/apps/${app.id}/releases/${release.id}/publish`, {}, { token })).expect(200);
      assert.equal((await download('small.bin')).sha256, small.digest());
      const baseline = peakMemory(pid);

      const big = generated(FILE_BYTES);
      const uploaded = await put('big.bin', big.stream);
      const artifact = (await uploaded.json()) as { size: number; sha256: string };
      assert.equal(uploaded.status, 201, JSON.stringify(artifact));
      const sent = big.digest();
      assert.deepEqual(
        [artifact.size, artifact.sha256],
        [FILE_BYTES, sent],
        'the service hashed what was sent',
      );
      assert.deepEqual(
        await download('big.bin'),
        { sha256: sent, size: FILE_BYTES },
        'the link gives it back whole',
      );

      const growth = peakMemory(pid) - baseline;
      assert.ok(
        growth < FILE_BYTES / 2,
        `the peak memory grew by ${Math.round(growth / MiB)} MiB for a ${FILE_BYTES / MiB} MiB file`,
      );
    } finally {
      node.proc.child.kill('SIGKILL');
      await node.proc.exited;
    }
  });
}
