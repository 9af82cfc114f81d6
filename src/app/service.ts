import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENTS_RECORDED_CHANNEL } from '../modules/events/index.js';
import { type ProbeThread, startProbeThread } from '../modules/health/index.js';
import { openArtifactStore } from '../modules/releases/index.js';
import { purgeAttempts } from '../modules/webhooks/index.js';
import { type Clock, systemClock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { type Database, openDatabase } from '../platform/db/database.js';
import { isDatabaseUnavailable } from '../platform/db/errors.js';
import { migrate } from '../platform/db/migrate.js';
import { drain, requestsDrained } from '../platform/http/create-http-app.js';
import { localOrigin } from '../platform/http/local-origin.js';
import { createJobs, type Jobs } from '../platform/jobs.js';
import type { Log } from '../platform/log.js';
import {
  createMetrics,
  METRICS_OFF,
  type Metrics,
  type MetricsListener,
  serveMetrics,
} from '../platform/metrics.js';
import { connected, openRedis, type RedisClient } from '../platform/redis.js';
import { buildCheckoutApp } from './checkout-app.js';
import { buildCoreApp } from './core-app.js';
import { explainListenFailure } from './listen-failure.js';
import { createModules, type Modules } from './modules.js';
import {
  resolveIdempotencySecrets,
  resolveSessionSecret,
  resolveSigningKeyEncryptionKeys,
} from './server-secret.js';

const STARTUP_DATABASE_WAIT_MS = 60_000;
/** How long a starting node waits for Redis (its shared rate-limit counters) before it listens anyway. */
const REDIS_CONNECT_WAIT_MS = 3_000;

export interface RunningService {
  coreUrl: string;
  payUrl: string;
  /** The Prometheus scrape URL (its own listener), or null when METRICS=off. */
  metricsUrl: string | null;
  /** The probe listener's origin (its own thread: /healthz, /readyz), or null when HEALTH_PORT=off. */
  healthUrl: string | null;
  modules: ReturnType<typeof createModules>;
  core: ReturnType<typeof buildCoreApp>;
  pay: ReturnType<typeof buildCheckoutApp>;
  /**
   * Drains (SHUTDOWN_DRAIN_MS: probes answer 503 while the node still serves), stops accepting,
   * lets requests in flight finish, then closes the database.
   */
  stop(): Promise<void>;
  /** Ends a drain under way at once (a second signal): stopping goes on with closing the listeners. */
  skipDrain(): void;
  /** What stop() is waiting for right now (null before it is called and once it is done). */
  readonly stopStage: string | null;
}

/** Storage opened and migrated, with every domain service over it (the CLI uses it too). */
export async function openModules(
  config: Config,
  log: Log,
  clock: Clock = systemClock,
  metrics: Metrics = METRICS_OFF,
) {
  const database = await openDatabase(
    config,
    (err) => log.warn({ err: { message: err.message } }, 'db.connection.lost'),
    metrics.registry ? metrics.queryTime : undefined,
  );
  if (database.createdFrom) log.info({ from: database.createdFrom }, 'db.created');
  try {
    await waitForDatabase(database, log);
    await migrate(database, log);
    return createModules({
      config,
      database,
      log,
      clock,
      sessionSecret: resolveSessionSecret(config),
      signingKeyEncryptionKeys: resolveSigningKeyEncryptionKeys(config),
      idempotencySecrets: resolveIdempotencySecrets(config),
      metrics,
      // Loaded only when configured: the Stripe SDK is the largest module the service loads
      // (160 ms of CPU at start), which a node on the sandbox partner and every test would pay.
      stripe: config.stripeSecretKey
        ? (await import('../modules/payments/stripe-partner.js')).createStripePartner({
            secretKey: config.stripeSecretKey,
            apiUrl: config.stripeApiUrl,
          })
        : null,
      artifactStore: await openArtifactStore(config.artifactStore, log),
    });
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
}

/**
 * A node started while its database is away (a restart, a failover) waits for it a while instead
 * of exiting, as it rides out an outage once running.
 */
async function waitForDatabase(database: Database, log: Log): Promise<void> {
  const deadline = Date.now() + STARTUP_DATABASE_WAIT_MS;
  for (;;) {
    try {
      return await database.ping();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() > deadline) throw error;
      log.warn({ err: { message: error.message } }, 'db.waiting');
      await sleep(1000);
    }
  }
}

/** Opens storage, applies migrations, ensures the configured admin and starts both listeners. */
export async function startService(
  config: Config,
  log: Log,
  clock: Clock = systemClock,
): Promise<RunningService> {
  const metrics = createMetrics({ enabled: config.metrics });
  const modules = await openModules(config, log, clock, metrics);
  const { database } = modules;
  metrics.watch({
    pools: () => database.poolStats(),
    queues: async () => {
      const [webhooks, mailPending] = await Promise.all([
        modules.deliveryWorker.backlog(),
        modules.notificationWorker.backlog(),
      ]);
      return {
        webhookDeliveriesPending: webhooks.pending,
        mailPending,
        endpointsFailing: webhooks.endpointsFailing,
        endpointsDisabled: webhooks.endpointsDisabled,
      };
    },
  });
  // What a start that fails part-way has opened is closed again: a listening connection or a
  // job left running would hold the process open.
  let jobs: Jobs | null = null;
  let redis: RedisClient | null = null;
  try {
    if (config.adminEmail && config.adminPassword) {
      await modules.users.ensureAdmin({
        email: config.adminEmail,
        password: config.adminPassword,
        resetPassword: false,
      });
    }
    // Sealed whatever LICENSE_TOKENS says: a key left readable could still forge license files.
    await modules.keyRing.sealStoredKeys();
    if (config.licenseTokens) await modules.keyRing.ensureKey();
    jobs = createJobs(log, metrics.jobRun);
    // Every node holds its own verification counts, so each writes them, whatever JOBS says.
    jobs.every('license.verify.count_flush', config.verificationFlushMs, () =>
      modules.verificationCounts.flush(),
    );
    // The same for the timeline entries of this node's client calls (verifications and the rest).
    jobs.every('license.timeline.flush', config.verificationFlushMs, () => modules.timelineJournal.flush());
    // Safe on any number of nodes at once; JOBS=off leaves them to other nodes.
    if (config.jobs) {
      jobs.every('license.expiry', config.expiryIntervalSeconds * 1000, () => modules.licenses.expireDue());
      jobs.every('license_token.denylist.purge', 60 * 60 * 1000, () => modules.denylist.purge());
      jobs.every('idempotency.keys.purge', 60 * 60 * 1000, () => modules.idempotency.purgeExpired());
      jobs.every('portal.sign_in.purge', 60 * 60 * 1000, () => modules.portal.purgeEnded());
      jobs.every('license.timeline.purge', 60 * 60 * 1000, (stopping) =>
        modules.timeline.purgeExpired(stopping),
      );
      const deliverNow = jobs.every('webhook.delivery', config.webhookPollMs, (stopping) =>
        modules.deliveryWorker.runOnce(stopping),
      );
      // Committed events wake delivery at once; the interval stays as the safety net.
      await modules.notifications.listen(EVENTS_RECORDED_CHANNEL, deliverNow);
      modules.notifications.onGap(deliverNow);
      jobs.every('mail.delivery', config.mailPollMs, (stopping) =>
        modules.notificationWorker.runOnce(stopping),
      );
      jobs.every('release.artifact.purge', 60 * 60 * 1000, (stopping) =>
        modules.artifactPurge.purge(stopping),
      );
      jobs.every('webhook.logs.purge', 60 * 60 * 1000, () =>
        purgeAttempts(database.db, new Date(clock.now().getTime() - config.webhookLogDays * 86_400_000)),
      );
    }
    redis = config.redisUrl ? openRedis(config.redisUrl, config.redisKeyPrefix) : null;
    redis?.on('error', (err) => log.warn({ err: { message: err.message } }, 'redis.unavailable'));
    if (redis && !(await connected(redis, REDIS_CONNECT_WAIT_MS))) {
      log.warn('redis.not_ready: rate limits let requests through until Redis answers');
    }
    const hostDeps = { modules, config, log, redis };
    const core = buildCoreApp(hostDeps);
    const pay = buildCheckoutApp(hostDeps);
    let metricsListener: MetricsListener | null = null;
    let probeThread: ProbeThread | null = null;
    const backlog = config.listenBacklog;
    // Loaded beside the listeners (a thread takes a moment to start); a failure is met below.
    const probing =
      config.healthPort === null
        ? Promise.resolve(null)
        : startProbeThread(
            {
              host: config.healthHost,
              port: config.healthPort,
              backlog,
              stallMs: config.healthStallMs,
              ping: () => database.ping(),
            },
            log,
          );
    probing.catch(() => {});
    const placed =
      (portVariable: string, hostVariable: string, host: string, port: number) => (error: unknown) => {
        throw explainListenFailure(error, { portVariable, hostVariable, host, port });
      };
    try {
      await core
        .listen({ port: config.port, host: config.host, backlog })
        .catch(placed('PORT', 'HOST', config.host, config.port));
      await pay
        .listen({ port: config.payPort, host: config.host, backlog })
        .catch(placed('PAY_PORT', 'HOST', config.host, config.payPort));
      if (metrics.registry) {
        metricsListener = await serveMetrics(
          metrics.registry,
          { host: config.metricsHost, port: config.metricsPort, backlog },
          (err) => log.warn({ err: { message: err.message } }, 'metrics.scrape.failed'),
        ).catch(placed('METRICS_PORT', 'METRICS_HOST', config.metricsHost, config.metricsPort));
      }
      probeThread = await probing.catch(
        placed('HEALTH_PORT', 'HEALTH_HOST', config.healthHost, config.healthPort ?? 0),
      );
      // Ready only now that every listener accepts: a balancer probing earlier is told 503.
      probeThread?.serving();
    } catch (error) {
      await Promise.allSettled([
        core.close(),
        pay.close(),
        metricsListener?.close(),
        probing.then((thread) => thread?.close()),
      ]);
      throw error;
    }
    const coreUrl = localOrigin(core.server.address() as AddressInfo);
    const payUrl = localOrigin(pay.server.address() as AddressInfo);
    const metricsUrl = metricsListener?.url ?? null;
    const healthUrl = probeThread?.url ?? null;
    log.info({ coreUrl, payUrl, metricsUrl, healthUrl, storage: database.kind }, 'server.started');
    const somaxconn = kernelListenQueueCap();
    if (somaxconn !== null && somaxconn < config.listenBacklog) {
      log.warn(
        { listenBacklog: config.listenBacklog, somaxconn },
        'server.listen_backlog.capped: the kernel holds fewer waiting connections than LISTEN_BACKLOG; raise net.core.somaxconn',
      );
    }
    const startedJobs = jobs;
    const startedRedis = redis;
    const startedProbeThread = probeThread;
    let stopping: Promise<void> | null = null;
    let stopStage: string | null = null;
    let endDrain = () => {};
    return {
      coreUrl,
      payUrl,
      metricsUrl,
      healthUrl,
      modules,
      core,
      pay,
      get stopStage() {
        return stopStage;
      },
      skipDrain() {
        endDrain();
      },
      stop() {
        stopping ??= (async () => {
          // Probes answer 503 not_ready from now on, on the probe listener and the main ones,
          // while every other request is still served: balancers see the node leave first.
          startedProbeThread?.stopping();
          drain(core);
          drain(pay);
          // Background passes are told at once, so they wind down while requests drain.
          const jobsStopped = startedJobs.stop();
          if (config.shutdownDrainMs > 0) {
            stopStage = 'draining';
            log.info({ ms: config.shutdownDrainMs }, 'server.draining');
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, config.shutdownDrainMs);
              endDrain = () => {
                clearTimeout(timer);
                resolve();
              };
            });
          }
          stopStage = 'requests in flight';
          const closed = Promise.all([core.close(), pay.close()]);
          // Handlers of clients that hung up may still run after their sockets close, and a
          // stalled client may never finish: wait for both, but never past the deadline.
          const settled = closed.then(() => Promise.all([requestsDrained(core), requestsDrained(pay)]));
          const deadline = new Promise<'timeout'>((resolve) =>
            setTimeout(resolve, config.shutdownTimeoutMs, 'timeout').unref(),
          );
          if ((await Promise.race([settled, deadline])) === 'timeout') {
            log.warn('server.stop.deadline: closing the connections still open');
            core.server.closeAllConnections();
            pay.server.closeAllConnections();
            await closed;
          }
          stopStage = 'background jobs';
          await jobsStopped;
          stopStage = 'metrics listener';
          await metricsListener?.close();
          try {
            // Requests have drained: this writes the last verifications counted before closing.
            stopStage = 'verification counts';
            await modules.verificationCounts.drain();
            stopStage = 'license timelines';
            await modules.timelineJournal.drain();
            await closeModules(modules, startedRedis, (stage) => {
              stopStage = stage;
            });
          } finally {
            // Last, so probes hear `not_ready` (not a refused connection) until the very end.
            stopStage = 'probe listener';
            await startedProbeThread?.close();
          }
          stopStage = null;
          log.info('server.stopped');
        })();
        return stopping;
      },
    };
  } catch (error) {
    await jobs?.stop();
    await closeModules(modules, redis).catch(() => {});
    throw error;
  }
}

/**
 * Closes what the modules hold open, the database last, telling `at` each step as it begins.
 * A step that fails does not keep the later ones from running; the first failure is thrown.
 */
async function closeModules(
  modules: Modules,
  redis: RedisClient | null,
  at: (stage: string) => void = () => {},
): Promise<void> {
  const failures: unknown[] = [];
  const step = async (stage: string, close: () => unknown) => {
    at(stage);
    try {
      await close();
    } catch (err) {
      failures.push(err);
    }
  };
  await step('verification cache', () => modules.verificationCache.close());
  await step('database listener', () => modules.notifications.close());
  await step('webhook connections', () => modules.sender.close());
  await step('mail connections', () => modules.mailer.close());
  await step('redis', () => redis?.disconnect());
  await step('database', () => modules.database.close());
  if (failures.length > 0) throw failures[0];
}

/** Linux's cap on every listen queue (net.core.somaxconn), applied silently; null elsewhere. */
export function kernelListenQueueCap(): number | null {
  try {
    return Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim()) || null;
  } catch {
    return null;
  }
}
