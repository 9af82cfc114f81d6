import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type FakeCrypto, startFakeCrypto } from '../../testing/fake-crypto.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';
import { type CryptoPartner, CryptoPartnerError, createCryptoPartner } from './crypto-partner.js';

/** The crypto partner adapter over real HTTP, against a local fake of the partner. */
const API_KEY = 'cc_test_key_that_must_never_leak';
const WEBHOOK_SECRET = 'cc_test_webhook_secret';
let fake: FakeCrypto;
let receiver: Receiver;
let partner: CryptoPartner;

before(async () => {
  fake = await startFakeCrypto({ apiKey: API_KEY, webhookSecret: WEBHOOK_SECRET });
  receiver = await startReceiver();
  // Set after start, as the service's port is only known once it listens.
  fake.callbackUrl = `${receiver.url}/crypto`;
  partner = createCryptoPartner({ apiUrl: fake.url, apiKey: API_KEY, webhookSecret: WEBHOOK_SECRET });
});
after(async () => {
  await fake.close();
  await receiver.close();
});

function chargeInput(overrides: { orderId?: string; amount?: string; currency?: string } = {}) {
  return {
    orderId: overrides.orderId ?? `ord_${randomUUID()}`,
    amount: overrides.amount ?? '19.99',
    currency: overrides.currency ?? 'USD',
    name: 'Pro license',
    description: 'One seat of Pro <for a year>',
    email: 'buyer@example.com',
    redirectUrl: 'https://checkout.example.com/orders/paid',
    cancelUrl: 'https://checkout.example.com/orders/canceled',
  };
}

/** The callback the receiver got for a charge: its raw body and signature header. */
function callbackFor(chargeId: string, type: string) {
  const request = receiver.requests.find(
    (r) => r.path === '/crypto' && r.body.includes(chargeId) && r.body.includes(`"${type}"`),
  );
  assert.ok(request, `no ${type} callback for ${chargeId}`);
  return { body: request.body, signature: request.headers['x-cc-webhook-signature'] as string | undefined };
}

describe('charges', () => {
  test('creates a charge whose amount, currency, order and hosted page round-trip', async () => {
    const input = chargeInput({ amount: '1250.50', currency: 'EUR' });
    const charge = await partner.createCharge(input);

    assert.equal(charge.amount, '1250.50');
    assert.equal(charge.currency, 'EUR');
    assert.equal(charge.orderId, input.orderId);
    assert.equal(charge.status, 'pending');
    assert.equal(charge.hostedUrl, `${fake.url}/pay/${charge.id}`);
    assert.deepEqual(fake.charges.get(charge.id)?.metadata, { orderId: input.orderId, email: input.email });

    const page = await fetch(charge.hostedUrl);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /1250\.50 EUR/);
    assert.match(html, /One seat of Pro &lt;for a year&gt;/);
    assert.match(html, />Pay</);
    assert.match(html, />Cancel</);
  });

  test('gives back the same charge when the same order asks twice', async () => {
    const input = chargeInput();
    const first = await partner.createCharge(input);
    const second = await partner.createCharge(input);
    const other = await partner.createCharge(chargeInput());

    assert.equal(second.id, first.id);
    assert.notEqual(other.id, first.id);
  });

  test('reads a charge back as confirmed once the payment settles', async () => {
    const charge = await partner.createCharge(chargeInput());
    await fake.confirm(charge.id);

    const read = await partner.retrieveCharge(charge.id);
    assert.equal(read?.status, 'confirmed');
    assert.equal(read?.amount, '19.99');
  });

  test('reads underpaid charges as failed and unpaid ones as expired', async () => {
    const cases = [
      { settle: (id: string) => fake.fail(id), status: 'failed' },
      { settle: (id: string) => fake.expire(id), status: 'expired' },
    ] as const;
    for (const { settle, status } of cases) {
      const charge = await partner.createCharge(chargeInput());
      await settle(charge.id);
      assert.equal((await partner.retrieveCharge(charge.id))?.status, status);
    }
  });

  test('answers null for a charge the partner does not know', async () => {
    assert.equal(await partner.retrieveCharge(randomUUID()), null);
  });

  test('throws with the status and without the key when the API key is wrong', async () => {
    const wrongKey = 'cc_wrong_key_also_secret';
    const stranger = createCryptoPartner({
      apiUrl: fake.url,
      apiKey: wrongKey,
      webhookSecret: WEBHOOK_SECRET,
    });

    for (const attempt of [() => stranger.createCharge(chargeInput()), () => stranger.retrieveCharge('x')]) {
      await assert.rejects(attempt, (error: unknown) => {
        assert.ok(error instanceof CryptoPartnerError);
        assert.equal(error.statusCode, 401);
        const shown = `${error.message} ${error.stack} ${JSON.stringify(error)}`;
        assert.ok(!shown.includes(wrongKey), 'the API key leaked into the error');
        return true;
      });
    }
  });

  test('throws without a status when the partner cannot be reached', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = createCryptoPartner({
      apiUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      webhookSecret: WEBHOOK_SECRET,
    });

    await assert.rejects(unreachable.retrieveCharge('x'), (error: unknown) => {
      assert.ok(error instanceof CryptoPartnerError);
      assert.equal(error.statusCode, null);
      assert.ok(!error.message.includes(API_KEY));
      return true;
    });
  });
});

describe('hosted page', () => {
  test('paying confirms the charge, calls back signed and sends the buyer to the redirect URL', async () => {
    const input = chargeInput();
    const charge = await partner.createCharge(input);

    const answer = await fetch(`${charge.hostedUrl}/pay`, { method: 'POST', redirect: 'manual' });
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.get('location'), input.redirectUrl);

    const { body, signature } = callbackFor(charge.id, 'charge:confirmed');
    const event = partner.verifyEvent(body, signature);
    assert.equal(event.type, 'charge:confirmed');
    assert.equal(event.chargeId, charge.id);
    assert.equal((await partner.retrieveCharge(charge.id))?.status, 'confirmed');
  });

  test('canceling sends the buyer to the cancel URL and leaves the charge pending', async () => {
    const input = chargeInput();
    const charge = await partner.createCharge(input);

    const answer = await fetch(`${charge.hostedUrl}/cancel`, { method: 'POST', redirect: 'manual' });
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.get('location'), input.cancelUrl);
    assert.equal((await partner.retrieveCharge(charge.id))?.status, 'pending');
  });
});

describe('callbacks', () => {
  async function signedCallback() {
    const charge = await partner.createCharge(chargeInput());
    await fake.fail(charge.id);
    return { charge, ...callbackFor(charge.id, 'charge:failed') };
  }

  test('accepts a callback signed with the shared secret', async () => {
    const { charge, body, signature } = await signedCallback();
    const event = partner.verifyEvent(body, signature);
    assert.equal(event.type, 'charge:failed');
    assert.equal(event.chargeId, charge.id);
    assert.equal(event.id, JSON.parse(body).event.id);
  });

  test('rejects a callback whose body was changed after signing', async () => {
    const { body, signature } = await signedCallback();
    const tampered = body.replace('"charge:failed"', '"charge:confirmed"');
    assert.notEqual(tampered, body);
    assert.throws(() => partner.verifyEvent(tampered, signature), /signature/);
  });

  test('rejects a callback signed with another secret', async () => {
    const { body, signature } = await signedCallback();
    const other = createCryptoPartner({ apiUrl: fake.url, apiKey: API_KEY, webhookSecret: 'another_secret' });
    assert.throws(() => other.verifyEvent(body, signature), /signature/);
  });

  test('rejects a callback without a signature or with a malformed one', async () => {
    const { body, signature } = await signedCallback();
    for (const header of [undefined, '', 'not-hex', signature?.slice(0, -2), `sha256=${signature}`]) {
      assert.throws(() => partner.verifyEvent(body, header), /signature/, `accepted ${header}`);
    }
  });
});
