import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Receiver, startReceiver } from '../../../src/testing/receiver.js';
import { CheckoutClient, LicensingApiError } from './index.js';

/** A loopback server stands in for the checkout host's HTTP boundary and answers as told. */
let host: Receiver;
let checkout: CheckoutClient;

before(async () => {
  host = await startReceiver();
  checkout = new CheckoutClient({ payUrl: `${host.url}/` });
});
after(() => host.close());

const json = (status: number, value: unknown) => ({
  status,
  body: JSON.stringify(value),
  headers: { 'content-type': 'application/json' },
});

function lastRequest() {
  const request = host.requests.at(-1);
  assert.ok(request);
  return { path: request.path, contentType: request.headers['content-type'], body: JSON.parse(request.body) };
}

describe('CheckoutClient', () => {
  test('validatePurchase posts license and e-mail outside /v1 and returns a verified purchase', async () => {
    const verified = {
      success: true,
      verified: true,
      status: 'successful',
      purchase: {
        id: 'ord_1',
        productId: 'prod_1',
        createdAt: '2026-03-01T12:00:00.000Z',
        transactionId: 'txn_1',
        subscriptionId: null,
      },
    };
    host.answer(json(200, verified));
    const answer = await checkout.validatePurchase({ license: 'LIC-A', email: 'ann@example.com' });
    assert.deepEqual(answer, verified);
    assert.deepEqual(lastRequest(), {
      path: '/api/checkout/mirror/validate',
      contentType: 'application/json',
      body: { license: 'LIC-A', email: 'ann@example.com' },
    });
    if (answer.verified) assert.equal(answer.purchase.transactionId, 'txn_1');
  });

  test('validatePurchase returns the not-verified answer as data, not as an error', async () => {
    const notVerified = {
      success: false,
      verified: false,
      status: 'not_verified',
      code: 'purchase_not_verified',
      message: 'No paid purchase matches this license and e-mail',
    };
    host.answer(json(200, notVerified));
    const answer = await checkout.validatePurchase({ license: 'LIC-A', email: 'bob@example.com' });
    assert.deepEqual(answer, notVerified);
    assert.equal(answer.verified ? 'verified' : answer.code, 'purchase_not_verified');
  });

  test('chargeRenewal posts the snake_case body with the callback secret and returns the charge', async () => {
    const charge = {
      success: true,
      duplicate: false,
      status: 'paid',
      subscriptionId: 'sub_1',
      orderId: 'ord_2',
      transactionId: 'txn_2',
      amount: 19.99,
      currency: 'USD',
      currentPeriodEnd: '2027-01-21T09:00:00.000Z',
      licenseExpiresAt: '2027-01-21T09:00:00.000Z',
    };
    host.answer(json(200, charge));
    const answer = await checkout.chargeRenewal({
      subscriptionId: 'sub_1',
      amount: 19.99,
      currency: 'USD',
      callbackSecret: 'cbs_secret',
    });
    assert.deepEqual(answer, charge);
    assert.deepEqual(lastRequest(), {
      path: '/api/checkout/mirror/subscription/charge',
      contentType: 'application/json',
      body: { subscription_id: 'sub_1', amount: 19.99, currency: 'USD', callback_secret: 'cbs_secret' },
    });
  });

  test('turns error answers into LicensingApiError with status, code, details and request id', async () => {
    const cases = [
      { status: 401, code: 'invalid_callback_secret', details: undefined },
      { status: 402, code: 'payment_declined', details: undefined },
      {
        status: 409,
        code: 'renewal_not_due',
        details: [{ field: 'currentPeriodEnd', message: '2027-01-21' }],
      },
      { status: 400, code: 'validation_failed', details: [{ field: 'amount', message: 'must be positive' }] },
      { status: 429, code: 'rate_limited', details: undefined },
    ];
    for (const { status, code, details } of cases) {
      host.answer(
        json(status, { error: { code, message: `${code} happened`, details, requestId: 'req_9' } }),
      );
      await assert.rejects(
        checkout.chargeRenewal({
          subscriptionId: 'sub_1',
          amount: 1,
          currency: 'USD',
          callbackSecret: 'cbs',
        }),
        (error: unknown) =>
          error instanceof LicensingApiError &&
          error.status === status &&
          error.code === code &&
          error.message === `${code} happened` &&
          error.requestId === 'req_9' &&
          JSON.stringify(error.details) === JSON.stringify(details ?? []),
        code,
      );
    }
  });

  test('reports an answer that is not the service error body as unexpected_response', async () => {
    host.answer({ status: 502, body: '<html>Bad Gateway</html>' });
    await assert.rejects(
      checkout.validatePurchase({ license: 'LIC-A', email: 'ann@example.com' }),
      (error: unknown) =>
        error instanceof LicensingApiError && error.status === 502 && error.code === 'unexpected_response',
    );
  });

  test('builds the checkout link for a product, with a strict mode payload when given', () => {
    const shop = new CheckoutClient({ payUrl: 'https://pay.example.com/' });
    assert.equal(shop.checkoutUrl('prod_1'), 'https://pay.example.com/checkout/prod_1');
    assert.equal(
      shop.checkoutUrl('prod_1', 'v1.abc-_'),
      'https://pay.example.com/checkout/prod_1?payload=v1.abc-_',
    );
  });
});
