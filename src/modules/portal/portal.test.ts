import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
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
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-portal-test-'));

before(async () => {
  sink = await startSmtpSink();
  receiver = await startReceiver();
  clock = testClock(new Date());
  // Runs the mail and webhook workers, so it owns its database.
  server = await startTestServer(
    { SMTP_URL: sink.url, LOG_LEVEL: 'info', USER_TOKEN_TTL: '2592000', ARTIFACT_DIR: artifactDir },
    { clock, logLines, ownDatabase: true },
  );
  keySet = (await server.api.get('/licenses/jwks')).expect(200).body;
});
after(async () => {
  await server.stop();
  await sink.close();
  await receiver.close();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

const newBuyer = () => `Buyer-${uniqueSuffix()}@Example.com`;
const url = (path: string) => `${server.service.payUrl}${path}`;

function post(
  path: string,
  form: Record<string, string>,
  cookie?: string,
  headers: Record<string, string> = {},
) {
  return fetch(url(path), {
    method: 'POST',
    body: new URLSearchParams(form),
    headers: cookie ? { cookie, ...headers } : headers,
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

  test(`a link expires ${LINK_MINUTES} minutes after it was mailed`, async () => {
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

  test('a customer and a stranger cost the form the same work: one queued notice holding no link', async () => {
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
    // What the request wrote, before any mail goes: the same for both addresses.
    const written = async (email: string) => ({
      notices: await server.db
        .selectFrom('notifications')
        .select(['kind', 'data', 'status'])
        .where('to_email', '=', email.toLowerCase())
        .execute(),
      links: await server.db
        .selectFrom('portal_sign_in_links')
        .select('token_hash')
        .where('email', '=', email.toLowerCase())
        .execute(),
    });
    const queued = { notices: [{ kind: 'portal.sign_in', data: {}, status: 'pending' }], links: [] };
    assert.deepEqual(await written(customer), queued);
    assert.deepEqual(await written(stranger), queued);
    // Sending decides: the customer gets a link, the stranger's notice goes without a mail.
    assert.equal((await mailedLinks(customer)).length, 1);
    assert.equal(sink.messages.filter((m) => m.to.includes(stranger.toLowerCase())).length, 0);
    assert.deepEqual(await written(stranger), { notices: [], links: [] });
  });

  test('the link is made when its mail is sent: no stored row holds it, and it lasts from the send', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    await issueLicense(server, seller, { email });
    assert.equal((await post('/portal/sign-in', { email })).status, 200);
    // The mail waits (an SMTP outage, a busy queue): the link's time starts when it goes.
    clock.advance(2 * LINK_MINUTES * 60_000);
    const [token] = await mailedLinks(email);
    assert.ok(token);
    const dump = JSON.stringify([
      await server.db
        .selectFrom('notifications')
        .selectAll()
        .where('to_email', '=', email.toLowerCase())
        .execute(),
      await server.db
        .selectFrom('portal_sign_in_links')
        .selectAll()
        .where('email', '=', email.toLowerCase())
        .execute(),
    ]);
    assert.ok(!dump.includes(token), 'neither the notice nor the link row holds the token');
    clock.advance(LINK_MINUTES * 60_000 - 1000);
    assert.equal((await post(`/portal/sign-in/${token}`, {})).status, 303);
  });

  test('a sign-in form sent from another site is refused with 403 and changes nothing (login CSRF)', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    await issueLicense(server, seller, { email });
    const token = await requestLink(email);
    const noticesOf = async () =>
      (
        await server.db
          .selectFrom('notifications')
          .select('id')
          .where('to_email', '=', email.toLowerCase())
          .execute()
      ).length;
    const noticesBefore = await noticesOf();
    const pay = new URL(server.service.payUrl);
    for (const headers of <Record<string, string>[]>[
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://attacker.example' },
      { origin: `${pay.protocol}//${pay.hostname}:1` },
    ]) {
      const signIn = await post(`/portal/sign-in/${token}`, {}, undefined, headers);
      assert.equal(signIn.status, 403, JSON.stringify(headers));
      assert.equal(signIn.headers.get('set-cookie'), null, 'no session is started');
      assert.match(await signIn.text(), /This form can only be sent from the portal’s own pages/);
      assert.equal((await post('/portal/sign-in', { email }, undefined, headers)).status, 403);
    }
    assert.equal(await noticesOf(), noticesBefore, 'no mail was queued');
    // The link was not used up: the portal's own page (same origin) signs in with it.
    const own = await post(`/portal/sign-in/${token}`, {}, undefined, {
      'sec-fetch-site': 'same-origin',
      origin: pay.origin,
    });
    assert.equal(own.status, 303);
    // A signed-in form sent from another site is refused too, its form token notwithstanding.
    const buyer = await signIn(email);
    const csrf = await buyer.csrf();
    const out = await post('/portal/sign-out', { csrf }, buyer.cookie, { 'sec-fetch-site': 'cross-site' });
    assert.equal(out.status, 403);
    assert.ok((await buyer.page()).includes('name="csrf"'), 'still signed in');
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

  test('each purchase under its seller’s brand, with that seller’s colour allowed by its hash', async () => {
    const [branded, plain] = [await sellerWithApp(server), await sellerWithApp(server)];
    const saved = (
      await server.api.put(
        '/brand',
        {
          displayName: 'Gamma & <Sons>',
          accentColor: '#7b1fa2',
          overlayOrigins: ['https://shop.example.com'],
        },
        { token: branded.token },
      )
    ).expect(200).body;
    const logo = await sharp({ create: { width: 90, height: 30, channels: 3, background: '#7b1fa2' } })
      .png()
      .toBuffer();
    const withLogo = (
      await server.api.put('/brand/logo', undefined, {
        token: branded.token,
        headers: { 'content-type': 'image/png' },
        raw: logo,
      })
    ).expect(200).body;
    const buyer = newBuyer();
    await buyWithSandbox(server, (await product(branded, 'Gamma Studio')).id, buyer.toLowerCase());
    const monthly = await createMonthlyProduct(server, branded.appId, branded.token, { name: 'Gamma Cloud' });
    await buyWithSandbox(server, monthly.id, buyer.toLowerCase());
    await buyWithSandbox(server, (await product(plain, 'Delta Tool')).id, buyer.toLowerCase());

    const session = await signIn(buyer);
    const answer = await get('/portal', session.cookie);
    const page = await answer.text();
    const entries = [
      ...page.matchAll(
        /<section class="item (license|subscription)-item([^"]*)"[^>]*>\n([\s\S]*?)<h3>([^<]*)<\/h3>/g,
      ),
    ].map(([, kind, classes, header, name]) => ({ kind, classes, header, name }));
    const gamma = entries.filter((entry) => entry.name?.startsWith('Gamma'));
    assert.equal(gamma.length, 3, 'two licenses and a subscription of the branded seller');
    for (const entry of gamma) {
      assert.equal(entry.classes, ' branded brand-0');
      assert.ok(entry.header?.includes('<span class="seller-name">Gamma &amp; &lt;Sons&gt;</span>'));
      assert.ok(
        entry.header?.includes(
          `src="${new URL(withLogo.logo.url).pathname}${new URL(withLogo.logo.url).search}"`,
        ),
      );
    }
    const delta = entries.find((entry) => entry.name === 'Delta Tool');
    assert.deepEqual([delta?.classes, delta?.header], ['', ''], 'the other seller set no brand');
    const style = /<style>([^<]*)<\/style>/.exec(page)?.[1] ?? '';
    assert.equal(style, '.brand-0{--brand:#7b1fa2;--on-brand:#ffffff;--brand-ink:#7b1fa2}');
    const policy = answer.headers.get('content-security-policy') ?? '';
    assert.ok(
      policy.includes(`style-src 'self' 'sha256-${createHash('sha256').update(style).digest('base64')}';`),
    );
    assert.match(policy, /frame-ancestors 'none'/, 'the portal is never framed, whatever the seller lists');
    const orders = [
      ...page.matchAll(/<li><span><strong>([^<]*)<\/strong><span class="note">(.*?)<code>/g),
    ].map(([, name, note]) => [
      name,
      note?.startsWith('<span class="order-seller">Gamma &amp; &lt;Sons&gt;</span> · '),
    ]);
    assert.deepEqual(
      orders.sort(),
      [
        ['Delta Tool', false],
        ['Gamma Cloud', true],
        ['Gamma Studio', true],
      ],
      'each order of the branded seller names them',
    );
    assert.ok(!page.includes(branded.user.id), 'the brand is shown, never the seller’s id');
    assert.equal(page.split(saved.id).length - 1, 3, 'the brand’s id only in the three logos’ address');
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

  test('a buyer sees the seats held on a floating license, named as their software sent them, and releases one', async () => {
    const seller = await sellerWithApp(server);
    const tag = uniqueSuffix();
    (
      await server.api.post(
        '/webhooks',
        { url: `${receiver.url}/seats/${tag}`, events: ['license.seat.released'], appId: seller.appId },
        { token: seller.token },
      )
    ).expect(201);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email, floating: true, maxSeats: 2 });
    const checkout = async (body: Record<string, string>) =>
      (await server.api.post('/licenses/checkout', { key: license.key, ...body })).expect(200).body;
    assert.equal(
      (await checkout({ hwuid: 'hw-studio', name: 'Studio <iMac>', platform: 'macOS 15' })).valid,
      true,
    );
    assert.equal((await checkout({ hwuid: 'hw-laptop' })).valid, true);
    assert.equal((await checkout({ hwuid: 'hw-third' })).code, 'no_seat_available');

    const buyer = await signIn(email);
    const page = await buyer.page();
    assert.match(page, /Up to 2 devices at once/);
    assert.ok(page.includes('Studio &lt;iMac&gt;'), 'the name, escaped');
    assert.match(page, /macOS 15/);
    assert.match(page, /hw-laptop/);
    assert.equal(page.match(/\/seats\/release/g)?.length, 2, 'a release form per seat');

    const released = await post(
      `/portal/licenses/${license.id}/seats/release`,
      { csrf: await buyer.csrf(), hwuid: 'hw-studio' },
      buyer.cookie,
    );
    assert.equal(released.status, 303);
    assert.equal(released.headers.get('location'), '/portal?done=seat-released');
    const after = await (await get('/portal?done=seat-released', buyer.cookie)).text();
    assert.match(after, /The seat was given back/);
    assert.ok(!after.includes('Studio &lt;iMac&gt;'));
    assert.equal((await checkout({ hwuid: 'hw-third' })).valid, true, 'the seat is free for another device');
    const seats = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/seats`, { token: seller.token })
    ).expect(200).body;
    assert.deepEqual(seats.seats.map((seat: { hwuid: string }) => seat.hwuid).sort(), [
      'hw-laptop',
      'hw-third',
    ]);

    // No seat held (any more, or ever): 404, nothing changes.
    for (const hwuid of ['hw-studio', 'nobody']) {
      const again = await post(
        `/portal/licenses/${license.id}/seats/release`,
        { csrf: await buyer.csrf(), hwuid },
        buyer.cookie,
      );
      assert.equal(again.status, 404);
    }
    // A seat lapses by itself and leaves the list.
    clock.advance(601_000);
    assert.doesNotMatch(await buyer.page(), /hw-laptop/);

    await server.service.modules.deliveryWorker.runOnce();
    const events = receiver.requests.filter((r) => r.path === `/seats/${tag}`).map((r) => r.json.data);
    assert.deepEqual(
      events.map((data) => [data.licenseId, data.hwuid, data.reason]),
      [[license.id, 'hw-studio', 'buyer']],
    );
  });

  test('a buyer sees the name and platform of each device', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email, maxDevices: 2 });
    (
      await server.api.post('/licenses/verify', {
        key: license.key,
        hwuid: 'hw-named',
        name: 'Ana’s MacBook',
        platform: 'macOS 15',
      })
    ).expect(200);
    const page = await (await signIn(email)).page();
    assert.match(page, /Ana’s MacBook/);
    assert.match(page, /macOS 15/);
    assert.match(page, /hw-named/);
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
    // The seller's timeline says the buyer took one file, and only one.
    const timeline = (
      await server.api.get(`/apps/${seller.appId}/licenses/${license.id}/events?type=license_file.issued`, {
        token: seller.token,
      })
    ).expect(200).body;
    assert.deepEqual(
      timeline.events.map((e: { hwuid: string; actor: unknown }) => [e.hwuid, e.actor]),
      [['air-gapped-1', { kind: 'buyer', id: null }]],
    );
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
    const bobsFloating = await issueLicense(server, seller, { email: bob, floating: true, maxSeats: 1 });
    (await server.api.post('/licenses/checkout', { key: bobsFloating.key, hwuid: 'bob-seat' })).expect(200);
    const answers = [
      await post(`/portal/licenses/${bobs.id}/devices/release`, { csrf, hwuid: 'bob-pc' }, buyer.cookie),
      await post(
        `/portal/licenses/${bobsFloating.id}/seats/release`,
        { csrf, hwuid: 'bob-seat' },
        buyer.cookie,
      ),
      await post(
        `/portal/licenses/${bobs.id}/license-file`,
        { csrf, request: createOfflineActivationRequest({ key: bobs.key, hwuid: 'x' }).request },
        buyer.cookie,
      ),
      await post(`/portal/subscriptions/${subscription.id}/cancel`, { csrf }, buyer.cookie),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [404, 404, 404, 404],
    );
    for (const answer of answers) assert.ok(!(await answer.text()).includes(bobs.key));
    assert.equal((await verify(bobs.key, 'bob-pc')).valid, true);
    assert.equal((await verify(bobsFloating.key, 'bob-seat')).valid, true, 'the seat is still held');
    const after = (await server.api.get('/subscriptions', { token: seller.token })).expect(200).body;
    assert.equal(after.subscriptions[0].status, 'active');
  });
});

describe('offline files and device releases follow the product’s settings', () => {
  const DAY = 86_400_000;
  const release = async (buyer: Buyer, licenseId: string, hwuid: string) =>
    post(`/portal/licenses/${licenseId}/devices/release`, { csrf: await buyer.csrf(), hwuid }, buyer.cookie);
  const licenseFile = async (buyer: Buyer, licenseId: string, request: string) =>
    post(`/portal/licenses/${licenseId}/license-file`, { csrf: await buyer.csrf(), request }, buyer.cookie);
  const refusalCode = (page: string) => /class="error" role="alert" data-code="([a-z_]+)"/.exec(page)?.[1];
  const boundDevices = async (seller: SellerWithApp, licenseId: string) =>
    (
      (
        await server.api.get(`/apps/${seller.appId}/licenses/${licenseId}/devices`, { token: seller.token })
      ).expect(200).body.devices as { hwuid: string; offlineUntil: string | null }[]
    ).map((device) => [device.hwuid, device.offlineUntil]);

  test('the A, B, C loop: a machine activated by a portal file stays bound until the file expires', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const item = await product(seller, 'Air Tool', { portalLicenseFileDays: 7 });
    const license = await issueLicense(server, seller, { email, productId: item.id, maxDevices: 1 });
    // Sessions last 12 hours: the buyer signs in again whenever the clock moves further.
    let buyer = await signIn(email);
    const requestFor = (hwuid: string) =>
      createOfflineActivationRequest({ key: license.key, hwuid, appId: seller.appId });

    // The file for machine A works offline for the product's 7 days, not a year.
    const forA = requestFor('machine-a');
    const fileA = await licenseFile(buyer, license.id, forA.request);
    assert.equal(fileA.status, 200, await fileA.clone().text());
    const claims = await verifyLicenseFile(await fileA.text(), {
      keySet,
      appId: seller.appId,
      hwuid: 'machine-a',
      nonce: forA.nonce,
      now: () => clock.now(),
    });
    assert.equal(claims.exp - claims.iat, 7 * 86_400);
    const until = new Date(claims.exp * 1000);

    // Releasing A to make room for B is refused while A's file works, and changes nothing.
    const refused = await release(buyer, license.id, 'machine-a');
    assert.equal(refused.status, 409);
    const page = await refused.text();
    assert.equal(refusalCode(page), 'device_bound_offline');
    assert.match(page, /valid until .*: it can be released here from then on/);
    assert.deepEqual(await boundDevices(seller, license.id), [['machine-a', until.toISOString()]]);
    const forB = await licenseFile(buyer, license.id, requestFor('machine-b').request);
    assert.equal(forB.status, 409);
    assert.match(await forB.text(), /Every device place of this license is taken/);
    const shown = await buyer.page();
    assert.match(shown, /License file valid until/);
    assert.doesNotMatch(shown, /name="hwuid" value="machine-a"/, 'no Release button for A');

    // A second file for A holds A until the later expiry.
    clock.advance(DAY);
    buyer = await signIn(email);
    assert.equal((await licenseFile(buyer, license.id, requestFor('machine-a').request)).status, 200);
    clock.advance(7 * DAY - 1000);
    buyer = await signIn(email);
    assert.equal((await release(buyer, license.id, 'machine-a')).status, 409, 'the renewed file still works');
    clock.advance(1000);
    assert.equal((await release(buyer, license.id, 'machine-a')).status, 303, 'its files have all expired');
    assert.equal((await licenseFile(buyer, license.id, requestFor('machine-b').request)).status, 200);

    // The seller can always release, files or not.
    (
      await server.api.delete(`/apps/${seller.appId}/licenses/${license.id}/devices/machine-b`, {
        token: seller.token,
      })
    ).expect(204);
    assert.deepEqual(await boundDevices(seller, license.id), []);
  });

  test('a buyer releases as many devices as the product allows in its period, then the seller still can', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const item = await product(seller, 'Desk Tool', { portalDeviceReleases: 2, portalReleasePeriodDays: 10 });
    const license = await issueLicense(server, seller, { email, productId: item.id, maxDevices: 1 });
    let buyer = await signIn(email);
    for (const hwuid of ['pc-1', 'pc-2']) {
      assert.equal((await verify(license.key, hwuid)).valid, true);
      assert.equal((await release(buyer, license.id, hwuid)).status, 303);
      clock.advance(DAY);
      buyer = await signIn(email);
    }
    assert.equal((await verify(license.key, 'pc-3')).valid, true);
    assert.match(await buyer.page(), /No device release left: the next is possible from/);

    const refused = await release(buyer, license.id, 'pc-3');
    assert.equal(refused.status, 409);
    const page = await refused.text();
    assert.equal(refusalCode(page), 'release_limit_reached');
    assert.match(page, /allows 2 device releases in any 10 days/);
    assert.equal((await verify(license.key, 'pc-3')).valid, true, 'pc-3 keeps its place');
    assert.equal((await verify(license.key, 'pc-4')).code, 'device_limit_reached');

    // The seller's release is not counted against the buyer, nor limited.
    (
      await server.api.delete(`/apps/${seller.appId}/licenses/${license.id}/devices/pc-3`, {
        token: seller.token,
      })
    ).expect(204);
    assert.equal((await verify(license.key, 'pc-4')).valid, true);
    // Ten days after the first release, one is allowed again; then none until the second ages out.
    clock.advance(8 * DAY);
    buyer = await signIn(email);
    assert.equal((await release(buyer, license.id, 'pc-4')).status, 303);
    assert.equal((await verify(license.key, 'pc-5')).valid, true);
    assert.equal((await release(buyer, license.id, 'pc-5')).status, 409);
  });

  test('a license without a product: files valid 30 days, 3 releases in any 30 days', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email, maxDevices: 1 });
    const buyer = await signIn(email);
    const file = await licenseFile(
      buyer,
      license.id,
      createOfflineActivationRequest({ key: license.key, hwuid: 'air-1' }).request,
    );
    const claims = await verifyLicenseFile(await file.text(), {
      keySet,
      appId: seller.appId,
      hwuid: 'air-1',
      now: () => clock.now(),
    });
    assert.equal(claims.exp - claims.iat, 30 * 86_400);
    clock.advance(30 * DAY);
    const later = await signIn(email);
    const answers: number[] = [];
    for (const hwuid of ['air-1', 'pc-2', 'pc-3', 'pc-4']) {
      if (hwuid !== 'air-1') assert.equal((await verify(license.key, hwuid)).valid, true);
      answers.push((await release(later, license.id, hwuid)).status);
    }
    assert.deepEqual(answers, [303, 303, 303, 409]);
  });

  test('releases sent at once never pass the allowance', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const item = await product(seller, 'Race Tool', { portalDeviceReleases: 1 });
    const license = await issueLicense(server, seller, { email, productId: item.id, maxDevices: 3 });
    const devices = ['one', 'two', 'three'];
    for (const hwuid of devices) assert.equal((await verify(license.key, hwuid)).valid, true);
    const buyer = await signIn(email);
    const csrf = await buyer.csrf();
    const answers = await Promise.all(
      devices.map((hwuid) =>
        post(`/portal/licenses/${license.id}/devices/release`, { csrf, hwuid }, buyer.cookie),
      ),
    );
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [303, 409, 409]);
    assert.equal((await boundDevices(seller, license.id)).length, 2);
  });

  test('a product that allows buyers no release sends them to the seller', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const item = await product(seller, 'Locked Tool', { portalDeviceReleases: 0 });
    const license = await issueLicense(server, seller, { email, productId: item.id });
    await verify(license.key, 'desk');
    const buyer = await signIn(email);
    assert.match(await buyer.page(), /Devices are released by the seller’s support only/);
    const refused = await release(buyer, license.id, 'desk');
    assert.equal(refused.status, 409);
    assert.match(await refused.text(), /can be released by the seller’s support only/);
    assert.deepEqual(await boundDevices(seller, license.id), [['desk', null]]);
  });
});

describe('the downloads a license grants', () => {
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  /** A release with the given files (name → [platform, bytes]), published unless `draft`. */
  async function release(
    seller: SellerWithApp,
    version: string,
    files: Record<string, [string | null, Buffer]>,
    options: { channel?: string; requiredFeatures?: string[]; draft?: boolean; notes?: string } = {},
  ) {
    const { draft, ...fields } = options;
    const created = (
      await server.api.post(`/apps/${seller.appId}/releases`, { version, ...fields }, { token: seller.token })
    ).expect(201).body as { id: string };
    const artifacts: Record<string, string> = {};
    for (const [filename, [platform, bytes]] of Object.entries(files)) {
      const res = await fetch(
        `${server.service.coreUrl}/v1/apps/${seller.appId}/releases/${created.id}/artifacts/${filename}${platform ? `?platform=${platform}` : ''}`,
        {
          method: 'PUT',
          headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/octet-stream' },
          body: bytes,
        },
      );
      const text = await res.text();
      assert.equal(res.status, 201, text);
      artifacts[filename] = (JSON.parse(text) as { id: string }).id;
    }
    if (!draft) {
      (
        await server.api.post(`/apps/${seller.appId}/releases/${created.id}/publish`, undefined, {
          token: seller.token,
        })
      ).expect(200);
    }
    return { id: created.id, artifacts };
  }

  /** The part of the portal page that shows one license. */
  function licensePart(page: string, licenseId: string): string {
    const start = page.indexOf(`data-license-id="${licenseId}"`);
    assert.ok(start >= 0, `the page shows license ${licenseId}`);
    return page.slice(start, page.indexOf('</section>', start));
  }
  const versions = (part: string) => [...part.matchAll(/data-version="([^"]+)"/g)].map((m) => m[1]);
  const downloadPath = (licenseId: string, artifactId: string) =>
    `/portal/licenses/${licenseId}/downloads/${artifactId}`;

  /** Follows a download: the portal's 303, then the signed link on the core API. */
  async function download(buyer: Buyer, licenseId: string, artifactId: string) {
    const res = await get(downloadPath(licenseId, artifactId), buyer.cookie);
    if (res.status !== 303) return { status: res.status, page: await res.text(), bytes: null, link: null };
    const link = res.headers.get('location') as string;
    assert.ok(link.startsWith(`${server.config.apiBaseUrl}/releases/files/${artifactId}/`), link);
    const file = await fetch(`${server.service.coreUrl}/v1${link.slice(server.config.apiBaseUrl.length)}`);
    assert.equal(file.status, 200);
    return { status: 303, page: '', bytes: Buffer.from(await file.arrayBuffer()), link };
  }

  test('each license lists the newest release of every channel it may follow, with its files, and a download leads to the file', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const everyChannel = await issueLicense(server, seller, { email, maxDevices: 1 });
    const stableOnly = await issueLicense(server, seller, {
      email,
      metadata: { features: ['channel:stable'] },
    });
    const linux = randomBytes(30_000);
    await release(seller, '1.0.0', { 'tool-1.0.0.tar.gz': ['linux', randomBytes(100)] });
    const current = await release(
      seller,
      '1.1.0',
      { 'tool-1.1.0.tar.gz': ['linux', linux], 'Tool-1.1.0.dmg': ['macos', randomBytes(2_000)] },
      { notes: 'Faster <export> & fewer crashes' },
    );
    const beta = await release(seller, '2.0.0-beta.1', {
      'tool-2.0.0-beta.1.tar.gz': ['linux', randomBytes(50)],
    });
    await release(seller, '1.2.0', { 'tool-1.2.0.tar.gz': ['linux', randomBytes(50)] }, { draft: true });
    await release(
      seller,
      '3.0.0',
      { 'tool-3.0.0.tar.gz': ['linux', randomBytes(50)] },
      { requiredFeatures: ['v3'] },
    );

    const buyer = await signIn(email);
    const page = await buyer.page();
    const all = licensePart(page, everyChannel.id);
    // Newest first; 1.0.0 is older than 1.1.0, 1.2.0 a draft, 3.0.0 needs an entitlement.
    assert.deepEqual(versions(all), ['2.0.0-beta.1', '1.1.0']);
    assert.match(all, /Beta/);
    assert.match(all, /Faster &lt;export&gt; &amp; fewer crashes/, 'the notes, escaped');
    assert.match(all, /tool-1\.1\.0\.tar\.gz/);
    assert.match(all, /linux · every architecture · 30 KB/);
    assert.ok(all.includes(sha256(linux)), 'the file’s SHA-256');
    assert.ok(all.includes(downloadPath(everyChannel.id, current.artifacts['tool-1.1.0.tar.gz'] as string)));
    assert.deepEqual(versions(licensePart(page, stableOnly.id)), ['1.1.0'], 'channel:stable: stable only');

    const got = await download(buyer, everyChannel.id, current.artifacts['tool-1.1.0.tar.gz'] as string);
    assert.equal(got.status, 303);
    assert.deepEqual(got.bytes, linux, 'the link serves the file');
    const again = await download(buyer, everyChannel.id, current.artifacts['tool-1.1.0.tar.gz'] as string);
    assert.notEqual(again.link, null);
    const listed = (
      await server.api.get(`/apps/${seller.appId}/releases/${current.id}/artifacts`, { token: seller.token })
    ).expect(200).body.artifacts as { filename: string; downloads: number }[];
    assert.equal(listed.find((a) => a.filename === 'tool-1.1.0.tar.gz')?.downloads, 2);

    // The rules hold for a link asked for directly: a channel the license does not follow.
    const refused = await download(
      buyer,
      stableOnly.id,
      beta.artifacts['tool-2.0.0-beta.1.tar.gz'] as string,
    );
    assert.equal(refused.status, 409);
    assert.match(refused.page, /data-code="channel_not_granted"/);
    assert.equal(
      (await download(buyer, stableOnly.id, current.artifacts['Tool-1.1.0.dmg'] as string)).status,
      303,
    );
  });

  test('a yanked release disappears and its files stop; a suspended license says why and gets no link', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email });
    const old = await release(seller, '1.0.0', { 'app-1.0.0.zip': [null, randomBytes(64)] });
    const bad = await release(seller, '1.0.1', { 'app-1.0.1.zip': [null, randomBytes(64)] });
    const buyer = await signIn(email);
    assert.deepEqual(versions(licensePart(await buyer.page(), license.id)), ['1.0.1']);

    (
      await server.api.post(`/apps/${seller.appId}/releases/${bad.id}/yank`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    assert.deepEqual(versions(licensePart(await buyer.page(), license.id)), ['1.0.0'], 'back to 1.0.0');
    assert.equal((await download(buyer, license.id, bad.artifacts['app-1.0.1.zip'] as string)).status, 404);

    (
      await server.api.post(`/apps/${seller.appId}/licenses/${license.id}/suspend`, undefined, {
        token: seller.token,
      })
    ).expect(200);
    const part = licensePart(await buyer.page(), license.id);
    assert.deepEqual(versions(part), []);
    assert.match(part, /data-code="license_suspended"/);
    assert.match(part, /suspended: its downloads are paused/);
    assert.ok(!part.includes('/downloads/'), 'no download link');
    const refused = await download(buyer, license.id, old.artifacts['app-1.0.0.zip'] as string);
    assert.equal(refused.status, 409);
    assert.match(refused.page, /data-code="license_suspended"/);
  });

  test('a file the seller hosts is listed with what they declared, and its download leads to their address', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const license = await issueLicense(server, seller, { email });
    const made = await release(seller, '1.0.0', {}, { draft: true });
    const url = 'https://downloads.example.com/Tool-1.0.0.dmg';
    const hosted = (
      await server.api.post(
        `/apps/${seller.appId}/releases/${made.id}/artifacts`,
        { filename: 'Tool-1.0.0.dmg', platform: 'macos', url },
        { token: seller.token },
      )
    ).expect(201).body as { id: string };
    (
      await server.api.post(`/apps/${seller.appId}/releases/${made.id}/publish`, undefined, {
        token: seller.token,
      })
    ).expect(200);

    const buyer = await signIn(email);
    const part = licensePart(await buyer.page(), license.id);
    assert.match(part, /Tool-1\.0\.0\.dmg/);
    assert.match(part, /macos · every architecture</, 'no size the seller did not give');
    assert.ok(!part.includes('SHA-256'), 'no digest the seller did not give');
    assert.ok(!part.includes(url), 'the address only behind the download');
    const res = await get(downloadPath(license.id, hosted.id), buyer.cookie);
    assert.equal(res.status, 303);
    const link = res.headers.get('location') as string;
    const file = await fetch(`${server.service.coreUrl}/v1${link.slice(server.config.apiBaseUrl.length)}`, {
      redirect: 'manual',
    });
    assert.equal(file.status, 302);
    assert.equal(file.headers.get('location'), url);
    const listed = (
      await server.api.get(`/apps/${seller.appId}/releases/${made.id}/artifacts`, { token: seller.token })
    ).expect(200).body.artifacts as { downloads: number }[];
    assert.equal(listed[0]?.downloads, 1);
  });

  test('a license kept past its expiry downloads the releases published before it; one missing an entitlement says so', async () => {
    const seller = await sellerWithApp(server);
    const email = newBuyer();
    const expiresAt = new Date(clock.now().getTime() + 86_400_000).toISOString();
    const kept = await issueLicense(server, seller, { email, expiresAt, expiryStrategy: 'maintain_access' });
    const stopped = await issueLicense(server, seller, { email, expiresAt });
    const before = await release(seller, '1.0.0', { 'app-1.0.0.zip': [null, randomBytes(64)] });
    clock.advance(2 * 86_400_000);
    const later = await release(seller, '1.1.0', { 'app-1.1.0.zip': [null, randomBytes(64)] });
    const buyer = await signIn(email);
    const page = await buyer.page();
    assert.deepEqual(versions(licensePart(page, kept.id)), ['1.0.0']);
    assert.match(licensePart(page, stopped.id), /data-code="license_expired"/);
    assert.equal((await download(buyer, kept.id, before.artifacts['app-1.0.0.zip'] as string)).status, 303);
    const refused = await download(buyer, kept.id, later.artifacts['app-1.1.0.zip'] as string);
    assert.equal(refused.status, 409);
    assert.match(refused.page, /data-code="license_expired"/);

    const other = await sellerWithApp(server);
    const plain = await issueLicense(server, other, { email });
    await release(
      other,
      '5.0.0',
      { 'pro-5.0.0.zip': [null, randomBytes(64)] },
      { requiredFeatures: ['pro'] },
    );
    const part = licensePart(await buyer.page(), plain.id);
    assert.deepEqual(versions(part), []);
    assert.match(part, /Version 5\.0\.0 needs a plan or feature this license does not include/);
    // A seller who publishes nothing: no downloads part at all.
    const quiet = await sellerWithApp(server);
    const none = await issueLicense(server, quiet, { email });
    assert.ok(!licensePart(await buyer.page(), none.id).includes('Downloads'));
  });

  test('another buyer’s license, another app’s file, no session or another site’s page get no link', async () => {
    const seller = await sellerWithApp(server);
    const [alice, bob] = [newBuyer(), newBuyer()];
    const alices = await issueLicense(server, seller, { email: alice });
    const bobs = await issueLicense(server, seller, { email: bob });
    const file = (await release(seller, '1.0.0', { 'app.zip': [null, randomBytes(64)] })).artifacts[
      'app.zip'
    ] as string;
    const elsewhere = await sellerWithApp(server);
    const foreign = (await release(elsewhere, '1.0.0', { 'other.zip': [null, randomBytes(64)] })).artifacts[
      'other.zip'
    ] as string;
    const buyer = await signIn(alice);
    assert.equal((await download(buyer, bobs.id, file)).status, 404, 'Bob’s license');
    assert.equal((await download(buyer, alices.id, foreign)).status, 404, 'a file of another seller’s app');
    const signedOut = await get(downloadPath(alices.id, file));
    assert.equal(signedOut.status, 401);
    assert.equal(signedOut.headers.get('location'), null);
    const crossSite = await fetch(url(downloadPath(alices.id, file)), {
      headers: { cookie: buyer.cookie, 'sec-fetch-site': 'cross-site' },
      redirect: 'manual',
    });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.headers.get('location'), null);
    assert.equal((await download(buyer, alices.id, file)).status, 303, 'from the portal itself');
  });
});
