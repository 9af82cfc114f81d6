import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { localOrigin } from './http/local-origin.js';

/**
 * The Prometheus metrics of one service: the registry, every metric definition (what each means
 * is in `help`, and in docs/operations.md) and the narrow recorders handed to the code that
 * counts. Each running service has its own registry, so two services in one process (tests)
 * never mix their counts. With METRICS=off every recorder is a no-op and nothing is served.
 *
 * Labels are bounded sets only (route patterns, status codes, outcome codes, job names): never
 * a raw path, a license, a seller or anything secret.
 */
export interface Metrics {
  /** Null when recording is off. */
  readonly registry: Registry | null;
  /** One finished HTTP request; undefined when off, so the HTTP hook skips it at no cost. */
  readonly http: RequestRecorder | undefined;
  /** One verify or validate-hardware answer: 'valid' or its reason code. */
  verifyOutcome(code: string | undefined): void;
  tokenIssued(): void;
  jobRun(job: string, outcome: JobOutcome, seconds: number): void;
  webhookAttempt(kind: 'core' | 'merchant', outcome: RetryOutcome): void;
  mailSend(outcome: RetryOutcome | 'undeliverable'): void;
  /** Time one statement took in the database driver (both stores). */
  queryTime(seconds: number): void;
  /** Pool sizes and queue lengths, read when scraped; set once storage is open. */
  watch(sources: ScrapeSources): void;
}

export type RequestRecorder = (request: FastifyRequest, status: number, elapsedMs: number) => void;
export type JobOutcome = 'succeeded' | 'failed' | 'paused';
/** succeeded; will_retry (failed, tried again later); gave_up (failed for good). */
export type RetryOutcome = 'succeeded' | 'will_retry' | 'gave_up';

export interface PoolStats {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
}

export interface QueueReading {
  webhookDeliveriesPending: number;
  mailPending: number;
  endpointsFailing: number;
  endpointsDisabled: number;
}

export interface ScrapeSources {
  pools(): PoolStats[];
  /** Reads the database: called at most once per READING_MAX_AGE_MS, only on scrape. */
  queues(): Promise<QueueReading>;
}

/** A scrape reuses a database reading this young; so scrapes never pile queries up. */
export const READING_MAX_AGE_MS = 10_000;
/** How long a scrape waits for a fresh reading before answering with the last one. */
const READING_WAIT_MS = 2_000;

const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const QUERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];
const JOB_BUCKETS = [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** The label of requests no route matched, whatever their path. */
export const UNMATCHED_ROUTE = 'unmatched';

const noop = () => {};

export const METRICS_OFF: Metrics = Object.freeze({
  registry: null,
  http: undefined,
  verifyOutcome: noop,
  tokenIssued: noop,
  jobRun: noop,
  webhookAttempt: noop,
  mailSend: noop,
  queryTime: noop,
  watch: noop,
});

export function createMetrics({ enabled }: { enabled: boolean }): Metrics {
  if (!enabled) return METRICS_OFF;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requestDuration = new RequestHistogram();
  registry.registerMetric(requestDuration as unknown as Parameters<Registry['registerMetric']>[0]);
  const rateLimited = new Counter({
    name: 'licensing_rate_limit_refusals_total',
    help: 'Requests refused with 429 by a rate limit (per address, per license key or per sign-in), by route pattern.',
    labelNames: ['route'] as const,
    registers,
  });
  // Counted in plain memory on the verify path and added to the counters when scraped: a
  // labelled inc() in prom-client converts and hashes its labels on every call.
  const pendingOutcomes = new Map<string, number>();
  let pendingTokens = 0;
  new Counter({
    collect() {
      for (const [outcome, count] of pendingOutcomes) this.inc({ outcome }, count);
      pendingOutcomes.clear();
    },
    name: 'licensing_license_verifications_total',
    help: 'Verify and validate-hardware answers by outcome: valid, or the code of an invalid answer (license_not_found, license_expired, …).',
    labelNames: ['outcome'] as const,
    registers,
  });
  new Counter({
    collect() {
      if (pendingTokens > 0) this.inc(pendingTokens);
      pendingTokens = 0;
    },
    name: 'licensing_license_tokens_issued_total',
    help: 'Signed license tokens handed out with valid verifications.',
    registers,
  });
  const jobRuns = new Histogram({
    name: 'licensing_job_run_duration_seconds',
    help: 'Background job passes by job and outcome (succeeded; failed; paused while the database is away). _count is the number of runs.',
    labelNames: ['job', 'outcome'] as const,
    buckets: JOB_BUCKETS,
    registers,
  });
  const webhookAttempts = new Counter({
    name: 'licensing_webhook_attempts_total',
    help: 'Webhook delivery attempts by endpoint kind and outcome: succeeded, will_retry, gave_up (the delivery failed for good).',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const mailSends = new Counter({
    name: 'licensing_mail_sends_total',
    help: 'Mail send attempts by outcome: succeeded, will_retry, gave_up, undeliverable (no recipient or no message for its kind).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const queryDuration = new Histogram({
    name: 'licensing_db_query_duration_seconds',
    help: 'Database statements: time from sending to the answer (or failure), as the driver sees it.',
    buckets: QUERY_BUCKETS,
    registers,
  });

  let sources: ScrapeSources | null = null;
  const poolGauge = (state: 'total' | 'idle' | 'waiting', help: string) =>
    new Gauge({
      name: `licensing_db_pool_${state === 'waiting' ? 'waiting_requests' : `${state}_connections`}`,
      help,
      labelNames: ['pool'] as const,
      registers,
      collect() {
        for (const stats of sources?.pools() ?? []) this.set({ pool: stats.pool }, stats[state]);
      },
    });
  poolGauge('total', 'PostgreSQL pool connections open (main: requests and jobs; locks: named locks).');
  poolGauge('idle', 'PostgreSQL pool connections open and unused.');
  poolGauge('waiting', 'Queries waiting for a PostgreSQL pool connection.');

  const readQueues = cachedReading(() => sources?.queues() ?? Promise.reject(new Error('no storage yet')));
  new Gauge({
    name: 'licensing_queue_pending',
    help: `Work waiting in the database: webhook_deliveries (pending deliveries) and mail (pending notifications). Read at most every ${READING_MAX_AGE_MS / 1000} s; absent until the first reading.`,
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      const reading = await readQueues();
      if (!reading) return;
      this.set({ queue: 'webhook_deliveries' }, reading.webhookDeliveriesPending);
      this.set({ queue: 'mail' }, reading.mailPending);
    },
  });
  new Gauge({
    name: 'licensing_webhook_endpoints',
    help: 'Seller webhook endpoints by health: failing (enabled, last deliveries failed) and disabled. Read with licensing_queue_pending.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const reading = await readQueues();
      if (!reading) return;
      this.set({ state: 'failing' }, reading.endpointsFailing);
      this.set({ state: 'disabled' }, reading.endpointsDisabled);
    },
  });

  return {
    registry,
    http: requestRecorder(requestDuration, rateLimited),
    verifyOutcome: (code) => {
      const outcome = code ?? 'valid';
      pendingOutcomes.set(outcome, (pendingOutcomes.get(outcome) ?? 0) + 1);
    },
    tokenIssued: () => {
      pendingTokens += 1;
    },
    jobRun: (job, outcome, seconds) => jobRuns.labels(job, outcome).observe(seconds),
    webhookAttempt: (kind, outcome) => webhookAttempts.labels(kind, outcome).inc(),
    mailSend: (outcome) => mailSends.labels(outcome).inc(),
    queryTime: (seconds) => queryDuration.observe(seconds),
    watch(next) {
      sources = next;
    },
  };
}

interface RequestSeries {
  labels: { route: string; method: string; status: string };
  /** Observations per bucket, not cumulative; +Inf is the count. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * The request histogram, in plain arrays handed to the registry when scraped. Written here
 * because prom-client's labelled `observe`, even on a child bound once, converts, validates and
 * hashes its labels on every call: a few microseconds on each verify.
 */
class RequestHistogram {
  readonly name = 'licensing_http_request_duration_seconds';
  readonly help =
    'HTTP requests by route pattern, method and status: time from arrival to the last byte written. _count is the request count.';
  readonly aggregator = 'sum';
  private series: RequestSeries[] = [];

  child(route: string, method: string, status: string): RequestSeries {
    const series = {
      labels: { route, method, status },
      buckets: HTTP_BUCKETS.map(() => 0),
      sum: 0,
      count: 0,
    };
    this.series.push(series);
    return series;
  }

  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const { labels, buckets, sum, count } of this.series) {
      let cumulative = 0;
      HTTP_BUCKETS.forEach((le, i) => {
        cumulative += buckets[i] ?? 0;
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const series of this.series) {
      series.buckets.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}

function observeRequest(series: RequestSeries, seconds: number): void {
  series.count += 1;
  series.sum += seconds;
  for (let i = 0; i < HTTP_BUCKETS.length; i++) {
    if (seconds <= (HTTP_BUCKETS[i] as number)) {
      (series.buckets[i] as number) += 1;
      return;
    }
  }
}

/**
 * The HTTP recorder: one series per route, method and status, looked up in a map per route
 * (keyed by the route's own config object, stable for its lifetime), so the hot path builds no
 * strings and hashes no labels.
 */
function requestRecorder(duration: RequestHistogram, rateLimited: Counter<'route'>): RequestRecorder {
  const routes = new WeakMap<object, Map<number, RequestSeries>>();
  const refusals = new Map<string, ReturnType<typeof rateLimited.labels>>();
  const unmatched = {};
  return (request, status, elapsedMs) => {
    const { config = unmatched, url } = request.routeOptions;
    const route = url ?? UNMATCHED_ROUTE;
    let children = routes.get(config);
    if (!children) {
      children = new Map();
      routes.set(config, children);
    }
    const methodIndex = METHODS.indexOf(request.method);
    // A route's few methods and statuses, or any method on the one unmatched label.
    const key = status * 8 + (methodIndex === -1 ? 7 : methodIndex);
    let series = children.get(key);
    if (!series) {
      series = duration.child(route, methodIndex === -1 ? 'OTHER' : request.method, String(status));
      children.set(key, series);
    }
    observeRequest(series, elapsedMs / 1000);
    if (status === 429) {
      let refused = refusals.get(route);
      if (!refused) {
        refused = rateLimited.labels(route);
        refusals.set(route, refused);
      }
      refused.inc();
    }
  };
}

/**
 * A database reading shared by every scrape for READING_MAX_AGE_MS. Only one read is in flight
 * at a time; a scrape waits for it at most READING_WAIT_MS, and while the database is away the
 * last reading stands (null before the first one).
 */
function cachedReading<T>(read: () => Promise<T>): () => Promise<T | null> {
  let value: T | null = null;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | null = null;
  return async () => {
    if (!reading && Date.now() - readAt >= READING_MAX_AGE_MS) {
      readAt = Date.now();
      reading = read().then(
        (next) => {
          value = next;
        },
        () => {},
      );
      reading.finally(() => {
        reading = null;
      });
    }
    if (reading) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        reading,
        new Promise((resolve) => {
          timer = setTimeout(resolve, READING_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    }
    return value;
  };
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * The scrape endpoint on a listener of its own (METRICS_HOST:METRICS_PORT), never on the public
 * API port: `GET /metrics` in the Prometheus text format; anything else answers 404.
 */
export async function serveMetrics(
  registry: Registry,
  { host, port, backlog }: { host: string; port: number; backlog?: number },
  onError: (error: Error) => void,
): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (error: Error) => {
        onError(error);
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    url: `${localOrigin(server.address() as AddressInfo)}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
