import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sellerWithApp, startTestServer, type TestServer } from '../../testing/harness.js';
import { assertError } from '../../testing/http-client.js';

/**
 * Registration refuses a target on a private address however the address is written, so a
 * seller never learns of a private host through a registered webhook. Test servers allow
 * private targets for their loopback receivers; this one does not.
 */
let server: TestServer;
before(async () => {
  server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'false' });
});
after(() => server.stop());

const PRIVATE_TARGETS = [
  'http://[::127.0.0.1]/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://[::ffff:7f00:1]/hook',
  'http://[::7f00:1]/hook',
  'http://[0:0:0:0:0:0:127.0.0.1]/hook',
  'http://[::]/hook',
  'http://[::1]/hook',
  'http://0.0.0.0/hook',
  'http://2130706433/hook',
  'http://0x7f.1/hook',
  'http://017700000001/hook',
  'http://127.1/hook',
  'http://[::ffff:a9fe:a9fe]/latest/meta-data',
  'http://localhost./hook',
];

describe('webhook targets at registration', () => {
  test('a webhook on a loopback, unspecified or private address in any notation is refused, naming url', async () => {
    const seller = await sellerWithApp(server);
    for (const url of PRIVATE_TARGETS) {
      const error = assertError(
        await server.api.post('/webhooks', { url, events: ['license.created'] }, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.equal(error.details?.[0]?.field, 'url', url);
    }
    const list = (await server.api.get('/webhooks', { token: seller.token })).expect(200).body;
    assert.equal(list.total, 0, 'nothing registered');
  });

  test('a public target is still registered', async () => {
    const seller = await sellerWithApp(server);
    const body = { url: 'https://hooks.example.com/in', events: ['license.created'] };
    (await server.api.post('/webhooks', body, { token: seller.token })).expect(201);
  });

  test('a product’s merchant webhook on a private address is refused, naming merchantWebhookUrl', async () => {
    const seller = await sellerWithApp(server);
    const product = { appId: seller.appId, name: 'Pro', price: 10, currency: 'USD' };
    for (const merchantWebhookUrl of PRIVATE_TARGETS) {
      const error = assertError(
        await server.api.post('/products', { ...product, merchantWebhookUrl }, { token: seller.token }),
        400,
        'validation_failed',
      );
      assert.equal(error.details?.[0]?.field, 'merchantWebhookUrl', merchantWebhookUrl);
    }
    assert.equal((await server.api.get('/products', { token: seller.token })).expect(200).body.total, 0);
    const created = (
      await server.api.post(
        '/products',
        { ...product, merchantWebhookUrl: 'https://shop.example/hooks' },
        { token: seller.token },
      )
    ).expect(201).body;
    const patched = await server.api.patch(
      `/products/${created.id}`,
      { merchantWebhookUrl: 'http://[::127.0.0.1]/hook' },
      { token: seller.token },
    );
    assert.equal(assertError(patched, 400, 'validation_failed').details?.[0]?.field, 'merchantWebhookUrl');
    const kept = (await server.api.get(`/products/${created.id}`, { token: seller.token })).expect(200).body;
    assert.equal(kept.merchantWebhookUrl, 'https://shop.example/hooks');
  });
});
