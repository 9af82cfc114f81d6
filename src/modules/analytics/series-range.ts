import { invalidField } from '../../platform/errors.js';
import { requestInstant } from '../../platform/http/schemas.js';
import type { Interval, SeriesInput } from './schemas.js';

/** At most this many points per series: a year of days. */
export const MAX_BUCKETS = 366;

const DAY_MS = 86_400_000;

/**
 * What a series covers: UTC buckets of `interval`, aligned as PostgreSQL's date_trunc aligns
 * them (weeks start on Monday), from the bucket holding `from` to the bucket holding `to`. The
 * database makes the buckets; this only checks the range and fills in defaults.
 */
export interface SeriesRange {
  from: Date;
  to: Date;
  interval: Interval;
}

/** The range a series query asks for, with its defaults; refused when empty or too long. */
export function seriesRange(input: SeriesInput, now: Date): SeriesRange {
  const interval = input.interval ?? 'day';
  const to = input.to ? requestInstant(input.to, 'to') : now;
  const from = input.from ? requestInstant(input.from, 'from') : defaultFrom(to, interval);
  if (from.getTime() >= to.getTime()) throw invalidField('from', 'must be earlier than to');
  const buckets = bucketsBetween(bucketStart(from, interval), bucketStart(to, interval), interval) + 1;
  if (buckets > MAX_BUCKETS) {
    throw invalidField(
      'from',
      `is too far before to: the range holds ${buckets} ${interval} buckets, at most ${MAX_BUCKETS}`,
    );
  }
  return { from, to, interval };
}

/** 30 days of days, 12 weeks of weeks, 12 months of months, ending at `to`. */
function defaultFrom(to: Date, interval: Interval): Date {
  if (interval === 'day') return new Date(to.getTime() - 30 * DAY_MS);
  if (interval === 'week') return new Date(to.getTime() - 12 * 7 * DAY_MS);
  const from = new Date(to);
  from.setUTCMonth(from.getUTCMonth() - 12);
  return from;
}

function bucketStart(at: Date, interval: Interval): Date {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  if (interval === 'day') return new Date(day);
  if (interval === 'week') return new Date(day - ((at.getUTCDay() + 6) % 7) * DAY_MS);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

function bucketsBetween(first: Date, last: Date, interval: Interval): number {
  if (interval === 'month')
    return (last.getUTCFullYear() - first.getUTCFullYear()) * 12 + (last.getUTCMonth() - first.getUTCMonth());
  return Math.round((last.getTime() - first.getTime()) / (interval === 'day' ? DAY_MS : 7 * DAY_MS));
}

/** A real instant the database stores the same way on both drivers (not 23:59:60, 1970–9999). */
