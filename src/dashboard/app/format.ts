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
