import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { EXPORT_PAGE_SIZE } from '../../platform/db/list-order.js';
import {
  createApiKey,
  createApp,
  issueLicense,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const list = async (path: string, token: string) => (await server.api.get(path, { token })).expect(200).body;
const ids = (body: { licenses: { id: string }[] }) => body.licenses.map((license) => license.id);

/** Gives licenses fixed creation times, so the expected order does not hang on the clock. */
async function createdAt(licenseId: string, at: string) {
  await server.db
    .updateTable('licenses')
    .set({ created_at: new Date(at) })
    .where('id', '=', licenseId)
    .execute();
}

/** A seller with two apps and licenses in both, created at known times (oldest first). */
async function sellerWithLicenses() {
  const seller = await sellerWithApp(server);
  const other = await createApp(server, seller.token, 'Second');
  const second = { ...seller, appId: other.id };
  const made = [
    await issueLicense(server, seller, { email: 'Aaron@Example.com', expiresAt: '2031-01-01T00:00:00Z' }),
    await issueLicense(server, second, { email: 'alice@example.com' }),
    await issueLicense(server, seller, { email: 'bob@shop.example', expiresAt: '2030-01-01T00:00:00Z' }),
    await issueLicense(server, second, {}),
  ];
  for (const [index, license] of made.entries())
    await createdAt(license.id, `2025-0${index + 1}-01T00:00:00Z`);
  return { seller, second, made: made.map((license) => license.id) };
}

describe('the seller’s licenses across their apps', () => {
  test('lists every app’s licenses newest first, with the app route newest first too', async () => {
    const { seller, made } = await sellerWithLicenses();
    const all = await list('/licenses', seller.token);
    assert.equal(all.total, 4);
    assert.deepEqual(ids(all), [...made].reverse());
    assert.deepEqual(Object.keys(all).sort(), ['licenses', 'limit', 'offset', 'total']);
    const one = await list(`/apps/${seller.appId}/licenses`, seller.token);
    assert.deepEqual(ids(one), [made[2], made[0]]);
    const paged = await list('/licenses?limit=2&offset=1', seller.token);
    assert.deepEqual([paged.total, paged.limit, paged.offset], [4, 2, 1]);
    assert.deepEqual(ids(paged), [made[2], made[1]]);
  });

  test('appId narrows the list to one app; another seller’s app answers 404', async () => {
    const { seller, second, made } = await sellerWithLicenses();
    assert.deepEqual(ids(await list(`/licenses?appId=${second.appId}`, seller.token)), [made[3], made[1]]);
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.get(`/licenses?appId=${seller.appId}`, { token: stranger.token }),
      404,
      'not_found',
    );
    assertError(
      await server.api.get(`/licenses/export.csv?appId=${seller.appId}`, { token: stranger.token }),
      404,
      'not_found',
    );
  });

  test('an API key lists its own app’s licenses only, and naming another app answers 403', async () => {
    const { seller, second, made } = await sellerWithLicenses();
    const key = (await createApiKey(server, seller.token, second.appId)).key;
    const scoped = await list('/licenses', key);
    assert.deepEqual(ids(scoped), [made[3], made[1]]);
    assert.equal(scoped.total, 2);
    assertError(
      await server.api.get(`/licenses?appId=${seller.appId}`, { token: key }),
      403,
      'app_scope_mismatch',
    );
    const csv = await server.api.get('/licenses/export.csv', { token: key });
    assert.equal(csv.status, 200);
    assert.deepEqual(csvIds(csv.text), [made[3], made[1]]);
  });

  test('another seller never sees a row of theirs, in the list or the export', async () => {
    const { seller, made } = await sellerWithLicenses();
    const stranger = await sellerWithApp(server);
    const own = await issueLicense(server, stranger, { email: 'aaron@example.com' });
    const theirs = await list('/licenses?email=example', stranger.token);
    assert.deepEqual(ids(theirs), [own.id]);
    const csv = (await server.api.get('/licenses/export.csv', { token: stranger.token })).expect(200);
    assert.deepEqual(csvIds(csv.text), [own.id]);
    for (const id of made) assert.ok(!csv.text.includes(id));
    assert.equal((await list('/licenses', seller.token)).total, 4);
  });
});

describe('sorting license lists', () => {
  test('sorts by each column shown, ascending or with - descending, empty values last', async () => {
    const { seller, made } = await sellerWithLicenses();
    const [aaron, alice, bob, none] = made as [string, string, string, string];
    const sorted = async (sort: string) => ids(await list(`/licenses?sort=${sort}`, seller.token));
    assert.deepEqual(await sorted('createdAt'), made);
    assert.deepEqual(await sorted('-createdAt'), [none, bob, alice, aaron]);
    // "Aaron" comes first whether the database compares text by case or not.
    assert.deepEqual(await sorted('email'), [aaron, alice, bob, none]);
    assert.deepEqual(await sorted('-email'), [bob, alice, aaron, none]);
    // Licenses without an expiry tie on it: they follow in id order, the same way as the sort.
    const perpetual = [alice, none].sort();
    assert.deepEqual(await sorted('expiresAt'), [bob, aaron, ...perpetual]);
    assert.deepEqual(await sorted('-expiresAt'), [aaron, bob, ...perpetual.reverse()]);
  });

  test('sorts by status on the app route too', async () => {
    const { seller, made } = await sellerWithLicenses();
    (
      await server.api.post(`/apps/${seller.appId}/licenses/${made[2]}/suspend`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assert.deepEqual(ids(await list(`/apps/${seller.appId}/licenses?sort=-status`, seller.token)), [
      made[2],
      made[0],
    ]);
    assert.deepEqual(ids(await list(`/apps/${seller.appId}/licenses?sort=status`, seller.token)), [
      made[0],
      made[2],
    ]);
  });

  test('an unknown sort answers 400 naming sort', async () => {
    const seller = await sellerWithApp(server);
    for (const path of [
      '/licenses?sort=key',
      '/licenses?sort=--createdAt',
      `/apps/${seller.appId}/licenses?sort=created_at`,
      '/licenses/export.csv?sort=+email',
    ]) {
      const refused = await server.api.get(path, { token: seller.token });
      assertError(refused, 400, 'validation_failed');
      assert.deepEqual(
        refused.body.error.details.map((detail: { field: string }) => detail.field),
        ['sort'],
        path,
      );
    }
  });

  test('lastVerifiedAt shows the last verification once the counts are flushed, and sorts', async () => {
    const { seller, made } = await sellerWithLicenses();
    const verified = (await list(`/licenses?sort=createdAt`, seller.token)).licenses[1];
    assert.equal(verified.lastVerifiedAt, null);
    const before = Date.now();
    (await server.api.post('/licenses/verify', { key: verified.key })).expect(200);
    assert.equal(await server.service.modules.verificationCounts.flush(), true);
    const after = await list('/licenses?sort=-lastVerifiedAt', seller.token);
    assert.equal(after.licenses[0].id, verified.id);
    const at = Date.parse(after.licenses[0].lastVerifiedAt);
    assert.ok(at >= before - 1000 && at <= Date.now(), after.licenses[0].lastVerifiedAt);
    // Never verified: last, whichever the direction.
    assert.equal((await list('/licenses?sort=lastVerifiedAt', seller.token)).licenses[0].id, verified.id);
    assert.deepEqual(
      after.licenses.slice(1).map((license: { lastVerifiedAt: string | null }) => license.lastVerifiedAt),
      [null, null, null],
    );
    assert.equal(made.length, 4);
  });
});

describe('the email filter', () => {
  test('matches any part of the address, ignoring case, on both routes', async () => {
    const { seller, made } = await sellerWithLicenses();
    assert.deepEqual(ids(await list('/licenses?email=EXAMPLE.COM', seller.token)), [made[1], made[0]]);
    assert.deepEqual(ids(await list('/licenses?email=aaRo', seller.token)), [made[0]]);
    assert.deepEqual(ids(await list(`/apps/${seller.appId}/licenses?email=SHOP`, seller.token)), [made[2]]);
  });

  test('takes % and _ as the characters they are', async () => {
    const seller = await sellerWithApp(server);
    const underscore = await issueLicense(server, seller, { email: 'first_last@example.com' });
    const percent = await issueLicense(server, seller, { email: '100%real@example.com' });
    await issueLicense(server, seller, { email: 'firstXlast@example.com' });
    assert.deepEqual(ids(await list('/licenses?email=t_l', seller.token)), [underscore.id]);
    assert.deepEqual(ids(await list(`/licenses?email=${encodeURIComponent('0%r')}`, seller.token)), [
      percent.id,
    ]);
    assert.equal((await list(`/licenses?email=${encodeURIComponent('%')}`, seller.token)).total, 1);
    assert.equal((await list('/licenses?email=_', seller.token)).total, 1);
  });
});

/** The first column of each data row of a CSV whose cells hold no line breaks. */
function csvIds(text: string): string[] {
  return text
    .split('\r\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(',')[0] as string);
}

describe('the licenses CSV export', () => {
  test('answers a CSV download with a header row, in the list’s order and filter', async () => {
    const { seller, made } = await sellerWithLicenses();
    const res = (
      await server.api.get('/licenses/export.csv?email=example.com', { token: seller.token })
    ).expect(200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="licenses.csv"');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const [header] = res.text.split('\r\n');
    assert.equal(
      header,
      'id,key,appId,productId,email,status,createdAt,expiresAt,lastVerifiedAt,deviceCount,maxDevices,floating,maxSeats',
    );
    assert.deepEqual(csvIds(res.text), [made[1], made[0]]);
    const aaron = res.text.split('\r\n')[2]?.split(',') ?? [];
    assert.deepEqual(aaron.slice(4, 9), [
      'Aaron@Example.com',
      'active',
      '2025-01-01T00:00:00.000Z',
      '2031-01-01T00:00:00.000Z',
      '',
    ]);
    const sorted = (await server.api.get('/licenses/export.csv?sort=email', { token: seller.token })).expect(
      200,
    );
    assert.deepEqual(csvIds(sorted.text), [made[0], made[1], made[2], made[3]]);
    const nothing = (await server.api.get('/licenses/export.csv?key=nope', { token: seller.token })).expect(
      200,
    );
    assert.equal(nothing.text.split('\r\n').filter(Boolean).length, 1, 'the header row alone');
  });

  test('quotes cells as RFC 4180 says and neutralises spreadsheet formulas', async () => {
    const seller = await sellerWithApp(server);
    const hostile = [
      '=HYPERLINK("http://evil.example","x")@example.com',
      '+1@example.com',
      '-2@example.com',
      '@sum@example.com',
      '\tTAB@example.com',
      'a,b@example.com',
      'line\r\nbreak@example.com',
      'plain@example.com',
    ];
    // Written straight to the store: the API's own e-mail check refuses most of these, but an
    // export must be safe whatever a row holds.
    for (const [index, email] of hostile.entries()) {
      const license = await issueLicense(server, seller, {});
      await server.db.updateTable('licenses').set({ email }).where('id', '=', license.id).execute();
      await createdAt(license.id, `2024-01-${String(index + 10)}T00:00:00Z`);
    }
    const res = (await server.api.get('/licenses/export.csv?sort=createdAt', { token: seller.token })).expect(
      200,
    );
    const emails = parseCsv(res.text)
      .slice(1)
      .map((row) => row[4]);
    assert.deepEqual(emails, [
      `'=HYPERLINK("http://evil.example","x")@example.com`,
      "'+1@example.com",
      "'-2@example.com",
      "'@sum@example.com",
      "'\tTAB@example.com",
      'a,b@example.com',
      'line\r\nbreak@example.com',
      'plain@example.com',
    ]);
    assert.ok(
      res.text.includes(`"'=HYPERLINK(""http://evil.example"",""x"")@example.com"`),
      'quotes doubled',
    );
    assert.ok(res.text.includes('"a,b@example.com"'));
    assert.ok(res.text.includes(',plain@example.com,'), 'plain cells unquoted');
  });

  test('exports every row of a list longer than one page of the streaming loop, each once, in order', async () => {
    const seller = await sellerWithApp(server);
    const count = EXPORT_PAGE_SIZE * 2 + 37;
    // Three creation times and some empty e-mails: most rows tie on the sort value, so pages
    // must part them by id.
    await sql`
      insert into licenses (id, key, app_id, user_id, email, created_at, updated_at)
      select gen_random_uuid(), 'BULK-' || gen_random_uuid(), ${seller.appId}, ${seller.user.id},
        case when n % 7 = 0 then null else 'buyer' || (n % 50) || '@example.com' end,
        timestamptz '2025-03-01T00:00:00.123456Z' + (n % 3) * interval '1 day',
        now()
      from generate_series(1, ${count}) as n
    `.execute(server.db);
    for (const [sort, orderBy] of [
      ['-createdAt', sql`created_at desc, id desc`],
      ['email', sql`email asc nulls last, id asc`],
      ['-email', sql`email desc nulls last, id desc`],
    ] as const) {
      const res = (await server.api.get(`/licenses/export.csv?sort=${sort}`, { token: seller.token })).expect(
        200,
      );
      const exported = csvIds(res.text);
      const expected = await sql<{ id: string }>`
        select id from licenses where user_id = ${seller.user.id} order by ${orderBy}
      `.execute(server.db);
      assert.equal(exported.length, count, sort);
      assert.equal(new Set(exported).size, count, `${sort}: no row twice`);
      assert.deepEqual(
        exported,
        expected.rows.map((row) => row.id),
        sort,
      );
    }
    // The list agrees with the export's order.
    const page = await list(`/licenses?sort=email&limit=100&offset=${EXPORT_PAGE_SIZE - 50}`, seller.token);
    const all = csvIds(
      (await server.api.get('/licenses/export.csv?sort=email', { token: seller.token })).expect(200).text,
    );
    assert.deepEqual(ids(page), all.slice(EXPORT_PAGE_SIZE - 50, EXPORT_PAGE_SIZE + 50));
  });
});

/** A small RFC 4180 reader, to read back what the export wrote. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}
