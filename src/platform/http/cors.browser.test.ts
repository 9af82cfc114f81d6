import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../testing/browser.js';
import {
  issueLicense,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
} from '../../testing/harness.js';

/**
 * A seller's web page on its own origin calls the client routes with `fetch` in Chromium: the
 * browser's own CORS checks (preflight included) let it read the answers, and refuse it a
 * seller route even with a valid bearer token in hand.
 */

let server: TestServer;
let browser: TestBrowser;
let shop: http.Server;
let shopOrigin: string;
let seller: SellerWithApp;
const logLines: string[] = [];

before(async () => {
  // Debug level: the client routes log their successful answers (preflights too) at debug.
  server = await startTestServer({ LOG_LEVEL: 'debug' }, { logLines });
  browser = await launchBrowser();
  seller = await sellerWithApp(server);
  // The seller's site: another port on loopback is another origin.
  shop = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Shop</title><h1>Shop</h1></html>');
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
});
after(async () => {
  await browser?.close();
  // Not started when the browser could not be: the file then fails at once instead of waiting here.
  if (shop) await new Promise((resolve) => shop.close(resolve));
  await server?.stop();
});

interface PageAnswer {
  ok: boolean;
  status?: number;
  body?: unknown;
  error?: string;
}

/** Runs fetch in the page; a CORS refusal is a TypeError there, returned as `error`. */
function fetchFromPage(
  page: Page,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<PageAnswer> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const res = await fetch(url, init);
        return { ok: true, status: res.status, body: await res.json() };
      } catch (error) {
        return { ok: false, error: String(error) };
      }
    },
    { url, init },
  );
}

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('a page on another origin', () => {
  test('verifies a key, binds a device, reads the key set and a validation failure', async () => {
    const license = await issueLicense(server, seller, { maxDevices: 1 });
    const page = await browser.newPage();
    await page.goto(shopOrigin);
    const base = `${server.service.coreUrl}/v1`;
    assert.notEqual(new URL(base).origin, shopOrigin);

    const verified = await fetchFromPage(
      page,
      `${base}/licenses/verify`,
      json({ key: license.key, hwuid: 'browser-1' }),
    );
    assert.equal(verified.status, 200, verified.error);
    assert.equal((verified.body as { valid: boolean }).valid, true, JSON.stringify(verified.body));

    const bound = await fetchFromPage(
      page,
      `${base}/licenses/validate-hardware`,
      json({ key: license.key, hwuid: 'browser-1' }),
    );
    assert.equal(bound.status, 200, bound.error);
    const token = (bound.body as { valid: boolean; license_token?: string }).license_token;
    assert.equal((bound.body as { valid: boolean }).valid, true);

    const keys = await fetchFromPage(page, `${base}/licenses/jwks`);
    assert.equal(keys.status, 200, keys.error);
    assert.ok((keys.body as { keys: unknown[] }).keys.length > 0);

    if (token) {
      const live = await fetchFromPage(page, `${base}/licenses/introspect`, json({ license_token: token }));
      assert.equal(live.status, 200, live.error);
      assert.equal((live.body as { active: boolean }).active, true);
    }

    const invalid = await fetchFromPage(page, `${base}/licenses/verify`, json({}));
    assert.equal(invalid.status, 400, invalid.error);
    assert.equal((invalid.body as { error: { code: string } }).error.code, 'validation_failed');

    // A JSON body is not a simple request: the browser asked first, once per path (it reuses a
    // preflight's answer for its max age).
    const preflights = logLines
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'http.request.completed' && entry.method === 'OPTIONS')
      .map((entry) => `${entry.status} ${entry.path}`);
    assert.deepEqual(preflights.sort(), [
      ...(token ? ['204 /v1/licenses/introspect'] : []),
      '204 /v1/licenses/validate-hardware',
      '204 /v1/licenses/verify',
    ]);
  });

  test('cannot call a seller route, even with a valid bearer token', async () => {
    const page = await browser.newPage();
    await page.goto(shopOrigin);
    const base = `${server.service.coreUrl}/v1`;
    const withToken = await fetchFromPage(page, `${base}/apps`, {
      headers: { authorization: `Bearer ${seller.token}` },
    });
    assert.equal(withToken.ok, false, 'the preflight is refused');
    assert.match(withToken.error ?? '', /Failed to fetch/);
    // A simple request goes out, but the page may not read its answer.
    const simple = await fetchFromPage(page, `${base}/apps`);
    assert.equal(simple.ok, false);
    const created = await fetchFromPage(page, `${base}/apps`, {
      ...json({ name: 'From a foreign page' }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${seller.token}` },
    });
    assert.equal(created.ok, false);
    const apps = (await server.api.get('/apps', { token: seller.token })).expect(200).body;
    const names = (apps.apps ?? apps.items ?? apps).map((app: { name: string }) => app.name);
    assert.ok(!names.includes('From a foreign page'), 'the refused request changed nothing');
  });
});
