import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  merchantSignature,
  verifyMerchantSignature,
} from '../../../src/modules/webhooks/merchant-signature.js';
import { verifyMerchantWebhook, WebhookVerificationError } from './index.js';

/** The checkout's own code signs, the SDK checks: the two cannot drift apart unnoticed. */
const callbackSecret = `cbs_${'m'.repeat(43)}`;
const now = new Date('2026-03-01T12:00:00Z');
const t = now.getTime() / 1000;
const body = JSON.stringify({
  id: '0190a5b2-0000-7000-8000-000000000001',
  type: 'payment.succeeded',
  data: { licenseKey: 'LIC-AAAA', amount: 19.99, note: 'Grüße' },
  timestamp: now.toISOString(),
});
const header = merchantSignature(callbackSecret, t, body);
const options = { callbackSecret, now };

const refusedWith = (code: string) => (error: unknown) =>
  error instanceof WebhookVerificationError && error.code === code;

describe('verifyMerchantWebhook', () => {
  test('returns the event of a delivery the checkout signed, from a string or the raw bytes', () => {
    for (const raw of [body, Buffer.from(body)]) {
      const event = verifyMerchantWebhook(raw, header, options);
      assert.equal(event.type, 'payment.succeeded');
      assert.deepEqual(event, JSON.parse(body));
    }
  });

  test('accepts the header with spaces or as the array Node may hand over', () => {
    const [tPart, v1Part] = header.split(',');
    assert.equal(verifyMerchantWebhook(body, `${tPart}, ${v1Part}`, options).type, 'payment.succeeded');
    assert.equal(verifyMerchantWebhook(body, [header], options).type, 'payment.succeeded');
  });

  test('refuses a tampered body, another secret or a t outside the tolerance, as the checkout does', () => {
    const later = (seconds: number) => new Date(now.getTime() + seconds * 1000);
    const cases: [string, string, string, Date, number | undefined, string][] = [
      ['tampered body', body.replace('19.99', '0.01'), callbackSecret, now, undefined, 'bad_signature'],
      ['another secret', body, `${callbackSecret}x`, now, undefined, 'bad_signature'],
      ['t 301 s old', body, callbackSecret, later(301), undefined, 'stale_timestamp'],
      ['t 301 s ahead', body, callbackSecret, later(-301), undefined, 'stale_timestamp'],
      ['t 61 s old, tolerance 60', body, callbackSecret, later(61), 60, 'stale_timestamp'],
    ];
    for (const [name, raw, secret, at, toleranceSeconds, code] of cases) {
      assert.throws(
        () => verifyMerchantWebhook(raw, header, { callbackSecret: secret, now: at, toleranceSeconds }),
        refusedWith(code),
        name,
      );
      assert.equal(
        verifyMerchantSignature(secret, header, raw, at, toleranceSeconds),
        false,
        `the checkout agrees: ${name}`,
      );
    }
    assert.equal(
      verifyMerchantWebhook(body, header, { ...options, now: later(299) }).type,
      'payment.succeeded',
    );
  });

  test('refuses a signature moved to another t', () => {
    const v1 = header.split('v1=')[1];
    assert.throws(
      () => verifyMerchantWebhook(body, `t=${t + 1},v1=${v1}`, options),
      refusedWith('bad_signature'),
    );
  });

  test('refuses a missing or malformed header as malformed', () => {
    const v1 = header.split('v1=')[1];
    for (const given of [
      undefined,
      '',
      `v1=${v1}`,
      `t=${t}`,
      `t=${t},v1=${v1?.slice(2)}`,
      `t=soon,v1=${v1}`,
    ]) {
      assert.throws(
        () => verifyMerchantWebhook(body, given, options),
        refusedWith('malformed'),
        String(given),
      );
    }
  });

  test('refuses a correctly signed body that is not an event', () => {
    for (const raw of ['not json', '[]', '{"type":"payment.succeeded"}']) {
      const signedHeader = merchantSignature(callbackSecret, t, raw);
      assert.throws(() => verifyMerchantWebhook(raw, signedHeader, options), refusedWith('malformed'), raw);
    }
  });
});
