import { iso } from '../../platform/http/schemas.js';
import { currencyExponent, fromDecimalString } from '../../platform/money.js';
import type { RevenuePoint } from './store.js';

/** How the figures of the admin analytics and of the seller overview read in answers. */

/**
 * Dispute statuses (the card partner's) that still wait for the seller's evidence or for the
 * partner's review. won, lost and warning_closed are over.
 */
export const OPEN_DISPUTE_STATUSES = [
  'needs_response',
  'under_review',
  'warning_needs_response',
  'warning_under_review',
] as const;

export interface CurrencySeries {
  currency: string;
  amount: number;
  orders: number;
  points: { start: string; amount: number; orders: number }[];
}

/** An exact decimal sum as a JSON number, rounded to the currency's minor unit. */
export function money(amount: string, currency: string): number {
  return fromDecimalString(Number(amount).toFixed(currencyExponent(currency) ?? 4));
}

/** Revenue rows (one per currency and bucket, in order) as one series per currency. */
export function currencySeries(rows: RevenuePoint[]): CurrencySeries[] {
  const series = new Map<string, CurrencySeries>();
  for (const row of rows) {
    const entry = series.get(row.currency) ?? {
      currency: row.currency,
      amount: money(row.total_amount, row.currency),
      orders: row.total_orders,
      points: [],
    };
    series.set(row.currency, entry);
    entry.points.push({ start: iso(row.start), amount: money(row.amount, row.currency), orders: row.orders });
  }
  return [...series.values()];
}
