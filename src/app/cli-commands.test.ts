import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

  test('--help lists the commands', async () => {
    const help = runCli(['--help'], {});
    assert.equal(await help.exited, 0);
    for (const command of ['serve', 'migrate', 'admin', 'keys', 'api-keys'])
      assert.match(help.output(), new RegExp(`\\b${command}\\b`));
  });

  test('--version prints the version in package.json', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const printed = runCli([flag], {});
      assert.equal(await printed.exited, 0);
      assert.equal(printed.output(), `${version}\n`);
    }
  });

  test('admin create without a password, off a terminal, refuses and says how to give one', async () => {
    // runCli's standard input is not a terminal: nobody could answer a question.
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const email = `nopass-${randomBytes(4).toString('hex')}@example.com`;
    const refused = runCli(['admin', 'create', '--email', email], env);
    assert.equal(await refused.exited, 2, refused.output());
    assert.match(refused.output(), /give --password \(or ADMIN_PASSWORD\) of 8 to 256 characters/);
    assert.doesNotMatch(refused.output(), /Password:/);
    const short = runCli(['admin', 'create', '--email', email, '--password', 'short'], env);
    assert.equal(await short.exited, 2, short.output());
  });

  test("api-keys create, list and revoke act on a seller's app as its owner: the key works over HTTP, the revoked one is refused", async () => {
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const email = `keys-${randomBytes(4).toString('hex')}@example.com`;
    // A seller and their app, made through the API; the operator is not that seller.
    const first = await serve(env);
    let appId: string;
    try {
      const api = httpClient(`${first.api}/v1`);
      const { token } = (await api.post('/auth/register', { email, password: PASSWORD })).expect(201).body;
      appId = (await api.post('/apps', { name: 'Photo Tool' }, { token })).expect(201).body.id;
    } finally {
      first.proc.child.kill('SIGTERM');
      await first.proc.exited;
    }

    const create = runCli(['api-keys', 'create', '--app', appId, '--name', 'backend'], env);
    assert.equal(await create.exited, 0, create.output());
    const printed = (label: string) => new RegExp(`^${label}:\\s+(\\S+)$`, 'm').exec(create.stdout())?.[1];
    const [id, prefix, key] = [printed('id'), printed('prefix'), printed('key')];
    assert.match(key ?? '', /^sk_[0-9a-f]{48}$/, create.output());
    assert.equal(prefix, key?.slice(0, 12));
    assert.match(create.stdout(), /shown only here/);

    const createJson = runCli(['api-keys', 'create', '--app', appId, '--name', 'old ci', '--json'], env);
    assert.equal(await createJson.exited, 0, createJson.output());
    const second = JSON.parse(createJson.stdout());
    assert.deepEqual(Object.keys(second).sort(), [
      'appId',
      'createdAt',
      'id',
      'key',
      'lastUsedAt',
      'name',
      'prefix',
      'revokedAt',
    ]);
    const revoke = runCli(['api-keys', 'revoke', '--app', appId, second.id], env);
    assert.equal(await revoke.exited, 0, revoke.output());
    assert.match(revoke.output(), new RegExp(`revoked API key ${second.id}`));

    const list = runCli(['api-keys', 'list', '--app', appId], env);
    assert.equal(await list.exited, 0, list.output());
    const [header, ...rows] = list.stdout().trimEnd().split('\n');
    assert.match(header ?? '', /^ID\s+NAME\s+PREFIX\s+CREATED\s+LAST USED\s+REVOKED$/);
    assert.equal(rows.length, 2, list.output());
    assert.match(rows[0] ?? '', new RegExp(`^${id}\\s+backend\\s+${prefix}\\s+\\S+Z\\s+never\\s+-$`));
    assert.match(
      rows[1] ?? '',
      new RegExp(`^${second.id}\\s+old ci\\s+${second.prefix}\\s+\\S+Z\\s+never\\s+\\S+Z$`),
    );
    for (const full of [key, second.key]) assert.ok(!list.output().includes(full), 'never the key itself');

    const again = await serve(env);
    try {
      const api = httpClient(`${again.api}/v1`);
      const app = (await api.get(`/apps/${appId}`, { token: key })).expect(200);
      assert.equal(app.body.id, appId);
      assertError(await api.get(`/apps/${appId}`, { token: second.key }), 401, 'unauthorized');
      // The seller sees in the API what the operator did.
      const { token } = (await api.post('/auth/login', { email, password: PASSWORD })).expect(200).body;
      const listed = (await api.get(`/apps/${appId}/api-keys`, { token })).expect(200).body.apiKeys;
      assert.deepEqual(
        listed.map((k: { id: string; revokedAt: string | null }) => [k.id, k.revokedAt !== null]),
        [
          [id, false],
          [second.id, true],
        ],
      );
    } finally {
      again.proc.child.kill('SIGTERM');
      await again.proc.exited;
    }

    const listJson = runCli(['api-keys', 'list', '--app', appId, '--json'], env);
    assert.equal(await listJson.exited, 0, listJson.output());
    const [used, revoked] = JSON.parse(listJson.stdout());
    assert.equal(used.id, id);
    assert.ok(used.lastUsedAt, 'the key that called the API shows when');
    assert.equal(revoked.lastUsedAt, null, 'the revoked key was refused, never used');
    assert.ok(revoked.revokedAt);

    const unknownKey = runCli(['api-keys', 'revoke', '--app', appId, randomUUID()], env);
    assert.equal(await unknownKey.exited, 1, unknownKey.output());
    assert.match(unknownKey.output(), new RegExp(`app ${appId} has no API key`));
  });

  test('api-keys on an app that does not exist exits 1 naming it; an id that is not a UUID exits 2 naming the option', async () => {
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const missing = randomUUID();
    const unknown = runCli(['api-keys', 'list', '--app', missing], env);
    assert.equal(await unknown.exited, 1, unknown.output());
    assert.match(unknown.output(), new RegExp(`no app ${missing}`));

    const notUuid = runCli(['api-keys', 'create', '--app', 'photo-tool', '--name', 'backend'], env);
    assert.equal(await notUuid.exited, 2, notUuid.output());
    assert.match(
      notUuid.output(),
      /option '--app <appId>' argument 'photo-tool' is invalid\. It must be a UUID/,
    );
    const badKeyId = runCli(['api-keys', 'revoke', '--app', missing, '42'], env);
    assert.equal(await badKeyId.exited, 2, badKeyId.output());
    assert.match(badKeyId.output(), /invalid for argument 'keyId'\. It must be a UUID/);
  });

  test('keys list shows the four keys of a first start signing, and after a rotation the new token keys pending while the old still sign', async () => {
    // On PostgreSQL a database of its own: the tests above rotate the keys of the shared one.
    const own = await scratchDatabase();
    try {
      const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL: own.url, LOG_LEVEL: 'warn' };
      const first = await serve(env);
      first.proc.child.kill('SIGTERM');
      await first.proc.exited;

      const table = runCli(['keys', 'list'], env);
      assert.equal(await table.exited, 0, table.output());
      const [header, ...rows] = table.stdout().trimEnd().split('\n');
      assert.match(header ?? '', /^KID\s+PURPOSE\s+ALGORITHM\s+STATE\s+PUBLISHED\s+ACTIVATES\s+UNPUBLISHES$/);
      assert.deepEqual(
        rows.map((row) => row.split(/\s+/).slice(1, 4).join(' ')).sort(),
        ['offline EdDSA signing', 'offline RS256 signing', 'token EdDSA signing', 'token RS256 signing'],
        table.output(),
      );

      const rotate = runCli(['keys', 'rotate'], env);
      assert.equal(await rotate.exited, 0, rotate.output());
      const json = runCli(['keys', 'list', '--json'], env);
      assert.equal(await json.exited, 0, json.output());
      const keys = JSON.parse(json.stdout()) as Record<string, string | null>[];
      const kids = ['RS256', 'EdDSA'].map(
        (alg) => new RegExp(`new ${alg} key (\\S+) published`).exec(rotate.output())?.[1],
      );
      assert.deepEqual(
        keys
          .map(
            (k) => `${kids.includes(k.kid as string) ? 'new' : 'old'} ${k.purpose} ${k.algorithm} ${k.state}`,
          )
          .sort(),
        [
          'new token EdDSA pending',
          'new token RS256 pending',
          'old offline EdDSA signing',
          'old offline RS256 signing',
          'old token EdDSA signing',
          'old token RS256 signing',
        ],
      );
      for (const key of keys) {
        assert.deepEqual(Object.keys(key).sort(), [
          'activatesAt',
          'algorithm',
          'kid',
          'publishedAt',
          'purpose',
          'state',
          'unpublishAt',
        ]);
        // The old token keys leave the key set once what they signed has expired; the rest stay.
        assert.equal(key.unpublishAt !== null, key.purpose === 'token' && !kids.includes(key.kid as string));
      }
    } finally {
      await own.drop();
    }
  });
});
