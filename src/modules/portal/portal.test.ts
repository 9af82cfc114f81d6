import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createOfflineActivationRequest,
  type JsonWebKeySet,
  verifyLicenseFile,
} from '../../../packages/client/src/index.js';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { buyWithSandbox, createMonthlyProduct } from '../../testing/purchases.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { type SmtpSink, startSmtpSink } from '../../testing/smtp-sink.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { LINK_MINUTES, LINKS_PER_ADDRESS_PER_HOUR } from './index.js';

/**
 * The buyer portal over HTTP as a browser without JavaScript uses it: forms, redirects and the
 * session cookie, with the sign-in link read from the mail the SMTP sink received.
 */
let server: TestServer;
let sink: SmtpSink;
let clock: TestClock;
let receiver: Receiver;
let keySet: JsonWebKeySet;
const logLines: string[] = [];

before(async () => {
  sink = await startSmtpSink();
  receiver = await startReceiver();
  clock = testClock(new Date());
  // Runs the mail and webhook workers, so it owns its database.
  server = await startTestServer(
    { SMTP_URL: sink.url, LOG_LEVEL: 'info', USER_TOKEN_TTL: '2592000' },
    { clock, logLines, ownDatabase: true },
  );
  keySet = (await server.api.get('/licenses/jwks')).expect(200).body;
});
after(async () => {
  await server.stop();
  await sink.close();
  await receiver.close();
});

const newBuyer = () => `Buyer-${uniqueSuffix()}@Example.com`;
const url = (path: string) => `${server.service.payUrl}${path}`;

function post(path: string, form: Record<string, string>, cookie?: string) {
  return fetch(url(path), {
    method: 'POST',
    body: new URLSearchParams(form),
    headers: cookie ? { cookie } : {},
    redirect: 'manual',
  });
}
const get = (path: string, cookie?: string) =>
  fetch(url(path), { headers: cookie ? { cookie } : {}, redirect: 'manual' });

/** The sign-in links mailed to an address so far (sends what is queued first). */
async function mailedLinks(email: string): Promise<string[]> {
  await server.service.modules.notificationWorker.runOnce();
  return sink.messages
    .filter((m) => m.to.includes(email.toLowerCase()))
    .map((m) => m.raw.replace(/=\r\n/g, ''))
    .flatMap((raw) => /\/portal\/sign-in\/([A-Za-z0-9_-]{43})/.exec(raw)?.[1] ?? []);
}

async function requestLink(email: string): Promise<string> {
  const before = (await mailedLinks(email)).length;
  const res = await post('/portal/sign-in', { email });
  assert.equal(res.status, 200, await res.text());
  const links = await mailedLinks(email);
  assert.equal(links.length, before + 1, 'one new link was mailed');
  return links.at(-1) as string;
}

interface Buyer {
  cookie: string;
  page(): Promise<string>;
  csrf(): Promise<string>;
}

async function signIn(email: string): Promise<Buyer> {
  const token = await requestLink(email);
  const res = await post(`/portal/sign-in/${token}`, {});
  assert.equal(res.status, 303, await res.text());
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
  assert.match(cookie, /^portal_session=[A-Za-z0-9_-]{43}$/);
  const page = async () => {
    const answer = await get('/portal', cookie);
    assert.equal(answer.status, 200);
    return answer.text();
  };
  return {
    cookie,
    page,
    csrf: async () => /name="csrf" value="([^"]+)"/.exec(await page())?.[1] as string,
  };
}

async function product(seller: SellerWithApp, name: string, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name, price: 12.5, currency: 'EUR', ...extra },
      { token: seller.token },
    )
  ).expect(201).body as { id: string };
}

const verify = async (key: string, hwuid: string) =>
  (await server.api.post('/licenses/verify', { key, hwuid })).expect(200).body;

describe('signing in with a link by e-mail', () => {
  test('a buyer asks for a link, opens it from the mail and sees their purchases', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const item = await product(seller, `Photo Tool ${uniqueSuffix()}`);
    const { paid } = await buyWithSandbox(server, item.id, email.toLowerCase());

    const form = await get('/portal');
    assert.equal(form.status, 200);
    assert.match(await form.text(), /name="email"/);
    const sent = await post('/portal/sign-in', { email });
    assert.equal(sent.status, 200);
    assert.match(await sent.text(), /Check your e-mail/);
    const headers: [string, string][] = [
      ['cache-control', 'no-store'],
      ['x-content-type-options', 'nosniff'],
      ['referrer-policy', 'no-referrer'],
    ];
    for (const [name, value] of headers) assert.equal(sent.headers.get(name), value);
    assert.match(sent.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.doesNotMatch(sent.headers.get('content-security-policy') ?? '', /script-src/);

    await server.service.modules.notificationWorker.runOnce();
    const mail = sink.messages.filter((m) => m.to.includes(email.toLowerCase()));
    assert.equal(mail.length, 1);
    assert.match(mail[0]?.raw ?? '', /Subject: Your sign-in link/);
    const [token] = await mailedLinks(email);
    assert.ok(token);
    assert.ok(
      (mail[0]?.raw ?? '')
        .replace(/=\r\n/g, '')
        .includes(`${server.config.payPublicUrl}/portal/sign-in/${token}`),
    );

    // Opening the link (as a mail scanner would) shows a button and does not use it up.
    for (let i = 0; i < 2; i++) {
      const opened = await get(`/portal/sign-in/${token}`);
      assert.equal(opened.status, 200);
      assert.match(await opened.text(), /id="confirm-sign-in"/);
    }
    const signedIn = await post(`/portal/sign-in/${token}`, {});
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.headers.get('location'), '/portal');
    const setCookie = signedIn.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Lax/);
    assert.match(setCookie, /Path=\/portal/);
    assert.match(setCookie, /Max-Age=43200/);
    assert.doesNotMatch(setCookie, /Secure/, 'the test host is plain http');

    const cookie = setCookie.split(';')[0] as string;
    const home = await (await get('/portal', cookie)).text();
    assert.ok(home.includes(paid.licenseKey), 'the license key');
    assert.ok(home.includes(item.id) === false, 'no product id');
    assert.match(home, /Photo Tool/);
    assert.match(home, /€12\.50/);
    assert.match(home, /Paid/);
    assert.ok(home.includes(email.toLowerCase()), 'signed in as the buyer');
  });

  test('a link signs in once: a second use and two clicks at once give one session', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    await issueLicense(server, seller, { email });
    const token = await requestLink(email);
    assert.equal((await post(`/portal/sign-in/${token}`, {})).status, 303);
    const again = await post(`/portal/sign-in/${token}`, {});
    assert.equal(again.status, 400);
    assert.match(await again.text(), /This link no longer works/);
    assert.equal(again.headers.get('set-cookie'), null);
    assert.equal((await get(`/portal/sign-in/${token}`)).status, 400);

    const raced = await requestLink(email);
    const answers = await Promise.all(Array.from({ length: 4 }, () => post(`/portal/sign-in/${raced}`, {})));
    assert.deepEqual(answers.map((a) => a.status).sort(), [303, 400, 400, 400]);
  });

  test(`a link expires ${LINK_MINUTES} minutes after it was asked for`, async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    await issueLicense(server, seller, { email });
    const token = await requestLink(email);
    clock.advance(LINK_MINUTES * 60_000 - 1000);
    assert.equal((await get(`/portal/sign-in/${token}`)).status, 200, 'still usable just before');
    clock.advance(2000);
    const expired = await get(`/portal/sign-in/${token}`);
    assert.equal(expired.status, 400);
    assert.match(await expired.text(), /Get a new link/);
    assert.equal((await post(`/portal/sign-in/${token}`, {})).status, 400);
    assert.equal((await post('/portal/sign-in/not-a-token-of-ours', {})).status, 400);
  });

  test('the hourly purge forgets links a day after they ended, with their address', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    await issueLicense(server, seller, { email });
    await requestLink(email);
    const held = () =>
      server.service.modules.database.db
        .selectFrom('portal_sign_in_links')
        .select('token_hash')
        .where('email', '=', email.toLowerCase())
        .execute();
    await server.service.modules.portal.purgeEnded();
    assert.equal((await held()).length, 1, 'a live link stays');
    clock.advance(LINK_MINUTES * 60_000 + 86_400_000);
    assert.ok((await server.service.modules.portal.purgeEnded()) >= 1);
    assert.deepEqual(await held(), []);
  });

  test('an address without purchases gets the same answer and no mail', async () => {
    const seller = await sellerWithApp(server);
    const customer = newBuyer();
    await issueLicense(server, seller, { email: customer });
    const stranger = newBuyer();
    const answers = await Promise.all([
      post('/portal/sign-in', { email: customer }),
      post('/portal/sign-in', { email: stranger }),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    const [known, unknown] = await Promise.all(answers.map((a) => a.text()));
    assert.equal(unknown, known, 'the same page, byte for byte');
    assert.equal((await mailedLinks(customer)).length, 1);
    assert.equal(sink.messages.filter((m) => m.to.includes(stranger.toLowerCase())).length, 0);
    const rows = await server.db
      .selectFrom('portal_sign_in_links')
      .select('token_hash')
      .where('email', '=', stranger.toLowerCase())
      .execute();
    assert.equal(rows.length, 0);
  });

  test('a malformed address shows the form again', async () => {
    const res = await post('/portal/sign-in', { email: 'not an address' });
    assert.equal(res.status, 422);
    assert.match(await res.text(), /Enter the e-mail address you bought with/);
  });

  test(`the ${LINKS_PER_ADDRESS_PER_HOUR + 1}th link asked for one address within an hour answers 429`, async () => {
    const email = newBuyer();
    for (let i = 0; i < LINKS_PER_ADDRESS_PER_HOUR; i++)
      assert.equal(
        (await post('/portal/sign-in', { email: i % 2 ? email : email.toUpperCase() })).status,
        200,
      );
    const limited = await post('/portal/sign-in', { email });
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal((await post('/portal/sign-in', { email: newBuyer() })).status, 200, 'other addresses go on');
  });

  test('signing out forgets the session; its cookie opens nothing any more', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email });
    const buyer = await signIn(email);
    const csrf = await buyer.csrf();
    const out = await post('/portal/sign-out', { csrf }, buyer.cookie);
    assert.equal(out.status, 303);
    assert.match(out.headers.get('set-cookie') ?? '', /portal_session=; Path=\/portal; Max-Age=0/);
    const after = await (await get('/portal', buyer.cookie)).text();
    assert.ok(!after.includes(license.key));
    assert.match(after, /name="email"/);
    const refused = await post(
      `/portal/licenses/${license.id}/devices/release`,
      { csrf, hwuid: 'x' },
      buyer.cookie,
    );
    assert.equal(refused.status, 401);
  });

  test('a session ends after 12 hours', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email });
    const buyer = await signIn(email);
    assert.ok((await buyer.page()).includes(license.key));
    clock.advance(12 * 3_600_000 + 1000);
    assert.ok(!(await (await get('/portal', buyer.cookie)).text()).includes(license.key));
  });

  test('the logs never carry a sign-in token or a session token', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    await issueLicense(server, seller, { email });
    const from = logLines.length;
    const token = await requestLink(email);
    await get(`/portal/sign-in/${token}`);
    const res = await post(`/portal/sign-in/${token}`, {});
    const session = /portal_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] as string;
    await post(`/portal/sign-in/${token}`, {});
    const lines = logLines.slice(from).join('\n');
    assert.ok(lines.includes('/portal/sign-in/:token'), 'the route pattern is logged instead');
    assert.ok(!lines.includes(token));
    assert.ok(!lines.includes(session));
  });
});

describe('what a signed-in buyer sees', () => {
  test('only their own licenses, orders and subscriptions, across sellers, and nothing of the sellers', async () => {
    const [sellerA, sellerB] = [await sellerWithApp(server), await sellerWithApp(server)];
    const [alice, bob] = [newBuyer(), newBuyer()];
    const itemA = await product(sellerA, 'Alpha Editor');
    const monthly = await createMonthlyProduct(server, sellerB.appId, sellerB.token, { name: 'Beta Cloud' });
    const aliceBought = (await buyWithSandbox(server, itemA.id, alice)).paid.licenseKey;
    const aliceMonthly = (await buyWithSandbox(server, monthly.id, alice)).paid.licenseKey;
    const aliceIssued = await issueLicense(server, sellerB, {
      email: alice.toUpperCase(),
      metadata: { internal: 'seller-note-xyz' },
    });
    const bobBought = (await buyWithSandbox(server, itemA.id, bob)).paid.licenseKey;
    const bobIssued = await issueLicense(server, sellerA, { email: bob });
    await issueLicense(server, sellerA, {});

    const page = await (await signIn(alice)).page();
    for (const key of [aliceBought, aliceMonthly, aliceIssued.key]) assert.ok(page.includes(key), key);
    for (const key of [bobBought, bobIssued.key]) assert.ok(!page.includes(key), 'not another buyer’s');
    assert.ok(!page.includes(bob.toLowerCase()));
    for (const secret of [
      sellerA.user.email,
      sellerB.user.email,
      sellerA.user.id,
      sellerB.user.id,
      sellerA.appId,
      sellerB.appId,
      itemA.id,
      monthly.id,
      'seller-note-xyz',
    ])
      assert.ok(!page.includes(secret), `no ${secret}`);
    assert.match(page, /Alpha Editor/);
    assert.match(page, /Beta Cloud/);
    assert.match(page, /Renews /);
    assert.match(page, /Cancel subscription/);
    assert.equal((page.match(/class="item license-item"/g) ?? []).length, 3);
  });
});

describe('what a signed-in buyer can do', () => {
  test('releasing a device frees its place: a new device then verifies', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email, maxDevices: 1 });
    assert.equal((await verify(license.key, 'old-laptop')).valid, true);
    assert.equal((await verify(license.key, 'new-laptop')).code, 'device_limit_reached');

    const buyer = await signIn(email);
    const page = await buyer.page();
    assert.match(page, /old-laptop/);
    assert.match(page, /1 of 1 devices/);
    const released = await post(
      `/portal/licenses/${license.id}/devices/release`,
      { csrf: await buyer.csrf(), hwuid: 'old-laptop' },
      buyer.cookie,
    );
    assert.equal(released.status, 303);
    assert.equal(released.headers.get('location'), '/portal?done=device-released');
    const after = await (await get('/portal?done=device-released', buyer.cookie)).text();
    assert.match(after, /The device was released/);
    assert.doesNotMatch(after, /old-laptop/);
    assert.equal((await verify(license.key, 'new-laptop')).valid, true);
    const devices = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/devices`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(
      devices.devices.map((d: { hwuid: string }) => d.hwuid),
      ['new-laptop'],
    );
    const again = await post(
      `/portal/licenses/${license.id}/devices/release`,
      { csrf: await buyer.csrf(), hwuid: 'old-laptop' },
      buyer.cookie,
    );
    assert.equal(again.status, 404);
  });

  test('a license file for an offline machine downloads and checks with the SDK', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email, maxDevices: 1 });
    const buyer = await signIn(email);
    const written = createOfflineActivationRequest({
      key: license.key,
      hwuid: 'air-gapped-1',
      appId: seller.appId,
    });
    const res = await post(
      `/portal/licenses/${license.id}/license-file`,
      { csrf: await buyer.csrf(), request: written.request },
      buyer.cookie,
    );
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(
      res.headers.get('content-disposition') ?? '',
      /^attachment; filename="license-[0-9a-f]{8}\.lic"$/,
    );
    const claims = await verifyLicenseFile(await res.text(), {
      keySet,
      appId: seller.appId,
      hwuid: 'air-gapped-1',
      nonce: written.nonce,
      now: () => clock.now(),
    });
    assert.equal(claims.sub, license.id);
    assert.match(await buyer.page(), /air-gapped-1/);

    const full = await post(
      `/portal/licenses/${license.id}/license-file`,
      {
        csrf: await buyer.csrf(),
        request: createOfflineActivationRequest({ key: license.key, hwuid: 'air-gapped-2' }).request,
      },
      buyer.cookie,
    );
    assert.equal(full.status, 409);
    assert.match(await full.text(), /Every device place of this license is taken/);
    const garbled = await post(
      `/portal/licenses/${license.id}/license-file`,
      { csrf: await buyer.csrf(), request: 'this is not a request' },
      buyer.cookie,
    );
    assert.equal(garbled.status, 422);
    assert.match(await garbled.text(), /not an activation request/);
    const other = await issueLicense(server, seller, { email: newBuyer() });
    const foreign = await post(
      `/portal/licenses/${license.id}/license-file`,
      {
        csrf: await buyer.csrf(),
        request: createOfflineActivationRequest({ key: other.key, hwuid: 'air-gapped-3' }).request,
      },
      buyer.cookie,
    );
    assert.equal(foreign.status, 422, 'a request for another key is not taken');
    assert.match(await foreign.text(), /for another license key/);
  });

  test('canceling a subscription cancels it and tells the seller’s merchant webhook', async () => {
    const seller = await sellerWithApp(server);
    const tag = uniqueSuffix();
    const monthly = await createMonthlyProduct(server, seller.appId, seller.token, {
      merchantWebhookUrl: `${receiver.url}/merchant/${tag}`,
    });
    const email = newBuyer();
    await buyWithSandbox(server, monthly.id, email);
    const [subscription] = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body
      .subscriptions;
    const buyer = await signIn(email);
    const canceled = await post(
      `/portal/subscriptions/${subscription.id}/cancel`,
      { csrf: await buyer.csrf() },
      buyer.cookie,
    );
    assert.equal(canceled.status, 303);
    assert.equal(canceled.headers.get('location'), '/portal?done=subscription-canceled');
    const after = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body;
    assert.equal(after.subscriptions[0].status, 'canceled');
    assert.doesNotMatch(await buyer.page(), /Cancel subscription/);
    const twice = await post(
      `/portal/subscriptions/${subscription.id}/cancel`,
      { csrf: await buyer.csrf() },
      buyer.cookie,
    );
    assert.equal(twice.status, 409);

    await server.service.modules.deliveryWorker.runOnce();
    const events = receiver.requests.filter((r) => r.path === `/merchant/${tag}`).map((r) => r.json.type);
    assert.ok(events.includes('subscription.canceled'), events.join(', '));
  });

  test('a form without the session’s CSRF token is refused with 403 and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email, maxDevices: 1 });
    await verify(license.key, 'desk');
    const buyer = await signIn(email);
    const other = await signIn(email);
    const forms: Record<string, string>[] = [
      { hwuid: 'desk' },
      { hwuid: 'desk', csrf: 'forged' },
      { hwuid: 'desk', csrf: await other.csrf() },
    ];
    for (const form of forms) {
      const res = await post(`/portal/licenses/${license.id}/devices/release`, form, buyer.cookie);
      assert.equal(res.status, 403);
    }
    assert.equal((await post('/portal/sign-out', {}, buyer.cookie)).status, 403);
    assert.match(await buyer.page(), /desk/);
    assert.equal((await verify(license.key, 'desk')).valid, true);
  });

  test('another buyer’s license or subscription answers 404 and changes nothing', async () => {
    const seller = await sellerWithApp(server);
    const [alice, bob] = [newBuyer(), newBuyer()];
    const bobs = await issueLicense(server, seller, { email: bob, maxDevices: 1 });
    await verify(bobs.key, 'bob-pc');
    const monthly = await createMonthlyProduct(server, seller.appId, seller.token);
    await buyWithSandbox(server, monthly.id, bob);
    const [subscription] = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body
      .subscriptions;
    await issueLicense(server, seller, { email: alice });
    const buyer = await signIn(alice);
    const csrf = await buyer.csrf();
    const answers = [
      await post(`/portal/licenses/${bobs.id}/devices/release`, { csrf, hwuid: 'bob-pc' }, buyer.cookie),
      await post(
        `/portal/licenses/${bobs.id}/license-file`,
        { csrf, request: createOfflineActivationRequest({ key: bobs.key, hwuid: 'x' }).request },
        buyer.cookie,
      ),
      await post(`/portal/subscriptions/${subscription.id}/cancel`, { csrf }, buyer.cookie),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [404, 404, 404],
    );
    for (const answer of answers) assert.ok(!(await answer.text()).includes(bobs.key));
    assert.equal((await verify(bobs.key, 'bob-pc')).valid, true);
    const after = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body;
    assert.equal(after.subscriptions[0].status, 'active');
  });
});
