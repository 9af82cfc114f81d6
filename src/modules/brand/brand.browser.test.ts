import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { CheckoutClient } from '../../../packages/client/src/index.js';
import { launchBrowser, screenshot, type TestBrowser } from '../../testing/browser.js';
import {
  sellerWithApp,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../../testing/harness.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';

/**
 * The seller's brand and the overlay checkout in headless Chromium: a branded checkout page as a
 * buyer sees it, and a seller's shop page (a loopback server) that opens the checkout in the
 * overlay, pays with the sandbox card and hears of the purchase, or is refused the frame when its
 * origin is not one the seller listed.
 */
let server: TestServer;
let browser: TestBrowser;
let shop: Receiver;
/** The shop's origin as the seller lists it, and the same server under a name not listed. */
let listedOrigin: string;
let unlistedOrigin: string;

const GOOD_CARD = '4242 4242 4242 4242';
const ACCENT = '#0a7d4f';

before(async () => {
  server = await startTestServer();
  browser = await launchBrowser();
  shop = await startReceiver();
  listedOrigin = new URL(shop.url).origin;
  unlistedOrigin = listedOrigin.replace('127.0.0.1', 'localhost');
});
after(async () => {
  await browser?.close();
  await shop?.close();
  await server?.stop();
});

async function openPage(t: TestContext): Promise<{ page: Page; console: string[] }> {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  const console: string[] = [];
  page.on('console', (message) => console.push(message.text()));
  return { page, console };
}

/** A seller with a brand (name, colour, logo, the shop as overlay site) and a product on sale. */
async function brandedSeller(extra: Record<string, unknown> = {}) {
  const seller = await sellerWithApp(server);
  (
    await server.api.put(
      '/brand',
      { displayName: 'Lumen Works', accentColor: ACCENT, overlayOrigins: [listedOrigin] },
      { token: seller.token },
    )
  ).expect(200);
  const logo = await sharp({
    create: { width: 240, height: 80, channels: 4, background: { r: 10, g: 125, b: 79, alpha: 1 } },
  })
    .composite([{ input: Buffer.from(svgMark), top: 0, left: 0 }])
    .png()
    .toBuffer();
  (
    await server.api.put('/brand/logo', undefined, {
      token: seller.token,
      headers: { 'content-type': 'image/png' },
      raw: logo,
    })
  ).expect(200);
  const product = (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'Desk Lamp Pro', price: 19.99, currency: 'USD', ...extra },
      { token: seller.token },
    )
  ).expect(201).body as { id: string };
  return { seller, product };
}

// Drawn into the PNG on our side only: what the seller uploads is the PNG.
const svgMark =
  '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="80"><circle cx="40" cy="40" r="26" fill="#fff"/><rect x="84" y="30" width="130" height="20" rx="6" fill="#fff"/></svg>';

/** The seller's shop page: the overlay script from the checkout host and a Buy button. */
function shopPage(productId: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lamp shop</title></head>
<body>
<h1>Lamp shop</h1>
<button type="button" data-licensing-checkout="${productId}">Buy the lamp</button>
<script src="${server.service.payUrl}/overlay.js"></script>
<script>
  window.checkoutEvents = [];
  for (const type of ['open', 'success', 'close'])
    document.addEventListener('licensing-checkout:' + type, (event) => window.checkoutEvents.push({ type, detail: event.detail }));
</script>
</body></html>`;
}

interface CheckoutEvent {
  type: string;
  detail: Record<string, unknown>;
}
/** What the shop page heard from the overlay (its script keeps the events in a list). */
const eventsOn = (page: Page) => page.evaluate('window.checkoutEvents') as Promise<CheckoutEvent[]>;
const waitForEvent = (page: Page, type: string) =>
  page.waitForFunction(`window.checkoutEvents.some((event) => event.type === ${JSON.stringify(type)})`);

describe('the seller’s brand on the checkout page', () => {
  test('shows the seller’s name and logo, and pays in their colour with readable text', async (t) => {
    const { product } = await brandedSeller();
    const { page, console } = await openPage(t);
    await page.goto(`${server.service.payUrl}/checkout/${product.id}`);

    assert.equal(await page.locator('.seller-name').textContent(), 'Lumen Works');
    const logo = page.locator('img.seller-logo');
    await logo.waitFor();
    const shown = await logo.evaluate((element) => {
      const img = element as unknown as { complete: boolean; naturalWidth: number };
      return { loaded: img.complete && img.naturalWidth > 0, height: element.getBoundingClientRect().height };
    });
    assert.deepEqual(shown, { loaded: true, height: 40 });
    const pay = page.getByRole('button', { name: /^Pay \$19\.99/ });
    const colours = await pay.evaluate((button) => {
      const style = button.ownerDocument.defaultView?.getComputedStyle(button);
      return [style?.backgroundColor, style?.color];
    });
    // Applied only if the page's policy allowed its style element by hash.
    assert.deepEqual(colours, ['rgb(10, 125, 79)', 'rgb(255, 255, 255)']);
    assert.deepEqual(
      console.filter((line) => /Content Security Policy/.test(line)),
      [],
      'nothing on the page was refused',
    );
    await screenshot(page, 'checkout-branded');
  });
});

describe('the overlay checkout', () => {
  test('a listed site opens the checkout over its page, and hears of the purchase', async (t) => {
    const { product } = await brandedSeller();
    shop.answer({ status: 200, body: shopPage(product.id), headers: { 'content-type': 'text/html' } });
    const { page } = await openPage(t);
    await page.goto(`${listedOrigin}/shop`);
    await page.getByRole('button', { name: 'Buy the lamp' }).click();

    const dialog = page.getByRole('dialog', { name: 'Checkout' });
    await dialog.waitFor();
    const frame = page.frameLocator('iframe[title="Checkout"]');
    await frame.getByRole('heading', { level: 1, name: 'Desk Lamp Pro' }).waitFor();
    await frame.getByLabel('E-mail').fill('overlay@example.com');
    await frame.getByLabel('Card number').fill(GOOD_CARD);
    await screenshot(page, 'checkout-overlay');
    await frame.getByRole('button', { name: /^Pay/ }).click();
    await frame.getByRole('heading', { level: 1, name: 'Payment complete' }).waitFor();
    const licenseKey = await frame.getByLabel('Your license key').inputValue();

    await waitForEvent(page, 'success');
    const success = (await eventsOn(page)).find((event) => event.type === 'success');
    assert.equal(success?.detail.productId, product.id);
    assert.equal(success?.detail.licenseKey, licenseKey);
    assert.equal(success?.detail.email, 'overlay@example.com');
    const validation = await new CheckoutClient({ payUrl: server.service.payUrl }).validatePurchase({
      license: licenseKey,
      email: 'overlay@example.com',
    });
    assert.equal(validation.verified, true);
    if (validation.verified) assert.equal(validation.purchase.transactionId, success?.detail.transactionId);

    // The buyer closes the overlay; the page hears it closed after a purchase.
    await page.getByRole('button', { name: 'Close checkout' }).click();
    await waitForEvent(page, 'close');
    const closed = (await eventsOn(page)).find((event) => event.type === 'close');
    assert.deepEqual(closed?.detail, { productId: product.id, reason: 'completed' });
    assert.equal(await page.getByRole('dialog').count(), 0);
  });

  test('the checkout’s cancel link closes the overlay instead of leaving the page', async (t) => {
    const { product } = await brandedSeller({ cancelUrl: `${listedOrigin}/cart` });
    shop.answer({ status: 200, body: shopPage(product.id), headers: { 'content-type': 'text/html' } });
    const { page } = await openPage(t);
    await page.goto(`${listedOrigin}/shop`);
    await page.getByRole('button', { name: 'Buy the lamp' }).click();
    const frame = page.frameLocator('iframe[title="Checkout"]');
    await frame.getByRole('link', { name: 'Cancel and return to the seller' }).click();
    await waitForEvent(page, 'close');
    const events = await eventsOn(page);
    assert.deepEqual(
      events.map((event) => event.type),
      ['open', 'close'],
    );
    assert.deepEqual(events[1]?.detail, { productId: product.id, reason: 'canceled' });
    assert.equal(page.url(), `${listedOrigin}/shop`, 'the shop page stayed');
  });

  test('a site the seller did not list cannot frame the checkout', async (t) => {
    const { product } = await brandedSeller();
    shop.answer({ status: 200, body: shopPage(product.id), headers: { 'content-type': 'text/html' } });
    const { page } = await openPage(t);
    await page.goto(`${unlistedOrigin}/shop`);
    const answered = page.waitForResponse((res) => res.url().includes(`/checkout/${product.id}`));
    const refused = page.waitForEvent('console', (message) => message.text().includes('frame-ancestors'));
    await page.getByRole('button', { name: 'Buy the lamp' }).click();
    const response = await answered;
    assert.equal(response.status(), 200);
    assert.match(
      (await response.allHeaders())['content-security-policy'] ?? '',
      new RegExp(`frame-ancestors ${listedOrigin}$`),
    );

    // The browser refuses to show it, saying why: the frame holds no checkout, the page hears nothing.
    const refusal = (await refused).text();
    assert.match(refusal, /violates the following Content Security Policy directive: "frame-ancestors /);
    assert.ok(refusal.includes(listedOrigin), refusal);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    assert.ok(frame, 'the overlay made its frame');
    assert.equal(await frame.locator('#checkout-form').count(), 0, 'no checkout form in the frame');
    assert.deepEqual(
      (await eventsOn(page)).map((event) => event.type),
      ['open'],
    );
    await screenshot(page, 'checkout-overlay-refused');
  });
});

describe('the brand in the seller dashboard', () => {
  test('a seller sets their name, colour, overlay site and logo, with a preview, and is told what is wrong', async (t) => {
    const seller = await signUp(server);
    const { page, console } = await openPage(t);
    await page.goto(`${server.service.coreUrl}/dashboard`);
    await page.getByLabel('E-mail').fill(seller.user.email);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Brand', exact: true })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Brand' }).waitFor();

    await page.getByLabel('Name buyers see').fill('Lumen Works');
    await page.getByLabel('Accent colour', { exact: true }).fill('#ffd400');
    const pay = page.locator('.preview-pay');
    const previewColours = () =>
      pay.evaluate((element) => {
        const style = element.ownerDocument.defaultView?.getComputedStyle(element);
        return [style?.backgroundColor, style?.color];
      });
    assert.deepEqual(await previewColours(), ['rgb(255, 212, 0)', 'rgb(0, 0, 0)'], 'black reads on yellow');
    assert.equal(await page.locator('.preview-seller').textContent(), 'Lumen Works');

    // A site written with plain http is refused, and the form says which line.
    const sites = page.getByLabel('Sites that may open the overlay checkout');
    await sites.fill(`https://shop.example.com\nhttp://shop.example.com`);
    await page.getByRole('button', { name: 'Save brand' }).click();
    const problem = page.getByRole('alert');
    await problem.waitFor();
    assert.match((await problem.textContent()) ?? '', /overlayOrigins\.1.*must use https/);
    assert.equal(
      (await server.api.get('/brand', { token: seller.token })).expect(200).body.displayName,
      null,
    );
    await sites.fill('https://shop.example.com');
    await page.getByRole('button', { name: 'Save brand' }).click();
    await page.getByRole('status').filter({ hasText: 'Brand saved' }).waitFor();

    // An SVG is refused by the service; a PNG is previewed from the file, then served.
    const logoFile = page.getByLabel('Logo file');
    await logoFile.setInputFiles({
      name: 'logo.svg',
      mimeType: 'image/svg+xml',
      buffer: Buffer.from(svgMark),
    });
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /SVG and other types are not accepted/ })
      .waitFor();
    const png = await sharp({ create: { width: 300, height: 100, channels: 3, background: '#0a7d4f' } })
      .png()
      .toBuffer();
    await logoFile.setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
    const preview = page.locator('.preview-logo');
    // Attribute selectors, not a predicate: the dashboard's policy allows no script of the test's.
    await page.locator('.preview-logo[src^="data:image/png"]').waitFor();
    await page.getByRole('button', { name: 'Upload logo' }).click();
    await page.getByRole('status').filter({ hasText: 'Logo uploaded' }).waitFor();
    await page.locator('.preview-logo[src^="/v1/brands/"]').waitFor();
    assert.equal(
      await preview.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth > 0),
      true,
      'the logo loads from the core host',
    );

    const saved = (await server.api.get('/brand', { token: seller.token })).expect(200).body;
    assert.equal(saved.displayName, 'Lumen Works');
    assert.equal(saved.accentColor, '#ffd400');
    assert.deepEqual(saved.overlayOrigins, ['https://shop.example.com']);
    assert.deepEqual([saved.logo?.width, saved.logo?.height], [300, 100]);
    assert.deepEqual(
      console.filter((line) => /Content Security Policy/.test(line)),
      [],
      'the preview’s colours and logo are allowed by the dashboard’s policy',
    );
    await screenshot(page, 'dashboard-brand');

    // At a phone's width the preview goes under the settings, and nothing runs off the screen.
    await page.setViewportSize({ width: 375, height: 800 });
    assert.equal(Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')), 0);
    await screenshot(page, 'dashboard-brand-phone');
  });
});
