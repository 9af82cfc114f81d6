import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { processStorage, runCli, serve } from '../testing/cli-process.js';
import { assertError, httpClient } from '../testing/http-client.js';

/** The CLI's one-shot commands and start-up settings, as an operator runs them (see lifecycle.test.ts). */
const { DATABASE_URL, storage, freshDataDir, migratedDataDir } = await processStorage();

const PASSWORD = 'persist me please';

describe(`the command line on ${storage}`, () => {
  test('migrate applies pending migrations once', {
    skip: DATABASE_URL ? 'shared database is migrated already' : false,
  }, async () => {
    const env = { DATA_DIR: freshDataDir(), LOG_LEVEL: 'warn' };
    const first = runCli(['migrate'], env);
    assert.equal(await first.exited, 0, first.output());
    assert.match(first.output(), /applied: 0001_foundation/);
    const second = runCli(['migrate'], env);
    assert.equal(await second.exited, 0);
    assert.match(second.output(), /database is up to date/);
  });

  test('admin create makes an admin who can sign in', async () => {
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const email = `ops-${randomBytes(4).toString('hex')}@example.com`;
    const create = runCli(['admin', 'create', '--email', email, '--password', PASSWORD], env);
    assert.equal(await create.exited, 0, create.output());
    assert.match(create.output(), new RegExp(`created admin ${email}`));
    const { proc, api } = await serve(env);
    try {
      const login = (await httpClient(`${api}/v1`).post('/auth/login', { email, password: PASSWORD })).expect(
        200,
      );
      assert.equal(login.body.user.role, 'ADMIN');
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  });

  test('ADMIN_EMAIL never promotes an account that does not hold ADMIN_PASSWORD', async () => {
    const dataDir = await migratedDataDir();
    const email = `squat-${randomBytes(4).toString('hex')}@example.com`;
    // Someone registers the address the operator is about to configure.
    const first = await serve({ DATA_DIR: dataDir, DATABASE_URL, LOG_LEVEL: 'warn' });
    const api = httpClient(`${first.api}/v1`);
    (await api.post('/auth/register', { email, password: 'the squatter password' })).expect(201);
    first.proc.child.kill('SIGTERM');
    await first.proc.exited;

    const second = await serve({
      DATA_DIR: dataDir,
      DATABASE_URL,
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL: email,
      ADMIN_PASSWORD: PASSWORD,
    });
    try {
      await second.proc.waitFor(/admin\.ensure\.refused/);
      const again = httpClient(`${second.api}/v1`);
      const squatter = (await again.post('/auth/login', { email, password: 'the squatter password' })).expect(
        200,
      );
      assert.equal(squatter.body.user.role, 'SELLER');
      assertError(await again.post('/auth/login', { email, password: PASSWORD }), 401, 'invalid_credentials');
    } finally {
      second.proc.child.kill('SIGTERM');
      await second.proc.exited;
    }
    // The operator takes the address over explicitly.
    const create = runCli(['admin', 'create', '--email', email, '--password', PASSWORD], {
      DATA_DIR: dataDir,
      DATABASE_URL,
      LOG_LEVEL: 'warn',
    });
    assert.equal(await create.exited, 0, create.output());
    assert.match(create.output(), /promoted admin/);
  });

  test('a second process cannot open an embedded data folder in use', {
    skip: DATABASE_URL ? 'PostgreSQL is shared by design' : false,
  }, async () => {
    const dataDir = await migratedDataDir();
    const { proc } = await serve({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    try {
      const migrate = runCli(['migrate'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
      assert.equal(await migrate.exited, 1);
      assert.match(migrate.output(), /is in use by process \d+/);
    } finally {
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exited, 0);
    }
    // Once the server has stopped, the folder is free again.
    const migrate = runCli(['migrate'], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    assert.equal(await migrate.exited, 0, migrate.output());
  });

  test('keys rotate publishes a second signing key', async () => {
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const first = await serve(env);
    const before = (await httpClient(`${first.api}/v1`).get('/licenses/jwks'))
      .expect(200)
      .body.keys.map((k: { kid: string }) => k.kid);
    first.proc.child.kill('SIGTERM');
    await first.proc.exited;
    const rotate = runCli(['keys', 'rotate'], env);
    assert.equal(await rotate.exited, 0, rotate.output());
    const kid = /new key (\S+) published/.exec(rotate.output())?.[1];
    assert.ok(kid);
    const second = await serve(env);
    try {
      const after = (await httpClient(`${second.api}/v1`).get('/licenses/jwks'))
        .expect(200)
        .body.keys.map((k: { kid: string }) => k.kid);
      for (const old of before) assert.ok(after.includes(old), 'old keys stay published');
      assert.ok(after.includes(kid));
    } finally {
      second.proc.child.kill('SIGTERM');
      await second.proc.exited;
    }
  });

  test('--help lists the commands', async () => {
    const help = runCli(['--help'], {});
    assert.equal(await help.exited, 0);
    for (const command of ['serve', 'migrate', 'admin', 'keys'])
      assert.match(help.output(), new RegExp(`\\b${command}\\b`));
  });
});
