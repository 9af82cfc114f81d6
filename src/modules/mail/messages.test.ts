import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { escapeHtml, formatAmount, renderNotice } from './messages.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelay } from './retry-schedule.js';

const purchase = {
  orderId: '0190a0b0-0000-7000-8000-000000000001',
  transactionId: 'txn_abc',
  productId: '0190a0b0-0000-7000-8000-000000000002',
  productName: 'Photo <Tool> & "Friends"',
  amount: '19.9900',
  currency: 'USD',
  buyerEmail: 'buyer@example.com',
};
const KEY = 'ABCDE-FGHIJ-KLMNO-PQRST-UVWXY-Z0123';

describe('notice messages', () => {
  test('the buyer’s and the copies’ messages carry the key; the seller’s does not', () => {
    const buyer = renderNotice('purchase.buyer', { ...purchase, licenseKey: KEY });
    const copy = renderNotice('purchase.copy', { ...purchase, licenseKey: KEY });
    const seller = renderNotice('purchase.seller', purchase);
    for (const message of [buyer, copy]) {
      assert.ok(message?.text.includes(KEY));
      assert.ok(message?.html.includes(KEY));
    }
    assert.ok(seller);
    assert.ok(!seller.text.includes(KEY) && !seller.html.includes(KEY));
    assert.ok(seller.text.includes('buyer@example.com'));
    assert.equal(buyer?.subject, 'Your license for Photo <Tool> & "Friends"');
  });

  test('escapes what the seller and the buyer wrote in the HTML part', () => {
    const html = renderNotice('purchase.copy', { ...purchase, licenseKey: KEY })?.html ?? '';
    assert.ok(html.includes('Photo &lt;Tool&gt; &amp; &quot;Friends&quot;'));
    assert.ok(!html.includes('<Tool>'));
    assert.equal(escapeHtml(`<a href='x'>&</a>`), '&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;');
  });

  test('a kind it does not know has no message', () => {
    assert.equal(renderNotice('purchase.unknown', purchase), null);
  });

  for (const [amount, currency, shown] of [
    ['19.9900', 'USD', '19.99 USD'],
    ['5', 'EUR', '5.00 EUR'],
    ['1500.0000', 'JPY', '1500 JPY'],
    ['1.2345', 'KWD', '1.234 KWD'],
  ] as const) {
    test(`shows ${amount} ${currency} as ${shown}`, () => {
      assert.equal(formatAmount(amount, currency), shown);
    });
  }
});

describe('mail retry schedule', () => {
  for (const [attempt, random, expected] of [
    [1, 0.5, 60_000],
    [1, 0, 54_000],
    [1, 1, 66_000],
    [4, 0.5, 3_600_000],
    [MAX_ATTEMPTS - 1, 0.5, 86_400_000],
    [MAX_ATTEMPTS, 0.5, null],
  ] as const) {
    test(`after failed attempt ${attempt} (random ${random}) waits ${expected ?? 'never: gives up'}`, () => {
      assert.equal(
        retryDelay(attempt, () => random),
        expected,
      );
    });
  }

  test('waits longer after each attempt', () => {
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++)
      assert.ok((RETRY_DELAYS_MS[i] ?? 0) > (RETRY_DELAYS_MS[i - 1] ?? 0));
  });
});
