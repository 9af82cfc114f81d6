import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import {
  createApiKey,
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../testing/harness.js';
import { assertError, type HttpResponse } from '../../testing/http-client.js';

/**
 * The seller's brand over HTTP: the settings and their validation, the logo upload (what is
 * refused, what is re-encoded, how it is served), what another seller can and cannot reach, and
 * the checkout pages' policy (frame-ancestors for the overlay, the colour by its hash).
 */
let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const image = (width: number, height: number, background = '#3366cc') =>
  sharp({ create: { width, height, channels: 4, background } });
const png = (width = 800, height = 400) => image(width, height).png().toBuffer();

function uploadLogo(seller: { token: string }, body: Buffer | string, type = 'image/png') {
  return server.api.put('/brand/logo', undefined, {
    token: seller.token,
    headers: { 'content-type': type },
    raw: body,
  });
}

const SVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>`;

const brandOf = async (seller: { token: string }) =>
  (await server.api.get('/brand', { token: seller.token })).expect(200).body;

/**
 * The logo at its address (on the checkout host as this test reaches it), bytes and all: the test
 * client reads bodies as text.
 */
async function fetchLogo(url: string, headers: Record<string, string> = {}) {
  const { pathname, search } = new URL(url);
  const res = await fetch(`${server.service.payUrl}${pathname}${search}`, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function product(seller: SellerWithApp, extra: Record<string, unknown> = {}) {
  return (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: `Desk Lamp ${uniqueSuffix()}`, price: 19.99, currency: 'USD', ...extra },
      { token: seller.token },
    )
  ).expect(201).body as { id: string };
}

const frameAncestors = (res: { headers: Headers }) =>
  /frame-ancestors ([^;]+)/.exec(res.headers.get('content-security-policy') ?? '')?.[1];

describe('brand settings', () => {
  test('a new seller has an empty brand, with the overlay script’s address', async () => {
    const seller = await sellerWithApp(server);
    assert.deepEqual(await brandOf(seller), {
      id: null,
      displayName: null,
      accentColor: null,
      accentTextColor: null,
      logo: null,
      overlayOrigins: [],
      overlayScriptUrl: `${server.config.payPublicUrl}/overlay.js`,
      updatedAt: null,
    });
  });

  test('sets the name, colour and overlay sites; picks black or white text for the colour', async () => {
    const seller = await sellerWithApp(server);
    const saved = (
      await server.api.put(
        '/brand',
        {
          displayName: '  Lumen Works  ',
          accentColor: '#FFD400',
          overlayOrigins: ['https://shop.example.com', 'http://localhost:8080'],
        },
        { token: seller.token },
      )
    ).expect(200).body;
    assert.equal(saved.displayName, 'Lumen Works');
    assert.equal(saved.accentColor, '#ffd400');
    assert.equal(saved.accentTextColor, '#000000', 'yellow takes black text');
    assert.deepEqual(saved.overlayOrigins, ['https://shop.example.com', 'http://localhost:8080']);
    assert.match(saved.id, /^[0-9a-f-]{36}$/);
    assert.notEqual(saved.id, seller.user.id, 'the public id is not the account’s');
    assert.deepEqual(await brandOf(seller), saved);

    // Only the fields sent change; null removes.
    const dark = (
      await server.api.put('/brand', { accentColor: '#1a237e', displayName: null }, { token: seller.token })
    ).expect(200).body;
    assert.equal(dark.accentTextColor, '#ffffff', 'dark blue takes white text');
    assert.equal(dark.displayName, null);
    assert.deepEqual(dark.overlayOrigins, saved.overlayOrigins);
  });

  const refusals: [string, Record<string, unknown>, string, RegExp][] = [
    ['an empty name', { displayName: '' }, 'displayName', /1 to 80 characters/],
    ['a blank name', { displayName: '   ' }, 'displayName', /blank/],
    ['a name too long', { displayName: 'x'.repeat(81) }, 'displayName', /1 to 80 characters/],
    ['a name over two lines', { displayName: 'Lumen\nWorks' }, 'displayName', /one line/],
    ['a named colour', { accentColor: 'red' }, 'accentColor', /#rrggbb/],
    ['a short colour', { accentColor: '#fff' }, 'accentColor', /#rrggbb/],
    ['a colour with a bad digit', { accentColor: '#12345g' }, 'accentColor', /#rrggbb/],
    ['CSS in the colour', { accentColor: '#123456;background:url(x)' }, 'accentColor', /#rrggbb/],
    ['a wildcard site', { overlayOrigins: ['https://*.example.com'] }, 'overlayOrigins.0', /wildcard/],
    [
      'a site with a path',
      { overlayOrigins: ['https://shop.example.com/buy'] },
      'overlayOrigins.0',
      /no path/,
    ],
    ['a trailing slash', { overlayOrigins: ['https://shop.example.com/'] }, 'overlayOrigins.0', /no path/],
    ['plain http', { overlayOrigins: ['http://shop.example.com'] }, 'overlayOrigins.0', /https/],
    ['another scheme', { overlayOrigins: ['javascript:alert(1)'] }, 'overlayOrigins.0', /https/],
    ['credentials', { overlayOrigins: ['https://a@shop.example.com'] }, 'overlayOrigins.0', /credentials/],
    ['upper case', { overlayOrigins: ['https://Shop.example.com'] }, 'overlayOrigins.0', /as browsers write/],
    [
      'a default port written out',
      { overlayOrigins: ['https://ok.example.com', 'https://shop.example.com:443'] },
      'overlayOrigins.1',
      /as browsers write/,
    ],
    ['"none" as a site', { overlayOrigins: ["'none'"] }, 'overlayOrigins.0', /origin such as/],
    [
      'a header break',
      { overlayOrigins: ['https://shop.example.com; script-src *'] },
      'overlayOrigins.0',
      /origin/,
    ],
    [
      'eleven sites',
      { overlayOrigins: Array.from({ length: 11 }, (_, i) => `https://s${i}.example.com`) },
      'overlayOrigins',
      /more than 10/,
    ],
    [
      'the same site twice',
      { overlayOrigins: ['https://shop.example.com', 'https://shop.example.com'] },
      'overlayOrigins',
      /duplicate/,
    ],
    ['an unknown field', { logoUrl: 'https://x.example/logo.svg' }, 'logoUrl', /not a recognised field/],
    ['nothing', {}, 'body', /fewer than 1/],
  ];
  for (const [what, body, field, message] of refusals) {
    test(`refuses ${what} with a 400 naming ${field}, and changes nothing`, async () => {
      const seller = await sellerWithApp(server);
      const before = (
        await server.api.put(
          '/brand',
          { displayName: 'Before', accentColor: '#336699', overlayOrigins: ['https://before.example.com'] },
          { token: seller.token },
        )
      ).expect(200).body;
      const error = assertError(
        await server.api.put('/brand', body, { token: seller.token }),
        400,
        'validation_failed',
      );
      const detail = error.details?.find((d) => d.field === field);
      assert.ok(detail, `${field} named in ${JSON.stringify(error.details)}`);
      assert.match(detail.message, message);
      assert.deepEqual(await brandOf(seller), before);
    });
  }
});

describe('the logo', () => {
  test('a PNG is re-encoded within 480 × 160 and served with safe headers on both hosts', async () => {
    const seller = await sellerWithApp(server);
    const saved = (await uploadLogo(seller, await png(800, 400))).expect(200).body;
    assert.equal(saved.logo.contentType, 'image/png');
    assert.deepEqual([saved.logo.width, saved.logo.height], [320, 160]);
    assert.ok(saved.logo.url.startsWith(`${server.config.payPublicUrl}/brands/${saved.id}/logo?v=`));

    const served = await fetchLogo(saved.logo.url);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.equal(served.headers.get('x-content-type-options'), 'nosniff');
    assert.match(served.headers.get('content-security-policy') ?? '', /^default-src 'none'/);
    assert.equal(served.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(createHash('sha256').update(served.bytes).digest('hex'), saved.logo.sha256);
    assert.equal(served.bytes.length, saved.logo.bytes);
    const decoded = await sharp(served.bytes).metadata();
    assert.deepEqual([decoded.format, decoded.width, decoded.height], ['png', 320, 160]);

    // The address without the version is revalidated, and a client holding it gets a 304.
    const path = new URL(saved.logo.url).pathname;
    const bare = await fetchLogo(`${server.service.payUrl}${path}`);
    assert.equal(bare.headers.get('cache-control'), 'public, no-cache');
    const etag = bare.headers.get('etag') ?? '';
    assert.match(etag, /^"[0-9a-f]{32}"$/);
    const again = await fetchLogo(`${server.service.payUrl}${path}`, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.bytes.length, 0);

    // The core host serves the same bytes (the dashboard shows it from there).
    const core = await fetch(`${server.service.coreUrl}/v1${path}`);
    assert.equal(core.status, 200);
    assert.equal(core.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(Buffer.from(await core.arrayBuffer()), served.bytes);
  });

  test('a JPEG stays a JPEG; a WebP becomes a PNG; a new logo gets a new address', async () => {
    const seller = await sellerWithApp(server);
    const jpeg = (await uploadLogo(seller, await image(300, 100).jpeg().toBuffer(), 'image/jpeg')).expect(
      200,
    ).body;
    assert.equal(jpeg.logo.contentType, 'image/jpeg');
    assert.equal((await fetchLogo(jpeg.logo.url)).headers.get('content-type'), 'image/jpeg');
    // The declared type is not what decides: a WebP sent as octet-stream is read as a WebP.
    const webp = (
      await uploadLogo(
        seller,
        await image(200, 200, '#ff000080').webp().toBuffer(),
        'application/octet-stream',
      )
    ).expect(200).body;
    assert.equal(webp.logo.contentType, 'image/png');
    assert.deepEqual([webp.logo.width, webp.logo.height], [160, 160]);
    assert.notEqual(webp.logo.url, jpeg.logo.url);
    assert.equal((await sharp((await fetchLogo(webp.logo.url)).bytes).metadata()).hasAlpha, true);
  });

  test('no byte of the upload survives: a PNG with a script after it is served without it', async () => {
    const seller = await sellerWithApp(server);
    const polyglot = Buffer.concat([
      await png(100, 50),
      Buffer.from('<script>alert(document.domain)</script>'),
    ]);
    const saved = (await uploadLogo(seller, polyglot)).expect(200).body;
    const served = await fetchLogo(saved.logo.url);
    assert.equal(served.status, 200);
    assert.equal(served.bytes.includes('<script'), false);
  });

  const refusedUploads: [string, () => Promise<Buffer | string>, string, RegExp][] = [
    ['an SVG sent as a PNG', async () => SVG, 'image/png', /SVG is not accepted/],
    [
      'HTML with a script sent as a PNG',
      async () => '<html><script>alert(1)</script></html>',
      'image/png',
      /PNG, JPEG or WebP/,
    ],
    ['a GIF', async () => image(20, 20).gif().toBuffer(), 'application/octet-stream', /GIF is not accepted/],
    ['a truncated PNG', async () => (await png(400, 200)).subarray(0, 60), 'image/png', /not a complete PNG/],
    [
      'a small PNG of 25 million pixels',
      async () => image(5000, 5000).png({ compressionLevel: 9, palette: true, colours: 2 }).toBuffer(),
      'image/png',
      /too large an image/,
    ],
    ['an empty body', async () => '', 'image/png', /is empty/],
  ];
  for (const [what, make, type, message] of refusedUploads) {
    test(`refuses ${what} naming the logo, and keeps the logo there was`, async () => {
      const seller = await sellerWithApp(server);
      const before = (await uploadLogo(seller, await png(60, 20))).expect(200).body;
      const error = assertError(await uploadLogo(seller, await make(), type), 400, 'validation_failed');
      assert.equal(error.details?.[0]?.field, 'logo');
      assert.match(error.message, message);
      assert.deepEqual(await brandOf(seller), before);
      assert.equal((await fetchLogo(before.logo.url)).status, 200);
    });
  }

  test('refuses an upload over 256 KB with 413 naming the limit, before reading it', async () => {
    const seller = await sellerWithApp(server);
    const error = assertError(
      await uploadLogo(seller, Buffer.alloc(256 * 1024 + 1, 1)),
      413,
      'payload_too_large',
    );
    assert.match(error.message, /logo: must be at most 256 KB/);
    assert.equal((await brandOf(seller)).logo, null);
  });

  test('refuses a body sent as SVG, HTML or anything but an image type with 415', async () => {
    const seller = await sellerWithApp(server);
    for (const type of [
      'image/svg+xml',
      'text/html',
      'application/json',
      'multipart/form-data; boundary=x',
    ]) {
      const error = assertError(await uploadLogo(seller, SVG, type), 415, 'unsupported_media_type');
      assert.match(
        error.message,
        /logo: send the image with Content-Type image\/png, image\/jpeg, image\/webp/,
      );
    }
    assert.equal((await brandOf(seller)).logo, null);
  });

  test('removing the logo takes it off its address', async () => {
    const seller = await sellerWithApp(server);
    const saved = (await uploadLogo(seller, await png())).expect(200).body;
    const removed = (await server.api.delete('/brand/logo', { token: seller.token })).expect(200).body;
    assert.equal(removed.logo, null);
    const gone = await fetchLogo(saved.logo.url);
    assert.equal(gone.status, 404);
    assert.equal(gone.headers.get('x-content-type-options'), 'nosniff');
  });

  test('a closed account’s logo is no longer served', async () => {
    const seller = await sellerWithApp(server);
    const saved = (await uploadLogo(seller, await png())).expect(200).body;
    (await server.api.delete(`/admin/users/${seller.user.id}`, { token: await server.adminToken() })).expect(
      204,
    );
    assert.equal((await fetchLogo(saved.logo.url)).status, 404);
  });
});

describe('one seller’s brand is theirs alone', () => {
  test('another seller’s changes and uploads change only their own brand', async () => {
    const owner = await sellerWithApp(server);
    const stranger = await sellerWithApp(server);
    (
      await server.api.put(
        '/brand',
        { displayName: 'Owner Co', accentColor: '#336699', overlayOrigins: ['https://owner.example.com'] },
        { token: owner.token },
      )
    ).expect(200);
    const owned = (await uploadLogo(owner, await png(300, 100))).expect(200).body;

    const theirs = (
      await server.api.put(
        '/brand',
        { displayName: 'Stranger Ltd', overlayOrigins: ['https://stranger.example.com'] },
        { token: stranger.token },
      )
    ).expect(200).body;
    (await uploadLogo(stranger, await png(50, 50))).expect(200);
    (await server.api.delete('/brand/logo', { token: stranger.token })).expect(200);

    assert.notEqual(theirs.id, owned.id);
    assert.deepEqual(await brandOf(owner), owned, 'the owner’s brand is as they left it');
    assert.deepEqual((await brandOf(stranger)).overlayOrigins, ['https://stranger.example.com']);
    assert.equal((await fetchLogo(owned.logo.url)).status, 200);
  });

  test('settings are read and changed with the account’s own session only: no route takes a brand’s id', async () => {
    const owner = await sellerWithApp(server);
    const stranger = await sellerWithApp(server);
    const owned = (
      await server.api.put('/brand', { displayName: 'Owner Co' }, { token: owner.token })
    ).expect(200).body;
    // An app's API key is not the account: it can neither read nor change the brand.
    const key = (await createApiKey(server, owner.token, owner.appId)).key;
    assertError(await server.api.get('/brand', { token: key }), 403, 'user_token_required');
    assertError(
      await server.api.put('/brand', { displayName: 'Key Co' }, { token: key }),
      403,
      'user_token_required',
    );
    // The public id names the logo only.
    for (const path of [`/brands/${owned.id}`, `/brand/${owned.id}`, `/brands/${owned.id}/settings`]) {
      const res: HttpResponse = await server.api.get(path, { token: stranger.token });
      assert.ok([404, 405].includes(res.status), `${path} answered ${res.status}`);
    }
    assertError(
      await server.api.get(`/brand?id=${owned.id}`, { token: stranger.token }),
      400,
      'validation_failed',
    );
    assert.equal((await brandOf(stranger)).displayName, null);
  });
});

describe('the checkout pages’ policy', () => {
  test('a seller’s checkout pages may be framed by the sites they listed, and show their brand', async () => {
    const seller = await sellerWithApp(server);
    const item = await product(seller);
    (
      await server.api.put(
        '/brand',
        {
          displayName: 'Lumen </style><script>alert(1)</script> & Co',
          accentColor: '#0a7d4f',
          overlayOrigins: ['https://shop.example.com', 'http://127.0.0.1:8123'],
        },
        { token: seller.token },
      )
    ).expect(200);
    const logo = (await uploadLogo(seller, await png(300, 100))).expect(200).body.logo;

    const page = await server.pay.get(`/checkout/${item.id}`);
    page.expect(200);
    assert.equal(frameAncestors(page), 'https://shop.example.com http://127.0.0.1:8123');
    // The seller's text is escaped; the colour is in a style element the policy names by hash.
    assert.ok(page.text.includes('Lumen &lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co'));
    assert.equal(page.text.includes('<script>alert(1)'), false);
    const style = /<style>([^<]*)<\/style>/.exec(page.text)?.[1] ?? '';
    assert.equal(style, '.branded{--brand:#0a7d4f;--on-brand:#ffffff;--brand-ink:#0a7d4f}');
    const hash = createHash('sha256').update(style).digest('base64');
    assert.match(
      page.headers.get('content-security-policy') ?? '',
      new RegExp(`style-src 'self' 'sha256-${hash.replace(/[+/]/g, '\\$&')}';`),
    );
    assert.ok(page.text.includes(`src="${new URL(logo.url).pathname}${new URL(logo.url).search}"`));
    assert.ok(page.text.includes('<script src="/checkout/assets/overlay-frame.js" defer></script>'));
    assert.ok(page.text.includes('data-overlay-origins="https://shop.example.com http://127.0.0.1:8123"'));

    // The form's answers (a missing e-mail) and the receipt are the seller's pages too.
    const form = new URLSearchParams({ email: '', card: '4242 4242 4242 4242', method: 'card' });
    const again = await fetch(`${server.service.payUrl}/checkout/${item.id}`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    assert.equal(again.status, 422);
    assert.equal(frameAncestors(again), 'https://shop.example.com http://127.0.0.1:8123');
    form.set('email', 'buyer@example.com');
    const paid = await fetch(`${server.service.payUrl}/checkout/${item.id}`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    assert.equal(paid.status, 303);
    const receipt = await fetch(`${server.service.payUrl}${paid.headers.get('location')}`);
    assert.equal(receipt.status, 200);
    assert.equal(frameAncestors(receipt), 'https://shop.example.com http://127.0.0.1:8123');
    assert.match(
      await receipt.text(),
      /id="overlay-result" hidden data-product-id="[^"]+" data-transaction-id="[^"]+" data-license-key="[0-9A-Z-]+" data-email="buyer@example.com"/,
    );
  });

  test('every other page refuses to be framed', async () => {
    const listed = await sellerWithApp(server);
    (
      await server.api.put(
        '/brand',
        { overlayOrigins: ['https://shop.example.com'] },
        { token: listed.token },
      )
    ).expect(200);
    const other = await sellerWithApp(server);
    (await server.api.put('/brand', { displayName: 'No Overlay' }, { token: other.token })).expect(200);
    const unbranded = await sellerWithApp(server);
    const pages = [
      `/checkout/${(await product(other)).id}`,
      `/checkout/${(await product(unbranded)).id}`,
      `/checkout/${(await product(listed, { active: false })).id}`,
      '/checkout/00000000-0000-7000-8000-000000000000',
      '/portal',
    ];
    for (const path of pages) {
      const res = await server.pay.get(path);
      assert.equal(frameAncestors(res), "'none'", `${path} (${res.status})`);
      assert.equal(res.text.includes('overlay-frame.js'), false, path);
    }
    const dashboard = await fetch(`${server.service.coreUrl}/dashboard`);
    assert.equal(frameAncestors(dashboard), "'none'");
  });

  test('in a frame the receipt is shown even with autoRedirect, so the overlay hears of the purchase', async () => {
    const seller = await sellerWithApp(server, 'enterprise');
    (
      await server.api.put(
        '/brand',
        { overlayOrigins: ['https://shop.example.com'] },
        { token: seller.token },
      )
    ).expect(200);
    const item = await product(seller, { autoRedirect: true, successUrl: 'https://shop.example.com/thanks' });
    const paid = await fetch(`${server.service.payUrl}/checkout/${item.id}`, {
      method: 'POST',
      body: new URLSearchParams({ email: 'framed@example.com', card: '4242 4242 4242 4242', method: 'card' }),
      redirect: 'manual',
    });
    const receipt = `${server.service.payUrl}${paid.headers.get('location')}`;
    const framed = await fetch(receipt, { headers: { 'sec-fetch-dest': 'iframe' }, redirect: 'manual' });
    assert.equal(framed.status, 200);
    assert.match(await framed.text(), /id="overlay-result"/);
    const whole = await fetch(receipt, { headers: { 'sec-fetch-dest': 'document' }, redirect: 'manual' });
    assert.equal(whole.status, 303);
    assert.ok(whole.headers.get('location')?.startsWith('https://shop.example.com/thanks?'));
  });

  test('serves the overlay script to any site', async () => {
    const script = await server.pay.get('/overlay.js');
    script.expect(200);
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(script.headers.get('cross-origin-resource-policy'), 'cross-origin');
    assert.match(script.text, /LicensingCheckout/);
  });
});
