import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../../../src/testing/harness.js';
import { buyWithSandbox } from '../../../src/testing/purchases.js';
import { type Receiver, startReceiver } from '../../../src/testing/receiver.js';
import { CheckoutClient, LicensingApiError, LicensingClient, responseInfo } from './index.js';

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

describe('CheckoutClient.startTrial against the service', () => {
  let server: TestServer;
  let seller: SellerWithApp;
  let shop: CheckoutClient;
  before(async () => {
    server = await startTestServer();
    seller = await sellerWithApp(server);
    shop = new CheckoutClient({ payUrl: server.service.payUrl, retryDelayMs: 1 });
  });
  after(() => server.stop());

  const product = async (extra: Record<string, unknown> = { trialDays: 7 }) =>
    (
      await server.api.post(
        '/products',
        { appId: seller.appId, name: 'Trial Tool', price: 29, currency: 'USD', ...extra },
        { token: seller.token },
      )
    ).expect(201).body as { id: string };
  const email = () => `trial-${uniqueSuffix()}@example.com`;
  const trialLicenses = async (productId: string) =>
    server.db
      .selectFrom('licenses')
      .select(['key', 'email', 'status'])
      .where('product_id', '=', productId)
      .execute();
  const refusedWith = (status: number, code: string, field?: string) => (error: unknown) =>
    error instanceof LicensingApiError &&
    error.status === status &&
    error.code === code &&
    typeof error.requestId === 'string' &&
    (field === undefined || error.details[0]?.field === field);

  test('starts a trial bound to the device, which verifies as TRIAL until its end', async () => {
    const { id: productId } = await product();
    const buyer = email();
    const trial = await shop.startTrial({ productId, email: buyer, hwuid: 'sdk-pc-1' });
    assert.deepEqual(
      {
        ...trial,
        trialId: typeof trial.trialId,
        licenseKey: typeof trial.licenseKey,
        expiresAt: typeof trial.expiresAt,
      },
      {
        trialId: 'string',
        licenseKey: 'string',
        productId,
        email: buyer,
        status: 'TRIAL',
        expiresAt: 'string',
        trialDays: 7,
        hwBound: true,
      },
    );
    const info = responseInfo(trial);
    assert.equal(info?.status, 201);
    assert.equal(info?.replayed, false);
    assert.match(info?.idempotencyKey ?? '', /^[0-9a-f-]{36}$/, 'a creating call carries a key');

    const client = new LicensingClient({ baseUrl: server.service.coreUrl });
    const key = trial.licenseKey as string;
    const result = await client.verify({ key, hwuid: 'sdk-pc-1', appId: seller.appId });
    assert.equal(result.valid, true);
    assert.equal(result.status, 'TRIAL');
    assert.deepEqual(await trialLicenses(productId), [{ key, email: buyer, status: 'trial' }]);
  });

  test('a trial by e-mail answers no key: whoever typed the address gets nothing to use', async () => {
    const { id: productId } = await product();
    const someone = email();
    const trial = await shop.startTrial({ productId, email: someone });
    assert.equal(trial.licenseKey, null);
    assert.equal(trial.hwBound, false);
    assert.equal(trial.status, 'TRIAL');
    const [stored] = await trialLicenses(productId);
    assert.equal(stored?.email, someone);
    assert.equal(JSON.stringify(trial).includes(stored?.key ?? '-'), false, 'the key is not in the answer');
  });

  test('a second trial for the address (any case, any +tag) or the device rejects with 409 trial_already_used and issues nothing', async () => {
    const { id: productId } = await product();
    const buyer = email();
    await shop.startTrial({ productId, email: buyer });
    await assert.rejects(
      shop.startTrial({ productId, email: buyer.toUpperCase().replace('@', '+again@') }),
      refusedWith(409, 'trial_already_used', 'email'),
    );
    await shop.startTrial({ productId, email: email(), hwuid: 'sdk-pc-2' });
    await assert.rejects(
      shop.startTrial({ productId, email: email(), hwuid: 'sdk-pc-2' }),
      refusedWith(409, 'trial_already_used', 'hwuid'),
    );
    assert.equal((await trialLicenses(productId)).length, 2);
  });

  test('a buyer holding a paid license gets 409 license_already_owned; a product without a trial 409 product_unavailable', async () => {
    const { id: productId } = await product();
    const buyer = email();
    await buyWithSandbox(server, productId, buyer);
    await assert.rejects(
      shop.startTrial({ productId, email: buyer, hwuid: 'sdk-pc-4' }),
      refusedWith(409, 'license_already_owned', 'email'),
    );
    const plain = await product({});
    await assert.rejects(
      shop.startTrial({ productId: plain.id, email: email() }),
      refusedWith(409, 'product_unavailable'),
    );
    await assert.rejects(
      shop.startTrial({ productId: '00000000-0000-4000-8000-000000000000', email: email() }),
      refusedWith(404, 'not_found'),
    );
    assert.equal((await trialLicenses(plain.id)).length, 0);
  });

  test('a start repeated with its idempotency key gets the same trial back, not trial_already_used', async () => {
    const { id: productId } = await product();
    const input = { productId, email: email(), hwuid: 'sdk-pc-5' };
    const idempotencyKey = globalThis.crypto.randomUUID();
    const first = await shop.startTrial(input, { idempotencyKey });
    // As the client's retry after a lost answer: same key, same request.
    const again = await shop.startTrial(input, { idempotencyKey });
    assert.deepEqual(again, first);
    assert.equal(responseInfo(again)?.replayed, true);
    assert.equal((await trialLicenses(productId)).length, 1);
    // A new call (a fresh key) is a new start, refused as such.
    await assert.rejects(shop.startTrial(input), refusedWith(409, 'trial_already_used'));
    assert.throws(() => shop.startTrial(input, { idempotencyKey: '' }), TypeError);
  });
});
