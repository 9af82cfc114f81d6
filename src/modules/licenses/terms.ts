import type { LicenseRow } from '../../platform/db/schema.js';
import { AppError } from '../../platform/errors.js';
import {
  type ExpiryStrategy,
  type LicenseTerms,
  termProblems,
  type UsesResetInterval,
} from '../products/index.js';

/**
 * A license's check-in, expiry strategy and usage quota (docs/licenses.md): the copy of its
 * product's policy it took when issued, or what the seller gave it.
 */

const DAY_MS = 86_400_000;

/** The term fields a seller may send when issuing or changing a license by hand. */
export interface TermsInput {
  checkInDays?: number | null;
  graceDays?: number | null;
  expiryStrategy?: ExpiryStrategy;
  maxUses?: number | null;
  usesResetInterval?: UsesResetInterval | null;
}

/** The terms stored on a license row. */
export function termsOfRow(
  row: Pick<
    LicenseRow,
    'check_in_days' | 'grace_days' | 'expiry_strategy' | 'max_uses' | 'uses_reset_interval'
  >,
): LicenseTerms {
  return {
    checkIn: row.check_in_days === null ? null : { days: row.check_in_days, graceDays: row.grace_days ?? 0 },
    expiryStrategy: row.expiry_strategy,
    usage:
      row.max_uses === null
        ? null
        : { maxUses: row.max_uses, resetInterval: row.uses_reset_interval ?? 'never' },
  };
}

/**
 * `base` with what the request says in place of it; refused (400 naming the field) where the
 * fields do not go together: grace without a check-in, a reset interval without a quota.
 */
export function termsWith(base: LicenseTerms, input: TermsInput): LicenseTerms {
  const checkInDays = input.checkInDays !== undefined ? input.checkInDays : (base.checkIn?.days ?? null);
  const graceDays =
    input.graceDays !== undefined
      ? input.graceDays
      : input.checkInDays === null
        ? null
        : (base.checkIn?.graceDays ?? null);
  const maxUses = input.maxUses !== undefined ? input.maxUses : (base.usage?.maxUses ?? null);
  const usesResetInterval =
    input.usesResetInterval !== undefined
      ? input.usesResetInterval
      : input.maxUses === null
        ? null
        : (base.usage?.resetInterval ?? null);
  const problems = termProblems({ checkInDays, graceDays, maxUses, usesResetInterval }, null, (name) => name);
  if (problems.length > 0)
    throw new AppError('validation_failed', 'The license’s terms do not go together', problems);
  return {
    checkIn: checkInDays === null ? null : { days: checkInDays, graceDays: graceDays ?? 0 },
    expiryStrategy: input.expiryStrategy ?? base.expiryStrategy,
    usage: maxUses === null ? null : { maxUses, resetInterval: usesResetInterval ?? 'never' },
  };
}

/** Whether the request names any term field. */
export function namesTerms(input: TermsInput): boolean {
  return (
    input.checkInDays !== undefined ||
    input.graceDays !== undefined ||
    input.expiryStrategy !== undefined ||
    input.maxUses !== undefined ||
    input.usesResetInterval !== undefined
  );
}

/** The license's check-in fields, as the store reads them for verification. */
export interface CheckInState {
  check_in_days: number | null;
  grace_days: number | null;
  checked_in_at: Date | null;
  created_at: Date;
}

/**
 * The moment past which a license that has not checked in since `checkedInAt` stops: its
 * check-in days and its grace after the last check-in (or its issue). Null without a check-in.
 */
export function checkInDeadline(state: CheckInState, checkedInAt = state.checked_in_at): Date | null {
  if (state.check_in_days === null) return null;
  const from = (checkedInAt ?? state.created_at).getTime();
  return new Date(from + (state.check_in_days + (state.grace_days ?? 0)) * DAY_MS);
}

/**
 * The start of the period a use at `now` counts in: the UTC day or month, or the epoch for
 * counts that never reset by time (never, renewal).
 */
export function usePeriodStart(interval: UsesResetInterval | null, now: Date): Date {
  if (interval === 'day')
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  if (interval === 'month') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return new Date(0);
}

/** The day and month a use at `now` counts in, whichever the license resets by. */
export function usePeriods(now: Date): { day: Date; month: Date } {
  return { day: usePeriodStart('day', now), month: usePeriodStart('month', now) };
}

/** When the period begun at `start` ends (null: never by time). */
export function usePeriodEnd(interval: UsesResetInterval | null, start: Date): Date | null {
  if (interval === 'day') return new Date(start.getTime() + DAY_MS);
  if (interval === 'month') return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  return null;
}

/** The usage fields of a license, as stored. */
export interface UsageState {
  max_uses: number | null;
  uses: number;
  uses_reset_interval: UsesResetInterval | null;
  uses_period_start: Date | null;
}

/** Uses counted in the current period: the stored count, or none when its period has passed. */
export function usesNow(state: UsageState, now: Date): number {
  const period = usePeriodStart(state.uses_reset_interval, now);
  return state.uses_period_start !== null && state.uses_period_start.getTime() === period.getTime()
    ? state.uses
    : state.uses_reset_interval === 'day' || state.uses_reset_interval === 'month'
      ? 0
      : state.uses;
}

/** Uses left in the current period, or null without a quota. */
export function usesRemaining(state: UsageState, now: Date): number | null {
  return state.max_uses === null ? null : Math.max(0, state.max_uses - usesNow(state, now));
}

/** Where a quota stands at `now`: the period's count, what remains, and when it starts again. */
export function usageStanding(state: UsageState, now: Date) {
  const end = usePeriodEnd(state.uses_reset_interval, usePeriodStart(state.uses_reset_interval, now));
  return {
    uses: usesNow(state, now),
    remaining: usesRemaining(state, now),
    resetsAt: state.max_uses === null || end === null ? null : end.toISOString(),
  };
}
