import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  bodySignature,
  generateWebhookSecret,
  standardSignature,
  verifyBodySignature,
} from './webhook-signature.js';

describe('webhook signatures', () => {
  const secret = generateWebhookSecret();
  const body = JSON.stringify({ id: 'evt', type: 'license.created', data: { a: 1 } });

  test('the body signature verifies prefixed or bare, and not with another secret or body', () => {
    const header = bodySignature(secret, body);
    assert.match(header, /^sha256=[0-9a-f]{64}$/);
    assert.ok(verifyBodySignature(secret, body, header));
    assert.ok(verifyBodySignature(secret, body, header.slice('sha256='.length)));
    assert.ok(!verifyBodySignature(generateWebhookSecret(), body, header));
    assert.ok(!verifyBodySignature(secret, `${body} `, header));
    assert.ok(!verifyBodySignature(secret, body, 'sha256=abc'));
  });

  test('the Standard Webhooks signature verifies with the standard’s own library', () => {
    const id = 'msg_1';
    const now = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(now),
      'webhook-signature': standardSignature(secret, id, now, body),
    };
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, headers));
    const stale = {
      ...headers,
      'webhook-timestamp': String(now - 3600),
      'webhook-signature': standardSignature(secret, id, now - 3600, body),
    };
    assert.throws(() => new Webhook(secret).verify(body, stale), /timestamp/i);
  });
});
