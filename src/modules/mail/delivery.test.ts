import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import sharp from 'sharp';
import { ConfigError, parseConfig } from '../../platform/config.js';
import { createLog } from '../../platform/log.js';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { buyWithSandbox } from '../../testing/purchases.js';
import { type SmtpSink, startSmtpSink } from '../../testing/smtp-sink.js';
import { type TestClock, testClock } from '../../testing/test-clock.js';
import { createMailer, createNotificationWorker, MAX_ATTEMPTS } from './index.js';
import { claimDue } from './store.js';
import { LEASE_MS } from './worker.js';

/** Headers and the decoded text and HTML parts of an RFC 5322 message from nodemailer. */
function readMessage(raw: string) {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const headers = new Map(
    head
      .replace(/\r\n[ \t]+/g, ' ')
      .split('\r\n')
      .map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
  );
  const boundary = /boundary="?([^";]+)"?/.exec(headers.get('content-type') ?? '')?.[1];
  const parts = boundary ? rest.join('\r\n\r\n').split(`--${boundary}`).slice(1, -1) : [];
  const part = (type: string) => {
    const found = parts.find((p) => p.includes(`Content-Type: ${type}`)) ?? '';
    const body = found.slice(found.indexOf('\r\n\r\n') + 4);
    return found.includes('quoted-printable')
      ? body
          .replace(/=\r\n/g, '')
          .replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)))
      : body;
  };
  return { headers, text: part('text/plain'), html: part('text/html') };
}

let sink: SmtpSink;
let clock: TestClock;
let server: TestServer;
const logLines: string[] = [];

before(async () => {
  sink = await startSmtpSink();
  clock = testClock(new Date());
  server = await startTestServer(
    {
      SMTP_URL: sink.url,
      MAIL_FROM: 'Photo Tool Store <sales@store.example>',
      LOG_LEVEL: 'info',
      // The last test moves the clock by days; sessions must outlast it.
      USER_TOKEN_TTL: '2592000',
    },
    { clock, logLines, ownDatabase: true },
  );
});
after(async () => {
  await server.stop();
  await sink.close();
});

const runWorker = () => server.service.modules.notificationWorker.runOnce();

async function createProduct(seller: SellerWithApp, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Photo Tool Pro', price: 19.99, currency: 'USD', ...extra },
      { token: seller.token },
    )
  ).expect(201).body as { id: string };
}

/** Buys the product over HTTP with the sandbox partner; returns the order and the license key. */
async function buy(target: TestServer, productId: string, email: string) {
  const { intent, paid } = await buyWithSandbox(target, productId, email);
  assert.equal(paid.transactionStatus, 'paid');
  return { orderId: intent.orderId as string, licenseKey: paid.licenseKey as string };
}

function noticesOf(target: TestServer, orderId: string) {
  return target.db
    .selectFrom('notifications')
    .select(['id', 'kind', 'to_email', 'status', 'attempts', 'next_attempt_at', 'last_error'])
    .where(sql<string>`data->>'orderId'`, '=', orderId)
    .orderBy('kind')
    .orderBy('to_email')
    .execute();
}

const mailTo = (address: string) => sink.messages.filter((m) => m.to.includes(address));

describe('license delivery by e-mail over SMTP', () => {
  test('an Enterprise product mails the buyer the license key and each license e-mail a copy', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const tag = uniqueSuffix();
    const [buyer, ops, sales] = [
      `buyer-${tag}@example.com`,
      `ops-${tag}@example.com`,
      `sales-${tag}@example.com`,
    ];
    const product = await createProduct(seller, { sendLicenseToCustomer: true, licenseEmails: [ops, sales] });
    const { orderId, licenseKey } = await buy(server, product.id, buyer);

    assert.equal(await runWorker(), 4);

    const [toBuyer] = mailTo(buyer);
    assert.ok(toBuyer, 'the buyer received a message');
    const message = readMessage(toBuyer.raw);
    assert.equal(message.headers.get('subject'), 'Your license for Photo Tool Pro');
    assert.equal(message.headers.get('from'), 'Photo Tool Store <sales@store.example>');
    assert.equal(message.headers.get('to'), buyer);
    assert.match(message.headers.get('message-id') ?? '', /^<[0-9a-f-]{36}@store\.example>$/);
    assert.ok(message.text.includes(licenseKey));
    assert.ok(message.text.includes('19.99 USD'));
    assert.ok(message.html.includes(licenseKey));

    for (const copy of [ops, sales]) {
      const received = mailTo(copy);
      assert.equal(received.length, 1, `${copy} received one copy`);
      assert.ok(readMessage(received[0]?.raw ?? '').text.includes(licenseKey));
    }
    const toSeller = mailTo(seller.user.email);
    assert.equal(toSeller.length, 1);
    assert.equal(readMessage(toSeller[0]?.raw ?? '').headers.get('subject'), 'New sale: Photo Tool Pro');
    assert.ok(!toSeller[0]?.raw.includes(licenseKey), 'the seller’s notice carries no key');

    const notices = await noticesOf(server, orderId);
    assert.deepEqual(
      notices.map((n) => [n.kind, n.to_email, n.status, n.attempts]),
      [
        ['purchase.buyer', buyer, 'sent', 1],
        ['purchase.copy', ops, 'sent', 1],
        ['purchase.copy', sales, 'sent', 1],
        ['purchase.seller', null, 'sent', 1],
      ],
    );
    assert.equal(await runWorker(), 0, 'a sent notice is not sent again');
  });

  test('the seller’s brand heads the buyer’s message: name, logo and colour; the seller’s own notice stays plain', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const buyer = `buyer-${uniqueSuffix()}@example.com`;
    (
      await server.api.put(
        '/brand',
        { displayName: 'Lumen <Works> & Co', accentColor: '#0A7D4F' },
        { token: seller.token },
      )
    ).expect(200);
    const logo = await sharp({ create: { width: 300, height: 100, channels: 3, background: '#0a7d4f' } })
      .png()
      .toBuffer();
    const brand = (
      await server.api.put('/brand/logo', undefined, {
        token: seller.token,
        headers: { 'content-type': 'image/png' },
        raw: logo,
      })
    ).expect(200).body;
    const product = await createProduct(seller, { sendLicenseToCustomer: true });
    const { licenseKey } = await buy(server, product.id, buyer);
    await runWorker();

    const [toBuyer] = mailTo(buyer);
    assert.ok(toBuyer, 'the buyer received a message');
    const message = readMessage(toBuyer.raw);
    assert.equal(message.headers.get('subject'), 'Your license for Photo Tool Pro from Lumen <Works> & Co');
    assert.match(message.text, /^Lumen <Works> & Co\r?\n\r?\nThank you for buying Photo Tool Pro/);
    assert.ok(message.text.includes(licenseKey));
    assert.ok(
      message.html.includes(
        '<strong style="font-size:18px;vertical-align:middle;margin-left:10px;">Lumen &lt;Works&gt; &amp; Co</strong>',
      ),
    );
    assert.ok(!message.html.includes('<Works>'), 'the name is escaped');
    assert.ok(message.html.includes(`<img src="${brand.logo.url}" alt="Lumen &lt;Works&gt; &amp; Co"`));
    assert.ok(message.html.includes('border-bottom:4px solid #0a7d4f;'));
    // The logo the message links is the one served.
    const served = await fetch(
      `${server.service.payUrl}${new URL(brand.logo.url).pathname}${new URL(brand.logo.url).search}`,
    );
    assert.equal(served.status, 200);

    const toSeller = readMessage(mailTo(seller.user.email)[0]?.raw ?? '');
    assert.equal(toSeller.headers.get('subject'), 'New sale: Photo Tool Pro');
    assert.ok(!toSeller.html.includes('Lumen'), 'the seller’s own notice is not branded');
  });

  test('a seller whose tier dropped below Enterprise sends neither the buyer mail nor copies', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const tag = uniqueSuffix();
    const [buyer, ops] = [`buyer-${tag}@example.com`, `ops-${tag}@example.com`];
    const product = await createProduct(seller, { sendLicenseToCustomer: true, licenseEmails: [ops] });
    (
      await server.api.patch(
        `/admin/users/${seller.user.id}`,
        { tier: 'business' },
        { token: await server.adminToken() },
      )
    ).expect(200);
    const { orderId } = await buy(server, product.id, buyer);

    await runWorker();
    assert.deepEqual([mailTo(buyer).length, mailTo(ops).length, mailTo(seller.user.email).length], [0, 0, 1]);
    assert.deepEqual(
      (await noticesOf(server, orderId)).map((n) => n.kind),
      ['purchase.seller'],
    );
  });

  test('a product of a free seller mails only the seller', async () => {
    const seller = await sellerWithApp(server);
    const buyer = `buyer-${uniqueSuffix()}@example.com`;
    const { orderId } = await buy(server, (await createProduct(seller)).id, buyer);
    await runWorker();
    assert.deepEqual([mailTo(buyer).length, mailTo(seller.user.email).length], [0, 1]);
    assert.deepEqual(
      (await noticesOf(server, orderId)).map((n) => [n.kind, n.status]),
      [['purchase.seller', 'sent']],
    );
  });

  test('two workers passing at once send each message once', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const tag = uniqueSuffix();
    const copies = Array.from({ length: 12 }, (_, i) => `copy${i}-${tag}@example.com`);
    const product = await createProduct(seller, { sendLicenseToCustomer: true, licenseEmails: copies });
    const buyer = `buyer-${tag}@example.com`;
    await buy(server, product.id, buyer);

    const other = createNotificationWorker({
      db: server.db,
      clock,
      log: createLog({ logLevel: 'silent' }),
      mailer: createMailer({ smtpUrl: sink.url, from: 'Other Node <n2@store.example>', outboxDir: '' }),
    });
    const [first, second] = await Promise.all([runWorker(), other.runOnce()]);
    assert.equal(first + second, 14);
    for (const address of [buyer, ...copies, seller.user.email])
      assert.equal(mailTo(address).length, 1, `${address} received one message`);
  });

  test('a refusing SMTP server leaves the notice pending, and a later pass sends it', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const buyer = `buyer-${uniqueSuffix()}@example.com`;
    const product = await createProduct(seller, { sendLicenseToCustomer: true });
    const { orderId, licenseKey } = await buy(server, product.id, buyer);
    const logged = logLines.length;

    sink.refuse = true;
    try {
      assert.equal(await runWorker(), 2);
    } finally {
      sink.refuse = false;
    }
    assert.equal(mailTo(buyer).length, 0);
    const held = await noticesOf(server, orderId);
    for (const notice of held) {
      assert.deepEqual([notice.status, notice.attempts], ['pending', 1]);
      assert.match(notice.last_error ?? '', /451/);
      assert.ok((notice.next_attempt_at?.getTime() ?? 0) > clock.now().getTime(), 'waits before retrying');
    }
    const failures = logLines.slice(logged).filter((line) => line.includes('"mail.send.failed"'));
    assert.equal(failures.length, 2);
    assert.ok(!failures.join('').includes(licenseKey), 'the log carries no license key');

    assert.equal(await runWorker(), 0, 'not due yet');
    clock.advance(2 * 60_000);
    assert.equal(await runWorker(), 2);
    assert.equal(mailTo(buyer).length, 1);
    assert.ok(readMessage(mailTo(buyer)[0]?.raw ?? '').text.includes(licenseKey));
    assert.deepEqual(
      (await noticesOf(server, orderId)).map((n) => [n.status, n.attempts, n.last_error]),
      [
        ['sent', 2, null],
        ['sent', 2, null],
      ],
    );
  });

  test('an SMTP server that is down leaves the notice pending until one answers', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    const buyer = `buyer-${uniqueSuffix()}@example.com`;
    const product = await createProduct(seller, { sendLicenseToCustomer: true });
    const { orderId } = await buy(server, product.id, buyer);
    const gone = await startSmtpSink();
    await gone.close();
    const unreachable = createNotificationWorker({
      db: server.db,
      clock,
      log: createLog({ logLevel: 'silent' }),
      mailer: createMailer({ smtpUrl: gone.url, from: 'a@store.example', outboxDir: '' }),
    });

    assert.equal(await unreachable.runOnce(), 2);
    assert.deepEqual(
      (await noticesOf(server, orderId)).map((n) => [n.status, n.attempts]),
      [
        ['pending', 1],
        ['pending', 1],
      ],
    );
    clock.advance(2 * 60_000);
    assert.equal(await runWorker(), 2);
    assert.equal(mailTo(buyer).length, 1);
  });

  test('a notice claimed by a worker that died is sent once its lease runs out', async () => {
    const seller = await sellerWithApp(server);
    const { orderId } = await buy(
      server,
      (await createProduct(seller)).id,
      `buyer-${uniqueSuffix()}@example.com`,
    );
    const claimed = await claimDue(server.db, clock.now(), LEASE_MS, 10);
    assert.equal(claimed.length, 1, 'the dead worker holds the seller’s notice');

    assert.equal(await runWorker(), 0, 'a live lease is left alone');
    clock.advance(LEASE_MS);
    assert.equal(await runWorker(), 1);
    assert.deepEqual(
      (await noticesOf(server, orderId)).map((n) => [n.status, n.attempts]),
      [['sent', 2]],
    );
    assert.equal(mailTo(seller.user.email).length, 1);
  });

  test('a notice refused at every attempt is given up as failed after the last one', async () => {
    const seller = await sellerWithApp(server);
    const { orderId } = await buy(
      server,
      (await createProduct(seller)).id,
      `buyer-${uniqueSuffix()}@example.com`,
    );
    sink.refuse = true;
    try {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        assert.equal(await runWorker(), 1, `attempt ${attempt} is made`);
        clock.advance(27 * 60 * 60_000);
      }
      assert.equal(await runWorker(), 0);
    } finally {
      sink.refuse = false;
    }
    const [notice] = await noticesOf(server, orderId);
    assert.deepEqual([notice?.status, notice?.attempts], ['failed', MAX_ATTEMPTS]);
    assert.ok(
      logLines.some((line) => line.includes('"mail.send.failed"') && line.includes('"willRetry":false')),
    );
  });
});

describe('license delivery to the local outbox', () => {
  let outbox: TestServer;
  let folder: string;
  before(async () => {
    folder = await fs.mkdtemp(path.join(os.tmpdir(), 'outbox-test-'));
    outbox = await startTestServer({ MAIL_OUTBOX_DIR: folder }, { ownDatabase: true });
  });
  after(async () => {
    await outbox.stop();
    await fs.rm(folder, { recursive: true, force: true });
  });

  test('without SMTP_URL each message is written as an .eml file to the outbox folder', async () => {
    assert.equal(outbox.service.modules.mailer.transport, 'outbox');
    const seller = await sellerWithApp(outbox, 'enterprise');
    const buyer = `buyer-${uniqueSuffix()}@example.com`;
    const product = (
      await outbox.api.post(
        '/products',
        {
          appId: seller.appId,
          name: 'Photo Tool Pro',
          price: 5,
          currency: 'EUR',
          sendLicenseToCustomer: true,
        },
        { token: seller.token },
      )
    ).expect(201).body;
    const { orderId, licenseKey } = await buy(outbox, product.id, buyer);

    assert.equal(await outbox.service.modules.notificationWorker.runOnce(), 2);
    const notices = await noticesOf(outbox, orderId);
    const files = (await fs.readdir(folder)).sort();
    assert.deepEqual(
      files,
      notices.map((n) => `${n.id}.eml`).sort(),
      'one file per message, none half-written',
    );

    const buyerNotice = notices.find((n) => n.kind === 'purchase.buyer');
    const raw = await fs.readFile(path.join(folder, `${buyerNotice?.id}.eml`), 'utf8');
    const message = readMessage(raw);
    assert.equal(message.headers.get('to'), buyer);
    assert.equal(message.headers.get('from'), 'Licensing <no-reply@localhost>');
    assert.equal(message.headers.get('subject'), 'Your license for Photo Tool Pro');
    assert.ok(message.headers.has('date'));
    assert.ok(message.text.includes(licenseKey));
    assert.ok(message.text.includes('5.00 EUR'));
    assert.ok(!/[^\r]\n/.test(raw), 'lines end in CRLF');
  });

  test('a pass told to stop sends nothing more, and what is due waits for the next pass', async () => {
    const seller = await sellerWithApp(outbox, 'enterprise');
    const product = (
      await outbox.api.post(
        '/products',
        { appId: seller.appId, name: 'Stopping', price: 5, currency: 'EUR', sendLicenseToCustomer: true },
        { token: seller.token },
      )
    ).expect(201).body;
    const { orderId } = await buy(outbox, product.id, `buyer-${uniqueSuffix()}@example.com`);
    const before = (await fs.readdir(folder)).length;
    const stopping = new AbortController();
    stopping.abort();
    assert.equal(await outbox.service.modules.notificationWorker.runOnce(stopping.signal), 0);
    assert.equal((await fs.readdir(folder)).length, before, 'no message written');
    const waiting = await noticesOf(outbox, orderId);
    assert.equal(waiting.length, 2);
    assert.ok(
      waiting.every((n) => n.status === 'pending' && n.attempts === 0),
      'still due, nothing claimed',
    );
    assert.equal(await outbox.service.modules.notificationWorker.runOnce(), 2);
    assert.equal((await fs.readdir(folder)).length, before + 2);
  });
});

describe('mail settings', () => {
  const base = { NODE_ENV: 'test', DATA_DIR: '/srv/licensing' };

  test('SMTP_URL must be an smtp:// or smtps:// URL with a host, and is never echoed', () => {
    for (const value of ['http://mail.example.com', 'smtp://', 'not a url with:secret']) {
      assert.throws(
        () => parseConfig({ ...base, SMTP_URL: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.variable === 'SMTP_URL' && !error.message.includes('secret'),
      );
    }
    assert.equal(
      parseConfig({ ...base, SMTP_URL: 'smtps://u:p@mail.example.com' }).smtpUrl,
      'smtps://u:p@mail.example.com',
    );
  });

  test('MAIL_FROM must be an address, optionally with a name', () => {
    for (const value of ['nobody', 'Shop <shop.example>', 'a@b.example\nBcc: x@y.example'])
      assert.throws(
        () => parseConfig({ ...base, MAIL_FROM: value }),
        (error: unknown) => error instanceof ConfigError && error.variable === 'MAIL_FROM',
      );
    assert.equal(parseConfig({ ...base, MAIL_FROM: 'Shop <a@b.example>' }).mailFrom, 'Shop <a@b.example>');
  });

  test('the outbox defaults to DATA_DIR/outbox, and MAIL_POLL_MS is checked', () => {
    const config = parseConfig(base);
    assert.deepEqual(
      [config.smtpUrl, config.mailOutboxDir, config.mailPollMs, config.mailFrom],
      [null, path.resolve('/srv/licensing/outbox'), 1000, 'Licensing <no-reply@localhost>'],
    );
    assert.equal(
      parseConfig({ ...base, DATA_DIR: 'memory:' }).mailOutboxDir,
      path.join(os.tmpdir(), 'licensing-outbox'),
    );
    assert.throws(
      () => parseConfig({ ...base, MAIL_POLL_MS: '0' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'MAIL_POLL_MS',
    );
  });
});
