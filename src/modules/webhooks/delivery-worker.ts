import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import { envelopeOf } from './envelope.js';
import { nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';
import { type Sender, unsent } from './sender.js';
import * as store from './store.js';

/** Three times the 5 s a receiver gets, so a lease only runs out when its worker is gone. */
export const LEASE_MS = 15_000;
const CLAIM_BATCH = 50;
/** Deliveries in flight to one endpoint at a time; a slow receiver holds up only itself. */
export const PER_ENDPOINT_CONCURRENCY = 4;
const FAN_OUT_BATCH = 200;
/** Endpoints answering nothing but failures for this long are disabled. */
export const SUSTAINED_FAILURE_MS = 5 * 24 * 60 * 60_000;

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

/**
 * One pass of the delivery engine, run by every node on a short interval: turn new events into
 * deliveries, then send what is due. At most PER_ENDPOINT_CONCURRENCY deliveries go to one
 * endpoint at once; endpoints are served side by side.
 */
export function createDeliveryWorker({
  db,
  clock,
  log,
  sender,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  sender: Sender;
}) {
  async function deliver(delivery: store.ClaimedDelivery): Promise<void> {
    const result = delivery.url
      ? await sender.send(delivery.url, delivery.secret, envelopeOf(delivery, delivery.secret), delivery.kind)
      : // A merchant endpoint whose product dropped its URL: the delivery fails and retries.
        unsent('the product has no merchant webhook URL');
    const at = clock.now();
    const delay = result.success
      ? null
      : nextAttemptDelay(delivery.attempts, {
          statusCode: result.statusCode,
          timedOut: result.timedOut,
          retryAfterMs: parseRetryAfter(result.retryAfter, at),
        });
    const status = result.success ? 'succeeded' : delay === null ? 'failed' : 'pending';
    const endpoint = await store.recordAttempt(
      db,
      {
        deliveryId: delivery.id,
        endpointId: delivery.endpoint_id,
        attempt: delivery.attempts,
        trigger: delivery.trigger === 'auto' ? 'auto' : 'manual',
        ...result,
        at,
      },
      {
        status,
        retryAt: delay === null ? null : new Date(at.getTime() + delay),
        leasedUntil: delivery.leased_until,
      },
    );
    log.info(
      {
        deliveryId: delivery.id,
        endpointId: delivery.endpoint_id,
        attempt: delivery.attempts,
        statusCode: result.statusCode,
        status,
      },
      'webhook.delivery.attempted',
    );
    // A merchant endpoint is switched by its product's merchantWebhookUrl alone (sellers have no
    // enable route for it), so its failures retry and end as failed but never switch it off.
    if (!endpoint || result.success || delivery.kind === 'merchant') return;
    if (result.statusCode === 410) {
      await store.setEndpointEnabled(db, endpoint.id, false, 'the receiver answered 410 Gone', at);
      log.warn({ endpointId: endpoint.id }, 'webhook.endpoint.disabled');
    } else if (
      endpoint.failing_since &&
      at.getTime() - endpoint.failing_since.getTime() >= SUSTAINED_FAILURE_MS
    ) {
      await store.setEndpointEnabled(db, endpoint.id, false, 'every delivery failed for 5 days', at);
      log.warn({ endpointId: endpoint.id }, 'webhook.endpoint.disabled');
    }
  }

  return {
    /** Runs until nothing is left to do now; returns how many attempts were made. */
    async runOnce(): Promise<number> {
      while ((await store.fanOutEvents(db, clock.now(), FAN_OUT_BATCH)) === FAN_OUT_BATCH) {}
      let attempts = 0;
      for (;;) {
        const claimed = await store.claimDue(db, clock.now(), LEASE_MS, CLAIM_BATCH);
        if (claimed.length === 0) return attempts;
        const byEndpoint = new Map<string, store.ClaimedDelivery[]>();
        for (const delivery of claimed)
          byEndpoint.set(delivery.endpoint_id, [...(byEndpoint.get(delivery.endpoint_id) ?? []), delivery]);
        await Promise.all(
          [...byEndpoint.values()].map((queue) => drain(queue, PER_ENDPOINT_CONCURRENCY, deliver)),
        );
        attempts += claimed.length;
      }
    },
  };
}

/** Runs `work` over `items` with at most `limit` running at once. */
async function drain<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
