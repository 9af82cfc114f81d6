import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, screenshot, type TestBrowser } from '../../../testing/browser.js';
import { startTestServer, type TestServer } from '../../../testing/harness.js';
import { PGLITE_PASS_ONLY } from '../../../testing/store-pass.js';

/** The readable API reference of both hosts in headless Chromium. */

let server: TestServer;
let browser: TestBrowser;

before(async () => {
  if (PGLITE_PASS_ONLY) return;
  server = await startTestServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Opens a host's /docs, recording every request the page makes. */
async function openReference(origin: string) {
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  const response = await page.goto(`${origin}/docs`);
  assert.equal(response?.status(), 200);
  return { page, requests, consoleErrors };
}

describe('the API reference page', { skip: PGLITE_PASS_ONLY }, () => {
  test('lists every operation of the core document, loads nothing from elsewhere and runs no script', async () => {
    const document = (await server.api.get('/openapi.json')).expect(200).body;
    const expected = [
      ...Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      ),
      // What the service sends to webhook endpoints: one article per event, under its name.
      ...Object.keys(document.webhooks).map((name) => `POST ${name}`),
    ];
    const { page, requests, consoleErrors } = await openReference(server.service.coreUrl);

    const headings = await page.locator('article h3').allTextContents();
    assert.deepEqual(headings.map((text) => text.replace(/\s+/g, ' ').trim()).sort(), expected.sort());
    const verify = page.locator('article', {
      has: page.getByRole('heading', { name: 'POST /licenses/verify', exact: true }),
    });
    assert.match((await verify.textContent()) ?? '', /Verify a license key/);
    assert.match((await verify.textContent()) ?? '', /Public: no credentials/);
    const keys = page.locator('article', {
      has: page.getByRole('heading', { name: 'POST /apps/{appId}/api-keys', exact: true }),
    });
    assert.match((await keys.textContent()) ?? '', /user token only/);
    assert.match((await keys.textContent()) ?? '', /user_token_required/);
    const sale = page.locator('article', {
      has: page.getByRole('heading', { name: 'POST order.paid', exact: true }),
    });
    assert.match((await sale.textContent()) ?? '', /An order was paid/);
    assert.match((await sale.textContent()) ?? '', /transactionId/);
    const events = page.locator('section', { has: sale });
    assert.match(
      (await events.locator('table caption').first().textContent()) ?? '',
      /Headers of every delivery/,
    );
    assert.match((await events.textContent()) ?? '', /webhook-signature/);
    // Paths are relative to {base_url}, which the header names; a route at the root says where it is.
    assert.match((await page.locator('header').textContent()) ?? '', /paths are relative to .*\/v1/);
    const probe = page.locator('article', {
      has: page.getByRole('heading', { name: 'GET /readyz', exact: true }),
    });
    assert.match((await probe.textContent()) ?? '', /At the host’s root: http:\/\/[^ ]+\/readyz/);

    assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), '/favicon.svg');
    const icon = await fetch(new URL('/favicon.svg', server.service.coreUrl));
    assert.deepEqual([icon.status, icon.headers.get('content-type')], [200, 'image/svg+xml']);
    await icon.arrayBuffer();
    assert.equal(await page.locator('script').count(), 0);
    assert.deepEqual(consoleErrors, [], 'the strict policy refused nothing the page needs');
    const origin = new URL(server.service.coreUrl).origin;
    assert.deepEqual(
      requests.filter((url) => new URL(url).origin !== origin),
      [],
      'no request leaves our host',
    );
    const docs = await fetch(`${server.service.coreUrl}/docs`);
    // Read to the end: an unread body of this size (some 360 KB) holds the connection open, and
    // the server's stop waited out its 30 s deadline for it.
    await docs.arrayBuffer();
    const policy = docs.headers.get('content-security-policy') ?? '';
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /style-src 'sha256-[A-Za-z0-9+/=]+'/);
    assert.doesNotMatch(policy, /unsafe-inline|https?:/);
    await screenshot(page, 'api-reference-core', 'viewport');
  });

  test('is usable from the keyboard: the first Tab reaches the skip link, which moves to the operations', async () => {
    const { page } = await openReference(server.service.coreUrl);
    await page.keyboard.press('Tab');
    const focused = page.locator(':focus');
    assert.equal(await focused.textContent(), 'Skip to the operations');
    await page.keyboard.press('Enter');
    assert.ok(
      await page.locator('main').evaluate((main) => main.matches(':focus')),
      'Enter moves to the operations',
    );
    assert.equal(await page.getByRole('navigation', { name: 'Contents' }).count(), 1);
    assert.ok((await page.getByRole('link', { name: 'GET /products', exact: true }).count()) >= 1);
  });

  test('the checkout host has its own, with its pages and no credentials', async () => {
    const { page, requests } = await openReference(server.service.payUrl);
    const headings = (await page.locator('article h3').allTextContents()).map((text) =>
      text.replace(/\s+/g, ' '),
    );
    assert.ok(headings.includes('GET /checkout/{productId}'));
    assert.ok(headings.includes('POST /api/checkout/mirror/validate'));
    assert.match(
      (await page.locator('#authentication').textContent()) ?? '',
      /every route of this host is public/,
    );
    const origin = new URL(server.service.payUrl).origin;
    assert.deepEqual(
      requests.filter((url) => new URL(url).origin !== origin),
      [],
    );
    await screenshot(page, 'api-reference-checkout');
  });
});
