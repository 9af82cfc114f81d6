import type { Executor } from '../../platform/db/database.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import type { NameLimitExcess } from '../../platform/http/rate-limit.js';
import { newId } from '../../platform/ids.js';
import type { ClientCall } from '../timeline/index.js';
import type { VerificationDeps, VerificationLookups } from './deps.js';
import { effectiveStatus, grantsUse, keepsAccess, REASON_OF_STATUS } from './license-status.js';
import type { UsageCode, UsageResultType } from './schemas.js';
import * as store from './store.js';
import { type UsageState, usageStanding, usePeriods } from './terms.js';

/** A usage answer: the count of the current period as it stands after the call. */
function usageAnswer(
  consumed: boolean,
  code: UsageCode | undefined,
  usage: UsageState | null,
  now: Date,
): UsageResultType {
  const standing = usage && usage.max_uses !== null ? usageStanding(usage, now) : null;
  const answer: UsageResultType = {
    consumed,
    uses: standing?.uses ?? null,
    max_uses: usage?.max_uses ?? null,
    uses_remaining: standing?.remaining ?? null,
    resets_at: standing?.resetsAt ?? null,
  };
  if (code !== undefined) answer.code = code;
  return answer;
}

/**
 * `POST /v1/licenses/usage`, built from verification's own lookups (the key through the cache and
 * the per-key limit, whether the license grants use, its check-in), so a consume judges a key as
 * a verify does.
 */
export function createUsageConsumer({
  db,
  clock,
  log,
  lookup,
  usable,
  checkedIn,
  timeline,
}: Pick<VerificationDeps, 'db' | 'clock' | 'log' | 'timeline'> & VerificationLookups) {
  /**
   * Consumes uses of the license's quota: all of `amount` or none, in one conditional
   * statement, so concurrent consumes never take the count past the quota. With an
   * Idempotency-Key the answer commits with the count, and a retry gets it again instead of
   * consuming twice. The device, when the license binds devices or seats, must hold one.
   */
  return async function consumeUsage(
    input: { key: string; hwuid?: string; appId?: string; amount: number },
    idempotent?: IdempotentAnswer<UsageResultType>,
    excess?: NameLimitExcess,
    client?: ClientCall,
  ): Promise<UsageResultType> {
    const hwuid = input.hwuid ?? null;
    const lookedUp = await lookup(input.key, hwuid, input.appId, excess);
    // A refusal before any write is kept, with a key, when it is sent (idempotency.ts).
    const refused = (code: UsageCode, usage: UsageState | null, now: Date) =>
      usageAnswer(false, code, usage, now);
    const now = clock.now();
    if (!lookedUp) return refused('license_not_found', null, now);
    const found = lookedUp.state;
    if (!usable(found, now))
      return refused(
        REASON_OF_STATUS[
          effectiveStatus(found.status, found.expires_at, now) as keyof typeof REASON_OF_STATUS
        ],
        null,
        now,
      );
    if (!(await checkedIn(found, false, now))) return refused('check_in_overdue', null, now);
    if (found.floating) {
      if (hwuid === null || !(await store.seatLease(db, found.id, hwuid, now)))
        return refused('seat_required', null, now);
    } else if (found.max_devices !== null) {
      if (hwuid === null) return refused('hwuid_required', null, now);
      if (!lookedUp.deviceBound) return refused('device_not_bound', null, now);
    }
    if (found.max_uses === null) return refused('no_usage_quota', null, now);
    const work = async (executor: Executor): Promise<UsageResultType> => {
      const consumed = await store.consumeUses(executor, {
        licenseId: found.id,
        amount: input.amount,
        periods: usePeriods(now),
        now,
        eventIds: { threshold: newId(), exhausted: newId() },
        entryIds: { threshold: newId(), exhausted: newId() },
      });
      if (consumed) return usageAnswer(true, undefined, consumed, now);
      // Nothing consumed: the quota would be passed, or the license changed since it was read.
      // One read of the row answers both: its status now, and its count.
      const current = await store.findLicenseById(executor, found.id);
      const status = current ? effectiveStatus(current.status, current.expires_at, now) : null;
      if (current && status && !grantsUse(status) && !keepsAccess(current, now))
        return usageAnswer(false, REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS], null, now);
      if (!current || current.max_uses === null) return usageAnswer(false, 'no_usage_quota', null, now);
      return usageAnswer(false, 'usage_exhausted', current, now);
    };
    const result = idempotent ? await transactionWithAnswer(db, idempotent, work) : await work(db);
    if (result.consumed) {
      const data = JSON.stringify({ amount: input.amount, uses: result.uses, maxUses: result.max_uses });
      timeline.record(found, 'usage.consumed', null, hwuid, client, now, data);
      log.info({ licenseId: found.id }, 'license.usage.consumed');
    }
    return result;
  };
}
