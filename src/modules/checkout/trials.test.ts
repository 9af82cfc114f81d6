import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';
import { buyWithSandbox } from '../../testing/purchases.js';
import { type SmtpSink, startSmtpSink } from '../../testing/smtp-sink.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { eventsForUser } from '../events/index.js';

/** Free trials from the hosted checkout: starting, verifying, ending and converting on payment. */
let server: TestServer;
let clock: TestClock;
let sink: SmtpSink;
const DAY = 86_400_000;

before(async () => {
  sink = await startSmtpSink();
  clock = testClock(new Date());
  server = await startTestServer(
    // Sessions must outlast the days the clock is moved by.
    { SMTP_URL: sink.url, USER_TOKEN_TTL: '2592000' },
    { clock, ownDatabase: true },
  );
});
after(async () => {
  await server.stop();
  await sink.close();
});

async function trialProduct(seller: SellerWithApp, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Photo Tool', price: 49, currency: 'USD', trialDays: 14, ...extra },
      { token: seller.token },
    )
  ).expect(201).body as { id: string; trialDays: number | null };
}

const email = (name = 'buyer') => `${name}-${uniqueSuffix()}@example.com`;
const startTrial = (body: Record<string, unknown>) => server.pay.post('/api/checkout/trials', body);
const verify = async (key: string, hwuid?: string) =>
  (await server.api.post('/licenses/verify', { key, ...(hwuid ? { hwuid } : {}) })).expect(200).body;

async function licenseByKey(seller: SellerWithApp, key: string) {
  const list = (
    await server.api.get(`/apps/${seller.appId}/licenses?key=${encodeURIComponent(key)}`, {
      token: seller.token,
    })
  ).expect(200).body;
  assert.equal(list.total, 1);
  return list.licenses[0];
}

async function devicesOf(seller: SellerWithApp, licenseId: string) {
  const res = await server.api.get(`/apps/${seller.appId}/licenses/${licenseId}/devices`, {
    token: seller.token,
  });
  return (res.expect(200).body.devices as { hwuid: string }[]).map((d) => d.hwuid);
}

const licenseCount = async (productId: string) =>
  Number(
    (
      await server.db
        .selectFrom('licenses')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('product_id', '=', productId)
        .executeTakeFirstOrThrow()
    ).n,
  );

const formPost = (path: string, form: Record<string, string>) =>
  fetch(`${server.service.payUrl}${path}`, {
    method: 'POST',
    body: new URLSearchParams(form),
    redirect: 'manual',
  });

describe('starting a trial', () => {
  test('the JSON route issues a trial license bound to the device, verifying as TRIAL until its end', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email();
    const started = (await startTrial({ productId: product.id, email: buyer, hwuid: 'pc-1' })).expect(
      201,
    ).body;
    const endsAt = new Date(clock.now().getTime() + 14 * DAY).toISOString();
    assert.deepEqual(
      { ...started, licenseKey: typeof started.licenseKey },
      {
        licenseKey: 'string',
        productId: product.id,
        email: buyer,
        status: 'TRIAL',
        expiresAt: endsAt,
        trialDays: 14,
        hwBound: true,
      },
    );

    const result = await verify(started.licenseKey, 'pc-1');
    assert.equal(result.valid, true);
    assert.equal(result.status, 'TRIAL');
    assert.equal(result.hw_bound, true);
    assert.equal(new Date(result.expiresAt).getTime(), new Date(endsAt).setUTCMilliseconds(0));
    const claims = JSON.parse(Buffer.from(result.license_token.split('.')[1], 'base64url').toString());
    assert.equal(claims.status, 'TRIAL');

    const license = await licenseByKey(seller, started.licenseKey);
    assert.equal(license.status, 'trial');
    assert.equal(license.trialEndsAt, endsAt);
    assert.equal(license.convertedAt, null);
    assert.equal(license.maxDevices, 1);
    assert.deepEqual(await devicesOf(seller, license.id), ['pc-1']);
    // A trial is one device: another is refused, and a verify without a device is asked for one.
    assert.equal((await verify(started.licenseKey, 'pc-2')).code, 'device_limit_reached');
    assert.equal((await verify(started.licenseKey)).code, 'hwuid_required');

    const created = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.created',
    );
    assert.deepEqual(
      created.map((e) => [e.data.licenseKey, e.data.status, e.data.expiresAt]),
      [[started.licenseKey, 'trial', endsAt]],
    );
    // The seller's own filters know the status.
    const listed = (
      await server.api.get(`/apps/${seller.appId}/licenses?status=trial`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      listed.licenses.map((l: { key: string }) => l.key),
      [started.licenseKey],
    );
  });

  test('the checkout page offers the trial and its form shows the key, carrying the page’s hwuid', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller, { trialDays: 7 });
    const page = await fetch(`${server.service.payUrl}/checkout/${product.id}?hwuid=laptop-7`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Start your 7-day free trial/);
    assert.match(html, new RegExp(`action="/checkout/${product.id}/trial"`));
    assert.match(html, /name="hwuid" value="laptop-7"/);

    const buyer = email('form');
    const res = await formPost(`/checkout/${product.id}/trial`, { email: buyer, hwuid: 'laptop-7' });
    assert.equal(res.status, 200);
    const done = await res.text();
    const key = /id="license-key" class="license" readonly value="([^"]+)"/.exec(done)?.[1];
    assert.ok(key, 'the trial key is on the page');
    assert.match(done, /free trial has started/);
    const license = await licenseByKey(seller, key);
    assert.equal(license.status, 'trial');
    assert.equal(license.email, buyer);
    assert.deepEqual(await devicesOf(seller, license.id), ['laptop-7']);

    // The same e-mail again: the form comes back saying why, and nothing is issued.
    const again = await formPost(`/checkout/${product.id}/trial`, { email: buyer.toUpperCase() });
    assert.equal(again.status, 409);
    assert.match(await again.text(), /already had a trial/);
    const bad = await formPost(`/checkout/${product.id}/trial`, { email: 'not-an-address' });
    assert.equal(bad.status, 422);
    assert.equal(await licenseCount(product.id), 1);
  });

  test('mails the trial key to the buyer through the outbox', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('mail');
    const { licenseKey } = (await startTrial({ productId: product.id, email: buyer })).expect(201).body;
    const queued = await server.db
      .selectFrom('notifications')
      .select(['kind', 'to_email'])
      .where(sql<string>`data->>'licenseKey'`, '=', licenseKey)
      .execute();
    assert.deepEqual(queued, [{ kind: 'trial.buyer', to_email: buyer }]);
    await server.service.modules.notificationWorker.runOnce();
    const mail = sink.messages.find((m) => m.to.includes(buyer));
    assert.ok(mail, 'the buyer got a message');
    assert.match(mail.raw, /Subject: Your free trial of Photo Tool/);
    assert.ok(mail.raw.includes(licenseKey), 'the message carries the key');
  });
});

describe('one trial per e-mail and per device', () => {
  test('a second trial for the same e-mail (any case) or the same device is refused with 409 and issues nothing', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email();
    (await startTrial({ productId: product.id, email: buyer, hwuid: 'pc-a' })).expect(201);

    const sameEmail = assertError(
      await startTrial({ productId: product.id, email: ` ${buyer.toUpperCase()}`.trim(), hwuid: 'pc-b' }),
      409,
      'trial_already_used',
    );
    assert.deepEqual(sameEmail.details?.[0]?.field, 'email');
    const sameDevice = assertError(
      await startTrial({ productId: product.id, email: email('other'), hwuid: 'pc-a' }),
      409,
      'trial_already_used',
    );
    assert.equal(sameDevice.details?.[0]?.field, 'hwuid');
    assert.equal(await licenseCount(product.id), 1);
    // The refused device left no claim behind: pc-b is still free for a trial.
    (await startTrial({ productId: product.id, email: email('third'), hwuid: 'pc-b' })).expect(201);
  });

  test('a device that had a trial cannot be activated on another trial of the product', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const first = (await startTrial({ productId: product.id, email: email(), hwuid: 'rig-1' })).expect(
      201,
    ).body;
    // A new e-mail without a device gets a trial, but the used device cannot take it.
    const second = (await startTrial({ productId: product.id, email: email('new') })).expect(201).body;
    const refused = await verify(second.licenseKey, 'rig-1');
    assert.equal(refused.valid, false);
    assert.equal(refused.code, 'trial_already_used');
    assert.equal(refused.license_token, undefined);
    const license = await licenseByKey(seller, second.licenseKey);
    assert.deepEqual(await devicesOf(seller, license.id), []);
    // Its own license still works, and the second trial takes a fresh device.
    assert.equal((await verify(first.licenseKey, 'rig-1')).valid, true);
    assert.equal((await verify(second.licenseKey, 'rig-2')).status, 'TRIAL');
    assert.equal((await verify(second.licenseKey, 'rig-2')).valid, true);

    // Released from its trial and refused there for want of a place, rig-1 still had its trial.
    const firstLicense = await licenseByKey(seller, first.licenseKey);
    (
      await server.api.delete(`/apps/${seller.appId}/licenses/${firstLicense.id}/devices/rig-1`, {
        token: seller.token,
      })
    ).expect(204);
    assert.equal((await verify(first.licenseKey, 'rig-9')).valid, true);
    assert.equal((await verify(first.licenseKey, 'rig-1')).code, 'device_limit_reached');
    const third = (await startTrial({ productId: product.id, email: email('third') })).expect(201).body;
    assert.equal((await verify(third.licenseKey, 'rig-1')).code, 'trial_already_used');
  });

  test('a buyer who already holds a paid license of the product gets 409 license_already_owned', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('owner');
    await buyWithSandbox(server, product.id, buyer);
    const refused = assertError(
      await startTrial({ productId: product.id, email: buyer }),
      409,
      'license_already_owned',
    );
    assert.equal(refused.details?.[0]?.field, 'email');
    assert.equal(await licenseCount(product.id), 1);
  });

  test('trials of different sellers’ products are independent, and each license is its own seller’s', async () => {
    const [one, two] = [await sellerWithApp(server), await sellerWithApp(server)];
    const [p1, p2] = [await trialProduct(one), await trialProduct(two)];
    const buyer = email();
    const a = (await startTrial({ productId: p1.id, email: buyer, hwuid: 'shared-pc' })).expect(201).body;
    const b = (await startTrial({ productId: p2.id, email: buyer, hwuid: 'shared-pc' })).expect(201).body;
    assert.equal((await licenseByKey(one, a.licenseKey)).productId, p1.id);
    assert.equal((await licenseByKey(two, b.licenseKey)).productId, p2.id);
    // Neither seller sees the other's trial.
    const foreign = (
      await server.api.get(`/apps/${one.appId}/licenses?key=${encodeURIComponent(b.licenseKey)}`, {
        token: one.token,
      })
    ).expect(200).body;
    assert.equal(foreign.total, 0);
    const created = (await eventsForUser(server.db, one.user.id)).filter((e) => e.type === 'license.created');
    assert.deepEqual(
      created.map((e) => e.data.licenseKey),
      [a.licenseKey],
    );
  });
});

describe('refusals', () => {
  test('bad input answers 400 naming the field and issues nothing', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    for (const [body, field] of [
      [{ productId: product.id, email: 'nope' }, 'email'],
      [{ productId: product.id }, 'email'],
      [{ productId: 'not-a-uuid', email: email() }, 'productId'],
      [{ productId: product.id, email: email(), hwuid: '   ' }, 'hwuid'],
      [{ productId: product.id, email: email(), hwuid: 'x'.repeat(201) }, 'hwuid'],
      [{ productId: product.id, email: email(), extra: 1 }, 'extra'],
    ] as const) {
      const error = assertError(await startTrial(body), 400, 'validation_failed');
      assert.ok(
        error.details?.some((d) => d.field === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(error.details)}`,
      );
    }
    assert.equal(await licenseCount(product.id), 0);
  });

  test('a product without a trial, an inactive one and an unknown one start none', async () => {
    const seller = await sellerWithApp(server);
    const plain = await trialProduct(seller, { trialDays: null });
    assert.equal(plain.trialDays, null);
    assertError(await startTrial({ productId: plain.id, email: email() }), 409, 'product_unavailable');
    const page = await (await fetch(`${server.service.payUrl}/checkout/${plain.id}`)).text();
    assert.doesNotMatch(page, /free trial/);
    assert.equal((await formPost(`/checkout/${plain.id}/trial`, { email: email() })).status, 404);

    const paused = await trialProduct(seller, { active: false });
    assertError(await startTrial({ productId: paused.id, email: email() }), 409, 'product_unavailable');
    assert.equal((await formPost(`/checkout/${paused.id}/trial`, { email: email() })).status, 404);
    assertError(
      await startTrial({ productId: '00000000-0000-4000-8000-000000000000', email: email() }),
      404,
      'not_found',
    );
    assert.equal((await licenseCount(plain.id)) + (await licenseCount(paused.id)), 0);
  });

  test('trialDays is 1 to 365 or null, and only license and subscription products offer one', async () => {
    const seller = await sellerWithApp(server);
    for (const trialDays of [0, 366, 1.5, '7']) {
      const res = await server.api.post(
        '/products',
        { appId: seller.appId, name: 'X', price: 1, currency: 'USD', trialDays },
        { token: seller.token },
      );
      assert.equal(assertError(res, 400, 'validation_failed').details?.[0]?.field, 'trialDays');
    }
    const api = await server.api.post(
      '/products',
      { appId: seller.appId, name: 'X', price: 1, currency: 'USD', productType: 'api_access', trialDays: 7 },
      { token: seller.token },
    );
    assert.equal(assertError(api, 400, 'validation_failed').details?.[0]?.field, 'trialDays');
    const product = await trialProduct(seller, { trialDays: 30 });
    assert.equal(product.trialDays, 30);
    const patched = await server.api.patch(
      `/products/${product.id}`,
      { trialDays: 3 },
      { token: seller.token },
    );
    assert.equal(patched.expect(200).body.trialDays, 3);
    const moved = await server.api.patch(
      `/products/${product.id}`,
      { productType: 'api_access' },
      { token: seller.token },
    );
    assert.equal(assertError(moved, 400, 'validation_failed').details?.[0]?.field, 'trialDays');
    const replaced = await server.api.put(
      `/products/${product.id}`,
      { name: 'X', price: 1, currency: 'USD' },
      { token: seller.token },
    );
    assert.equal(replaced.expect(200).body.trialDays, null);
  });
});

describe('the end of a trial', () => {
  test('after its end a trial verifies as EXPIRED and the expiry job marks it with license.expired', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller, { trialDays: 3 });
    const { licenseKey } = (
      await startTrial({ productId: product.id, email: email(), hwuid: 'pc-x' })
    ).expect(201).body;
    clock.advance(3 * DAY + 1000);
    const ended = await verify(licenseKey, 'pc-x');
    assert.equal(ended.valid, false);
    assert.equal(ended.status, 'EXPIRED');
    assert.equal(ended.code, 'license_expired');
    assert.ok((await server.service.modules.licenses.expireDue()) >= 1);
    const license = await licenseByKey(seller, licenseKey);
    assert.equal(license.status, 'expired');
    const expired = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.expired',
    );
    assert.deepEqual(
      expired.map((e) => [e.data.licenseKey, e.data.status]),
      [[licenseKey, 'expired']],
    );
  });

  test('suspending a trial stops it and reinstating gives back the trial', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const { licenseKey } = (
      await startTrial({ productId: product.id, email: email(), hwuid: 'pc-s' })
    ).expect(201).body;
    const license = await licenseByKey(seller, licenseKey);
    const base = `/apps/${seller.appId}/licenses/${license.id}`;
    assert.equal(
      (await server.api.post(`${base}/suspend`, {}, { token: seller.token })).expect(200).body.status,
      'suspended',
    );
    assert.equal((await verify(licenseKey, 'pc-s')).code, 'license_suspended');
    assert.equal(
      (await server.api.post(`${base}/reinstate`, {}, { token: seller.token })).expect(200).body.status,
      'trial',
    );
    assert.equal((await verify(licenseKey, 'pc-s')).status, 'TRIAL');
    assert.equal(
      (await server.api.post(`${base}/revoke`, {}, { token: seller.token })).expect(200).body.status,
      'revoked',
    );
    assert.equal((await verify(licenseKey, 'pc-s')).code, 'license_revoked');
  });
});

describe('conversion on payment', () => {
  test('paying with the trial’s e-mail makes the trial the paid license: same key and devices, license.updated', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('convert');
    const trial = (await startTrial({ productId: product.id, email: buyer, hwuid: 'desk-1' })).expect(
      201,
    ).body;
    const before = await licenseByKey(seller, trial.licenseKey);

    const { paid } = await buyWithSandbox(server, product.id, buyer.toUpperCase());
    assert.equal(paid.transactionStatus, 'paid');
    assert.equal(paid.licenseKey, trial.licenseKey);

    const after = await licenseByKey(seller, trial.licenseKey);
    assert.equal(after.id, before.id);
    assert.equal(after.status, 'active');
    assert.equal(after.expiresAt, null, 'a one-time purchase is perpetual');
    assert.equal(after.maxDevices, null);
    assert.equal(after.trialEndsAt, before.trialEndsAt);
    assert.equal(after.convertedAt, clock.now().toISOString());
    assert.deepEqual(await devicesOf(seller, after.id), ['desk-1']);
    const listed = (
      await server.api.get(`/orders?email=${encodeURIComponent(buyer)}`, { token: seller.token })
    ).expect(200).body.orders[0];
    const order = (await server.api.get(`/orders/${listed.id}`, { token: seller.token })).expect(200).body;
    assert.equal(order.licenseId, after.id);

    // Verification sees the change at once (the cached TRIAL answer was dropped).
    const verified = await verify(trial.licenseKey, 'desk-1');
    assert.equal(verified.status, 'ACTIVE');
    assert.equal(verified.expiresAt, null);
    assert.equal((await verify(trial.licenseKey, 'desk-2')).valid, true, 'the trial device limit is gone');

    const types = (await eventsForUser(server.db, seller.user.id))
      .filter((e) => e.type.startsWith('license.'))
      .map((e) => [e.type, e.data.status]);
    assert.deepEqual(types, [
      ['license.created', 'trial'],
      ['license.updated', 'active'],
    ]);
    assert.equal(await licenseCount(product.id), 1);
    // A second purchase is a second license.
    const { paid: again } = await buyWithSandbox(server, product.id, buyer);
    assert.notEqual(again.licenseKey, trial.licenseKey);
  });

  test('a trial that ended converts too, and a subscription gives it the period’s end', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller, {
      productType: 'subscription',
      billingType: 'recurring',
      interval: 'month',
      partnerPriceIdRecurring: 'price_monthly',
      trialDays: 2,
    });
    const buyer = email('late');
    const trial = (await startTrial({ productId: product.id, email: buyer, hwuid: 'box' })).expect(201).body;
    clock.advance(5 * DAY);
    await server.service.modules.licenses.expireDue();
    assert.equal((await licenseByKey(seller, trial.licenseKey)).status, 'expired');
    const { paid } = await buyWithSandbox(server, product.id, buyer);
    assert.equal(paid.licenseKey, trial.licenseKey);
    const license = await licenseByKey(seller, trial.licenseKey);
    assert.equal(license.status, 'active');
    const periodEnd = new Date(clock.now());
    periodEnd.setUTCMonth(periodEnd.getUTCMonth() + 1);
    assert.equal(license.expiresAt, periodEnd.toISOString());
    assert.equal((await verify(trial.licenseKey, 'box')).status, 'ACTIVE');
  });

  test('a confirm and a repeated confirm racing convert once', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('race');
    const trial = (await startTrial({ productId: product.id, email: buyer })).expect(201).body;
    const intent = (
      await server.api.post('/stripe/create-payment-intent', { productId: product.id, email: buyer })
    ).expect(201).body;
    const confirm = () =>
      server.api.post('/stripe/confirm-payment', {
        paymentIntentId: intent.paymentIntentId,
        clientSecret: intent.clientSecret,
        testCard: '4242424242424242',
      });
    const answers = await Promise.all([confirm(), confirm(), confirm()]);
    for (const answer of answers) assert.equal(answer.expect(200).body.transactionStatus, 'paid');
    assert.equal(await licenseCount(product.id), 1);
    const updates = (await eventsForUser(server.db, seller.user.id)).filter(
      (e) => e.type === 'license.updated',
    );
    assert.equal(updates.length, 1);
    assert.equal((await licenseByKey(seller, trial.licenseKey)).status, 'active');
  });
});
