import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { processStorage, runCli, serve } from '../testing/cli-process.js';
import { assertError, httpClient } from '../testing/http-client.js';
import { scratchDatabase } from '../testing/scratch-database.js';

/** The CLI's one-shot commands and start-up settings, as an operator runs them (see lifecycle.test.ts). */
const { DATABASE_URL, storage, migratedDataDir } = await processStorage();

const PASSWORD = 'persist me please';

describe(`the command line's keys, versions and prompts on ${storage}`, () => {
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
