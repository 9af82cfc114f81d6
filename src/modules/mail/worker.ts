import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import { type Mailer, SEND_TIMEOUT_MS } from './mailer.js';
import { renderNotice } from './messages.js';
import { retryDelay } from './retry-schedule.js';
import * as store from './store.js';

/** Several sends' worth of time: a lease runs out only when its worker is gone. */
export const LEASE_MS = 5 * SEND_TIMEOUT_MS;
/** Claimed and sent side by side in one round. */
const CLAIM_BATCH = 10;

export type NotificationWorker = ReturnType<typeof createNotificationWorker>;

/**
 * One pass of mail delivery, run by every node on a short interval: claim what is due, render
 * it, send it, settle it. A failed send is tried again later and fails for good after
 * MAX_ATTEMPTS; nothing is dropped silently.
 */
export function createNotificationWorker({
  db,
  clock,
  log,
  mailer,
  random = Math.random,
  observeSend = () => {},
}: {
  db: Db;
  clock: Clock;
  log: Log;
  mailer: Pick<Mailer, 'send'>;
  /** Spreads retries; tests pass a fixed one. */
  random?: () => number;
  /** Told each send's outcome (the metrics); in memory only. */
  observeSend?: (outcome: 'succeeded' | 'will_retry' | 'gave_up' | 'undeliverable') => void;
}) {
  async function deliver(notice: store.NotificationRow, accounts: Map<string, string>): Promise<void> {
    const fields = { notificationId: notice.id, kind: notice.kind, attempt: notice.attempts };
    const to = notice.to_email ?? (notice.to_user_id ? accounts.get(notice.to_user_id) : undefined);
    const rendered = renderNotice(notice.kind, notice.data);
    if (!to || !rendered) {
      const error = to ? `no message for the kind "${notice.kind}"` : 'the recipient account is deleted';
      await store.settle(db, notice, { status: 'failed', retryAt: null, error }, clock.now());
      observeSend('undeliverable');
      log.warn({ ...fields, error }, 'mail.undeliverable');
      return;
    }
    try {
      await mailer.send({ id: notice.id, to, date: notice.created_at, ...rendered });
    } catch (cause) {
      const delay = retryDelay(notice.attempts, random);
      const now = clock.now();
      const error = describeFailure(cause, notice.data);
      await store.settle(
        db,
        notice,
        delay === null
          ? { status: 'failed', retryAt: null, error }
          : { status: 'pending', retryAt: new Date(now.getTime() + delay), error },
        now,
      );
      observeSend(delay === null ? 'gave_up' : 'will_retry');
      // Giving up is an error someone should look at; a retry still to come is a warning.
      if (delay === null) log.error({ ...fields, willRetry: false, error }, 'mail.send.failed');
      else log.warn({ ...fields, willRetry: true, retryInMs: delay, error }, 'mail.send.failed');
      return;
    }
    await store.settle(db, notice, { status: 'sent' }, clock.now());
    observeSend('succeeded');
    log.info(fields, 'mail.sent');
  }

  return {
    /**
     * Runs until nothing is due now, or until `stopping` is aborted (after the batch in hand);
     * returns how many sends were attempted.
     */
    async runOnce(stopping?: AbortSignal): Promise<number> {
      let attempts = 0;
      for (;;) {
        if (stopping?.aborted) return attempts;
        const claimed = await store.claimDue(db, clock.now(), LEASE_MS, CLAIM_BATCH);
        if (claimed.length === 0) return attempts;
        const accounts = await store.accountAddresses(
          db,
          claimed.flatMap((notice) => (notice.to_user_id && !notice.to_email ? [notice.to_user_id] : [])),
        );
        await Promise.all(claimed.map((notice) => deliver(notice, accounts)));
        attempts += claimed.length;
      }
    },

    /** Notifications not yet sent, read for the metrics. */
    backlog: () => store.countPending(db),
  };
}

/**
 * The transport's reason, short, for logs and last_error. A server may quote the message back
 * in its answer, so the license key is cut out of it.
 */
function describeFailure(cause: unknown, data: Record<string, unknown>): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  const key = typeof data.licenseKey === 'string' ? data.licenseKey : '';
  const safe = key ? message.split(key).join('[license key]') : message;
  return safe.replace(/\s+/g, ' ').slice(0, 300);
}
