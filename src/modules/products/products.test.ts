import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  createApiKey,
  createApp,
  type Seller,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

let server: TestServer;
const logLines: string[] = [];
before(async () => {
  server = await startTestServer({ LOG_LEVEL: 'info' }, { logLines });
});
after(() => server.stop());

type Tier = 'free' | 'pro' | 'business' | 'enterprise';

const minimal = (appId: string, extra: Record<string, unknown> = {}) => ({
  appId,
  name: 'Pro licence',
  price: 19.99,
  currency: 'USD',
  ...extra,
});

async function createProduct(seller: { token: string; appId: string }, extra: Record<string, unknown> = {}) {
  return (await server.api.post('/products', minimal(seller.appId, extra), { token: seller.token })).expect(
    201,
  ).body;
}

async function productCount(userId: string): Promise<number> {
  const row = await server.db
    .selectFrom('products')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const RESOURCE_FIELDS = [
  'id',
  'licensePolicy',
  'userId',
  'appId',
  'name',
  'description',
  'features',
  'price',
  'currency',
  'active',
  'successUrl',
  'cancelUrl',
  'helpUrl',
  'supportUrl',
  'termsUrl',
  'privacyUrl',
  'refundUrl',
  'productType',
  'billingType',
  'interval',
  'partnerPriceIdRecurring',
  'partnerTaxEnabled',
  'partnerIdentityRequired',
  'cryptoPaymentsEnabled',
  'hideEmail',
  'autoRedirect',
  'licenseEmails',
  'sendLicenseToCustomer',
  'callbackSecret',
  'merchantWebhookUrl',
  'trialDays',
  'portalLicenseFileDays',
  'portalDeviceReleases',
  'portalReleasePeriodDays',
  'checkoutUrl',
  'createdAt',
  'updatedAt',
].sort();

describe('creating products', () => {
  test('needs only name, price and currency; everything else has a documented default', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    assert.deepEqual(Object.keys(product).sort(), RESOURCE_FIELDS);
    assert.equal(product.userId, seller.user.id);
    assert.equal(product.appId, seller.appId);
    assert.equal(product.price, 19.99);
    assert.equal(product.currency, 'USD');
    assert.equal(product.active, true);
    assert.equal(product.description, '');
    assert.equal(product.productType, 'license');
    assert.equal(product.billingType, 'one_time');
    assert.equal(product.interval, null);
    assert.equal(product.successUrl, null);
    assert.deepEqual(product.licenseEmails, []);
    assert.deepEqual(product.features, []);
    assert.equal(product.trialDays, null);
    assert.equal(product.portalLicenseFileDays, 30);
    assert.equal(product.portalDeviceReleases, 3);
    assert.equal(product.portalReleasePeriodDays, 30);
    assert.equal(product.licensePolicy.model, 'unlimited');
    for (const flag of [
      'partnerTaxEnabled',
      'partnerIdentityRequired',
      'cryptoPaymentsEnabled',
      'hideEmail',
      'autoRedirect',
      'sendLicenseToCustomer',
    ]) {
      assert.equal(product[flag], false, flag);
    }
    assert.match(product.callbackSecret, /^cbs_[A-Za-z0-9_-]{43}$/);
    assert.match(product.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const got = (await server.api.get(`/products/${product.id}`, { token: seller.token })).expect(200);
    assert.deepEqual(got.body, product);
  });

  test('carries the link to its hosted checkout page, which sells it', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller, { name: 'Linked licence' });
    assert.equal(product.checkoutUrl, `${server.config.payPublicUrl}/checkout/${product.id}`);
    const listed = (await server.api.get('/products', { token: seller.token })).expect(200).body;
    assert.equal(listed.products[0].checkoutUrl, product.checkoutUrl);
    const page = (await server.pay.get(`/checkout/${product.id}`)).expect(200);
    assert.match(page.text, /Linked licence/);
  });

  test('keeps the price exact in storage and in responses', async () => {
    const seller = await sellerWithApp(server);
    const cases: [number, string, string][] = [
      [0.1, 'USD', '0.1000'],
      [19.99, 'EUR', '19.9900'],
      [1234567.89, 'GBP', '1234567.8900'],
      [1500, 'JPY', '1500.0000'],
      [12.345, 'KWD', '12.3450'],
    ];
    for (const [price, currency, stored] of cases) {
      const product = await createProduct(seller, { price, currency });
      assert.equal(product.price, price);
      const { rows } = await sql<{
        price: string;
      }>`select price::text as price from products where id = ${product.id}`.execute(server.db);
      assert.equal(rows[0]?.price, stored);
    }
  });

  test('accepts a currency code in any letter case and stores it upper case', async () => {
    const seller = await sellerWithApp(server);
    assert.equal((await createProduct(seller, { currency: 'eur' })).currency, 'EUR');
  });

  test('takes every writable field', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const body = {
      ...minimal(seller.appId),
      description: 'Lifetime licence for one user',
      active: false,
      successUrl: 'https://example.com/thanks',
      cancelUrl: 'http://example.com/cancel',
      helpUrl: 'https://example.com/help',
      supportUrl: 'https://example.com/support',
      termsUrl: 'https://example.com/terms',
      privacyUrl: 'https://example.com/privacy',
      refundUrl: 'https://example.com/refunds',
      productType: 'subscription',
      billingType: 'recurring',
      interval: 'year',
      partnerPriceIdRecurring: 'price_123',
      partnerTaxEnabled: true,
      partnerIdentityRequired: true,
      cryptoPaymentsEnabled: true,
      hideEmail: true,
      autoRedirect: true,
      licenseEmails: ['ops@example.com', 'sales@example.com'],
      sendLicenseToCustomer: true,
      callbackSecret: 'a-seller-chosen-secret-of-32-chars-or-more!',
    };
    const product = (await server.api.post('/products', body, { token: seller.token })).expect(201).body;
    for (const [field, value] of Object.entries(body)) assert.deepEqual(product[field], value, field);
  });

  test('an API key creates products for its own app without naming it', async () => {
    const seller = await sellerWithApp(server);
    const { key } = await createApiKey(server, seller.token, seller.appId);
    const { appId: _omit, ...body } = minimal(seller.appId);
    const product = (await server.api.post('/products', body, { token: key })).expect(201).body;
    assert.equal(product.appId, seller.appId);
    const sibling = await createApp(server, seller.token, 'Sibling');
    assertError(
      await server.api.post('/products', minimal(sibling.id), { token: key }),
      403,
      'app_scope_mismatch',
    );
  });

  test('a session must name the app, and only one of its own', async () => {
    const seller = await sellerWithApp(server);
    const { appId: _omit, ...body } = minimal(seller.appId);
    const missing = assertError(
      await server.api.post('/products', body, { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.equal(missing.details?.[0]?.field, 'appId');
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.post('/products', minimal(stranger.appId), { token: seller.token }),
      404,
      'not_found',
    );
    assert.equal(await productCount(seller.user.id), 0);
  });
});

describe('bad input answers 400 naming the field and writes nothing', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a missing name', { name: undefined }, 'name'],
    ['a missing price', { price: undefined }, 'price'],
    ['a missing currency', { currency: undefined }, 'currency'],
    ['a negative price', { price: -1 }, 'price'],
    ['a zero price', { price: 0 }, 'price'],
    ['a price above the maximum', { price: 1_000_000_001 }, 'price'],
    ['a price given as a string', { price: '19.99' }, 'price'],
    ['more decimals than USD has', { price: 19.999 }, 'price'],
    ['decimals on a currency without them', { price: 10.5, currency: 'JPY' }, 'price'],
    ['an unknown currency', { currency: 'ABC' }, 'currency'],
    ['a metal, not a currency', { currency: 'XAU' }, 'currency'],
    ['a four-letter currency', { currency: 'USDT' }, 'currency'],
    ['a 2001-character success URL', { successUrl: `https://example.com/${'a'.repeat(1981)}` }, 'successUrl'],
    ['a javascript: URL', { cancelUrl: 'javascript:alert(1)' }, 'cancelUrl'],
    ['an ftp: URL', { successUrl: 'ftp://example.com/file' }, 'successUrl'],
    ['a relative URL', { termsUrl: '/terms' }, 'termsUrl'],
    ['a URL with spaces', { helpUrl: 'https://exa mple.com' }, 'helpUrl'],
    ['an unknown product type', { productType: 'bundle' }, 'productType'],
    ['an unknown billing type', { billingType: 'weekly' }, 'billingType'],
    ['an unknown interval', { billingType: 'recurring', interval: 'week' }, 'interval'],
    ['a boolean given as a string', { active: 'false' }, 'active'],
    ['an over-long name', { name: 'n'.repeat(201) }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['an over-long description', { description: 'd'.repeat(5001) }, 'description'],
    ['an invalid licence e-mail', { licenseEmails: ['not-an-email'] }, 'licenseEmails.0'],
    ['a portal file valid 0 days', { portalLicenseFileDays: 0 }, 'portalLicenseFileDays'],
    ['a portal file valid 3651 days', { portalLicenseFileDays: 3651 }, 'portalLicenseFileDays'],
    ['a negative release allowance', { portalDeviceReleases: -1 }, 'portalDeviceReleases'],
    ['a fractional release allowance', { portalDeviceReleases: 1.5 }, 'portalDeviceReleases'],
    ['a release period of 366 days', { portalReleasePeriodDays: 366 }, 'portalReleasePeriodDays'],
    ['an unknown field', { colour: 'blue' }, 'colour'],
    ['a server-owned field', { userId: '00000000-0000-7000-8000-000000000000' }, 'userId'],
    ['recurring billing without an interval', { billingType: 'recurring' }, 'interval'],
    ['one-time billing with an interval', { interval: 'month' }, 'interval'],
    ['a subscription billed once', { productType: 'subscription' }, 'billingType'],
    [
      'a partner price on a one-time product',
      { partnerPriceIdRecurring: 'price_1' },
      'partnerPriceIdRecurring',
    ],
    ['a too-short chosen callback secret', { callbackSecret: 'short' }, 'callbackSecret'],
  ];

  let seller: Seller & { appId: string };
  before(async () => {
    seller = await sellerWithApp(server, 'enterprise');
  });

  for (const [label, change, field] of cases) {
    test(label, async () => {
      const body: Record<string, unknown> = { ...minimal(seller.appId), ...change };
      for (const key of Object.keys(change)) if (change[key] === undefined) delete body[key];
      const error = assertError(
        await server.api.post('/products', body, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.ok(
        error.details?.some((d) => d.field === field),
        `expected a detail for ${field}, got ${JSON.stringify(error.details)}`,
      );
      assert.equal(await productCount(seller.user.id), 0);
    });
  }

  test('a URL of exactly 2000 characters is accepted', async () => {
    const other = await sellerWithApp(server);
    const url = `https://example.com/${'a'.repeat(1980)}`;
    assert.equal(url.length, 2000);
    assert.equal((await createProduct(other, { successUrl: url })).successUrl, url);
  });

  test('a recurring product without a partner price can be saved', async () => {
    const other = await sellerWithApp(server);
    const product = await createProduct(other, {
      productType: 'subscription',
      billingType: 'recurring',
      interval: 'month',
    });
    assert.equal(product.partnerPriceIdRecurring, null);
  });
});

describe('tier gates', () => {
  const gates: [field: string, value: unknown, below: Tier, required: Tier][] = [
    ['cryptoPaymentsEnabled', true, 'pro', 'business'],
    ['hideEmail', true, 'business', 'enterprise'],
    ['autoRedirect', true, 'business', 'enterprise'],
    ['licenseEmails', ['copy@example.com'], 'business', 'enterprise'],
    ['sendLicenseToCustomer', true, 'business', 'enterprise'],
    ['callbackSecret', 'chosen-secret-0123456789-abcdefghijkl', 'business', 'enterprise'],
  ];

  for (const [field, value, below, required] of gates) {
    test(`${field} is refused at ${below} with nothing written, and accepted at ${required}`, async () => {
      const low = await sellerWithApp(server, below);
      const res = await server.api.post('/products', minimal(low.appId, { [field]: value }), {
        token: low.token,
      });
      const error = assertError(res, 403, 'tier_required');
      assert.deepEqual(error.details, [{ field, message: `needs the ${required} tier` }]);
      assert.ok(!res.text.includes(String(value)), 'the refused value is not echoed');
      assert.equal(await productCount(low.user.id), 0);

      const existing = await createProduct(low);
      assertError(
        await server.api.patch(`/products/${existing.id}`, { [field]: value }, { token: low.token }),
        403,
        'tier_required',
      );
      const unchanged = (await server.api.get(`/products/${existing.id}`, { token: low.token })).expect(200);
      assert.deepEqual(unchanged.body, existing);

      const high = await sellerWithApp(server, required);
      assert.deepEqual((await createProduct(high, { [field]: value }))[field], value);
    });
  }

  test('default values of gated fields are open to every tier', async () => {
    const free = await sellerWithApp(server, 'free');
    const product = await createProduct(free, {
      cryptoPaymentsEnabled: false,
      hideEmail: false,
      autoRedirect: false,
      licenseEmails: [],
      sendLicenseToCustomer: false,
    });
    assert.equal(product.hideEmail, false);
  });

  test('a seller whose tier dropped can still send back what they read, but not change it', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const product = await createProduct(seller, { hideEmail: true, licenseEmails: ['a@example.com'] });
    const token = await server.adminToken();
    (await server.api.patch(`/admin/users/${seller.user.id}`, { tier: 'free' }, { token })).expect(200);
    const { id, userId, checkoutUrl, createdAt, updatedAt, ...writable } = product;
    const replaced = (
      await server.api.put(`/products/${id}`, { ...writable, name: 'Renamed' }, { token: seller.token })
    ).expect(200);
    assert.equal(replaced.body.name, 'Renamed');
    assert.equal(replaced.body.hideEmail, true);
    assertError(
      await server.api.patch(
        `/products/${id}`,
        { licenseEmails: ['b@example.com'] },
        { token: seller.token },
      ),
      403,
      'tier_required',
    );
    (await server.api.patch(`/products/${id}`, { hideEmail: false }, { token: seller.token })).expect(200);
  });
});

describe('updating products', () => {
  test('PATCH changes only the fields given', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller, {
      description: 'Original',
      successUrl: 'https://example.com/ok',
    });
    const patched = (
      await server.api.patch(`/products/${product.id}`, { price: 24.5 }, { token: seller.token })
    ).expect(200).body;
    assert.equal(patched.price, 24.5);
    const portal = { portalLicenseFileDays: 7, portalDeviceReleases: 0, portalReleasePeriodDays: 365 };
    const settings = (
      await server.api.patch(`/products/${product.id}`, portal, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      [settings.portalLicenseFileDays, settings.portalDeviceReleases, settings.portalReleasePeriodDays],
      [7, 0, 365],
    );
    assert.equal(settings.price, 24.5);
    assert.equal(patched.description, 'Original');
    assert.equal(patched.successUrl, 'https://example.com/ok');
    assert.equal(patched.callbackSecret, product.callbackSecret);
    assert.equal(patched.createdAt, product.createdAt);
    assert.ok(patched.updatedAt >= product.updatedAt);
    const cleared = (
      await server.api.patch(`/products/${product.id}`, { successUrl: null }, { token: seller.token })
    ).expect(200);
    assert.equal(cleared.body.successUrl, null);
  });

  test('PUT replaces the product: omitted fields return to their defaults, app and secret stay', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller, {
      description: 'Original',
      successUrl: 'https://example.com/ok',
      partnerTaxEnabled: true,
      billingType: 'recurring',
      interval: 'month',
    });
    const replaced = (
      await server.api.put(
        `/products/${product.id}`,
        { name: 'Replaced', price: 5, currency: 'EUR' },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(replaced.name, 'Replaced');
    assert.equal(replaced.price, 5);
    assert.equal(replaced.currency, 'EUR');
    assert.equal(replaced.description, '');
    assert.equal(replaced.successUrl, null);
    assert.equal(replaced.partnerTaxEnabled, false);
    assert.equal(replaced.billingType, 'one_time');
    assert.equal(replaced.interval, null);
    assert.equal(replaced.appId, product.appId);
    assert.equal(replaced.callbackSecret, product.callbackSecret);
  });

  test('PUT needs the required fields and PATCH needs at least one field', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    const error = assertError(
      await server.api.put(`/products/${product.id}`, { name: 'Only a name' }, { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.deepEqual(error.details?.map((d) => d.field).sort(), ['currency', 'price']);
    assertError(
      await server.api.patch(`/products/${product.id}`, {}, { token: seller.token }),
      400,
      'validation_failed',
    );
  });

  test('coherence is checked on the result of a PATCH', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller, { price: 10.5 });
    const error = assertError(
      await server.api.patch(`/products/${product.id}`, { currency: 'JPY' }, { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.equal(error.details?.[0]?.field, 'price');
    const recurring = assertError(
      await server.api.patch(
        `/products/${product.id}`,
        { billingType: 'recurring' },
        { token: seller.token },
      ),
      400,
      'validation_failed',
    );
    assert.equal(recurring.details?.[0]?.field, 'interval');
    (
      await server.api.patch(
        `/products/${product.id}`,
        { billingType: 'recurring', interval: 'year' },
        { token: seller.token },
      )
    ).expect(200);
    const got = (await server.api.get(`/products/${product.id}`, { token: seller.token })).expect(200);
    assert.equal(got.body.currency, 'USD');
    assert.equal(got.body.interval, 'year');
  });

  test('moves a product to another of the seller’s apps, never to someone else’s', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    const other = await createApp(server, seller.token, 'Other');
    assert.equal(
      (
        await server.api.patch(`/products/${product.id}`, { appId: other.id }, { token: seller.token })
      ).expect(200).body.appId,
      other.id,
    );
    const stranger = await sellerWithApp(server);
    assertError(
      await server.api.patch(`/products/${product.id}`, { appId: stranger.appId }, { token: seller.token }),
      404,
      'not_found',
    );
  });

  test('deactivating keeps the product', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    const inactive = (
      await server.api.patch(`/products/${product.id}`, { active: false }, { token: seller.token })
    ).expect(200);
    assert.equal(inactive.body.active, false);
    (await server.api.get(`/products/${product.id}`, { token: seller.token })).expect(200);
    const listed = (await server.api.get('/products?active=false', { token: seller.token })).expect(200);
    assert.deepEqual(
      listed.body.products.map((p: { id: string }) => p.id),
      [product.id],
    );
  });
});

describe('callback secret', () => {
  test('rotation returns a new secret and the old one is gone at once', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    const rotated = (
      await server.api.post(`/products/${product.id}/rotate-callback-secret`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assert.match(rotated.body.callbackSecret, /^cbs_/);
    assert.notEqual(rotated.body.callbackSecret, product.callbackSecret);
    const got = (await server.api.get(`/products/${product.id}`, { token: seller.token })).expect(200);
    assert.equal(got.body.callbackSecret, rotated.body.callbackSecret);
    const { rows } = await sql<{
      n: number;
    }>`select count(*) as n from products where callback_secret = ${product.callbackSecret}`.execute(
      server.db,
    );
    assert.equal(Number(rows[0]?.n), 0);
  });

  test('a rotation racing a PATCH is never undone', async () => {
    const seller = await sellerWithApp(server);
    for (let i = 0; i < 5; i++) {
      const product = await createProduct(seller);
      const [rotated] = await Promise.all([
        server.api.post(`/products/${product.id}/rotate-callback-secret`, undefined, { token: seller.token }),
        server.api.patch(`/products/${product.id}`, { description: `edit ${i}` }, { token: seller.token }),
      ]);
      const got = (await server.api.get(`/products/${product.id}`, { token: seller.token })).expect(200).body;
      assert.equal(got.callbackSecret, rotated.expect(200).body.callbackSecret);
      assert.equal(got.description, `edit ${i}`);
    }
  });

  test('appears in the product’s own responses and never in logs', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    await server.api.get(`/products/${product.id}`, { token: seller.token });
    await server.api.patch(`/products/${product.id}`, { name: 'Logged?' }, { token: seller.token });
    assert.ok(
      logLines.some((line) => line.includes(product.id)),
      'the product is logged by id',
    );
    assert.ok(!logLines.join('').includes(product.callbackSecret));
  });
});

describe('listing products', () => {
  let seller: Seller & { appId: string };
  let ids: Record<string, string>;

  before(async () => {
    seller = await sellerWithApp(server);
    const stranger = await sellerWithApp(server);
    await createProduct(stranger, { name: 'Stranger Basic' });
    ids = {
      basic: (await createProduct(seller, { name: 'Basic Plan', currency: 'EUR', price: 9 })).id,
      pro: (
        await createProduct(seller, {
          name: 'Pro Plan',
          productType: 'subscription',
          billingType: 'recurring',
          interval: 'month',
        })
      ).id,
      api: (await createProduct(seller, { name: 'API access', productType: 'api_access', active: false })).id,
      team: (await createProduct(seller, { name: '100%_team', currency: 'GBP', price: 99 })).id,
    };
  });

  const list = async (query: string) => {
    const res = (await server.api.get(`/products${query}`, { token: seller.token })).expect(200);
    return { ids: res.body.products.map((p: { id: string }) => p.id), body: res.body };
  };

  test('lists the seller’s own products in creation order with a total', async () => {
    const { ids: got, body } = await list('');
    assert.deepEqual(got, [ids.basic, ids.pro, ids.api, ids.team]);
    assert.equal(body.total, 4);
    assert.equal(body.limit, 20);
    assert.equal(body.offset, 0);
  });

  test('filters by active, type, billing, currency, app and name', async () => {
    assert.deepEqual((await list('?active=true')).ids, [ids.basic, ids.pro, ids.team]);
    assert.deepEqual((await list('?active=false')).ids, [ids.api]);
    assert.deepEqual((await list('?productType=api_access')).ids, [ids.api]);
    assert.deepEqual((await list('?billingType=recurring')).ids, [ids.pro]);
    assert.deepEqual((await list('?currency=eur')).ids, [ids.basic]);
    assert.deepEqual((await list('?q=PLAN')).ids, [ids.basic, ids.pro]);
    assert.deepEqual((await list('?q=100%25_')).ids, [ids.team]);
    assert.deepEqual((await list('?q=%25')).ids, [ids.team]);
    assert.deepEqual((await list(`?appId=${seller.appId}&billingType=one_time&active=true`)).ids, [
      ids.basic,
      ids.team,
    ]);
    assert.equal((await list('?q=stranger')).body.total, 0);
  });

  test('paginates with limit and offset', async () => {
    const page = await list('?limit=2&offset=1');
    assert.deepEqual(page.ids, [ids.pro, ids.api]);
    assert.equal(page.body.total, 4);
    const past = await list('?offset=50');
    assert.deepEqual(past.ids, []);
    assert.equal(past.body.total, 4);
    const over = assertError(
      await server.api.get('/products?limit=101', { token: seller.token }),
      400,
      'validation_failed',
    );
    assert.equal(over.details?.[0]?.field, 'limit');
    assertError(await server.api.get('/products?limit=0', { token: seller.token }), 400, 'validation_failed');
    assertError(
      await server.api.get('/products?active=maybe', { token: seller.token }),
      400,
      'validation_failed',
    );
    assertError(
      await server.api.get('/products?sort=price', { token: seller.token }),
      400,
      'validation_failed',
    );
  });

  test('an API key sees only its own app’s products', async () => {
    const other = await createApp(server, seller.token, 'Other app');
    const { key } = await createApiKey(server, seller.token, other.id);
    const otherProduct = (await server.api.post('/products', minimal(other.id), { token: key })).expect(
      201,
    ).body;
    const res = (await server.api.get('/products', { token: key })).expect(200);
    assert.deepEqual(
      res.body.products.map((p: { id: string }) => p.id),
      [otherProduct.id],
    );
    assertError(await server.api.get(`/products/${ids.basic}`, { token: key }), 403, 'app_scope_mismatch');
    (await server.api.delete(`/products/${otherProduct.id}`, { token: seller.token })).expect(204);
  });
});

describe('deleting products', () => {
  test('deletes a product nothing refers to', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    (await server.api.delete(`/products/${product.id}`, { token: seller.token })).expect(204);
    assertError(await server.api.get(`/products/${product.id}`, { token: seller.token }), 404, 'not_found');
    assertError(
      await server.api.delete(`/products/${product.id}`, { token: seller.token }),
      404,
      'not_found',
    );
  });

  test('an app with products cannot be deleted until they are gone', async () => {
    const seller = await sellerWithApp(server);
    const product = await createProduct(seller);
    assertError(await server.api.delete(`/apps/${seller.appId}`, { token: seller.token }), 409, 'app_in_use');
    (await server.api.delete(`/products/${product.id}`, { token: seller.token })).expect(204);
    (await server.api.delete(`/apps/${seller.appId}`, { token: seller.token })).expect(204);
  });
});
