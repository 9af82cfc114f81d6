import { useEffect, useState } from 'preact/hooks';
import type { ApiError, Query } from '../api';
import { endOfDayUtc, formatDate } from '../format';
import { href, navigate, withQuery } from '../router';
import { Form, TextField } from './form';

/**
 * The overview's period: the last 7, 30 or 90 UTC days, or a custom range of days. It lives in
 * the URL as the list filters do (#/overview?days=7, #/overview?from=2026-03-01&to=2026-03-07),
 * so a period can be bookmarked, survives a reload, and the back button returns to the last one.
 */
export const PRESET_DAYS = [7, 30, 90] as const;
/** The API's own default, so its URL stays bare. */
const DEFAULT_DAYS = 30;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

export type PeriodChoice = { kind: 'preset'; days: number } | { kind: 'custom'; from: string; to: string };

export function periodFromUrl(query: URLSearchParams): PeriodChoice {
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  if (from || to) return { kind: 'custom', from, to };
  const days = Number(query.get('days'));
  return { kind: 'preset', days: PRESET_DAYS.find((preset) => preset === days) ?? DEFAULT_DAYS };
}

function periodPath(choice: PeriodChoice): string {
  if (choice.kind === 'custom') return withQuery('/overview', { from: choice.from, to: choice.to });
  return withQuery('/overview', { days: choice.days === DEFAULT_DAYS ? undefined : choice.days });
}

/**
 * The period as GET /v1/overview takes it: a preset starts `days - 1` UTC days before today and
 * runs to now; a custom range runs from the start of its first day to the end of its last. A date
 * that is not one goes as typed, so the API's answer names the field.
 */
export function periodQuery(choice: PeriodChoice, now: Date): Query {
  if (choice.kind === 'custom') {
    return {
      from: DATE.test(choice.from) ? `${choice.from}T00:00:00.000Z` : choice.from,
      to: DATE.test(choice.to) ? endOfDayUtc(choice.to) : choice.to,
    };
  }
  if (choice.days === DEFAULT_DAYS) return {};
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { from: new Date(today - (choice.days - 1) * DAY_MS).toISOString() };
}

/** The period in a title: "last 7 days", or "Mar 1, 2026 – Mar 7, 2026" (the answer's own days). */
export function periodWords(choice: PeriodChoice, period: { from: string; to: string }): string {
  return choice.kind === 'preset'
    ? `last ${choice.days} days`
    : `${formatDate(period.from)} – ${formatDate(period.to)}`;
}

/** The period in a sentence: "in the last 7 days", or "from Mar 1, 2026 to Mar 7, 2026". */
export function periodPhrase(choice: PeriodChoice, period: { from: string; to: string }): string {
  return choice.kind === 'preset'
    ? `in the last ${choice.days} days`
    : `from ${formatDate(period.from)} to ${formatDate(period.to)}`;
}

/**
 * Links to the presets (the current one marked with aria-current) and a form for a custom range,
 * filled with the days shown. A refused range (from after to, over a year) is shown at its field.
 */
export function PeriodPicker({
  choice,
  shown,
  error,
}: {
  choice: PeriodChoice;
  /** The period the page shows, once loaded. */
  shown: { from: string; to: string } | undefined;
  error: ApiError | null;
}) {
  const choiceKey = JSON.stringify(choice);
  const initial = () =>
    choice.kind === 'custom'
      ? { from: choice.from, to: choice.to }
      : { from: shown?.from.slice(0, 10) ?? '', to: shown?.to.slice(0, 10) ?? '' };
  const [draft, setDraft] = useState(initial);
  // A preset, the back button or a new answer changes the period under the form: the form follows.
  useEffect(() => setDraft(initial()), [choiceKey, shown?.from, shown?.to]);
  return (
    <div class="period-picker">
      <nav aria-label="Period">
        <ul>
          {PRESET_DAYS.map((days) => (
            <li key={days}>
              <a
                href={href(periodPath({ kind: 'preset', days }))}
                aria-current={choice.kind === 'preset' && choice.days === days ? 'true' : undefined}
              >
                Last {days} days
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <Form
        label="Custom period"
        class="form filters"
        onSubmit={() => navigate(periodPath({ kind: 'custom', ...draft }))}
      >
        <TextField
          label="From"
          name="from"
          type="date"
          value={draft.from}
          onValue={(from) => setDraft({ ...draft, from })}
          error={error}
        />
        <TextField
          label="To"
          name="to"
          type="date"
          value={draft.to}
          onValue={(to) => setDraft({ ...draft, to })}
          error={error}
        />
        <div class="actions">
          <button type="submit" class={choice.kind === 'custom' ? 'primary' : 'secondary'}>
            Show these days
          </button>
        </div>
      </Form>
    </div>
  );
}
