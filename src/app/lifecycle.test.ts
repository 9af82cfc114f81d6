import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { builtTemplateKey, templateKey } from '../platform/db/database-template.js';
import { readMigrations } from '../platform/db/migrate.js';
import { crash, processStorage, runCli, serve } from '../testing/cli-process.js';
import { httpClient } from '../testing/http-client.js';
import { startReceiver } from '../testing/receiver.js';

/** The service as an operator runs it: the CLI in its own process, on the configured storage. */
const { DATABASE_URL, storage, freshDataDir, migratedDataDir } = await processStorage();

const PASSWORD = 'persist me please';
/** Linux: each thread's priority and CPU time can be read from /proc. */
const THREADS_IN_PROC = fs.existsSync('/proc/thread-self');

describe(`the service process on ${storage}`, () => {
  test('data and sessions written through the API survive a restart', async () => {
    // An empty folder, as a newcomer's first start finds it: the embedded store is made there.
    const env = { DATA_DIR: freshDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const email = `restart-${randomBytes(4).toString('hex')}@example.com`;

    const first = await serve(env);
    const api = httpClient(`${first.api}/v1`);
    const { token } = (await api.post('/auth/register', { email, password: PASSWORD })).expect(201).body;
    const app = (await api.post('/apps', { name: 'Survivor' }, { token })).expect(201).body;
    first.proc.child.kill('SIGTERM');
    assert.equal(await first.proc.exited, 0);

    const second = await serve(env);
    try {
      const again = httpClient(`${second.api}/v1`);
      const login = (await again.post('/auth/login', { email, password: PASSWORD })).expect(200);
      const apps = (await again.get('/apps', { token: login.body.token })).expect(200);
      assert.deepEqual(
        apps.body.apps.map((a: { id: string }) => a.id),
        [app.id],
      );
      // The generated session secret was kept in DATA_DIR, so the old token still works.
      (await again.get('/auth/me', { token })).expect(200);
    } finally {
      second.proc.child.kill('SIGTERM');
      assert.equal(await second.proc.exited, 0);
    }
  });

  test('SIGTERM lets a request in flight finish, then exits cleanly', async () => {
    const { proc, api } = await serve({
      DATA_DIR: await migratedDataDir(),
      DATABASE_URL,
      LOG_LEVEL: 'debug',
    });
    const body = JSON.stringify({
      email: `inflight-${randomBytes(4).toString('hex')}@example.com`,
      password: PASSWORD,
    });
    const url = new URL(`${api}/v1/auth/register`);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      // Half the body now; the rest only after the server has begun shutting down.
      req.write(body.slice(0, 10));
      proc
        .waitFor(/server\.stopping/)
        .then(() => req.end(body.slice(10)))
        .catch(reject);
    });
    // Shut down only once the server has taken the request in.
    await proc.waitFor(/"path":"\/v1\/auth\/register"[^\n]*http\.request\.received/);
    proc.child.kill('SIGTERM');
    const result = await response;
    assert.equal(result.status, 201, result.body);
    assert.equal(await proc.exited, 0);
    assert.match(proc.output(), /server\.stopped/);
  });

  test('a first start logs one JSON object a line, and on PGlite copies the built database template', async () => {
    const dataDir = freshDataDir();
    // What a start killed while copying leaves behind: the next start clears it.
    fs.mkdirSync(path.join(dataDir, 'pgdata.partial-4242'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'pgdata.partial-4242', 'PG_VERSION'), '17\n');
    const { proc, api } = await serve({ DATA_DIR: dataDir, DATABASE_URL, LOG_LEVEL: 'info' });
    try {
      (await httpClient(`${api}/v1`).get('/health/ready')).expect(200);
    } finally {
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exited, 0);
    }
    const lines = proc.stdout().trimEnd().split('\n');
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `not a JSON object: ${line}`);
    const started = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'server.started');
    assert.equal(started?.coreUrl, api, 'the addresses are in the log, for whoever needs them');
    const created = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'db.created');
    if (DATABASE_URL) {
      assert.equal(created, undefined, 'PostgreSQL: nothing embedded is created');
    } else {
      assert.equal(
        builtTemplateKey(),
        templateKey(),
        'dist/database-template is built from these migrations (npm run build makes it)',
      );
      assert.equal(created?.from, 'template');
      assert.deepEqual(
        fs.readdirSync(dataDir).filter((name) => name.startsWith('pgdata')),
        ['pgdata'],
      );
    }
  });

  test('a port in use stops start-up with a message naming the setting that moves it', async () => {
    const holder = net.createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const taken = String((holder.address() as net.AddressInfo).port);
    try {
      for (const setting of ['PORT', 'METRICS_PORT', 'HEALTH_PORT']) {
        const proc = runCli(['serve'], {
          DATA_DIR: await migratedDataDir(),
          DATABASE_URL,
          HOST: '127.0.0.1',
          PORT: '0',
          PAY_PORT: '0',
          METRICS_PORT: '0',
          HEALTH_PORT: '0',
          [setting]: taken,
        });
        assert.equal(await proc.exited, 1, proc.output());
        assert.match(
          proc.output(),
          new RegExp(
            `${setting}: 127\\.0\\.0\\.1:${taken} is already in use .*set ${setting} to a free port`,
          ),
        );
      }
    } finally {
      holder.close();
    }
  });

  test('a wrong setting stops start-up with a message naming it', async () => {
    const proc = runCli(['serve'], { PORT: 'eighty', DATA_DIR: freshDataDir() });
    assert.equal(await proc.exited, 2);
    assert.match(proc.output(), /Configuration error: PORT: must be a whole number/);
  });

  test('serve runs the thread pool that signs tokens below the event loop, and only it', {
    skip: !THREADS_IN_PROC
      ? 'thread priorities are read from Linux /proc'
      : os.getPriority() >= 7
        ? 'the tests already run at nice 7 or lower'
        : false,
  }, async () => {
    const { proc, api: base } = await serve({
      DATA_DIR: await migratedDataDir(),
      DATABASE_URL,
      LOG_LEVEL: 'info',
      THREADPOOL_NICE: '7',
      UV_THREADPOOL_SIZE: '3',
      VERIFY_KEY_RATE_LIMIT: '1000',
    });
    try {
      const pid = proc.child.pid as number;
      const threads = threadsOf(pid);
      const pool = threads.filter((thread) => thread.nice === 7);
      assert.equal(pool.length, 3, 'each of the three pool threads is lowered');
      // The event loop and every other thread keep the priority the process was started with.
      const started = os.getPriority(process.pid);
      assert.equal(threads.find((thread) => thread.id === pid)?.nice, started, 'the event loop is not');
      assert.deepEqual(
        threads.filter((thread) => thread.nice !== 7 && thread.nice !== started),
        [],
      );
      assert.match(proc.output(), /process\.thread_pool\.priority_lowered/);

      // The lowered threads are the ones that sign: 100 verifies with a token cost them at least
      // 100 RS256 signatures' worth of CPU (well over 5 ms on any machine).
      const api = httpClient(`${base}/v1`);
      const email = `pool-${randomBytes(4).toString('hex')}@example.com`;
      const { token } = (await api.post('/auth/register', { email, password: PASSWORD })).expect(201).body;
      const app = (await api.post('/apps', { name: 'Signer' }, { token })).expect(201).body;
      const license = (await api.post(`/apps/${app.id}/licenses`, {}, { token })).expect(201).body;
      const before = new Map(pool.map((thread) => [thread.id, thread.ranNs]));
      for (let i = 0; i < 100; i++) {
        const answer = (await api.post('/licenses/verify', { key: license.key })).expect(200).body;
        assert.equal(typeof answer.license_token, 'string');
      }
      const signedNs = threadsOf(pid)
        .filter((thread) => thread.nice === 7)
        .reduce((sum, thread) => sum + thread.ranNs - (before.get(thread.id) ?? 0), 0);
      assert.ok(signedNs > 5e6, `the pool threads ran ${signedNs / 1e6} ms for 100 signatures`);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  });

  test('THREADPOOL_NICE=0 leaves every thread as it was', {
    skip: THREADS_IN_PROC ? false : 'thread priorities are read from Linux /proc',
  }, async () => {
    const { proc } = await serve({
      DATA_DIR: await migratedDataDir(),
      DATABASE_URL,
      LOG_LEVEL: 'info',
      THREADPOOL_NICE: '0',
    });
    try {
      const started = os.getPriority(process.pid);
      assert.deepEqual(
        threadsOf(proc.child.pid as number).filter((thread) => thread.nice !== started),
        [],
      );
      assert.doesNotMatch(proc.output(), /thread_pool/);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  });

  test('a process killed mid-delivery delivers again after restart, with the same event id', async () => {
    const receiver = await startReceiver();
    // The first attempt never gets an answer: the process dies while it waits.
    receiver.answer((request) =>
      receiver.requests.indexOf(request) === 0 ? { hang: true } : { status: 200 },
    );
    const env = {
      DATA_DIR: await migratedDataDir(),
      DATABASE_URL,
      LOG_LEVEL: 'warn',
      JOBS: 'on',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    try {
      const first = await serve(env);
      const api = httpClient(`${first.api}/v1`);
      const email = `crash-${randomBytes(4).toString('hex')}@example.com`;
      const { token } = (await api.post('/auth/register', { email, password: PASSWORD })).expect(201).body;
      (
        await api.post('/webhooks', { url: `${receiver.url}/crash`, events: ['app.created'] }, { token })
      ).expect(201);
      const app = (await api.post('/apps', { name: 'Crash' }, { token })).expect(201).body;
      const [inFlight] = await receiver.waitFor(1);
      await crash(first.proc);

      const second = await serve(env);
      try {
        const [, again] = await receiver.waitFor(2);
        assert.equal(again?.json.id, inFlight?.json.id);
        assert.equal(again?.json.data.id, app.id);
      } finally {
        second.proc.child.kill('SIGTERM');
        await second.proc.exited;
      }
    } finally {
      await receiver.close();
    }
  });
});

describe('two nodes over one PostgreSQL', { skip: DATABASE_URL ? false : 'needs DATABASE_URL' }, () => {
  test('start together, both serve, and each migration runs once', async () => {
    const name = `licensing_two_nodes_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(DATABASE_URL as string);
    url.pathname = `/${name}`;
    const secret = randomBytes(32).toString('hex');
    const adminEmail = `ops-${randomBytes(4).toString('hex')}@example.com`;
    const env = {
      DATABASE_URL: url.href,
      JWT_SECRET: secret,
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL: adminEmail,
      ADMIN_PASSWORD: PASSWORD,
    };
    try {
      const nodes = await Promise.all([
        serve({ ...env, DATA_DIR: freshDataDir() }),
        serve({ ...env, DATA_DIR: freshDataDir() }),
      ]);
      try {
        for (const node of nodes) (await httpClient(`${node.api}/v1`).get('/health/ready')).expect(200);
        // Both ensured the same admin account; it exists once.
        const admin = (
          await httpClient(`${nodes[1]?.api}/v1`).post('/auth/login', {
            email: adminEmail,
            password: PASSWORD,
          })
        ).expect(200);
        assert.equal(admin.body.user.role, 'ADMIN');
        // Both serve one key set, so a token signed on one node checks out on the other.
        const [jwksA, jwksB] = await Promise.all(
          nodes.map(async (node) => (await httpClient(`${node.api}/v1`).get('/licenses/jwks')).body),
        );
        // One token key and one offline key of each algorithm between them, though they started together.
        assert.equal(jwksA.keys.length, 4);
        assert.deepEqual(jwksA, jwksB);
        // A session made on one node is accepted by the other.
        const email = `two-${randomBytes(4).toString('hex')}@example.com`;
        const { token } = (
          await httpClient(`${nodes[0]?.api}/v1`).post('/auth/register', { email, password: PASSWORD })
        ).expect(201).body;
        (await httpClient(`${nodes[1]?.api}/v1`).get('/auth/me', { token })).expect(200);
        const a = httpClient(`${nodes[0]?.api}/v1`);
        const b = httpClient(`${nodes[1]?.api}/v1`);
        const app = (await a.post('/apps', { name: 'Shared' }, { token })).expect(201).body;
        const license = (await a.post(`/apps/${app.id}/licenses`, {}, { token })).expect(201).body;
        const verified = (await a.post('/licenses/verify', { key: license.key })).expect(200).body;
        assert.equal(
          (await b.post('/licenses/introspect', { license_token: verified.license_token })).expect(200).body
            .active,
          true,
        );
      } finally {
        for (const node of nodes) node.proc.child.kill('SIGTERM');
        await Promise.all(nodes.map((node) => node.proc.exited));
      }
      const db = new pg.Client({ connectionString: url.href });
      await db.connect();
      const { rows } = await db.query(
        'select version, count(*)::int as n from schema_migrations group by version order by version',
      );
      await db.end();
      assert.deepEqual(
        rows,
        readMigrations().map((file) => ({ version: file.version, n: 1 })),
      );
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});

/** Each thread of a process: its id, nice value and CPU time so far (from /proc). */
function threadsOf(pid: number): { id: number; nice: number; ranNs: number }[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((id) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${id}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ranNs = Number(fs.readFileSync(`/proc/${pid}/task/${id}/schedstat`, 'utf8').split(' ')[0]);
    return { id: Number(id), nice: Number(fields[19 - 3]), ranNs };
  });
}
