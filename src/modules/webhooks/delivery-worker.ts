import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import { disableGoneEndpoints } from './endpoint-disabling.js';
import { envelopeOf } from './envelope.js';
import { nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';
import { DELIVERY_TIMEOUT_MS, SENDS_IN_FLIGHT, type Sender, unsent } from './sender.js';
import * as store from './store.js';

/**
 * How long a lease runs: three times the 5 s a receiver gets. The worker renews what it holds
 * every RENEW_EVERY_MS while it lives, so a lease only runs out when its worker is gone (or the
 * database was out of reach for that long).
 */
export const LEASE_MS = 15_000;
const RENEW_EVERY_MS = LEASE_MS / 3;
/**
 * Deliveries leased at once, and at most ENDPOINT_HOLD of one endpoint in a claim; an endpoint
 * with more than HOLD_LOW still waiting is not claimed for at all, so a slow receiver's backlog
 * neither fills the worker nor holds up the others. The next lease is taken when fewer than
 * REFILL_BELOW deliveries of such endpoints wait.
 */
const CLAIM_BATCH = 200;
export const ENDPOINT_HOLD = 50;
const HOLD_LOW = ENDPOINT_HOLD / 2;
const REFILL_BELOW = 100;
/**
 * Attempts are settled (made durable) in chunks of at most SETTLE_BATCH, at the latest
 * SETTLE_AFTER_MS after the first of them ended: an outcome is on record long before the lease
 * that covers it could run out, and a node that dies repeats only what was still in flight.
 */
export const SETTLE_BATCH = 100;
export const SETTLE_AFTER_MS = 100;
/** Deliveries in flight to one endpoint at a time; a slow receiver holds up only itself. */
export const PER_ENDPOINT_CONCURRENCY = 4;
/** Deliveries in flight from one node, over all endpoints. */
const NODE_CONCURRENCY = SENDS_IN_FLIGHT;
/** Events turned into deliveries before the next sends: a backlog does not delay the first one. */
const FAN_OUT_BATCH = 200;
/**
 * A delivery is only started while the lease this worker holds outlasts a full attempt and its
 * settling; when renewals fail (the database away), what is left is not sent.
 */
const LEASE_MARGIN_MS = DELIVERY_TIMEOUT_MS + 2_000;
/** While sends are under way and nothing new was found, new work is looked for this often. */
const LOOK_AGAIN_MS = 1_000;

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

/**
 * The delivery engine, run by every node on a short interval and woken when events commit.
 * A pass repeats, until nothing is left: turn a bounded batch of new events into deliveries,
 * lease a batch of due ones, send them (at most PER_ENDPOINT_CONCURRENCY to one endpoint at
 * once, endpoints side by side, NODE_CONCURRENCY in all) over kept-alive connections, and
 * settle the attempts in small batched statements while the rest are still being sent.
 *
 * Once each: a lease is renewed for as long as its worker holds the delivery, and an outcome is
 * settled within SETTLE_AFTER_MS of its answer, on the same chain of statements as the renewals,
 * so a settlement always names the lease as it stands. A delivery is therefore sent again only
 * when its attempt failed, or when its node died before the outcome was on record.
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
    // Attempts are counted as they are settled, so this is the attempt's number unless a resend
    // by hand got in between (the log then numbers it from the database).
    const number = delivery.attempts + 1;
    const delay = result.success
      ? null
      : nextAttemptDelay(number, {
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
        attempt: number,
        statusCode: result.statusCode,
        status,
      },
      'webhook.delivery.attempted',
    );
    return {
      record: {
        deliveryId: delivery.id,
        endpointId: delivery.endpoint_id,
        attempt: number,
        trigger: delivery.trigger === 'auto' ? 'auto' : 'manual',
        ...result,
        at,
      },
      next: {
        status,
        retryAt: delay === null ? null : new Date(at.getTime() + delay),
        // Filled in when the chunk is settled: the lease may be renewed meanwhile.
        leasedUntil: delivery.leased_until as Date,
      },
    };
  }

  /**
   * The sending side of one pass: per-endpoint queues of leased deliveries, each served by up
   * to PER_ENDPOINT_CONCURRENCY lanes (NODE_CONCURRENCY sends at once in all), whose attempts
   * are settled a chunk at a time, in the order they ended, beside the sends. Every statement
   * of the pass after its claims (settling, renewing, handing back) runs on one chain, in order.
   */
  function createLanes() {
    const queues = new Map<string, { waiting: Held[]; lanes: number }>();
    const kinds = new Map<string, 'core' | 'merchant'>();
    /** Every delivery this pass leased and has not yet settled or handed back. */
    const held = new Map<string, Held>();
    const slots = semaphore(NODE_CONCURRENCY);
    const running = new Set<Promise<void>>();
    const changed = new Set<() => void>();
    const unsent: Held[] = [];
    let attempted = 0;
    let pending: { held: Held; settlement: store.Settlement }[] = [];
    let chain: Promise<void> = Promise.resolve();
    let settleTimer: NodeJS.Timeout | null = null;
    // Set when the node stops: what has not been sent yet goes back, leased to nobody.
    let abandoned = false;

    /** Runs `step` after every statement queued before it; its failure is its own to handle. */
    const enqueue = (step: () => Promise<void>) => {
      chain = chain.then(step);
      return chain;
    };

    const flush = () => {
      if (settleTimer) clearTimeout(settleTimer);
      settleTimer = null;
      const chunk = pending;
      pending = [];
      if (chunk.length === 0) return;
      void enqueue(async () => {
        // The lease as it stands now: a renewal earlier on the chain may have moved it.
        const settlements = chunk.map(({ held: h, settlement }) => ({
          ...settlement,
          next: { ...settlement.next, leasedUntil: h.delivery.leased_until as Date },
        }));
        let endpoints: Awaited<ReturnType<typeof store.settleAttempts>>;
        try {
          endpoints = await store.settleAttempts(db, settlements);
        } catch (err) {
          // Kept, renewed with the rest and tried again: the outcomes are not lost to a blip.
          log.warn(
            { err: { message: (err as Error).message }, count: chunk.length },
            'webhook.delivery.settle_failed',
          );
          pending = [...chunk, ...pending];
          settleTimer ??= setTimeout(flush, RENEW_EVERY_MS);
          return;
        }
        for (const { held: h } of chunk) held.delete(h.delivery.id);
        await disableGoneEndpoints({ db, log }, settlements, endpoints, kinds);
      });
    };

    /** Extends every lease still held; one that cannot be extended is given up unsent. */
    const renew = () =>
      enqueue(async () => {
        const items = [...held.values()].filter((h) => !h.lost);
        if (items.length === 0) return;
        const until = new Date(clock.now().getTime() + LEASE_MS);
        const at = performance.now();
        try {
          const renewed = await store.renewLeases(db, items.map(leaseOf), until);
          for (const h of items) {
            if (renewed.has(h.delivery.id)) {
              h.delivery.leased_until = until;
              h.heldUntil = at + LEASE_MS;
            } else h.lost = true;
          }
        } catch (err) {
          // The leases run on; a delivery is not started once too little of its lease is left.
          log.warn({ err: { message: (err as Error).message } }, 'webhook.delivery.renew_failed');
        }
      });
    const renewTimer = setInterval(() => void renew(), RENEW_EVERY_MS);
    renewTimer.unref();

    const until = (done: () => boolean, ms?: number) =>
      new Promise<void>((resolve) => {
        if (done()) return resolve();
        let timer: NodeJS.Timeout | null = null;
        const check = (force = false) => {
          if (!force && !done()) return;
          changed.delete(check);
          if (timer) clearTimeout(timer);
          resolve();
        };
        changed.add(check);
        if (ms !== undefined) timer = setTimeout(() => check(true), ms);
      });
    const tell = () => {
      for (const check of [...changed]) check();
    };
    /** Endpoints with enough waiting that a claim leaves them out. */
    const saturated = () => [...queues].filter(([, q]) => q.waiting.length > HOLD_LOW).map(([id]) => id);
    /** Deliveries waiting to be started, of endpoints a claim would still take more for. */
    const waitingToRefill = () => {
      let count = 0;
      for (const queue of queues.values())
        if (queue.waiting.length <= HOLD_LOW) count += queue.waiting.length;
      return count;
    };

    async function lane(endpointId: string, queue: { waiting: Held[]; lanes: number }): Promise<void> {
      for (let next = queue.waiting.shift(); next; next = queue.waiting.shift()) {
        tell();
        await slots.acquire();
        try {
          // Settled or cancelled by someone else meanwhile (a resend by hand, the endpoint off).
          if (next.lost) held.delete(next.delivery.id);
          else if (abandoned || next.heldUntil - performance.now() < LEASE_MARGIN_MS) unsent.push(next);
          else {
            const settlement = await attempt(next.delivery);
            pending.push({ held: next, settlement });
            attempted++;
            if (pending.length >= SETTLE_BATCH) flush();
            else settleTimer ??= setTimeout(flush, SETTLE_AFTER_MS);
          }
        } catch (err) {
          // Left leased (no longer renewed): the delivery is taken again when its lease runs out.
          held.delete(next.delivery.id);
          log.error({ err, deliveryId: next.delivery.id }, 'webhook.delivery.attempt_failed');
        } finally {
          slots.release();
        }
      }
      queue.lanes--;
      if (queue.lanes === 0) queues.delete(endpointId);
    }

    return {
      get attempted() {
        return attempted;
      },
      saturated,
      add(claimed: store.ClaimedDelivery[]): void {
        const heldUntil = performance.now() + LEASE_MS;
        for (const delivery of claimed) {
          kinds.set(delivery.endpoint_id, delivery.kind);
          let queue = queues.get(delivery.endpoint_id);
          if (!queue) {
            queue = { waiting: [], lanes: 0 };
            queues.set(delivery.endpoint_id, queue);
          }
          const item: Held = { delivery, heldUntil, lost: false };
          held.set(delivery.id, item);
          queue.waiting.push(item);
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
      /** Resolves once fewer than `count` deliveries a claim would add to wait, or none is in flight. */
      below: (count: number) => until(() => waitingToRefill() < count || running.size === 0),
      /** Resolves once a saturated endpoint can take more, nothing is in flight, or after `ms`. */
      settleDown: (ms: number) => {
        const before = saturated();
        return until(() => {
          if (running.size === 0) return true;
          const now = new Set(saturated());
          return before.some((id) => !now.has(id));
        }, ms);
      },
      idle: () => running.size === 0,
      /** Starts nothing more: the sends under way finish, every other delivery is handed back. */
      abandon(): void {
        abandoned = true;
        for (const queue of queues.values()) {
          unsent.push(...queue.waiting.filter((h) => !h.lost));
          queue.waiting.length = 0;
        }
        tell();
      },
      /** Waits for every send, settles what is left and hands back what was not sent. */
      async close(): Promise<void> {
        try {
          await until(() => running.size === 0);
          flush();
          await chain;
          if (pending.length > 0) {
            // One more try for outcomes a failed settle kept; then they are left to the lease.
            flush();
            await chain;
          }
        } finally {
          clearInterval(renewTimer);
          if (settleTimer) clearTimeout(settleTimer);
          // Handed back even when settling failed: a release need not wait out the lease.
          const back = unsent.map(leaseOf);
          await chain.then(() => store.releaseLeases(db, back));
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
            {
              ms: LEASE_MS,
              // Told to stop meanwhile: nothing more is claimed only to be handed back.
              limit: stopping?.aborted ? 0 : CLAIM_BATCH - fannedOut.leased.length,
              perEndpoint: ENDPOINT_HOLD,
              skip: lanes.saturated(),
            },
            fannedOut.leased,
          );
          lanes.add(claimed);
          // Claimed while the signal fired: handed back with the rest.
          if (stopping?.aborted) lanes.abandon();
          if (claimed.length > 0 || fannedOut.events === FAN_OUT_BATCH) await lanes.below(REFILL_BELOW);
          else if (lanes.idle()) break;
          // Sends under way and nothing new: look again soon, or once a busy endpoint has room.
          else await lanes.settleDown(LOOK_AGAIN_MS);
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

interface Held {
  delivery: store.ClaimedDelivery;
  /** performance.now() until which this worker's lease surely holds (its last renewal). */
  heldUntil: number;
  /** Set when a renewal found the lease no longer this worker's: it is not sent. */
  lost: boolean;
}

/** The lease a held delivery names, as it stands (renewals move it). */
function leaseOf(held: Held): store.HeldLease {
  return { id: held.delivery.id, leasedUntil: held.delivery.leased_until as Date };
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
