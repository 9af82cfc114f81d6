import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../testing/harness.js';
import { httpClient } from '../testing/http-client.js';
import { DASHBOARD_POLICY } from './shell.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const core = () => httpClient(server.service.coreUrl);

describe('the dashboard as the core host serves it', () => {
  test('serves one page under a strict policy, whose one inline script is the hashed theme choice', async () => {
    const page = (await core().get('/dashboard')).expect(200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    const inline = [...page.text.matchAll(/<script>([^<]*)<\/script>/g)].map((match) => match[1] ?? '');
    assert.equal(inline.length, 1, 'one inline script');
    const hash = createHash('sha256')
      .update(inline[0] ?? '')
      .digest('base64');
    assert.equal(
      page.headers.get('content-security-policy'),
      `default-src 'none'; script-src 'self' 'sha256-${hash}'; style-src 'self'; img-src 'self' data:; ` +
        "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    assert.match(inline[0] ?? '', /localStorage/, 'it applies the stored theme');
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.match(page.text, /<script type="module" src="\/dashboard\/assets\/app\.js"><\/script>/);
    assert.match(page.text, /<link rel="stylesheet" href="\/dashboard\/assets\/app\.css">/);
    assert.match(page.text, /<link rel="icon" href="\/favicon\.svg" type="image\/svg\+xml">/);
    // Every other script has a src, and nothing carries styles of its own.
    assert.equal(page.text.match(/<script(?![^>]*\ssrc=)[^>]*>(?!try\{)/g), null);
    assert.doesNotMatch(page.text, /<style|\sstyle=/);
    assert.doesNotMatch(page.text, /https?:\/\//, 'nothing is loaded from another host');
  });

  test('serves the bundled script and stylesheet, minified and without source maps', async () => {
    const script = (await core().get('/dashboard/assets/app.js')).expect(200);
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(script.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(script.headers.get('content-security-policy'), DASHBOARD_POLICY);
    assert.ok(script.text.length > 10_000, 'Preact and the screens are in the bundle');
    assert.ok(script.text.split('\n').length < 20, 'minified');
    assert.doesNotMatch(script.text, /sourceMappingURL/);
    // The script calls its own origin's API; the only absolute URLs in it are XML namespaces.
    const urls = script.text.match(/https?:\/\/[^"'`\s)]+/g) ?? [];
    assert.deepEqual(
      urls.filter((url) => !url.startsWith('http://www.w3.org/')),
      [],
    );
    assert.match(script.text, /\/v1/);

    const styles = (await core().get('/dashboard/assets/app.css')).expect(200);
    assert.equal(styles.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.match(styles.text, /\.skip-link/);
    assert.doesNotMatch(styles.text, /@import|url\(/, 'no fonts or images from anywhere');
  });

  test('answers 304 to a browser that already holds the current asset', async () => {
    const first = (await core().get('/dashboard/assets/app.js')).expect(200);
    const etag = first.headers.get('etag');
    assert.ok(etag, 'assets carry an ETag');
    assert.equal(first.headers.get('cache-control'), 'no-cache');
    const again = await core().get('/dashboard/assets/app.js', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const stale = await core().get('/dashboard/assets/app.js', { headers: { 'if-none-match': '"old"' } });
    assert.equal(stale.status, 200);
    assert.equal(stale.text, first.text);
  });

  test('lives at the root of the core host only, not under /v1 nor on the checkout host', async () => {
    assert.equal((await server.api.get('/dashboard')).status, 404);
    assert.equal((await server.pay.get('/dashboard')).status, 404);
    assert.equal((await core().get('/dashboard/assets/other.js')).status, 404);
  });
});
