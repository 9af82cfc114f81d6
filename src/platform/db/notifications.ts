import { randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import pg from 'pg';
import type { Log } from '../log.js';
import type { Executor } from './executor.js';

/**
 * PostgreSQL LISTEN/NOTIFY for every node: what one node commits, the others hear about within
 * moments (cache invalidation, waking a worker). One listening connection per node, on its own
 * (never a pooled one), re-opened with backoff when it breaks, every channel listened again.
 *
 * Notifications sent while the connection was down are lost: `onLost` handlers run when it
 * breaks (a cache stops trusting what it holds), and after a reconnect every `onGap` handler
 * runs, so each owner can recover (a cache flushes everything, a worker makes a pass).
 * On PGlite there is one node; the store's own LISTEN delivers to it.
 *
 * A connection can die without a word (a NAT, a load balancer or a failover that drops it with
 * no reset), and TCP keepalive alone would notice only after minutes. So the listener proves it
 * is alive: every PROBE_EVERY_MS it notifies itself on a channel of its own, over its own
 * connection, and a probe not heard back within PROBE_TIMEOUT_MS counts as a break (`onLost`,
 * the socket destroyed, a reconnect, then `onGap`). Keepalive starts after KEEPALIVE_AFTER_MS.
 *
 * Send with `notify(executor, channel, payload)` inside the transaction that makes the change:
 * PostgreSQL delivers at commit, and nothing when it rolls back.
 */
export interface Notifications {
  /**
   * Calls `handler` with each payload sent on `channel` (register before traffic starts). Resolves
   * once the channel is listened to, or once a first attempt to connect has failed: from then on
   * what is missed is reported by `onGap` after the reconnect.
   */
  listen(channel: string, handler: (payload: string) => void): Promise<void>;
  /** Calls `handler` whenever notifications may have been missed (the listener reconnected). */
  onGap(handler: () => void): void;
  /** Calls `handler` the moment the listener's connection breaks (nothing is heard until a gap). */
  onLost(handler: () => void): void;
  close(): Promise<void>;
}

interface Watch {
  heard(payload: string): void;
  stop(): void;
}

/** Where a node listens: a connection string of its own, or the embedded store itself. */
export type ListenTarget = { kind: 'postgres'; url: string } | { kind: 'pglite'; pglite: PGlite };

export function notify(executor: Executor, channel: string, payload: string): Promise<unknown> {
  return sql`select pg_notify(${channel}, ${payload})`.execute(executor);
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;
const PROBE_EVERY_MS = 5_000;
const PROBE_TIMEOUT_MS = 5_000;
const KEEPALIVE_AFTER_MS = 5_000;

/** How the listening connection names itself to the server (`pg_stat_activity.application_name`). */
export const LISTENER_APPLICATION_NAME = 'licensing-listener';

/** How often a listener probes its connection, and how long it waits to hear it (tests shorten). */
export interface ProbeTimes {
  everyMs: number;
  timeoutMs: number;
}

export function openNotifications(
  target: ListenTarget,
  log: Log,
  probe: ProbeTimes = { everyMs: PROBE_EVERY_MS, timeoutMs: PROBE_TIMEOUT_MS },
): Notifications {
  return target.kind === 'pglite' ? embedded(target.pglite) : listener(target.url, log, probe);
}

function embedded(pglite: PGlite): Notifications {
  return {
    async listen(channel, handler) {
      await pglite.listen(channel, handler);
    },
    onGap() {
      // One process owns the store and hears every notification: nothing is ever missed.
    },
    onLost() {},
    async close() {},
  };
}

function listener(url: string, log: Log, probe: ProbeTimes): Notifications {
  const handlers = new Map<string, ((payload: string) => void)[]>();
  // Its own channel, so no node hears another's probes.
  const probeChannel = `listener_probe_${randomUUID().replaceAll('-', '')}`;
  let watch: Watch | null = null;
  const gapHandlers: (() => void)[] = [];
  const lostHandlers: (() => void)[] = [];
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let everConnected = false;
  // Callers of listen() waiting for the connection attempt under way to succeed or fail.
  let attemptWaiters: (() => void)[] = [];
  // Ends the pause between two attempts early (close() does not wait out the backoff).
  let stopWaiting: (() => void) | null = null;
  // The client of the attempt under way: close() ends it, so that a server which stopped
  // answering mid-attempt cannot hold close() (pg drops the socket of a client not yet ready,
  // or with a query in flight).
  let attempting: pg.Client | null = null;

  const deliver = (message: pg.Notification) => {
    if (message.channel === probeChannel) return watch?.heard(message.payload ?? '');
    for (const handler of handlers.get(message.channel) ?? []) {
      try {
        handler(message.payload ?? '');
      } catch (err) {
        log.error({ err, channel: message.channel }, 'db.notification.handler_failed');
      }
    }
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({
      connectionString: url,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
      connectionTimeoutMillis: 5_000,
      application_name: LISTENER_APPLICATION_NAME,
    });
    attempting = next;
    // Without a listener a broken connection would end the process; it is replaced instead.
    next.on('error', (err) => lost(next, err));
    next.on('end', () => lost(next, null));
    next.on('notification', deliver);
    try {
      await next.connect();
      for (const channel of [probeChannel, ...handlers.keys()])
        await next.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      // Half open (connected, not yet listening to everything): not kept, the next attempt starts over.
      await next.end().catch(() => {});
      throw err;
    } finally {
      attempting = null;
    }
    if (closed) {
      // close() ran while this attempt was under way: kept, it would hold the process open.
      await next.end().catch(() => {});
      return;
    }
    client = next;
    watch = watchConnection(next);
    retryMs = RETRY_MIN_MS;
    if (everConnected) {
      log.info('db.listener.reconnected');
      for (const handler of gapHandlers) handler();
    }
    everConnected = true;
  }

  /** Probes `which` every probe.everyMs; a probe unheard for probe.timeoutMs breaks it. */
  function watchConnection(which: pg.Client): Watch {
    let sent = 0;
    let waiting: { payload: string; timer: NodeJS.Timeout } | null = null;
    const tick = () => {
      if (client !== which || waiting) return;
      const payload = String(++sent);
      const timer = setTimeout(() => {
        const silent = new Error(`its probe was not heard back within ${probe.timeoutMs} ms`);
        lost(which, silent);
        // pg would wait on a silent socket for ever: destroyed, its pending query fails at once.
        (which as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      }, probe.timeoutMs);
      timer.unref();
      waiting = { payload, timer };
      // A failure reaches the client's error listener, which replaces the connection.
      which.query('select pg_notify($1, $2)', [probeChannel, payload]).catch(() => {});
    };
    const interval = setInterval(tick, probe.everyMs);
    interval.unref();
    return {
      heard(payload) {
        if (waiting?.payload !== payload) return;
        clearTimeout(waiting.timer);
        waiting = null;
      },
      stop() {
        clearInterval(interval);
        if (waiting) clearTimeout(waiting.timer);
        waiting = null;
      },
    };
  }

  function lost(which: pg.Client, err: Error | null): void {
    if (client !== which) return;
    client = null;
    watch?.stop();
    watch = null;
    which.end().catch(() => {});
    if (closed) return;
    log.warn({ err: err ? { message: err.message } : undefined }, 'db.listener.lost');
    for (const handler of lostHandlers) handler();
    reconnect();
  }

  function releaseWaiters(): void {
    const waiters = attemptWaiters;
    attemptWaiters = [];
    for (const settled of waiters) settled();
  }

  function reconnect(): void {
    if (connecting || closed) return;
    connecting = (async () => {
      while (!closed && !client) {
        let failed = false;
        try {
          await connect();
        } catch (err) {
          failed = true;
          log.warn({ err: { message: (err as Error).message }, retryMs }, 'db.listener.connect_failed');
        }
        releaseWaiters();
        if (failed && !closed) {
          await new Promise<void>((resolve) => {
            stopWaiting = resolve;
            setTimeout(resolve, retryMs).unref();
          });
          stopWaiting = null;
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        }
      }
    })().finally(() => {
      connecting = null;
      releaseWaiters(); // closed meanwhile
    });
  }

  return {
    async listen(channel, handler) {
      const known = handlers.get(channel);
      if (known) {
        known.push(handler);
        return;
      }
      handlers.set(channel, [handler]);
      if (closed) return;
      if (client) {
        await client.query(`listen ${pg.escapeIdentifier(channel)}`);
        return;
      }
      // The attempt under way (or the one this starts) listens to every channel known by then,
      // this one included: a notification committed after this resolves is heard.
      const attempted = new Promise<void>((resolve) => attemptWaiters.push(resolve));
      reconnect();
      await attempted;
    },
    onGap(handler) {
      gapHandlers.push(handler);
    },
    onLost(handler) {
      lostHandlers.push(handler);
    },
    async close() {
      closed = true;
      watch?.stop();
      watch = null;
      stopWaiting?.();
      const current = client;
      client = null;
      // An attempt under way is ended too, so that nothing of this listener is left open when
      // close() resolves. Its connect() may then never settle (pg does not call back a connect
      // that end() interrupted), so what is awaited is the end of its socket; between two
      // attempts, the loop itself, which sees `closed` at once.
      const attempt = attempting;
      await Promise.all([
        current?.end().catch(() => {}),
        attempt ? attempt.end().catch(() => {}) : connecting,
      ]);
    },
  };
}
