import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openMirrorPayload, PayloadRefused } from '../../../src/modules/checkout/mirror-payload.js';
import { sealMirrorPayload } from './index.js';

/** The SDK seals, the checkout's own code opens: the two cannot drift apart unnoticed. */
const callbackSecret = `cbs_${'k'.repeat(43)}`;
const productId = '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b';
const issuedAt = new Date('2026-03-01T12:00:00Z');
const base = { callbackSecret, productId, token: 'order-8812', email: 'ann@example.com', issuedAt };

const refusedFor = (problem: string) => (error: unknown) =>
  error instanceof PayloadRefused && error.problem === problem;

function flipByte(payload: string, index: (length: number) => number): string {
  const raw = Buffer.from(payload.slice('v1.'.length), 'base64url');
  const at = index(raw.length);
  raw[at] = (raw[at] ?? 0) ^ 0x01;
  return `v1.${raw.toString('base64url')}`;
}

describe('sealMirrorPayload', () => {
  test('seals a payload the checkout opens for its product and secret', () => {
    const payload = sealMirrorPayload(base);
    assert.match(payload, /^v1\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(
      openMirrorPayload(callbackSecret, productId, payload, new Date(issuedAt.getTime() + 60_000)),
      {
        token: 'order-8812',
        email: 'ann@example.com',
        issuedAt,
      },
    );
  });

  test('carries unicode, quotes and a 1000-character token through unchanged', () => {
    for (const token of ['Bestellung "Ä-ß" \\ 注文 🎉', 'x'.repeat(1000), `a"b${'"'.repeat(997)}`]) {
      const payload = sealMirrorPayload({ ...base, token });
      assert.equal(openMirrorPayload(callbackSecret, productId, payload, issuedAt).token, token);
    }
  });

  test('dates the payload now by default and the checkout refuses it once older than 30 minutes', () => {
    const payload = sealMirrorPayload({ ...base, issuedAt: undefined });
    assert.equal(openMirrorPayload(callbackSecret, productId, payload, new Date()).token, 'order-8812');

    const old = sealMirrorPayload(base);
    assert.throws(
      () => openMirrorPayload(callbackSecret, productId, old, new Date(issuedAt.getTime() + 31 * 60_000)),
      refusedFor('stale'),
    );
  });

  test('makes a payload the checkout refuses for another product, another secret or a flipped byte', () => {
    const payload = sealMirrorPayload(base);
    const cases: [string, () => unknown][] = [
      [
        'another product',
        () => openMirrorPayload(callbackSecret, `${productId.slice(0, -1)}c`, payload, issuedAt),
      ],
      ['another secret', () => openMirrorPayload(`${callbackSecret}x`, productId, payload, issuedAt)],
      [
        'a flipped iv byte',
        () =>
          openMirrorPayload(
            callbackSecret,
            productId,
            flipByte(payload, () => 0),
            issuedAt,
          ),
      ],
      [
        'a flipped ciphertext byte',
        () =>
          openMirrorPayload(
            callbackSecret,
            productId,
            flipByte(payload, () => 20),
            issuedAt,
          ),
      ],
      [
        'a flipped tag byte',
        () =>
          openMirrorPayload(
            callbackSecret,
            productId,
            flipByte(payload, (n) => n - 1),
            issuedAt,
          ),
      ],
    ];
    for (const [name, open] of cases) assert.throws(open, refusedFor('not_for_this_product'), name);
  });

  test('uses a fresh iv for every payload', () => {
    assert.notEqual(sealMirrorPayload(base), sealMirrorPayload(base));
  });

  test('trims spaces around the e-mail', () => {
    const payload = sealMirrorPayload({ ...base, email: '  ann@example.com\n' });
    assert.equal(openMirrorPayload(callbackSecret, productId, payload, issuedAt).email, 'ann@example.com');
  });

  test('refuses input the checkout would refuse, naming the field', () => {
    const cases: [Partial<typeof base>, RegExp][] = [
      [{ token: '' }, /^token:/],
      [{ token: 'x'.repeat(1001) }, /^token:/],
      [{ token: '注'.repeat(1000) }, /^token: too long once encrypted/],
      [{ email: 'ann' }, /^email:/],
      [{ email: 'ann@example' }, /^email:/],
      [{ email: 'ann smith@example.com' }, /^email:/],
      [{ email: `${'a'.repeat(310)}@example.com` }, /^email:/],
      [{ callbackSecret: '' }, /^callbackSecret:/],
      [{ productId: '' }, /^productId:/],
      [{ issuedAt: new Date('not a date') }, /^issuedAt:/],
    ];
    for (const [change, message] of cases) {
      assert.throws(
        () => sealMirrorPayload({ ...base, ...change }),
        (error: unknown) => error instanceof TypeError && message.test(error.message),
        JSON.stringify(change).slice(0, 60),
      );
    }
  });
});
