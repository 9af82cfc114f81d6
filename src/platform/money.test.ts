import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  currencyExponent,
  decimalPlaces,
  isSupportedCurrency,
  toDecimalString,
  toMinorUnits,
} from './money.js';

describe('money', () => {
  test('knows the minor unit of ISO 4217 currencies', () => {
    const cases: [string, number][] = [
      ['USD', 2],
      ['EUR', 2],
      ['GBP', 2],
      ['JPY', 0],
      ['KWD', 3],
      ['HUF', 2],
      ['XOF', 0],
    ];
    for (const [code, exponent] of cases) assert.equal(currencyExponent(code), exponent, code);
  });

  test('refuses codes that are not money a buyer pays with', () => {
    for (const code of ['XAU', 'XTS', 'XXX', 'ABC', 'usd', 'USN'])
      assert.equal(isSupportedCurrency(code), false, code);
  });

  test('counts decimal places in a number’s shortest form', () => {
    const cases: [number, number][] = [
      [19, 0],
      [19.9, 1],
      [19.99, 2],
      [0.1, 1],
      [12.345, 3],
      [1e-7, 7],
      [1.5e-7, 8],
      [1e21, 0],
    ];
    for (const [amount, places] of cases) assert.equal(decimalPlaces(amount), places, String(amount));
  });

  test('writes amounts as exact decimal strings', () => {
    assert.equal(toDecimalString(19.99, 'USD'), '19.99');
    assert.equal(toDecimalString(0.1, 'EUR'), '0.10');
    assert.equal(toDecimalString(1500, 'JPY'), '1500');
  });

  test('converts exact decimals to minor units with the currency’s own exponent', () => {
    const cases: [string, string, number][] = [
      ['19.9900', 'USD', 1999],
      ['0.1000', 'EUR', 10],
      ['1500.0000', 'JPY', 1500],
      ['12.3450', 'KWD', 12345],
      ['999999999.9900', 'USD', 99999999999],
    ];
    for (const [amount, currency, minor] of cases)
      assert.equal(toMinorUnits(amount, currency), minor, `${amount} ${currency}`);
    assert.throws(() => toMinorUnits('10.5000', 'JPY'));
  });
});
