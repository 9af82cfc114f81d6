import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { processStorage, serve } from '../testing/cli-process.js';
import { type HttpClient, httpClient } from '../testing/http-client.js';

/**
 * Idempotent requests across the death of a node, with the service in its own process on the
 * configured storage: killed by its test-only hook (TEST_CRASH_AFTER_COMMIT, refused outside
 * NODE_ENV=test) after the work and the answer have committed and before the answer is sent,
 * then started again on the same storage; and restarted with its secrets rotated.
 */
const { DATABASE_URL, storage, migratedDataDir } = await processStorage();

const PASSWORD = 'idempotent under fire';
const REPLAYED = 'idempotent-replayed';

type Node = Awaited<ReturnType<typeof serve>>;

async function stop(node: Node): Promise<void> {
  node.proc.child.kill('SIGTERM');
  assert.equal(await node.proc.exited, 0);
}

/** Sends `send` to a node that dies answering it: no answer, and the process is gone (SIGKILL). */
async function unanswered(node: Node, send: () => Promise<unknown>): Promise<void> {
  await assert.rejects(send());
  assert.equal(await node.proc.exited, null, 'killed by a signal');
  assert.equal(node.proc.child.signalCode, 'SIGKILL');
}

async function signUp(api: HttpClient) {
  const email = `crash-${randomBytes(4).toString('hex')}@example.com`;
  const { token } = (await api.post('/auth/register', { email, password: PASSWORD })).expect(201).body;
  const app = (await api.post('/apps', { name: 'Desktop' }, { token })).expect(201).body;
  return { token: token as string, appId: app.id as string };
}

describe(`idempotent requests on ${storage}`, () => {
  test('killed between the commit and the answer, a retry with the same key gets what was made, made once', async () => {
    // The secrets are the generated ones, kept in DATA_DIR: the next start finds the same.
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const crashing = { ...env, TEST_CRASH_AFTER_COMMIT: 'on' };
    const apiKeyKey = 'order-8812';
    const trialKey = `trial-${randomBytes(4).toString('hex')}`;
    const trialStart = { email: 'ann@example.com', hwuid: 'laptop-7f3a' };

    // A seller's API key (the only answer that ever holds it), then a buyer's trial on the checkout host.
    let node = await serve(crashing);
    let api = httpClient(`${node.api}/v1`);
    const seller = await signUp(api);
    const createKey = (client: HttpClient) =>
      client.post(
        `/apps/${seller.appId}/api-keys`,
        { name: 'ci' },
        { token: seller.token, headers: { 'idempotency-key': apiKeyKey } },
      );
    await unanswered(node, () => createKey(api));

    node = await serve(crashing);
    api = httpClient(`${node.api}/v1`);
    const product = (
      await api.post(
        '/products',
        { appId: seller.appId, name: 'Tool', price: 12, currency: 'USD', trialDays: 14 },
        { token: seller.token },
      )
    ).expect(201).body;
    const startTrial = (client: HttpClient) =>
      client.post(
        '/api/checkout/trials',
        { productId: product.id, ...trialStart },
        { headers: { 'idempotency-key': trialKey } },
      );
    await unanswered(node, () => startTrial(httpClient(node.pay)));

    node = await serve(env);
    try {
      api = httpClient(`${node.api}/v1`);
      const key = (await createKey(api)).expect(201);
      assert.equal(key.headers.get(REPLAYED), 'true');
      const keys = (await api.get(`/apps/${seller.appId}/api-keys`, { token: seller.token })).expect(
        200,
      ).body;
      assert.deepEqual(
        keys.apiKeys.map((listed: { id: string }) => listed.id),
        [key.body.id],
      );
      // The key handed to the retry is the one that was made: it works.
      (await api.get('/apps', { token: key.body.key })).expect(200);

      const trial = (await startTrial(httpClient(node.pay))).expect(201);
      assert.equal(trial.headers.get(REPLAYED), 'true');
      const licenses = (await api.get(`/apps/${seller.appId}/licenses`, { token: seller.token })).expect(
        200,
      ).body;
      assert.equal(licenses.total, 1);
      assert.equal(licenses.licenses[0].id, trial.body.trialId);
    } finally {
      await stop(node);
    }
  });

  test('secrets rotated with the former one listed second still replay what it kept; dropped, they forget it', async () => {
    const [former, next] = [randomBytes(24).toString('base64url'), randomBytes(24).toString('base64url')];
    const env = { DATA_DIR: await migratedDataDir(), DATABASE_URL, LOG_LEVEL: 'warn' };
    const createApp = (api: HttpClient, token: string, key: string) =>
      api.post('/apps', { name: key }, { token, headers: { 'idempotency-key': key } });

    let node = await serve({ ...env, IDEMPOTENCY_SECRET: former });
    let api = httpClient(`${node.api}/v1`);
    const { token } = await signUp(api);
    const before = (await createApp(api, token, 'before-rotation')).expect(201);
    await stop(node);

    node = await serve({ ...env, IDEMPOTENCY_SECRET: `${next},${former}` });
    api = httpClient(`${node.api}/v1`);
    const replayed = (await createApp(api, token, 'before-rotation')).expect(201);
    assert.equal(replayed.headers.get(REPLAYED), 'true');
    assert.equal(replayed.text, before.text);
    const after = (await createApp(api, token, 'after-rotation')).expect(201);
    await stop(node);

    node = await serve({ ...env, IDEMPOTENCY_SECRET: next });
    try {
      api = httpClient(`${node.api}/v1`);
      assert.equal((await createApp(api, token, 'after-rotation')).expect(201).text, after.text);
      // Dropped before its keys' 24 hours were up, the former secret takes what it kept along.
      const again = (await createApp(api, token, 'before-rotation')).expect(201);
      assert.equal(again.headers.get(REPLAYED), null);
      assert.notEqual(again.body.id, before.body.id);
    } finally {
      await stop(node);
    }
  });
});
