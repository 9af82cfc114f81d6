/** How values read on screen; everything is shown in the browser's locale, times in UTC. */

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })} UTC`;
}

export function formatMoney(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

export function formatNumber(value: number): string {
  return new Intl.NumberFormat().format(value);
}

// The dashboard's words are English whatever the browser's locale; only numbers follow the locale.
const englishPlural = new Intl.PluralRules('en');

/** The noun that goes with `count`: ("order", "orders") → "order" for 1, "orders" for 0 or 2. */
export function noun(count: number, one: string, other: string): string {
  return englishPlural.select(count) === 'one' ? one : other;
}

/** A count with its noun: "1 paid order", "2 paid orders", "0 admins". */
export function plural(count: number, one: string, other: string): string {
  return `${formatNumber(count)} ${noun(count, one, other)}`;
}

/**
 * How a figure moved since the previous period: the difference with its sign ("+$20.00", "−3")
 * and, when there was something to compare with, the percentage ("+100%"). `signed` formats a
 * value with its sign.
 */
export function formatChange(current: number, previous: number, signed: (value: number) => string): string {
  const difference = current - previous;
  if (difference === 0) return 'no change';
  if (previous === 0) return signed(difference);
  const percent = new Intl.NumberFormat(undefined, {
    style: 'percent',
    maximumFractionDigits: 0,
    signDisplay: 'exceptZero',
  }).format(difference / previous);
  return `${signed(difference)} (${percent})`;
}

export function formatSignedNumber(value: number): string {
  return new Intl.NumberFormat(undefined, { signDisplay: 'exceptZero' }).format(value);
}

export function formatSignedMoney(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, {
      style: 'currency',
      currency,
      signDisplay: 'exceptZero',
    }).format(amount);
  } catch {
    return `${amount > 0 ? '+' : ''}${amount} ${currency}`;
  }
}

/** An API enum value as words: "one_time" → "one time". */
export function words(value: string): string {
  return value.replace(/_/g, ' ');
}

/** A date input's value (YYYY-MM-DD) as the end of that day in UTC, or null when empty. */
export function endOfDayUtc(value: string): string | null {
  return value ? `${value}T23:59:59.999Z` : null;
}

/** An ISO timestamp as a date input's value. */
export function dateInputValue(iso: string | null): string {
  return iso ? iso.slice(0, 10) : '';
}

/** A file's size in decimal units, as file managers show it: 812 bytes, 30 kB, 104.9 MB, 1.2 GB. */
export function formatBytes(size: number): string {
  const units = ['kilobyte', 'megabyte', 'gigabyte'] as const;
  if (size < 1000) return plural(size, 'byte', 'bytes');
  let value = size / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return new Intl.NumberFormat(undefined, {
    style: 'unit',
    unit: units[unit],
    maximumFractionDigits: value < 100 ? 1 : 0,
  }).format(value);
}
