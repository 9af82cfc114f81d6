import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import type { BrandService } from '../brand/index.js';
import { type Mailer, SEND_TIMEOUT_MS } from './mailer.js';
import { BRANDED_KINDS, type MailBrand, type RenderedMail, renderNotice } from './messages.js';
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
  brands = null,
  random = Math.random,
  observeSend = () => {},
  composedAtSend = {},
}: {
  db: Db;
  clock: Clock;
  log: Log;
  mailer: Pick<Mailer, 'send'>;
  /** The sellers' brands for buyers' notices, read as they are sent (the brand of today). */
  brands?: Pick<BrandService, 'forProducts'> | null;
  /**
   * Kinds whose content is made as they are sent, from the claimed notice (a sign-in link, which
   * must not wait in the queue): the data to render, or null when no mail is owed any more and
   * the notice is dropped. Made again for every attempt.
   */
  composedAtSend?: Partial<
    Record<string, (notice: store.NotificationRow) => Promise<Record<string, unknown> | null>>
  >;
  /** Spreads retries; tests pass a fixed one. */
  random?: () => number;
  /** Told each send's outcome (the metrics); in memory only. */
  observeSend?: (outcome: 'succeeded' | 'will_retry' | 'gave_up' | 'undeliverable') => void;
}) {
  /** The brands of the products the claimed buyers' notices are about, by product id. */
  function brandsOf(claimed: readonly store.NotificationRow[]): Promise<Map<string, MailBrand>> {
    const productIds = claimed.flatMap((notice) =>
      BRANDED_KINDS.has(notice.kind) && typeof notice.data.productId === 'string'
        ? [notice.data.productId]
        : [],
    );
    return brands && productIds.length > 0 ? brands.forProducts(productIds) : Promise.resolve(new Map());
  }

  async function deliver(
    notice: store.NotificationRow,
    accounts: Map<string, string>,
    brandOf: Map<string, MailBrand>,
  ): Promise<void> {
    const fields = { notificationId: notice.id, kind: notice.kind, attempt: notice.attempts };
    const undeliverable = async (error: string) => {
      await store.settle(db, notice, { status: 'failed', retryAt: null, error }, clock.now());
      observeSend('undeliverable');
      log.warn({ ...fields, error }, 'mail.undeliverable');
    };
    const to = notice.to_email ?? (notice.to_user_id ? accounts.get(notice.to_user_id) : undefined);
    if (!to) return undeliverable('the recipient account is deleted');
    let data = notice.data;
    let rendered: RenderedMail | null;
    try {
      const compose = composedAtSend[notice.kind];
      const composed = compose ? await compose(notice) : notice.data;
      if (composed === null) {
        await store.drop(db, notice);
        log.info(fields, 'mail.not_owed');
        return;
      }
      data = composed;
      const productId = typeof data.productId === 'string' ? data.productId : '';
      rendered = renderNotice(notice.kind, data, brandOf.get(productId) ?? null);
      if (rendered) await mailer.send({ id: notice.id, to, date: notice.created_at, ...rendered });
    } catch (cause) {
      const delay = retryDelay(notice.attempts, random);
      const now = clock.now();
      const error = describeFailure(cause, data);
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
    if (!rendered) return undeliverable(`no message for the kind "${notice.kind}"`);
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
        const [accounts, brandOf] = await Promise.all([
          store.accountAddresses(
            db,
            claimed.flatMap((notice) => (notice.to_user_id && !notice.to_email ? [notice.to_user_id] : [])),
          ),
          brandsOf(claimed),
        ]);
        await Promise.all(claimed.map((notice) => deliver(notice, accounts, brandOf)));
        attempts += claimed.length;
      }
    },

    /** Notifications not yet sent, read for the metrics. */
    backlog: () => store.countPending(db),
  };
}

/**
 * The transport's reason, short, for logs and last_error. A server may quote the message back
 * in its answer, so the license key and the sign-in link are cut out of it.
 */
function describeFailure(cause: unknown, data: Record<string, unknown>): string {
  let message = cause instanceof Error ? cause.message : String(cause);
  for (const [field, mask] of [
    ['licenseKey', '[license key]'],
    ['link', '[sign-in link]'],
  ] as const) {
    const secret = data[field];
    if (typeof secret === 'string' && secret !== '') message = message.split(secret).join(mask);
  }
  return message.replace(/\s+/g, ' ').slice(0, 300);
}
