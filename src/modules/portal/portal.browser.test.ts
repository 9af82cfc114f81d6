import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createOfflineActivationRequest } from '../../../packages/client/src/index.js';
import { contrastProblems, launchBrowser, screenshot, type TestBrowser } from '../../testing/browser.js';
import {
  freePort,
  issueLicense,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { buyWithSandbox } from '../../testing/purchases.js';
import { type SmtpSink, startSmtpSink } from '../../testing/smtp-sink.js';

/** The buyer portal in headless Chromium: the mailed link, the purchases, a device release, sign-out. */
let server: TestServer;
let sink: SmtpSink;
let browser: TestBrowser;
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-portal-browser-'));

before(async () => {
  sink = await startSmtpSink();
  // Download links name the core API's public address: here, where it listens.
  const port = await freePort();
  // Runs the mail worker, so it owns its database.
  server = await startTestServer(
    {
      SMTP_URL: sink.url,
      ARTIFACT_DIR: artifactDir,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    },
    { ownDatabase: true },
  );
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await sink?.close();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

/** How far the page reaches past the viewport's right edge (0 when nothing overflows). */
const overflow = async (page: Page): Promise<number> =>
  Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));

/** The path of the sign-in link in the last mail to `email`, opened on the test listener. */
async function linkFromMail(email: string): Promise<string> {
  await server.service.modules.notificationWorker.runOnce();
  const raw = sink.messages
    .filter((m) => m.to.includes(email))
    .at(-1)
    ?.raw.replace(/=\r\n/g, '');
  const path = /\/portal\/sign-in\/[A-Za-z0-9_-]{43}/.exec(raw ?? '')?.[0];
  assert.ok(path, 'the mail carries a sign-in link');
  return `${server.service.payUrl}${path}`;
}

describe('the buyer portal in a browser', () => {
  test('a buyer signs in from the mail, sees a license, releases a device and signs out; nothing overflows at 375 px', async () => {
    const seller = await sellerWithApp(server);
    const email = `buyer-${uniqueSuffix()}@example.com`;
    const product = (
      await server.api.post(
        '/products',
        { appId: seller.appId, name: 'Studio Suite', price: 49, currency: 'USD' },
        { token: seller.token },
      )
    ).expect(201).body;
    await buyWithSandbox(server, product.id, email);
    const license = await issueLicense(server, seller, { email, maxDevices: 2 });
    // A long device id without spaces is what would push a narrow page sideways.
    const longDevice = `workstation-${'a1b2c3d4'.repeat(8)}`;
    for (const hwuid of ['travel-laptop', longDevice])
      (await server.api.post('/licenses/verify', { key: license.key, hwuid })).expect(200);
    // A license file holds the long device: the page says until when, with no Release button.
    const { request } = createOfflineActivationRequest({ key: license.key, hwuid: longDevice });
    (await server.api.post('/licenses/offline-activations', { request }, { token: seller.token })).expect(
      200,
    );

    const page = await browser.newPage();
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${server.service.payUrl}/portal`);
    assert.equal(await overflow(page), 0, 'the sign-in form fits');
    await page.fill('#email', email);
    await page.click('#sign-in-form button[type="submit"]');
    await page.waitForSelector('#link-sent');

    await page.goto(await linkFromMail(email));
    await page.click('#confirm-sign-in');
    await page.waitForSelector('.license-item');
    assert.equal(new URL(page.url()).pathname, '/portal');
    const keys = await page.locator('code.license-key').allTextContents();
    assert.ok(keys.includes(license.key), 'the issued license is shown');
    assert.equal(keys.length, 2, 'and the purchased one');
    assert.match((await page.textContent('main')) ?? '', /Studio Suite/);
    assert.equal(await page.evaluate('document.cookie'), '', 'the session cookie is not readable by scripts');
    assert.equal(await overflow(page), 0, 'the portal fits at 375 px');
    await screenshot(page, 'portal-375');

    const item = page.locator('.license-item', { hasText: license.key });
    const held = item.locator('.devices li', { hasText: longDevice });
    assert.match(
      (await held.textContent()) ?? '',
      /License file valid until .* UTC: can be released from then/,
    );
    assert.equal(await held.getByRole('button', { name: 'Release' }).count(), 0);
    await item
      .locator('.devices li', { hasText: 'travel-laptop' })
      .getByRole('button', { name: 'Release' })
      .click();
    await page.waitForSelector('#notice');
    assert.match((await page.textContent('#notice')) ?? '', /The device was released/);
    const devices = await item.locator('.devices li code').allTextContents();
    assert.deepEqual(devices, [longDevice]);
    assert.equal(await overflow(page), 0);

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in-form');
    assert.match((await page.textContent('#notice')) ?? '', /signed out/);
    await page.goto(`${server.service.payUrl}/portal`);
    assert.equal(await page.locator('.license-item').count(), 0, 'signed out: no purchases');
    await page.close();
  });

  test('a buyer downloads the newest release’s file from the portal; the list fits a phone in light and dark', async (t) => {
    const seller = await sellerWithApp(server);
    const email = `buyer-${uniqueSuffix()}@example.com`;
    await issueLicense(server, seller, { email });
    const bytes = randomBytes(300_000);
    const release = (
      await server.api.post(
        `/apps/${seller.appId}/releases`,
        { version: '1.2.0', notes: 'Exports to PDF.\nFixes the crash on start.' },
        { token: seller.token },
      )
    ).expect(201).body;
    const filename = `PhotoTool-1.2.0-${'long-build-name-'.repeat(3)}x86_64.AppImage`;
    const uploaded = await fetch(
      `${server.service.coreUrl}/v1/apps/${seller.appId}/releases/${release.id}/artifacts/${filename}?platform=linux&arch=x64`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'application/octet-stream' },
        body: bytes,
      },
    );
    assert.equal(uploaded.status, 201);
    (
      await server.api.post(`/apps/${seller.appId}/releases/${release.id}/publish`, undefined, {
        token: seller.token,
      })
    ).expect(200);

    const page = await browser.newPage({ acceptDownloads: true });
    t.after(() => page.context().close());
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${server.service.payUrl}/portal`);
    await page.fill('#email', email);
    await page.click('#sign-in-form button[type="submit"]');
    await page.waitForSelector('#link-sent');
    await page.goto(await linkFromMail(email));
    await page.click('#confirm-sign-in');
    const downloads = page.getByRole('group', { name: 'Downloads' });
    await downloads.waitFor();
    assert.match((await downloads.textContent()) ?? '', /Version 1\.2\.0/);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      assert.equal(await overflow(page), 0, `the downloads fit at 375 px (${colorScheme})`);
      assert.deepEqual(await contrastProblems(page), [], `no text below AA contrast (${colorScheme})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByText('Release notes').click();
    await screenshot(page, 'portal-downloads-375');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      downloads.getByRole('link', { name: `Download ${filename}` }).click(),
    ]);
    assert.equal(download.suggestedFilename(), filename);
    const saved = fs.readFileSync((await download.path()) as string);
    assert.equal(
      createHash('sha256').update(saved).digest('hex'),
      createHash('sha256').update(bytes).digest('hex'),
      'the file downloaded is the one uploaded',
    );
    const artifacts = (
      await server.api.get(`/apps/${seller.appId}/releases/${release.id}/artifacts`, { token: seller.token })
    ).expect(200).body.artifacts;
    assert.equal(artifacts[0].downloads, 1, 'counted once');
  });
});
