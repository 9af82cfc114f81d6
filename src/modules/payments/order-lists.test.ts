import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { EXPORT_PAGE_SIZE } from '../../platform/db/list-order.js';
import {
  createApiKey,
  createApp,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { buyWithSandbox, startPurchase } from '../../testing/purchases.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const list = async (path: string, token: string) => (await server.api.get(path, { token })).expect(200).body;
const ids = (body: { orders: { id: string }[] }) => body.orders.map((order) => order.id);

async function product(seller: SellerWithApp) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Pro', price: 19.99, currency: 'USD' },
      { token: seller.token },
    )
  ).expect(201).body;
}

/** Three orders at known times and amounts (oldest first): paid, pending, paid. */
async function sellerWithOrders() {
  const seller = await sellerWithApp(server);
  const item = await product(seller);
  const first = (await buyWithSandbox(server, item.id, 'Aaron@Example.com')).intent.orderId;
  const second = (await startPurchase(server, item.id, 'first_last@shop.example')).orderId;
  const third = (await buyWithSandbox(server, item.id, 'zoe@example.com')).intent.orderId;
  const made = [first, second, third] as [string, string, string];
  const amounts = ['5.0000', '120.0000', '19.9900'];
  for (const [index, id] of made.entries())
    await server.db
      .updateTable('orders')
      .set({ created_at: new Date(`2025-0${index + 1}-01T00:00:00Z`), amount: amounts[index] })
      .where('id', '=', id)
      .execute();
  return { seller, made };
}

/** The first column of each data row of a CSV whose cells hold no line breaks. */
function csvIds(text: string): string[] {
  return text
    .split('\r\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(',')[0] as string);
}

describe('the seller’s order list', () => {
  test('is newest first, and sorts by date, amount, status and e-mail either way', async () => {
    const { seller, made } = await sellerWithOrders();
    const [aaron, pending, zoe] = made;
    const sorted = async (sort: string) =>
      ids(await list(`/orders${sort ? `?sort=${sort}` : ''}`, seller.token));
    assert.deepEqual(await sorted(''), [zoe, pending, aaron]);
    assert.deepEqual(await sorted('createdAt'), [aaron, pending, zoe]);
    assert.deepEqual(await sorted('-createdAt'), [zoe, pending, aaron]);
    assert.deepEqual(await sorted('amount'), [aaron, zoe, pending]);
    assert.deepEqual(await sorted('-amount'), [pending, zoe, aaron]);
    assert.deepEqual((await sorted('status')).slice(0, 2).sort(), [aaron, zoe].sort());
    assert.equal((await sorted('status'))[2], pending);
    assert.equal((await sorted('-status'))[0], pending);
    assert.deepEqual(await sorted('email'), [aaron, pending, zoe]);
    assert.deepEqual(await sorted('-email'), [zoe, pending, aaron]);
    const page = await list('/orders?sort=amount&limit=1&offset=1', seller.token);
    assert.deepEqual([ids(page), page.total, page.limit, page.offset], [[zoe], 3, 1, 1]);
  });

  test('an unknown sort answers 400 naming sort', async () => {
    const seller = await sellerWithApp(server);
    for (const path of ['/orders?sort=expiresAt', '/orders?sort=-', '/orders/export.csv?sort=price']) {
      const refused = await server.api.get(path, { token: seller.token });
      assertError(refused, 400, 'validation_failed');
      assert.deepEqual(
        refused.body.error.details.map((detail: { field: string }) => detail.field),
        ['sort'],
        path,
      );
    }
  });

  test('the email filter matches any part of the address, ignoring case, with % and _ taken as they are', async () => {
    const { seller, made } = await sellerWithOrders();
    assert.deepEqual(ids(await list('/orders?email=EXAMPLE.com', seller.token)), [made[2], made[0]]);
    assert.deepEqual(ids(await list('/orders?email=t_L', seller.token)), [made[1]]);
    assert.equal((await list('/orders?email=t%25l', seller.token)).total, 0);
    assert.equal((await list('/orders?email=%25', seller.token)).total, 0);
  });

  test('the CSV export has the list’s rows and order; another seller and another app’s key see none', async () => {
    const { seller, made } = await sellerWithOrders();
    const res = (await server.api.get('/orders/export.csv?sort=amount', { token: seller.token })).expect(200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="orders.csv"');
    const lines = res.text.split('\r\n');
    assert.equal(
      lines[0],
      'id,createdAt,email,productId,amount,currency,status,paymentProvider,transactionId',
    );
    assert.deepEqual(csvIds(res.text), [made[0], made[2], made[1]]);
    assert.deepEqual(lines[1]?.split(',').slice(1, 3), ['2025-01-01T00:00:00.000Z', 'Aaron@Example.com']);
    assert.deepEqual(lines[1]?.split(',').slice(4, 7), ['5', 'USD', 'paid']);
    const filtered = (
      await server.api.get('/orders/export.csv?status=pending', { token: seller.token })
    ).expect(200);
    assert.deepEqual(csvIds(filtered.text), [made[1]]);

    const stranger = await sellerWithApp(server);
    const theirs = (await server.api.get('/orders/export.csv', { token: stranger.token })).expect(200);
    assert.deepEqual(csvIds(theirs.text), []);
    const sibling = await createApp(server, seller.token, 'Sibling');
    const { key } = await createApiKey(server, seller.token, sibling.id);
    assert.deepEqual(
      csvIds((await server.api.get('/orders/export.csv', { token: key })).expect(200).text),
      [],
    );
    assert.equal((await list('/orders', key)).total, 0);
  });

  test('exports every order of a list longer than one page of the streaming loop, each once, in order', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    const count = EXPORT_PAGE_SIZE * 2 + 11;
    // Few distinct amounts, statuses and times: pages must part the ties by id.
    await sql`
      insert into orders (id, transaction_id, user_id, product_id, app_id, email, amount, currency, status,
        payment_provider, partner_payment_id, client_secret, billing_type, created_at, updated_at)
      select gen_random_uuid(), 'txn_bulk_' || gen_random_uuid(), ${seller.user.id}, ${item.id}, ${seller.appId},
        'buyer' || (n % 40) || '@example.com', (n % 4) * 2.5, 'USD',
        case when n % 3 = 0 then 'pending' else 'paid' end,
        'sandbox', 'bulk_' || gen_random_uuid(), 'secret', 'one_time', timestamptz '2025-05-01T00:00:00.5Z' + (n % 2) * interval '1 hour',
        now()
      from generate_series(1, ${count}) as n
    `.execute(server.db);
    for (const [sort, orderBy] of [
      ['', sql`created_at desc, id desc`],
      ['amount', sql`amount asc, id asc`],
      ['-status', sql`status desc, id desc`],
      ['email', sql`email asc, id asc`],
    ] as const) {
      const res = (
        await server.api.get(`/orders/export.csv${sort ? `?sort=${sort}` : ''}`, { token: seller.token })
      ).expect(200);
      const exported = csvIds(res.text);
      const expected = await sql<{ id: string }>`
        select id from orders where user_id = ${seller.user.id} order by ${orderBy}
      `.execute(server.db);
      assert.equal(exported.length, count, sort);
      assert.equal(new Set(exported).size, count, `${sort}: no row twice`);
      assert.deepEqual(
        exported,
        expected.rows.map((row) => row.id),
        sort,
      );
    }
  });
});
