import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  licenseByKey as licenseByKeyOf,
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

/**
 * Free trials from the hosted checkout: starting (by e-mail or on a device), verifying, ending, and
 * the payment that replaces a trial with a new paid license.
 */
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

const licenseByKey = (seller: SellerWithApp, key: string) => licenseByKeyOf(server, seller, key);

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

const LICENSE_KEY = /[0-9A-Z]{5}(?:-[0-9A-Z]{5}){5}/g;

/** The license as its seller reads it by id (with its key). */
async function licenseById(seller: SellerWithApp, id: string) {
  return (await server.api.get(`/apps/${seller.appId}/licenses/${id}`, { token: seller.token })).expect(200)
    .body;
}

/** The license keys in the messages sent to `address` so far (the outbox is sent first). */
async function keysMailedTo(address: string): Promise<string[]> {
  await server.service.modules.notificationWorker.runOnce();
  return (
    sink.messages
      .filter((m) => m.to.includes(address))
      // Each message carries the key twice: in its text and its HTML part.
      .flatMap((m) => [...new Set(m.raw.replace(/=\r\n/g, '').match(LICENSE_KEY))])
  );
}

/** Pays on the hosted checkout page with the sandbox's good card; the key the receipt shows. */
async function buyOnPage(productId: string, buyer: string): Promise<string> {
  const paid = await formPost(`/checkout/${productId}`, {
    email: buyer,
    card: '4242424242424242',
    method: 'card',
    attempt: `attempt-${uniqueSuffix()}`,
  });
  assert.equal(paid.status, 303, await paid.clone().text());
  const receipt = await fetch(`${server.service.payUrl}${paid.headers.get('location')}`);
  assert.equal(receipt.status, 200);
  const key = /id="license-key" class="license" readonly value="([^"]+)"/.exec(await receipt.text())?.[1];
  assert.ok(key, 'the receipt shows the key');
  return key;
}

const licenseEvents = async (seller: SellerWithApp) =>
  (await eventsForUser(server.db, seller.user.id))
    .filter((e) => e.type.startsWith('license.'))
    .map((e) => [e.type, e.data.licenseKey, e.data.status]);

describe('starting a trial', () => {
  test('a trial on a device answers its key, bound to that device, verifying as TRIAL until its end', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email();
    const started = (await startTrial({ productId: product.id, email: buyer, hwuid: 'pc-1' })).expect(
      201,
    ).body;
    const endsAt = new Date(clock.now().getTime() + 14 * DAY).toISOString();
    assert.deepEqual(
      { ...started, trialId: typeof started.trialId, licenseKey: typeof started.licenseKey },
      {
        trialId: 'string',
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
    assert.equal(license.id, started.trialId);
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

  test('a trial by e-mail answers no key: the key goes to the address alone, and works on the first device', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('mailed');
    const idempotencyKey = globalThis.crypto.randomUUID();
    const send = () =>
      server.pay.post(
        '/api/checkout/trials',
        { productId: product.id, email: buyer },
        {
          headers: { 'idempotency-key': idempotencyKey },
        },
      );
    const started = (await send()).expect(201).body;
    assert.equal(started.licenseKey, null);
    assert.equal(started.hwBound, false);
    assert.equal(started.status, 'TRIAL');
    // A replay of the answer (same idempotency key) carries no key either.
    const replayed = (await send()).expect(201);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replayed.body, started);

    const [key] = await keysMailedTo(buyer);
    assert.ok(key, 'the key was mailed');
    assert.equal((await licenseById(seller, started.trialId)).key, key);
    const result = await verify(key, 'laptop-1');
    assert.equal(result.valid, true);
    assert.equal(result.status, 'TRIAL');
    assert.deepEqual(await devicesOf(seller, started.trialId), ['laptop-1']);
  });

  test('the page’s form shows the key for the device that opened it, and only “check your e-mail” without one', async () => {
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

    const other = email('by-mail');
    const mailed = await formPost(`/checkout/${product.id}/trial`, { email: other });
    assert.equal(mailed.status, 200);
    const told = await mailed.text();
    assert.match(told, /Check your e-mail/);
    assert.ok(told.includes(other), 'the page names where the key went');
    assert.equal(told.match(LICENSE_KEY), null, 'no key on the page');
    assert.equal((await keysMailedTo(other)).length, 1);

    // The same e-mail again: the form comes back saying why, and nothing is issued.
    const again = await formPost(`/checkout/${product.id}/trial`, { email: other.toUpperCase() });
    assert.equal(again.status, 409);
    assert.match(await again.text(), /already had a trial/);
    const bad = await formPost(`/checkout/${product.id}/trial`, { email: 'not-an-address' });
    assert.equal(bad.status, 422);
    assert.equal(await licenseCount(product.id), 2);
  });

  test('mails the trial key to the buyer through the outbox', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('mail');
    const { licenseKey } = (await startTrial({ productId: product.id, email: buyer, hwuid: 'pc-m' })).expect(
      201,
    ).body;
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

describe('one trial per address and per device', () => {
  test('a second trial by e-mail for the address, in any case or with a +tag, is refused with 409 and issues nothing', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const suffix = uniqueSuffix();
    (await startTrial({ productId: product.id, email: `ann-${suffix}@example.com` })).expect(201);
    for (const again of [`ANN-${suffix}@Example.com`, `ann-${suffix}+trial2@example.com`]) {
      const refused = assertError(
        await startTrial({ productId: product.id, email: again }),
        409,
        'trial_already_used',
      );
      assert.equal(refused.details?.[0]?.field, 'email');
    }
    assert.equal(await licenseCount(product.id), 1);
    // Dots are kept: a.nn@ may be someone else.
    (await startTrial({ productId: product.id, email: `a.nn-${suffix}@example.com` })).expect(201);
  });

  test('a second trial on the device is refused with 409, and a refused start leaves no claim behind', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    (await startTrial({ productId: product.id, email: email(), hwuid: 'pc-a' })).expect(201);
    const sameDevice = assertError(
      await startTrial({ productId: product.id, email: email('other'), hwuid: 'pc-a' }),
      409,
      'trial_already_used',
    );
    assert.equal(sameDevice.details?.[0]?.field, 'hwuid');
    assert.equal(await licenseCount(product.id), 1);
    (await startTrial({ productId: product.id, email: email('third'), hwuid: 'pc-b' })).expect(201);
  });

  test('a trial on a device is refused to an address that had its trial by e-mail, and does not use up the address’s trial', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const mailed = email('mailed');
    (await startTrial({ productId: product.id, email: mailed })).expect(201);
    const refused = assertError(
      await startTrial({ productId: product.id, email: mailed.replace('@', '+app@'), hwuid: 'pc-c' }),
      409,
      'trial_already_used',
    );
    assert.equal(refused.details?.[0]?.field, 'email');

    // Anyone can type any address into an app: a device trial for it leaves its owner's trial.
    const owner = email('owner');
    (await startTrial({ productId: product.id, email: owner, hwuid: 'someone-else' })).expect(201);
    const own = (await startTrial({ productId: product.id, email: owner })).expect(201).body;
    assert.equal((await keysMailedTo(owner)).length, 2);
    assert.equal((await licenseById(seller, own.trialId)).status, 'trial');
  });

  test('a device that had a trial cannot be activated on another trial of the product', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const first = (await startTrial({ productId: product.id, email: email(), hwuid: 'rig-1' })).expect(
      201,
    ).body;
    // A trial by e-mail gets its key by mail, but the used device cannot take it.
    const second = (await startTrial({ productId: product.id, email: email('new') })).expect(201).body;
    const secondKey = (await licenseById(seller, second.trialId)).key;
    const refused = await verify(secondKey, 'rig-1');
    assert.equal(refused.valid, false);
    assert.equal(refused.code, 'trial_already_used');
    assert.equal(refused.license_token, undefined);
    assert.deepEqual(await devicesOf(seller, second.trialId), []);
    // Its own license still works, and the second trial takes a fresh device.
    assert.equal((await verify(first.licenseKey, 'rig-1')).valid, true);
    assert.equal((await verify(secondKey, 'rig-2')).status, 'TRIAL');
    assert.equal((await verify(secondKey, 'rig-2')).valid, true);

    // Released from its trial and refused there for want of a place, rig-1 still had its trial.
    (
      await server.api.delete(`/apps/${seller.appId}/licenses/${first.trialId}/devices/rig-1`, {
        token: seller.token,
      })
    ).expect(204);
    assert.equal((await verify(first.licenseKey, 'rig-9')).valid, true);
    assert.equal((await verify(first.licenseKey, 'rig-1')).code, 'device_limit_reached');
    const third = (await startTrial({ productId: product.id, email: email('third') })).expect(201).body;
    const thirdKey = (await licenseById(seller, third.trialId)).key;
    assert.equal((await verify(thirdKey, 'rig-1')).code, 'trial_already_used');
  });

  test('a buyer who already holds a paid license of the product (any case, any +tag) gets 409 license_already_owned', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('owner');
    await buyWithSandbox(server, product.id, buyer);
    for (const asked of [buyer, buyer.toUpperCase().replace('@', '+TRY@')]) {
      const refused = assertError(
        await startTrial({ productId: product.id, email: asked, hwuid: `pc-${uniqueSuffix()}` }),
        409,
        'license_already_owned',
      );
      assert.equal(refused.details?.[0]?.field, 'email');
    }
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

describe('a stranger cannot hold someone else’s license', () => {
  test('a trial asked for someone else’s address by e-mail gives the asker no key, on the page or the route', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const victim = email('victim');
    const page = await formPost(`/checkout/${product.id}/trial`, { email: victim });
    assert.equal(page.status, 200);
    assert.equal((await page.text()).match(LICENSE_KEY), null);
    // Neither the route nor a +tag variant of the address gives a key or a second trial.
    const tagged = victim.replace('@', '+1@');
    assertError(await startTrial({ productId: product.id, email: tagged }), 409, 'trial_already_used');
    const other = email('colleague');
    const started = (await startTrial({ productId: product.id, email: other })).expect(201).body;
    assert.equal(started.licenseKey, null);
    assert.equal(JSON.stringify(started).match(LICENSE_KEY), null);
    // The keys went to their owners.
    assert.equal((await keysMailedTo(victim)).length, 1);
    assert.equal((await keysMailedTo(other)).length, 1);
    assert.equal((await keysMailedTo(tagged)).length, 0);
  });

  test('a stranger’s trial for someone’s address never becomes their paid license: payment issues a new key to the buyer', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const victim = email('victim');
    // The stranger's software asks for a trial on the stranger's machine in the victim's name.
    const stolen = (
      await startTrial({ productId: product.id, email: victim.replace('@', '+x@'), hwuid: 'stranger-pc' })
    ).expect(201).body;
    assert.equal((await verify(stolen.licenseKey, 'stranger-pc')).valid, true);
    // The victim's own trial is still theirs to start, by mail.
    const own = (await startTrial({ productId: product.id, email: victim })).expect(201).body;
    const [ownKey] = await keysMailedTo(victim);
    assert.ok(ownKey);
    assert.equal((await verify(ownKey, 'victim-pc')).valid, true);

    // The victim pays: the receipt shows a new key, also mailed (the product does not mail keys).
    const paidKey = await buyOnPage(product.id, victim);
    assert.ok(paidKey !== stolen.licenseKey && paidKey !== ownKey, 'a new key');
    const mailed = await keysMailedTo(victim);
    assert.deepEqual(mailed, [ownKey, paidKey]);
    const message = sink.messages
      .filter((m) => m.to.includes(victim))
      .at(-1)
      ?.raw.replace(/=\r\n/g, '');
    assert.match(message ?? '', /in place of your trial key/);

    // Both trial keys stop; the paid key is the victim's alone, on any number of devices.
    for (const [key, hwuid] of [
      [stolen.licenseKey, 'stranger-pc'],
      [ownKey, 'victim-pc'],
    ]) {
      const ended = await verify(key, hwuid);
      assert.equal(ended.valid, false);
      assert.equal(ended.code, 'license_expired');
      assert.equal(ended.license_token, undefined);
    }
    assert.equal((await verify(paidKey, 'victim-pc')).status, 'ACTIVE');
    assert.equal((await verify(paidKey, 'victim-laptop')).valid, true);
    const validate = (license: string) =>
      server.pay.post('/api/checkout/mirror/validate', { license, email: victim });
    assert.equal((await validate(paidKey)).expect(200).body.verified, true);
    assert.equal((await validate(stolen.licenseKey)).expect(200).body.verified, false);
    const paid = await licenseByKey(seller, paidKey);
    assert.equal(paid.email, victim);
    assert.equal(paid.maxDevices, null);
    // The trials' devices moved to the paid license (the stranger's included: it holds no key).
    assert.deepEqual(
      (await devicesOf(seller, paid.id)).sort(),
      ['stranger-pc', 'victim-pc', 'victim-laptop'].sort(),
    );
    for (const trialId of [stolen.trialId, own.trialId]) {
      const trial = await licenseById(seller, trialId);
      assert.equal(trial.status, 'expired');
      assert.deepEqual(await devicesOf(seller, trialId), []);
    }
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

describe('payment replaces the trial', () => {
  test('paying issues a new license with the trial’s device; the trial ends with license.expired and its key stops', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('convert');
    const trial = (
      await startTrial({ productId: product.id, email: buyer.replace('@', '+trial@'), hwuid: 'desk-1' })
    ).expect(201).body;
    assert.equal((await verify(trial.licenseKey, 'desk-1')).status, 'TRIAL');

    const { paid } = await buyWithSandbox(server, product.id, buyer.toUpperCase());
    assert.equal(paid.transactionStatus, 'paid');
    assert.notEqual(paid.licenseKey, trial.licenseKey);

    const license = await licenseByKey(seller, paid.licenseKey);
    assert.equal(license.status, 'active');
    assert.equal(license.expiresAt, null, 'a one-time purchase is perpetual');
    assert.equal(license.maxDevices, null);
    assert.equal(license.trialEndsAt, null);
    assert.deepEqual(await devicesOf(seller, license.id), ['desk-1']);
    const ended = await licenseById(seller, trial.trialId);
    assert.equal(ended.status, 'expired');
    assert.equal(ended.expiresAt, clock.now().toISOString());
    assert.equal(ended.convertedAt, clock.now().toISOString());
    const listed = (
      await server.api.get(`/orders?email=${encodeURIComponent(buyer)}`, { token: seller.token })
    ).expect(200).body.orders[0];
    const order = (await server.api.get(`/orders/${listed.id}`, { token: seller.token })).expect(200).body;
    assert.equal(order.licenseId, license.id);

    // Verification sees the change at once (the cached TRIAL answer was dropped).
    assert.equal((await verify(trial.licenseKey, 'desk-1')).code, 'license_expired');
    const verified = await verify(paid.licenseKey, 'desk-1');
    assert.equal(verified.status, 'ACTIVE');
    assert.equal(verified.hw_bound, true);
    assert.equal(verified.expiresAt, null);
    assert.equal((await verify(paid.licenseKey, 'desk-2')).valid, true, 'no trial device limit');

    assert.deepEqual(await licenseEvents(seller), [
      ['license.created', trial.licenseKey, 'trial'],
      ['license.created', paid.licenseKey, 'active'],
      ['license.expired', trial.licenseKey, 'expired'],
    ]);
    // A second purchase is a second license, and ends nothing more.
    const { paid: again } = await buyWithSandbox(server, product.id, buyer);
    assert.ok(![trial.licenseKey, paid.licenseKey].includes(again.licenseKey));
    assert.deepEqual(await devicesOf(seller, license.id), ['desk-1', 'desk-2']);
    assert.equal((await licenseEvents(seller)).length, 4);
  });

  test('a trial the seller issues by hand (trialDays) verifies as TRIAL and ends as a checkout trial does when the buyer pays', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('pilot');
    const issue = (body: Record<string, unknown>) =>
      server.api.post(`/apps/${seller.appId}/licenses`, body, { token: seller.token });
    const both = await issue({ productId: product.id, email: buyer, trialDays: 30, expiresAt: null });
    assertError(both, 400, 'validation_failed');
    assert.equal(both.body.error.details[0].field, 'trialDays');
    assertError(await issue({ trialDays: 0 }), 400, 'validation_failed');

    const pilot = (await issue({ productId: product.id, email: buyer, trialDays: 30 })).expect(201).body;
    const ends = new Date(clock.now().getTime() + 30 * 86_400_000).toISOString();
    assert.deepEqual([pilot.status, pilot.expiresAt, pilot.trialEndsAt], ['trial', ends, ends]);
    assert.equal((await verify(pilot.key, 'lab-1')).status, 'TRIAL');

    const { paid } = await buyWithSandbox(server, product.id, buyer);
    assert.notEqual(paid.licenseKey, pilot.key);
    assert.equal((await verify(pilot.key, 'lab-1')).code, 'license_expired');
    const license = await licenseByKey(seller, paid.licenseKey);
    assert.deepEqual(await devicesOf(seller, license.id), ['lab-1']);
    assert.equal((await licenseById(seller, pilot.id)).status, 'expired');
  });

  test('a trial that ended is replaced too, and a subscription gives the paid license the period’s end', async () => {
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
    assert.notEqual(paid.licenseKey, trial.licenseKey);
    const license = await licenseByKey(seller, paid.licenseKey);
    assert.equal(license.status, 'active');
    const periodEnd = new Date(clock.now());
    periodEnd.setUTCMonth(periodEnd.getUTCMonth() + 1);
    assert.equal(license.expiresAt, periodEnd.toISOString());
    assert.deepEqual(await devicesOf(seller, license.id), ['box']);
    assert.equal((await verify(paid.licenseKey, 'box')).status, 'ACTIVE');
    // Its end stays where it was: a trial that ended before the payment ended then.
    const ended = await licenseById(seller, trial.trialId);
    assert.equal(ended.expiresAt, trial.expiresAt);
    assert.equal(ended.convertedAt, clock.now().toISOString());
  });

  test('a trial a payment ended comes back as a trial if the seller extends it, never as a paid license', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('extended');
    const trial = (await startTrial({ productId: product.id, email: buyer, hwuid: 'pc-e' })).expect(201).body;
    await buyWithSandbox(server, product.id, buyer);
    const extended = (
      await server.api.patch(
        `/apps/${seller.appId}/licenses/${trial.trialId}`,
        { expiresAt: new Date(clock.now().getTime() + 3 * DAY).toISOString() },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(extended.status, 'trial');
    assert.equal(extended.maxDevices, 1);
    assert.equal((await verify(trial.licenseKey, 'pc-e')).status, 'TRIAL');
  });

  test('a suspended trial is left as the seller put it, and keeps its device', async () => {
    const seller = await sellerWithApp(server);
    const product = await trialProduct(seller);
    const buyer = email('held');
    const trial = (await startTrial({ productId: product.id, email: buyer, hwuid: 'pc-h' })).expect(201).body;
    (
      await server.api.post(
        `/apps/${seller.appId}/licenses/${trial.trialId}/suspend`,
        {},
        { token: seller.token },
      )
    ).expect(200);
    const { paid } = await buyWithSandbox(server, product.id, buyer);
    assert.equal((await licenseById(seller, trial.trialId)).status, 'suspended');
    assert.deepEqual(await devicesOf(seller, trial.trialId), ['pc-h']);
    assert.deepEqual(await devicesOf(seller, (await licenseByKey(seller, paid.licenseKey)).id), []);
  });

  test('a confirm and a repeated confirm racing issue one license and end the trial once', async () => {
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
    assert.equal(answers.filter((answer) => answer.body.licenseKey).length, 1);
    assert.equal(await licenseCount(product.id), 2);
    const types = (await licenseEvents(seller)).map(([type]) => type);
    assert.deepEqual(types, ['license.created', 'license.created', 'license.expired']);
    assert.equal((await licenseById(seller, trial.trialId)).status, 'expired');
  });
});
