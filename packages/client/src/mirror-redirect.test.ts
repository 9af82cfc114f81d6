import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type RedirectParams,
  signedRedirectUrl,
  verifyRedirect,
} from '../../../src/modules/checkout/mirror-signature.js';
import { MirrorRedirectError, readMirrorRedirect, verifyMirrorRedirect } from './index.js';

/** The checkout's own code signs, the SDK checks: the two cannot drift apart unnoticed. */
const callbackSecret = `cbs_${'r'.repeat(43)}`;
const now = new Date('2026-03-01T12:00:00Z');
const params: RedirectParams = {
  license: 'LIC-AAAA-BBBB-CCCC',
  email: 'ann+shop@example.com',
  transaction_id: 'txn_01',
  product_id: '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b',
  subscription_id: 'sub_01',
  token: 'order 8812 & co = "ü"/?',
  status: 'successful',
  ts: String(now.getTime() / 1000),
};
const successUrl = 'https://shop.example/thanks?order=12&utm_source=mail';
const signed = signedRedirectUrl(successUrl, callbackSecret, params);
const options = { callbackSecret, now };

function changed(edit: (query: URLSearchParams) => void, from = signed): URL {
  const url = new URL(from);
  edit(url.searchParams);
  return url;
}

const later = (seconds: number) => new Date(now.getTime() + seconds * 1000);

describe('verifyMirrorRedirect', () => {
  test('accepts a redirect the checkout signed, given as URL, string, path or parameters', () => {
    const url = new URL(signed);
    const inputs = [
      url,
      signed,
      `${url.pathname}${url.search}#top`,
      url.search,
      url.search.slice(1),
      url.searchParams,
    ];
    for (const input of inputs) assert.equal(verifyMirrorRedirect(input, options), true, String(input));
  });

  test("ignores the seller's own parameters, added, changed or removed", () => {
    const url = changed((query) => {
      query.set('order', '13');
      query.delete('utm_source');
      query.append('ref', 'x');
    });
    assert.equal(verifyMirrorRedirect(url, options), true);
  });

  test('accepts a redirect without the optional parameters', () => {
    const { email, subscription_id, token, ...oneTime } = params;
    const url = signedRedirectUrl(successUrl, callbackSecret, oneTime);
    assert.equal(verifyMirrorRedirect(url, options), true);
  });

  test('refuses a redirect whose signed parameters were changed, added or removed, as the checkout does', () => {
    const { subscription_id, ...oneTime } = params;
    const flip = (sig: string | null) => (sig ?? '').replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
    const cases: [string, URL][] = [
      ...Object.keys(params).map((name): [string, URL] => [
        `${name} changed`,
        changed((query) => query.set(name, `${query.get(name)}0`)),
      ]),
      ...['license', 'email', 'subscription_id', 'token'].map((name): [string, URL] => [
        `${name} removed`,
        changed((query) => query.delete(name)),
      ]),
      [
        'subscription_id added',
        changed(
          (query) => query.set('subscription_id', 'sub_02'),
          signedRedirectUrl(successUrl, callbackSecret, oneTime),
        ),
      ],
      ['sig changed', changed((query) => query.set('sig', flip(query.get('sig'))))],
      ['sig in upper case', changed((query) => query.set('sig', (query.get('sig') ?? '').toUpperCase()))],
      ['sig removed', changed((query) => query.delete('sig'))],
    ];
    for (const [name, url] of cases) {
      assert.equal(verifyMirrorRedirect(url, options), false, name);
      assert.equal(
        verifyRedirect(callbackSecret, url.searchParams, now),
        false,
        `the checkout agrees: ${name}`,
      );
    }
  });

  test('refuses a redirect signed with another secret', () => {
    assert.equal(verifyMirrorRedirect(signed, { ...options, callbackSecret: `${callbackSecret}x` }), false);
  });

  test('refuses a ts more than maxAgeSeconds away from now, in either direction', () => {
    const cases: [string, Date, number | undefined, boolean][] = [
      ['599 s later', later(599), undefined, true],
      ['601 s later', later(601), undefined, false],
      ['601 s earlier', later(-601), undefined, false],
      ['an hour later with maxAgeSeconds 3600', later(3600), 3600, true],
      ['61 s later with maxAgeSeconds 60', later(61), 60, false],
    ];
    for (const [name, at, maxAgeSeconds, expected] of cases) {
      assert.equal(verifyMirrorRedirect(signed, { callbackSecret, now: at, maxAgeSeconds }), expected, name);
      assert.equal(
        verifyRedirect(callbackSecret, new URL(signed).searchParams, at, maxAgeSeconds),
        expected,
        `the checkout agrees: ${name}`,
      );
    }
  });

  test('refuses a redirect that repeats a signed parameter, which frameworks read differently', () => {
    for (const name of ['license', 'email', 'sig']) {
      const url = changed((query) => query.append(name, 'other'));
      assert.equal(verifyMirrorRedirect(url, options), false, name);
    }
  });
});

describe('readMirrorRedirect', () => {
  test('returns the signed fields of a valid redirect', () => {
    assert.deepEqual(readMirrorRedirect(signed, options), {
      license: 'LIC-AAAA-BBBB-CCCC',
      email: 'ann+shop@example.com',
      transactionId: 'txn_01',
      productId: '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b',
      subscriptionId: 'sub_01',
      token: 'order 8812 & co = "ü"/?',
      status: 'successful',
      ts: now.getTime() / 1000,
    });
    const { email, subscription_id, token, ...oneTime } = params;
    const bare = readMirrorRedirect(signedRedirectUrl(successUrl, callbackSecret, oneTime), options);
    assert.deepEqual([bare.email, bare.subscriptionId, bare.token], [null, null, null]);
  });

  test('throws MirrorRedirectError with the reason when the redirect cannot be trusted', () => {
    const cases: [string, URL | string, Date, string][] = [
      ['no sig', changed((query) => query.delete('sig')), now, 'malformed'],
      ['no ts', changed((query) => query.delete('ts')), now, 'malformed'],
      ['license changed', changed((query) => query.set('license', 'LIC-OTHER')), now, 'bad_signature'],
      ['too old', signed, later(3600), 'stale_timestamp'],
      [
        'no license',
        signedRedirectUrl(successUrl, callbackSecret, { ...params, license: undefined }),
        now,
        'malformed',
      ],
    ];
    for (const [name, input, at, code] of cases) {
      assert.throws(
        () => readMirrorRedirect(input, { callbackSecret, now: at }),
        (error: unknown) => error instanceof MirrorRedirectError && error.code === code,
        name,
      );
    }
  });
});
