import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import { envelopeOf } from './envelope.js';
import { nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';
import { DELIVERY_TIMEOUT_MS, type Sender, unsent } from './sender.js';
import * as store from './store.js';

/** Three times the 5 s a receiver gets, so a lease only runs out when its worker is gone. */
export const LEASE_MS = 15_000;
/**
 * Deliveries leased at once; the next lease is taken when fewer than REFILL_BELOW of them wait,
 * and attempts are settled in chunks of SETTLE_BATCH as they end (on PGlite each statement has a
 * fixed cost of a millisecond or so, which a chunk of 200 spreads thinner than one of 50).
 */
const CLAIM_BATCH = 200;
const REFILL_BELOW = 100;
export const SETTLE_BATCH = 200;
/** Deliveries in flight to one endpoint at a time; a slow receiver holds up only itself. */
export const PER_ENDPOINT_CONCURRENCY = 4;
/** Deliveries in flight from one node, over all endpoints. */
const NODE_CONCURRENCY = 64;
/** Events turned into deliveries before the next sends: a backlog does not delay the first one. */
const FAN_OUT_BATCH = 200;
/** A claimed delivery is only started while its lease outlasts a full attempt and its settling. */
const LEASE_MARGIN_MS = DELIVERY_TIMEOUT_MS + 2_000;
/** Endpoints answering nothing but failures for this long are disabled. */
export const SUSTAINED_FAILURE_MS = 5 * 24 * 60 * 60_000;

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

/**
 * The delivery engine, run by every node on a short interval and woken when events commit.
 * A pass repeats, until nothing is left: turn a bounded batch of new events into deliveries,
 * lease a batch of due ones, send them (at most PER_ENDPOINT_CONCURRENCY to one endpoint at
 * once, endpoints side by side, NODE_CONCURRENCY in all) over kept-alive connections, and
 * settle the attempts in batched statements while the rest are still being sent.
 */
export function createDeliveryWorker({
  db,
  clock,
  log,
  sender,
  observeAttempt = () => {},
}: {
  db: Db;
  clock: Clock;
  log: Log;
  sender: Sender;
  /** Told each attempt's outcome (the metrics); in memory only. */
  observeAttempt?: (kind: 'core' | 'merchant', outcome: 'succeeded' | 'will_retry' | 'gave_up') => void;
}) {
  async function attempt(delivery: store.ClaimedDelivery): Promise<store.Settlement> {
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
    observeAttempt(
      delivery.kind,
      status === 'pending' ? 'will_retry' : status === 'failed' ? 'gave_up' : status,
    );
    // A success is in the delivery log the seller reads through the API; only what went wrong
    // is worth a line at the default level (this runs for every delivery).
    log[status === 'succeeded' ? 'debug' : 'info'](
      {
        deliveryId: delivery.id,
        endpointId: delivery.endpoint_id,
        attempt: delivery.attempts,
        statusCode: result.statusCode,
        status,
      },
      'webhook.delivery.attempted',
    );
    return {
      record: {
        deliveryId: delivery.id,
        endpointId: delivery.endpoint_id,
        attempt: delivery.attempts,
        trigger: delivery.trigger === 'auto' ? 'auto' : 'manual',
        ...result,
        at,
      },
      next: {
        status,
        retryAt: delay === null ? null : new Date(at.getTime() + delay),
        leasedUntil: delivery.leased_until as Date,
      },
    };
  }

  /** Settles a chunk of attempts, then switches off the endpoints they show to be gone. */
  async function settle(chunk: store.Settlement[], kinds: Map<string, 'core' | 'merchant'>): Promise<void> {
    const endpoints = await store.settleAttempts(db, chunk);
    for (const endpoint of endpoints) {
      // A merchant endpoint is switched by its product's merchantWebhookUrl alone (sellers have
      // no enable route for it), so its failures retry and end as failed but never switch it off.
      if (kinds.get(endpoint.id) !== 'core' || !endpoint.enabled) continue;
      const failures = chunk.filter((s) => s.record.endpointId === endpoint.id && !s.record.success);
      const lastFailure = failures.at(-1)?.record.at;
      if (!lastFailure) continue;
      let reason: string | null = null;
      if (failures.some((s) => s.record.statusCode === 410)) reason = 'the receiver answered 410 Gone';
      else if (
        endpoint.failing_since &&
        lastFailure.getTime() - endpoint.failing_since.getTime() >= SUSTAINED_FAILURE_MS
      )
        reason = 'every delivery failed for 5 days';
      if (!reason) continue;
      await store.setEndpointEnabled(db, endpoint.id, false, reason, lastFailure);
      log.warn({ endpointId: endpoint.id }, 'webhook.endpoint.disabled');
    }
  }

  /**
   * The sending side of one pass: per-endpoint queues of leased deliveries, each served by up
   * to PER_ENDPOINT_CONCURRENCY lanes (NODE_CONCURRENCY sends at once in all), whose attempts
   * are settled a chunk at a time, in the order they ended, beside the sends.
   */
  function createLanes() {
    const queues = new Map<string, { waiting: Leased[]; lanes: number }>();
    const kinds = new Map<string, 'core' | 'merchant'>();
    const slots = semaphore(NODE_CONCURRENCY);
    const running = new Set<Promise<void>>();
    const changed = new Set<() => void>();
    const unsent = new Map<number, { leasedUntil: Date; ids: string[] }>();
    let waiting = 0;
    let attempted = 0;
    let pending: store.Settlement[] = [];
    let settling: Promise<void> = Promise.resolve();
    // Set when the node stops: what has not been sent yet goes back, leased to nobody.
    let abandoned = false;
    const handBack = (delivery: store.ClaimedDelivery) => {
      const lease = delivery.leased_until as Date;
      const group = unsent.get(lease.getTime()) ?? { leasedUntil: lease, ids: [] };
      group.ids.push(delivery.id);
      unsent.set(lease.getTime(), group);
    };

    const flush = () => {
      const chunk = pending;
      pending = [];
      if (chunk.length === 0) return;
      settling = settling.then(() => settle(chunk, kinds));
      // A failure surfaces from close(), not as an unhandled rejection before it.
      settling.catch(() => {});
    };
    const until = (done: () => boolean) =>
      new Promise<void>((resolve) => {
        if (done()) return resolve();
        const check = () => {
          if (!done()) return;
          changed.delete(check);
          resolve();
        };
        changed.add(check);
      });
    const tell = () => {
      for (const check of [...changed]) check();
    };

    async function lane(endpointId: string, queue: { waiting: Leased[]; lanes: number }): Promise<void> {
      for (let next = queue.waiting.shift(); next; next = queue.waiting.shift()) {
        waiting--;
        tell();
        await slots.acquire();
        try {
          // Behind a slow receiver a lease may run short: what cannot finish in it goes back.
          if (abandoned || performance.now() - next.leasedAt > LEASE_MS - LEASE_MARGIN_MS) {
            handBack(next.delivery);
          } else {
            // Read `pending` after the attempt: a flush meanwhile replaces the array.
            const settlement = await attempt(next.delivery);
            pending.push(settlement);
            attempted++;
          }
        } catch (err) {
          // Left leased: the delivery is taken again when its lease runs out.
          log.error({ err, deliveryId: next.delivery.id }, 'webhook.delivery.attempt_failed');
        } finally {
          slots.release();
        }
        if (pending.length >= SETTLE_BATCH) flush();
      }
      queue.lanes--;
      if (queue.lanes === 0) queues.delete(endpointId);
    }

    return {
      get attempted() {
        return attempted;
      },
      add(claimed: store.ClaimedDelivery[]): void {
        const leasedAt = performance.now();
        for (const delivery of claimed) {
          kinds.set(delivery.endpoint_id, delivery.kind);
          let queue = queues.get(delivery.endpoint_id);
          if (!queue) {
            queue = { waiting: [], lanes: 0 };
            queues.set(delivery.endpoint_id, queue);
          }
          queue.waiting.push({ delivery, leasedAt });
          waiting++;
          while (queue.lanes < PER_ENDPOINT_CONCURRENCY && queue.lanes < queue.waiting.length) {
            queue.lanes++;
            const current = lane(delivery.endpoint_id, queue).finally(() => {
              running.delete(current);
              tell();
            });
            running.add(current);
          }
        }
      },
      /** Resolves once fewer than `count` deliveries wait to be started, or none is in flight. */
      below: (count: number) => until(() => waiting < count || running.size === 0),
      idle: () => running.size === 0,
      /** Starts nothing more: the sends under way finish, every other delivery is handed back. */
      abandon(): void {
        abandoned = true;
        for (const queue of queues.values()) {
          for (const { delivery } of queue.waiting) handBack(delivery);
          waiting -= queue.waiting.length;
          queue.waiting.length = 0;
        }
        tell();
      },
      drained: () => until(() => running.size === 0),
      /** Waits for every send, settles what is left and hands back what was not sent. */
      async close(): Promise<void> {
        try {
          await until(() => running.size === 0);
          flush();
          await settling;
        } finally {
          // Handed back even when settling failed: a release need not wait out the lease.
          for (const { leasedUntil, ids } of unsent.values()) await store.releaseLeases(db, ids, leasedUntil);
        }
      },
    };
  }

  return {
    /**
     * Runs until nothing is left to do now; returns how many attempts were made. The next
     * batch is fanned out and leased while the current one is still being sent. Once `stopping`
     * is aborted, the sends under way finish and what is still leased is handed back at once,
     * for any node to take, instead of waiting out its lease.
     */
    async runOnce(stopping?: AbortSignal): Promise<number> {
      // An idle pass (most of them: the poll is a safety net) stops at one cheap read.
      if (!(await store.hasWork(db, clock.now()))) return 0;
      const lanes = createLanes();
      const abandon = () => lanes.abandon();
      stopping?.addEventListener('abort', abandon, { once: true });
      try {
        for (;;) {
          if (stopping?.aborted) break;
          // New deliveries come from the fan-out already leased; older due ones are claimed.
          const fannedOut = await store.fanOutEvents(db, clock.now(), FAN_OUT_BATCH, {
            ms: LEASE_MS,
            limit: CLAIM_BATCH,
          });
          const claimed = await store.claimDue(
            db,
            clock.now(),
            LEASE_MS,
            // Told to stop meanwhile: nothing more is claimed only to be handed back.
            stopping?.aborted ? 0 : CLAIM_BATCH - fannedOut.leased.length,
            fannedOut.leased,
          );
          lanes.add(claimed);
          // Claimed while the signal fired: handed back with the rest.
          if (stopping?.aborted) lanes.abandon();
          if (claimed.length > 0 || fannedOut.events === FAN_OUT_BATCH) await lanes.below(REFILL_BELOW);
          else if (lanes.idle()) break;
          else await lanes.drained();
        }
      } finally {
        stopping?.removeEventListener('abort', abandon);
        await lanes.close();
      }
      return lanes.attempted;
    },

    /** What waits on this engine, read for the metrics (one query each, no lock). */
    backlog: () => store.deliveryBacklog(db),
  };
}

interface Leased {
  delivery: store.ClaimedDelivery;
  /** performance.now() when it was leased. */
  leasedAt: number;
}

/** A counter of free places; acquire() waits for one. */
function semaphore(size: number) {
  let free = size;
  const waiting: (() => void)[] = [];
  return {
    acquire(): Promise<void> {
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    release(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}
