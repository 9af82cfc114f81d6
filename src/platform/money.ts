import currencyCodes from 'currency-codes';

/**
 * Money is kept exact: amounts travel as JSON numbers, are checked against their currency's
 * minor unit (ISO 4217: USD 2 decimals, JPY 0, KWD 3) and are stored as PostgreSQL numeric.
 */

// Not money a buyer pays with: precious metals, bond units, SDR, test and "no currency" codes,
// and the funds codes that accompany some national currencies.
const NOT_SELLABLE = new Set([
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
  'BOV',
  'CHE',
  'CHW',
  'CLF',
  'COU',
  'MXV',
  'USN',
  'UYI',
  'UYW',
]);

const EXPONENTS = new Map<string, number>(
  currencyCodes.data
    .filter((entry) => !NOT_SELLABLE.has(entry.code) && Number.isInteger(entry.digits))
    .map((entry) => [entry.code, entry.digits]),
);

export function isSupportedCurrency(code: string): boolean {
  return EXPONENTS.has(code);
}

/** Decimal places of the currency's minor unit; undefined for an unsupported code. */
export function currencyExponent(code: string): number | undefined {
  return EXPONENTS.get(code);
}

/** Decimal places written in the number's shortest form (1e-7 counts as 7). */
export function decimalPlaces(amount: number): number {
  const [mantissa = '', exponent] = String(amount).split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent ?? 0));
}

/** The amount as an exact decimal string for a numeric column. */
export function toDecimalString(amount: number, currency: string): string {
  return amount.toFixed(currencyExponent(currency) ?? 4);
}

/** A numeric column's exact string as the JSON number the interface shows. */
export function fromDecimalString(value: string): number {
  return Number(value);
}

/**
 * An exact decimal string ("19.9900") in the currency's minor units (1999 for USD, 1500 for a
 * JPY "1500.0000"), as payment partners take amounts. String arithmetic: no float on the way.
 */
export function toMinorUnits(amount: string, currency: string): number {
  const exponent = currencyExponent(currency) ?? 2;
  const [whole = '0', fraction = ''] = amount.split('.');
  const kept = fraction.padEnd(exponent, '0').slice(0, exponent);
  if (/[1-9]/.test(fraction.slice(exponent)))
    throw new Error(`${amount} has more decimals than ${currency} allows`);
  return Number(`${whole}${kept}`);
}

/** Minor units back to an exact decimal string (1999 USD → "19.99", 1500 JPY → "1500"). */
export function fromMinorUnits(minor: number, currency: string): string {
  const exponent = currencyExponent(currency) ?? 2;
  if (exponent === 0) return String(minor);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  return `${minor < 0 ? '-' : ''}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}
