import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../platform/db/database.js';
import { type Notifications, notify } from '../../platform/db/notifications.js';
import type { Log } from '../../platform/log.js';

/*
 * The verification cache's change channel: what a writing transaction announces, and how each
 * node's cache listens, knowing itself heard only once its own probe comes back.
 */

export const LICENSE_CHANGED = 'license_changed';
export const SELLER_CHANGED = 'seller_changed';
const PROBE_RETRY_MIN_MS = 250;
const PROBE_RETRY_MAX_MS = 5_000;

/** Sent inside the transaction that changes what a license verifies as. */
export function announceLicense(executor: Executor, licenseId: string): Promise<unknown> {
  return notify(executor, LICENSE_CHANGED, licenseId);
}

/**
 * Sent inside the transaction that changes a seller's tier, deletes the account, or changes
 * what all of a seller's licenses of an app or product verify as.
 */
export function announceSeller(executor: Executor, sellerId: string): Promise<unknown> {
  return notify(executor, SELLER_CHANGED, sellerId);
}

/**
 * Listens on both channels and sends this node's probe until it is heard (`heard`), again
 * after each wait while `probing` says so; `lost` and `gap` are the listen connection's break
 * and its return.
 */
export function listenForChanges({
  db,
  log,
  notifications,
  heard,
  lost,
  gap,
  licenseChanged,
  sellerChanged,
  probing,
}: {
  db: Db;
  log: Log;
  notifications: Pick<Notifications, 'listen' | 'onGap' | 'onLost'>;
  heard: () => void;
  lost: () => void;
  gap: () => void;
  licenseChanged: (licenseId: string) => void;
  sellerChanged: (sellerId: string) => void;
  probing: () => boolean;
}): void {
  // Every node hears every probe; each listens for its own and ignores the others.
  const probe = `probe:${randomUUID()}`;
  notifications.onLost(lost);
  notifications.onGap(gap);
  const subscribed = Promise.all([
    notifications.listen(LICENSE_CHANGED, (payload) => {
      if (payload === probe) heard();
      else if (!payload.startsWith('probe:')) licenseChanged(payload);
    }),
    notifications.listen(SELLER_CHANGED, sellerChanged),
  ]);
  const sendProbe = async (retryMs: number): Promise<void> => {
    // Closed, the node sends nothing more (its database is gone too).
    if (!probing()) return;
    try {
      await notify(db, LICENSE_CHANGED, probe);
    } catch (err) {
      log.debug({ err: { message: (err as Error).message } }, 'license.verify.cache_probe_failed');
    }
    setTimeout(() => void sendProbe(Math.min(retryMs * 2, PROBE_RETRY_MAX_MS)), retryMs).unref();
  };
  subscribed.then(
    () => sendProbe(PROBE_RETRY_MIN_MS),
    (err) => log.warn({ err: { message: (err as Error).message } }, 'license.verify.cache_listen_failed'),
  );
}
