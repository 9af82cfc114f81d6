import assert from 'node:assert/strict';
import { createDecipheriv, createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  createApiKey,
  createApp,
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  signUp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError, type HttpClient, type HttpResponse } from '../../testing/http-client.js';
import { buyWithSandbox, createMonthlyProduct } from '../../testing/purchases.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { canonicalJson } from './idempotency-hooks.js';

/**
 * Idempotency-Key on the creating POSTs of both hosts, HTTP in and database out. The file moves
 * its clock by days and purges keys, so it owns its database.
 */
let server: TestServer;
let clock: TestClock;
before(async () => {
  clock = testClock(new Date());
  server = await startTestServer({ USER_TOKEN_TTL: '2592000' }, { clock, ownDatabase: true });
});
after(() => server.stop());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const REPLAYED = 'idempotent-replayed';

const withKey = (key: string, token?: string) => ({
  headers: { 'idempotency-key': key },
  ...(token ? { token } : {}),
});

async function licensesOf(appId: string): Promise<number> {
  const row = await server.db
    .selectFrom('licenses')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function keysOf(userId: string): Promise<number> {
  const row = await server.db
    .selectFrom('idempotency_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('scope', '=', `seller:${userId}`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const issue = (seller: SellerWithApp, key: string, body: Record<string, unknown>, token = seller.token) =>
  server.api.post(`/apps/${seller.appId}/licenses`, body, withKey(key, token));

/** The second answer is the first one again, byte for byte, marked as replayed. */
function assertReplay(first: HttpResponse, again: HttpResponse): void {
  assert.equal(first.headers.get(REPLAYED), null, 'the first answer is not a replay');
  assert.equal(again.headers.get(REPLAYED), 'true', `not replayed: ${again.status} ${again.text}`);
  assert.equal(again.status, first.status);
  assert.equal(again.text, first.text);
  assert.equal(again.headers.get('content-type'), first.headers.get('content-type'));
}

describe('a creating request sent again with its Idempotency-Key', () => {
  test('answers the first answer, marked replayed, and creates one license', async () => {
    const seller = await sellerWithApp(server);
    const key = randomUUID();
    const first = (await issue(seller, key, { email: 'a@example.com', maxDevices: 2 })).expect(201);
    // The same body with its fields in another order is the same request.
    const again = await issue(seller, key, { maxDevices: 2, email: 'a@example.com' });
    assertReplay(first, again);
    assert.equal(again.headers.get('x-request-id'), first.headers.get('x-request-id'));
    assert.equal(await licensesOf(seller.appId), 1);
  });

  test('replays a refusal as it was, without trying again', async () => {
    const seller = await sellerWithApp(server);
    const key = randomUUID();
    const missing = randomUUID();
    const first = assertError(await issue(seller, key, { productId: missing }), 400, 'validation_failed');
    const again = await issue(seller, key, { productId: missing });
    assert.equal(again.headers.get(REPLAYED), 'true');
    // The replayed error body still names the request id its header carries.
    assert.deepEqual(assertError(again, 400, 'validation_failed'), first);
    assert.equal(await licensesOf(seller.appId), 0);
  });

  test('with another body or another path answers 422 idempotency_key_reused and creates nothing', async () => {
    const seller = await sellerWithApp(server);
    const other = await createApp(server, seller.token, 'Other');
    const key = randomUUID();
    (await issue(seller, key, { email: 'a@example.com' })).expect(201);
    const error = assertError(
      await issue(seller, key, { email: 'b@example.com' }),
      422,
      'idempotency_key_reused',
    );
    assert.equal(error.details?.[0]?.field, 'Idempotency-Key');
    assertError(
      await server.api.post(
        `/apps/${other.id}/licenses`,
        { email: 'a@example.com' },
        withKey(key, seller.token),
      ),
      422,
      'idempotency_key_reused',
    );
    assert.equal(await licensesOf(seller.appId), 1);
    assert.equal(await licensesOf(other.id), 0);
  });

  test('from another seller does its own work: keys are per seller', async () => {
    const one = await signUp(server);
    const two = await signUp(server);
    const key = randomUUID();
    const first = (await server.api.post('/apps', { name: 'Same' }, withKey(key, one.token))).expect(201);
    const second = (await server.api.post('/apps', { name: 'Same' }, withKey(key, two.token))).expect(201);
    assert.equal(second.headers.get(REPLAYED), null);
    assert.notEqual(second.body.id, first.body.id);
    assert.equal(second.body.userId, two.user.id);
  });

  test('is shared by a seller’s session and API keys, but never replayed to a key of another app', async () => {
    const seller = await sellerWithApp(server);
    const otherApp = await createApp(server, seller.token, 'Other');
    const ownKey = await createApiKey(server, seller.token, seller.appId);
    const otherKey = await createApiKey(server, seller.token, otherApp.id);
    const key = randomUUID();
    const body = { email: 'k@example.com' };
    const first = (await issue(seller, key, body, ownKey.key)).expect(201);
    // The session reaches every app of the seller: it could have had this answer.
    assertReplay(first, await issue(seller, key, body, seller.token));
    assertError(await issue(seller, key, body, otherKey.key), 422, 'idempotency_key_reused');

    // An answer the session got is not handed to an API key, which may reach less.
    const sessionKey = randomUUID();
    (await issue(seller, sessionKey, body, seller.token)).expect(201);
    assertError(await issue(seller, sessionKey, body, ownKey.key), 422, 'idempotency_key_reused');
    assert.equal(await licensesOf(seller.appId), 2);
  });

  test('sent many times at once creates one license; the others replay it or answer 409', async () => {
    const seller = await sellerWithApp(server);
    for (let round = 0; round < 5; round++) {
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => issue(seller, key, { email: `r${round}@example.com` })),
      );
      const created = answers.filter((res) => res.status === 201);
      const busy = answers.filter((res) => res.status === 409);
      assert.equal(created.length + busy.length, answers.length, answers.map((r) => r.text).join('\n'));
      assert.ok(created.length >= 1);
      assert.equal(created.filter((res) => res.headers.get(REPLAYED) === null).length, 1);
      assert.equal(new Set(created.map((res) => res.text)).size, 1);
      for (const res of busy) {
        assertError(res, 409, 'idempotency_key_in_use');
        assert.equal(res.headers.get('retry-after'), '1');
      }
      assert.equal(await licensesOf(seller.appId), round + 1);
      // Once the work is done, the key only replays.
      const later = await issue(seller, key, { email: `r${round}@example.com` });
      assertReplay(created.find((res) => res.headers.get(REPLAYED) === null) as HttpResponse, later);
    }
  });

  test('while the first is still in progress answers 409 with Retry-After, and a claim left behind is never taken over until it expires', async () => {
    const seller = await sellerWithApp(server);
    const key = randomUUID();
    const body = { email: 'stale@example.com' };
    (await issue(seller, key, body)).expect(201);
    // As if the node doing the work had not finished it: a claim made just now, then one long ago.
    const scope = `seller:${seller.user.id}`;
    await server.db
      .updateTable('idempotency_keys')
      .set({ state: 'in_progress', status_code: null, response_body: null, created_at: clock.now() })
      .where('scope', '=', scope)
      .execute();
    const busy = await issue(seller, key, body);
    assertError(busy, 409, 'idempotency_key_in_use');
    assert.equal(busy.headers.get('retry-after'), '1');

    // Its node died, maybe after part of the work: the key waits out its 24 hours, never redone.
    await server.db
      .updateTable('idempotency_keys')
      .set({ created_at: new Date(clock.now().getTime() - 6 * 60_000) })
      .where('scope', '=', scope)
      .execute();
    const abandoned = await issue(seller, key, body);
    assertError(abandoned, 409, 'idempotency_key_in_use');
    assert.equal(Number(abandoned.headers.get('retry-after')), DAY / 1000 - 6 * 60);
    clock.advance(23 * HOUR);
    assertError(await issue(seller, key, body), 409, 'idempotency_key_in_use');
    assert.equal(await licensesOf(seller.appId), 1);

    clock.advance(HOUR);
    const fresh = (await issue(seller, key, body)).expect(201);
    assert.equal(fresh.headers.get(REPLAYED), null);
    assert.equal(await licensesOf(seller.appId), 2);
  });

  test('after a 5xx is not kept: the retry does the work', async () => {
    const seller = await sellerWithApp(server);
    const email = `fails-${randomUUID()}@example.com`;
    // A fault in the database for this one e-mail: the insert fails and the request answers 500.
    await sql
      .raw(`create function fail_once_${seller.appId.replaceAll('-', '')}() returns trigger language plpgsql as $$
        begin
          if new.email = '${email}' then raise exception 'injected fault'; end if;
          return new;
        end $$;
        create trigger fail_once before insert on licenses
          for each row execute function fail_once_${seller.appId.replaceAll('-', '')}();`)
      .execute(server.db);
    const key = randomUUID();
    try {
      assertError(await issue(seller, key, { email }), 500, 'internal_error');
      assert.equal(await keysOf(seller.user.id), 0, 'the failed claim is released');
    } finally {
      await sql.raw('drop trigger fail_once on licenses').execute(server.db);
    }
    const retried = (await issue(seller, key, { email })).expect(201);
    assert.equal(retried.headers.get(REPLAYED), null);
    assert.equal(await licensesOf(seller.appId), 1);
  });

  test('is remembered for 24 hours, then forgotten by the purge and free to do new work', async () => {
    const seller = await sellerWithApp(server);
    const key = randomUUID();
    const body = { email: 'day@example.com' };
    const first = (await issue(seller, key, body)).expect(201);
    clock.advance(23 * HOUR);
    assertReplay(first, await issue(seller, key, body));
    clock.advance(2 * HOUR);
    assert.ok((await server.service.modules.idempotency.purgeExpired()) >= 1);
    assert.equal(await keysOf(seller.user.id), 0);
    const fresh = (await issue(seller, key, body)).expect(201);
    assert.equal(fresh.headers.get(REPLAYED), null);
    assert.notEqual(fresh.body.id, first.body.id);
    assert.equal(await licensesOf(seller.appId), 2);
  });

  test('an expired key is not replayed even before the purge has run', async () => {
    const seller = await sellerWithApp(server);
    const key = randomUUID();
    const first = (await issue(seller, key, { email: 'late@example.com' })).expect(201);
    clock.advance(DAY + 1);
    const fresh = (await issue(seller, key, { email: 'other@example.com' })).expect(201);
    assert.equal(fresh.headers.get(REPLAYED), null);
    assert.notEqual(fresh.body.id, first.body.id);
  });
});

/** Runs `work` while the database refuses to mark a key done: no answer can be kept. */
async function whileAnswersCannotBeKept<T>(work: () => Promise<T>): Promise<T> {
  await sql
    .raw(`create or replace function refuse_kept_answer() returns trigger language plpgsql as $$
        begin raise exception 'injected fault: the answer cannot be kept'; end $$;
      create trigger refuse_kept_answer before update on idempotency_keys
        for each row when (new.state = 'done') execute function refuse_kept_answer();`)
    .execute(server.db);
  try {
    return await work();
  } finally {
    await sql.raw('drop trigger refuse_kept_answer on idempotency_keys').execute(server.db);
  }
}

describe('an idempotent request whose work has committed', () => {
  test('commits its answer with its work: when the answer cannot be kept, nothing is issued, and a retry 6 minutes on issues one license', async () => {
    const seller = await sellerWithApp(server);
    const key = randomUUID();
    const body = { email: 'unkept@example.com' };
    const failed = await whileAnswersCannotBeKept(() => issue(seller, key, body));
    assertError(failed, 500, 'internal_error');
    assert.equal(await licensesOf(seller.appId), 0, 'the work went with the answer');

    clock.advance(6 * 60_000);
    const retried = (await issue(seller, key, body)).expect(201);
    assert.equal(retried.headers.get(REPLAYED), null);
    clock.advance(6 * 60_000);
    assertReplay(retried, await issue(seller, key, body));
    assert.equal(await licensesOf(seller.appId), 1);
  });

  test('keeps its answer through a 5xx raised after the commit: the retry replays it and issues nothing more', async () => {
    const seller = await sellerWithApp(server);
    const key = randomUUID();
    const body = { email: 'late-failure@example.com' };
    // A license whose metadata breaks the License answer's schema: the handler commits, then its
    // answer fails the response check and the client gets 500 (a bug after the commit).
    const trigger = `odd_metadata_${seller.appId.replaceAll('-', '')}`;
    await sql
      .raw(`create function ${trigger}() returns trigger language plpgsql as $$
          begin
            if new.app_id = '${seller.appId}' then new.metadata := '[1, 2]'::jsonb; end if;
            return new;
          end $$;
        create trigger ${trigger} before insert on licenses for each row execute function ${trigger}();`)
      .execute(server.db);
    try {
      assertError(await issue(seller, key, body), 500, 'internal_error');
    } finally {
      await sql.raw(`drop trigger ${trigger} on licenses`).execute(server.db);
    }
    assert.equal(await licensesOf(seller.appId), 1);

    const retried = await issue(seller, key, body);
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.headers.get(REPLAYED), 'true');
    assert.equal(await licensesOf(seller.appId), 1, 'the retry did not issue a second license');
  });
});

/** How keys and answers were derived before IDEMPOTENCY_SECRET: from the key alone. */
const keyOnlyHash = (key: string) => createHash('sha256').update(`idempotency-key\u0000${key}`).digest('hex');
const keyOnlyAnswerKey = (scope: string, key: string) =>
  createHash('sha256').update(`idempotency-body\u0000${scope}\u0000${key}`).digest();

function openWith(answerKey: Buffer, stored: string): string {
  const bytes = Buffer.from(stored, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', answerKey, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}

describe('kept keys and answers, read from the database', () => {
  test('give nothing to whoever guesses the key: not the key, not the request, not the new API key', async () => {
    const seller = await sellerWithApp(server);
    // The kind of key a client picks when told to use its order id.
    const key = `order-${Math.floor(Math.random() * 10_000)}`;
    const created = (
      await server.api.post(`/apps/${seller.appId}/api-keys`, { name: 'ci' }, withKey(key, seller.token))
    ).expect(201).body;
    const scope = `seller:${seller.user.id}`;
    const rows = await server.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('scope', '=', scope)
      .execute();
    assert.equal(rows.length, 1);
    const [row] = rows as [(typeof rows)[number]];

    // The guess is right, yet it names no row and opens no answer.
    assert.notEqual(row.key_hash, keyOnlyHash(key));
    for (const hash of [key, `${scope}\u0000${key}`].map((text) =>
      createHash('sha256').update(text).digest('hex'),
    ))
      assert.notEqual(row.key_hash, hash);
    assert.throws(() => openWith(keyOnlyAnswerKey(scope, key), row.response_body as string));
    // Nor does the request, whose body may carry a secret, match a guess of it.
    const request = canonicalJson([
      'POST',
      '/v1/apps/:appId/api-keys',
      { appId: seller.appId },
      {},
      { name: 'ci' },
    ]);
    assert.notEqual(row.fingerprint, createHash('sha256').update(request).digest('hex'));
    assert.ok(!JSON.stringify(row).includes(created.key));

    // The service itself still replays it.
    const again = await server.api.post(
      `/apps/${seller.appId}/api-keys`,
      { name: 'ci' },
      withKey(key, seller.token),
    );
    assert.equal(again.headers.get(REPLAYED), 'true');
    assert.equal(again.body.key, created.key);
  });

  test('open only in the row they were kept in: an answer moved to another key is not handed out', async () => {
    const seller = await sellerWithApp(server);
    const [mine, theirs] = [randomUUID(), randomUUID()];
    const create = (key: string) =>
      server.api.post(`/apps/${seller.appId}/api-keys`, { name: 'ci' }, withKey(key, seller.token));
    const first = (await create(mine)).expect(201);
    const second = (await create(theirs)).expect(201);
    // Whoever can write the table copies the first answer over the second key's.
    const kept = (response: HttpResponse) =>
      server.db
        .selectFrom('idempotency_keys')
        .select('response_body')
        .where('request_id', '=', response.headers.get('x-request-id'))
        .executeTakeFirstOrThrow();
    await server.db
      .updateTable('idempotency_keys')
      .set({ response_body: (await kept(first)).response_body })
      .where('request_id', '=', second.headers.get('x-request-id'))
      .execute();
    const stolen = await server.api.post(
      `/apps/${seller.appId}/api-keys`,
      { name: 'ci' },
      withKey(theirs, seller.token),
    );
    assertError(stolen, 500, 'internal_error');
    assert.ok(!stolen.text.includes(first.body.key));
  });
});

describe('the Idempotency-Key header', () => {
  test('that is empty, too long or not printable ASCII answers 400 naming it and creates nothing', async () => {
    const seller = await sellerWithApp(server);
    for (const key of ['', 'k'.repeat(256), 'clé-1', 'tab\tinside']) {
      const error = assertError(
        await issue(seller, key, { email: 'x@example.com' }),
        400,
        'validation_failed',
      );
      // Spelled as every other answer about the header spells it (422 idempotency_key_reused too).
      assert.equal(error.details?.[0]?.field, 'Idempotency-Key', JSON.stringify(error));
      assert.match(error.message, /^Idempotency-Key: /);
    }
    assert.equal(await licensesOf(seller.appId), 0);
    (await issue(seller, 'k'.repeat(255), { email: 'x@example.com' })).expect(201);
  });

  test('is ignored by routes that do not create: verify and a secret rotation run each time', async () => {
    const seller = await sellerWithApp(server);
    const license = await issueLicense(server, seller, {});
    const key = randomUUID();
    for (let i = 0; i < 2; i++) {
      const verified = (await server.api.post('/licenses/verify', { key: license.key }, withKey(key))).expect(
        200,
      );
      assert.equal(verified.headers.get(REPLAYED), null);
    }
    const product = (
      await server.api.post(
        '/products',
        { appId: seller.appId, name: 'P', price: 5, currency: 'USD' },
        { token: seller.token },
      )
    ).expect(201).body;
    const rotate = () =>
      server.api.post(
        `/products/${product.id}/rotate-callback-secret`,
        undefined,
        withKey(key, seller.token),
      );
    const one = (await rotate()).expect(200);
    const two = (await rotate()).expect(200);
    assert.equal(two.headers.get(REPLAYED), null);
    assert.notEqual(two.body.callbackSecret, one.body.callbackSecret);
    assert.equal(await keysOf(seller.user.id), 0);
  });
});

interface CreatingRoute {
  host: 'core' | 'pay';
  /** Sends the request with `key`; `ctx` is made once per route by `prepare`. */
  send(key: string, ctx: Ctx): Promise<HttpResponse>;
  /** How many of what the route makes exist: the replay must not add one. */
  count(ctx: Ctx): Promise<number>;
  prepare?(ctx: Ctx): Promise<void>;
}

interface Ctx {
  seller: SellerWithApp;
  licenseId?: string;
  licenseKey?: string;
  productId?: string;
  subscriptionId?: string;
  callbackSecret?: string;
  releaseId?: string;
}

const countWhere = async (
  table:
    | 'apps'
    | 'api_keys'
    | 'products'
    | 'licenses'
    | 'webhook_endpoints'
    | 'orders'
    | 'releases'
    | 'release_artifacts',
  column: 'user_id' | 'app_id' | 'product_id' | 'release_id',
  value: string,
) => {
  const row = await server.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(column, '=', value)
    .executeTakeFirstOrThrow();
  return Number(row.n);
};

const post = (client: HttpClient, path: string, body: unknown, key: string, token?: string) =>
  client.post(path, body, withKey(key, token));

async function onSaleProduct(ctx: Ctx) {
  const product = (
    await server.api.post(
      '/products',
      { appId: ctx.seller.appId, name: 'Tool', price: 12, currency: 'USD' },
      { token: ctx.seller.token },
    )
  ).expect(201).body;
  ctx.productId = product.id;
}

/** Every route that takes the flag (core paths without /v1); the catalog test below keeps this complete. */
const CREATING_ROUTES: Record<string, CreatingRoute> = {
  'core POST /apps': {
    host: 'core',
    send: (key, ctx) => post(server.api, '/apps', { name: 'Made once' }, key, ctx.seller.token),
    count: (ctx) => countWhere('apps', 'user_id', ctx.seller.user.id),
  },
  'core POST /apps/{appId}/api-keys': {
    host: 'core',
    send: (key, ctx) =>
      post(server.api, `/apps/${ctx.seller.appId}/api-keys`, { name: 'ci' }, key, ctx.seller.token),
    count: (ctx) => countWhere('api_keys', 'app_id', ctx.seller.appId),
  },
  'core POST /apps/{appId}/licenses/{licenseId}/regenerate-key': {
    host: 'core',
    prepare: async (ctx) => {
      ctx.licenseId = (
        await server.api.post(`/apps/${ctx.seller.appId}/licenses`, {}, { token: ctx.seller.token })
      ).expect(201).body.id;
    },
    send: (key, ctx) =>
      post(
        server.api,
        `/apps/${ctx.seller.appId}/licenses/${ctx.licenseId}/regenerate-key`,
        {},
        key,
        ctx.seller.token,
      ),
    // Each new key is one license.updated.
    count: async (ctx) =>
      Number(
        (
          await server.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('user_id', '=', ctx.seller.user.id)
            .where('type', '=', 'license.updated')
            .executeTakeFirstOrThrow()
        ).n,
      ),
  },
  'core POST /licenses/usage': {
    host: 'core',
    prepare: async (ctx) => {
      const license = (
        await server.api.post(
          `/apps/${ctx.seller.appId}/licenses`,
          { maxUses: 100 },
          { token: ctx.seller.token },
        )
      ).expect(201).body;
      ctx.licenseId = license.id;
      ctx.licenseKey = license.key;
    },
    send: (key, ctx) => post(server.api, '/licenses/usage', { key: ctx.licenseKey, amount: 1 }, key),
    // Each consume is one use counted.
    count: async (ctx) =>
      Number(
        (
          await server.db
            .selectFrom('licenses')
            .select('uses')
            .where('id', '=', ctx.licenseId as string)
            .executeTakeFirstOrThrow()
        ).uses,
      ),
  },
  'core POST /products': {
    host: 'core',
    send: (key, ctx) =>
      post(
        server.api,
        '/products',
        { appId: ctx.seller.appId, name: 'Once', price: 3, currency: 'EUR' },
        key,
        ctx.seller.token,
      ),
    count: (ctx) => countWhere('products', 'user_id', ctx.seller.user.id),
  },
  'core POST /apps/{appId}/licenses': {
    host: 'core',
    send: (key, ctx) =>
      post(
        server.api,
        `/apps/${ctx.seller.appId}/licenses`,
        { email: 'l@example.com' },
        key,
        ctx.seller.token,
      ),
    count: (ctx) => countWhere('licenses', 'app_id', ctx.seller.appId),
  },
  'core POST /apps/{appId}/releases': {
    host: 'core',
    send: (key, ctx) =>
      post(server.api, `/apps/${ctx.seller.appId}/releases`, { version: '1.0.0' }, key, ctx.seller.token),
    count: (ctx) => countWhere('releases', 'app_id', ctx.seller.appId),
  },
  'core POST /apps/{appId}/releases/{releaseId}/artifacts': {
    host: 'core',
    prepare: async (ctx) => {
      ctx.releaseId = (
        await server.api.post(
          `/apps/${ctx.seller.appId}/releases`,
          { version: '1.0.0' },
          { token: ctx.seller.token },
        )
      ).expect(201).body.id;
    },
    send: (key, ctx) =>
      post(
        server.api,
        `/apps/${ctx.seller.appId}/releases/${ctx.releaseId}/artifacts`,
        { filename: 'app.dmg', url: 'https://downloads.example.com/app.dmg' },
        key,
        ctx.seller.token,
      ),
    count: (ctx) => countWhere('release_artifacts', 'release_id', ctx.releaseId as string),
  },
  'core POST /webhooks': {
    host: 'core',
    send: (key, ctx) =>
      post(
        server.api,
        '/webhooks',
        { url: 'http://127.0.0.1:9/hook', events: ['license.created'] },
        key,
        ctx.seller.token,
      ),
    count: (ctx) => countWhere('webhook_endpoints', 'user_id', ctx.seller.user.id),
  },
  'core POST /stripe/create-payment-intent': {
    host: 'core',
    prepare: onSaleProduct,
    send: (key, ctx) =>
      post(
        server.api,
        '/stripe/create-payment-intent',
        { productId: ctx.productId, email: 'b@example.com' },
        key,
      ),
    count: (ctx) => countWhere('orders', 'product_id', ctx.productId as string),
  },
  'core POST /subscriptions/{id}/cancel': {
    host: 'core',
    prepare: subscribe,
    send: (key, ctx) =>
      post(server.api, `/subscriptions/${ctx.subscriptionId}/cancel`, undefined, key, ctx.seller.token),
    // Without the key a second cancel would answer 409 subscription_inactive.
    count: async (ctx) => {
      const row = await server.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('type', '=', 'subscription.canceled')
        // The seller's own event; the product's merchant webhook gets one of its own.
        .where('audience', '=', 'core')
        .where('user_id', '=', ctx.seller.user.id)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  },
  'pay POST /api/checkout/payment-intent': {
    host: 'pay',
    prepare: onSaleProduct,
    send: (key, ctx) =>
      post(
        server.pay,
        '/api/checkout/payment-intent',
        {
          productId: ctx.productId,
          email: 'c@example.com',
          // A valid attempt id even for an empty key, so the key is what a refusal is about.
          attempt: `attempt-${key.slice(0, 18).padEnd(8, '0')}`,
        },
        key,
      ),
    count: (ctx) => countWhere('orders', 'product_id', ctx.productId as string),
  },
  'pay POST /api/checkout/trials': {
    host: 'pay',
    prepare: async (ctx) => {
      const product = (
        await server.api.post(
          '/products',
          { appId: ctx.seller.appId, name: 'Tool', price: 12, currency: 'USD', trialDays: 14 },
          { token: ctx.seller.token },
        )
      ).expect(201).body;
      ctx.productId = product.id;
    },
    send: (key, ctx) =>
      post(
        server.pay,
        '/api/checkout/trials',
        { productId: ctx.productId, email: 'trial@example.com', hwuid: 'machine-1' },
        key,
      ),
    count: (ctx) => countWhere('licenses', 'product_id', ctx.productId as string),
  },
  'pay POST /api/checkout/mirror/subscription/charge': {
    host: 'pay',
    prepare: async (ctx) => {
      await subscribe(ctx);
      clock.advance(28 * DAY);
    },
    send: (key, ctx) =>
      post(
        server.pay,
        '/api/checkout/mirror/subscription/charge',
        {
          subscription_id: ctx.subscriptionId,
          amount: 9.5,
          currency: 'EUR',
          callback_secret: ctx.callbackSecret,
        },
        key,
      ),
    count: (ctx) => countWhere('orders', 'product_id', ctx.productId as string),
  },
};

/** A monthly product of the seller's, bought once with the sandbox card: one subscription. */
async function subscribe(ctx: Ctx) {
  const product = await createMonthlyProduct(server, ctx.seller.appId, ctx.seller.token);
  await buyWithSandbox(server, product.id, `buyer-${randomUUID()}@example.com`);
  const list = (await server.api.get('/subscriptions', { token: ctx.seller.token })).expect(200).body;
  ctx.productId = product.id;
  ctx.callbackSecret = product.callbackSecret;
  ctx.subscriptionId = list.subscriptions[0].id;
}

/** POSTs that answer 201 but take no key, each with the reason. */
const NOT_IDEMPOTENT: Record<string, string> = {
  // Its answer carries a session token, which is not kept at rest; an e-mail registers once and a
  // retry answers 409 email_taken, after which the client logs in.
  'core POST /auth/register': 'answers a session token',
};

describe('every creating route', () => {
  for (const [name, route] of Object.entries(CREATING_ROUTES)) {
    test(`${name} replays its first answer to a retry with the same key and does the work once`, async () => {
      const ctx: Ctx = { seller: await sellerWithApp(server) };
      await route.prepare?.(ctx);
      const before = await route.count(ctx);
      const key = randomUUID();
      const first = await route.send(key, ctx);
      assert.ok(first.status < 300, `${name} answered ${first.status}: ${first.text}`);
      const made = await route.count(ctx);
      assert.equal(made, before + 1, `${name} made one`);
      assertReplay(first, await route.send(key, ctx));
      assert.equal(await route.count(ctx), made, `${name} did not do the work again`);
      // Another key is another request.
      const other = await route.send(randomUUID(), ctx);
      assert.equal(other.headers.get(REPLAYED), null);
    });

    test(`${name} refuses an empty or over-long Idempotency-Key with one 400 naming it, and does nothing`, async () => {
      const ctx: Ctx = { seller: await sellerWithApp(server) };
      await route.prepare?.(ctx);
      const before = await route.count(ctx);
      const refusals = [];
      for (const key of ['', 'k'.repeat(256)]) {
        const error = assertError(await route.send(key, ctx), 400, 'validation_failed');
        assert.deepEqual(error.details, [
          { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' },
        ]);
        refusals.push(error.message);
      }
      assert.equal(refusals[0], refusals[1], 'the empty key and the long one are refused alike');
      assert.equal(await route.count(ctx), before, `${name} did nothing`);
    });

    test(`${name} commits its answer with its work: when the answer cannot be kept, the retry does the work once`, async () => {
      const ctx: Ctx = { seller: await sellerWithApp(server) };
      await route.prepare?.(ctx);
      const before = await route.count(ctx);
      const key = randomUUID();
      assertError(await whileAnswersCannotBeKept(() => route.send(key, ctx)), 500, 'internal_error');
      const retried = await route.send(key, ctx);
      assert.ok(retried.status < 300, `${name} answered ${retried.status}: ${retried.text}`);
      assert.equal(retried.headers.get(REPLAYED), null);
      assertReplay(retried, await route.send(key, ctx));
      assert.equal(await route.count(ctx), before + 1, `${name} did the work once`);
    });
  }

  test('declares Idempotency-Key in the API reference, and only creating routes do', async () => {
    const documents = {
      core: (await server.api.get('/openapi.json')).expect(200).body,
      pay: (await server.pay.get('/openapi.json')).expect(200).body,
    };
    const flagged: string[] = [];
    const creating: string[] = [];
    for (const [host, document] of Object.entries(documents)) {
      for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(document.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          // Named without the core host's /v1, whether the document's paths carry it or its server does.
          const name = `${host} ${method.toUpperCase()} ${path.replace(/^\/v1(?=\/)/, '')}`;
          const parameters = (operation.parameters ?? []) as {
            in: string;
            name: string;
            required?: boolean;
          }[];
          const header = parameters.find(
            (p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
          );
          if (header) {
            flagged.push(name);
            assert.notEqual(header.required, true, `${name}: the header is optional`);
            const responses = operation.responses as Record<string, unknown>;
            assert.ok(responses['422'] && responses['409'], `${name} documents 409 and 422`);
          }
          if (method === 'post' && '201' in (operation.responses as object) && !NOT_IDEMPOTENT[name])
            creating.push(name);
        }
      }
    }
    assert.deepEqual(flagged.sort(), Object.keys(CREATING_ROUTES).sort());
    // A new POST answering 201 must take the flag (and a row above) or be listed as an exception.
    for (const name of creating)
      assert.ok(flagged.includes(name), `${name} creates but takes no Idempotency-Key`);
    assert.ok(!flagged.includes('core POST /licenses/verify'));
  });
});
