import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { processStorage, runCli, serve } from '../testing/cli-process.js';
import { assertError, httpClient } from '../testing/http-client.js';
import { scratchDatabase } from '../testing/scratch-database.js';

/** The CLI's one-shot commands and start-up settings, as an operator runs them (see lifecycle.test.ts). */
const { DATABASE_URL, storage, freshDataDir, migratedDataDir } = await processStorage();

const PASSWORD = 'persist me please';

describe(`the command line on ${storage}`, () => {
  test('migrate applies pending migrations once', {
    skip: DATABASE_URL ? 'shared database is migrated already' : false,
  }, async () => {
    // Without the template, as on a build that has none: PGlite's initdb, then every migration.
    const env = { DATA_DIR: freshDataDir(), LOG_LEVEL: 'warn', DATABASE_TEMPLATE: 'off' };
    const first = runCli(['migrate'], env);
    assert.equal(await first.exited, 0, first.output());
    assert.match(first.output(), /applied: 0001_foundation/);
    const second = runCli(['migrate'], env);
    assert.equal(await second.exited, 0);
    assert.match(second.output(), /database is up to date/);
  });

  test("migrate on an empty folder copies the build's template, with nothing left to apply", {
    skip: DATABASE_URL ? 'the template is for the embedded store' : false,
  }, async () => {
    const env = { DATA_DIR: freshDataDir(), LOG_LEVEL: 'warn' };
    const first = runCli(['migrate'], env);
    assert.equal(await first.exited, 0, first.output());
    assert.match(first.output(), /created the embedded database from the build's template/);
    assert.match(first.output(), /database is up to date/);
    const second = runCli(['migrate'], env);
    assert.equal(await second.exited, 0);
    assert.doesNotMatch(second.output(), /template/);
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

  test('keys rotate publishes a new token key of each algorithm', async () => {
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const first = await serve(env);
    const before = (await httpClient(`${first.api}/v1`).get('/licenses/jwks'))
      .expect(200)
      .body.keys.map((k: { kid: string }) => k.kid);
    first.proc.child.kill('SIGTERM');
    await first.proc.exited;
    const rotate = runCli(['keys', 'rotate'], env);
    assert.equal(await rotate.exited, 0, rotate.output());
    const kids = ['RS256', 'EdDSA'].map(
      (alg) => new RegExp(`new ${alg} key (\\S+) published`).exec(rotate.output())?.[1],
    );
    assert.ok(kids.every(Boolean), rotate.output());
    const second = await serve(env);
    try {
      const after = (await httpClient(`${second.api}/v1`).get('/licenses/jwks'))
        .expect(200)
        .body.keys.map((k: { kid: string }) => k.kid);
      for (const old of before) assert.ok(after.includes(old), 'old keys stay published');
      for (const kid of kids) assert.ok(after.includes(kid));
    } finally {
      second.proc.child.kill('SIGTERM');
      await second.proc.exited;
    }
  });

  test('the signing keys survive a change of the key that seals them, given the old one after it, and a start without it is refused naming the setting', async () => {
    // On PostgreSQL a database of its own: the others here hold keys sealed under the test key.
    const own = await scratchDatabase();
    try {
      await sealingKeyChange(own.url);
    } finally {
      await own.drop();
    }
  });

  async function sealingKeyChange(databaseUrl: string | undefined) {
    const [oldKey, newKey] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
    const base = { DATA_DIR: await migratedDataDir(), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
    const kidsServedWith = async (sealing: string) => {
      const { proc, api } = await serve({ ...base, SIGNING_KEY_ENCRYPTION_KEY: sealing });
      try {
        return (await httpClient(`${api}/v1`).get('/licenses/jwks'))
          .expect(200)
          .body.keys.map((k: { kid: string }) => k.kid)
          .sort();
      } finally {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
    };
    const kids = await kidsServedWith(oldKey);
    assert.equal(kids.length, 4, 'a token key and an offline key of each algorithm');

    const refused = runCli(['serve'], {
      ...base,
      PORT: '0',
      PAY_PORT: '0',
      SIGNING_KEY_ENCRYPTION_KEY: newKey,
    });
    assert.equal(await refused.exited, 2, refused.output());
    assert.match(
      refused.output(),
      /Configuration error: SIGNING_KEY_ENCRYPTION_KEY: signing key \S+ was sealed under/,
    );

    // The new key first, the old one after it: the keys are sealed again under the new one...
    assert.deepEqual(await kidsServedWith(`${newKey},${oldKey}`), kids);
    // ...so the old one can go.
    assert.deepEqual(await kidsServedWith(newKey), kids);
  }

  test('keys rotate --offline replaces the offline keys and leaves the token keys', async () => {
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const keySet = async () => {
      const { proc, api } = await serve(env);
      try {
        return (await httpClient(`${api}/v1`).get('/licenses/jwks')).expect(200).body.keys as {
          kid: string;
          purpose: string;
        }[];
      } finally {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
    };
    const before = await keySet();
    const rotate = runCli(['keys', 'rotate', '--offline'], env);
    assert.equal(await rotate.exited, 0, rotate.output());
    const kids = ['RS256', 'EdDSA'].map(
      (alg) => new RegExp(`new offline ${alg} key (\\S+) published`).exec(rotate.output())?.[1],
    );
    assert.ok(kids.every(Boolean), rotate.output());
    assert.match(rotate.output(), /once they hold the new key set/);
    const after = await keySet();
    for (const kid of kids) assert.equal(after.find((key) => key.kid === kid)?.purpose, 'offline');
    for (const key of before)
      assert.ok(
        after.some((k) => k.kid === key.kid),
        'old keys stay published',
      );
    const tokenKids = (keys: { kid: string; purpose: string }[]) =>
      keys.filter((key) => key.purpose === 'token').map((key) => key.kid);
    assert.deepEqual(tokenKids(after), tokenKids(before), 'the token keys are left as they were');
  });
});
