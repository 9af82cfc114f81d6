import os from 'node:os';
import path from 'node:path';

/**
 * The one place that reads the environment. Everything else receives this frozen object,
 * so a wrong setting stops start-up with a message naming the variable.
 */
export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly host: string;
  readonly port: number;
  readonly payPort: number;
  /** Origin of the core API as seen from outside, without the /v1 segment. */
  readonly publicOrigin: string;
  /** {base_url} of the interface: publicOrigin + '/v1'. */
  readonly apiBaseUrl: string;
  /** {pay_url}: the checkout host as seen from outside. */
  readonly payPublicUrl: string;
  /** Folder for embedded storage and generated secrets; 'memory:' keeps everything in memory. */
  readonly dataDir: string;
  /** Never read from the environment: see DatabaseSettings.memoryImage (the test suite's). */
  readonly memoryImage?: Blob;
  readonly databaseUrl: string | null;
  readonly jwtSecret: string | null;
  /**
   * Secrets keying idempotency keys' hashes and kept answers (IDEMPOTENCY_SECRET, comma-separated):
   * the first keys new claims, every one is still looked up (rotation). Null: generated into DATA_DIR.
   */
  readonly idempotencySecrets: readonly string[] | null;
  /**
   * Test hook, refused unless NODE_ENV=test: a node kills itself (SIGKILL) once an idempotent
   * request's work and answer have committed, before the answer is sent (TEST_CRASH_AFTER_COMMIT).
   */
  readonly testCrashAfterCommit: boolean;
  /**
   * Keys (32 bytes each, base64) the private signing keys are sealed under at rest
   * (SIGNING_KEY_ENCRYPTION_KEY, comma-separated): the first seals, every one opens (rotation).
   * Null: one generated into DATA_DIR.
   */
  readonly signingKeyEncryptionKeys: readonly string[] | null;
  readonly userTokenTtlSeconds: number;
  readonly adminEmail: string | null;
  readonly adminPassword: string | null;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** scrypt cost parameter N for new password hashes (a power of two). */
  readonly passwordHashCost: number;
  /** Redis for rate-limit counters shared by every node; null keeps counters per process. */
  readonly redisUrl: string | null;
  /** Put before every Redis key, so deployments (or test servers) sharing one Redis count apart. */
  readonly redisKeyPrefix: string;
  /** How many proxy hops to trust for the client address (X-Forwarded-For); 0 trusts none. */
  readonly trustProxyHops: number;
  /** Sign-in and registration attempts allowed per minute per client address. */
  readonly authRateLimit: number;
  /** Whether verification hands out signed license tokens (keys are generated on first start). */
  readonly licenseTokens: boolean;
  /** iss of license tokens. */
  readonly licenseTokenIssuer: string;
  /** Verify, validate-hardware and introspect calls allowed per minute per client address. */
  readonly verifyRateLimit: number;
  /** Verify and validate-hardware calls allowed per minute per license key. */
  readonly verifyKeyRateLimit: number;
  /** Seconds between runs of the expiry job. */
  readonly expiryIntervalSeconds: number;
  /** Webhooks may target loopback and private addresses (development and tests only). */
  readonly webhookAllowPrivate: boolean;
  /** Days webhook attempt logs are kept. */
  readonly webhookLogDays: number;
  /** Milliseconds between passes of the webhook delivery worker. */
  readonly webhookPollMs: number;
  /**
   * Milliseconds a stopping node goes on serving, its probes answering 503, before its listeners
   * close: time for a balancer to take it out of its pool (SHUTDOWN_DRAIN_MS; 0: none).
   */
  readonly shutdownDrainMs: number;
  /**
   * Milliseconds a stopping node gives requests in flight before it closes their connections;
   * `serve` exits at the latest 10 s after that (and the drain), stopped or not.
   */
  readonly shutdownTimeoutMs: number;
  /** Stripe, when configured; otherwise the built-in sandbox partner takes payments. */
  readonly stripeSecretKey: string | null;
  readonly stripeWebhookSecret: string | null;
  /** Where the Stripe SDK sends requests (default: Stripe itself). */
  readonly stripeApiUrl: string | null;
  /** Payment intents and confirmations allowed per minute per client address. */
  readonly checkoutRateLimit: number;
  /** Stripe's publishable key, for Stripe Elements on the hosted checkout page. */
  readonly stripePublishableKey: string | null;
  /** Mirror validate calls allowed per minute per client address. */
  readonly checkoutValidateRateLimit: number;
  /** The crypto partner (all three or none); products with cryptoPaymentsEnabled may use it. */
  readonly crypto: { apiUrl: string; apiKey: string; webhookSecret: string } | null;
  /** Whether this node runs the background jobs (expiry, webhook and mail delivery, clean-ups). */
  readonly jobs: boolean;
  /** SMTP server mail goes through (nodemailer URL form); null writes mail to mailOutboxDir. */
  readonly smtpUrl: string | null;
  /** From header of every message. */
  readonly mailFrom: string;
  /** Folder receiving one .eml file per message when no SMTP server is configured. */
  readonly mailOutboxDir: string;
  /** Milliseconds between passes of the mail delivery worker. */
  readonly mailPollMs: number;
  /** Milliseconds between writes of this node's license verification counts (analytics). */
  readonly verificationFlushMs: number;
  /** PostgreSQL: milliseconds a statement may go unanswered before it fails (0: no limit). */
  readonly databaseQueryTimeoutMs: number;
  /**
   * Seconds a node answers verify and validate-hardware of a license (and device) it holds from
   * memory while the database is unreachable, counted from when it stopped hearing of changes;
   * 0 answers 503 instead.
   */
  readonly verifyOutageGraceSeconds: number;
  /** Requests one listener holds at once beyond which new ones answer 503 `overloaded`. */
  readonly maxInFlight: number;
  /** Mean event-loop delay (ms) beyond which new requests answer 503 `overloaded`; 0 is off. */
  readonly maxEventLoopDelayMs: number;
  /**
   * Connections each listener's kernel queue holds before the process accepts them (listen()'s
   * backlog); Linux silently caps it at net.core.somaxconn. Beyond it, new connection attempts
   * are dropped and each client retries after a second or more.
   */
  readonly listenBacklog: number;
  /**
   * `serve` only: the nice value given to libuv's thread pool (token signing, password hashing,
   * file I/O), so that on a busy machine it yields to the event loop; 0 leaves it as it is.
   */
  readonly threadPoolNice: number;
  /** libuv's own UV_THREADPOOL_SIZE, read as it reads it: how many pool threads there are. */
  readonly threadPoolSize: number;
  /**
   * Whether responses are checked against the schemas their routes declare: off, log the
   * mismatch, or enforce (log and answer 500). Off in production by default.
   */
  readonly responseContract: 'off' | 'log' | 'enforce';
  /**
   * The completion line per request: on (every request; the client routes' successful answers
   * at debug), errors (answers of 400 and above only) or off.
   */
  readonly accessLog: 'on' | 'errors' | 'off';
  /** Whether Prometheus metrics are recorded at all (METRICS=off: no recording, no listener). */
  readonly metrics: boolean;
  /**
   * The scrape listener (GET /metrics), apart from the public ports: 127.0.0.1:9464 unless told
   * otherwise; 0 picks a free port (the default under NODE_ENV=test, so test servers never collide).
   */
  readonly metricsHost: string;
  readonly metricsPort: number;
  /**
   * The probe listener (liveness and readiness on a thread of its own, answered within a burst
   * that holds the main thread): HEALTH_HOST (HOST unless told otherwise) and HEALTH_PORT, 9465
   * unless told otherwise, `off` for none (null); 0 picks a free port (the default under NODE_ENV=test).
   */
  readonly healthHost: string;
  readonly healthPort: number | null;
  /** Milliseconds without a turn of the main thread's event loop after which the probe listener answers 503. */
  readonly healthStallMs: number;
  /** OTLP/HTTP collector traces go to; null leaves tracing off (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly otlpEndpoint: string | null;
  /** service.name on every span (OTEL_SERVICE_NAME). */
  readonly otelServiceName: string;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const IN_MEMORY_DATA_DIR = 'memory:';
/** OpenTelemetry's Prometheus exporter port, the one scrape configs commonly expect. */
export const DEFAULT_METRICS_PORT = 9464;
/** The port after it, for the probe listener. */
export const DEFAULT_HEALTH_PORT = 9465;

export function parseConfig(env: Env): Config {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };

  const nodeEnv = oneOf('NODE_ENV', read('NODE_ENV') ?? 'development', [
    'development',
    'production',
    'test',
  ] as const);
  const port = portNumber('PORT', read('PORT') ?? '3000');
  const payPort = portNumber('PAY_PORT', read('PAY_PORT') ?? '3001');
  if (port !== 0 && port === payPort) throw new ConfigError('PAY_PORT', 'must differ from PORT');

  const publicOrigin = stripVersion(
    httpUrl('PUBLIC_BASE_URL', read('PUBLIC_BASE_URL') ?? `http://localhost:${port}`),
  );
  const payPublicUrl = httpUrl('PAY_PUBLIC_URL', read('PAY_PUBLIC_URL') ?? `http://localhost:${payPort}`);

  const databaseUrl = read('DATABASE_URL') ?? null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// connection string');
  }

  const jwtSecret = read('JWT_SECRET') ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters');
  }
  if (jwtSecret === null && databaseUrl !== null && nodeEnv === 'production') {
    throw new ConfigError(
      'JWT_SECRET',
      'is required in production with DATABASE_URL, so that every node accepts the same sessions',
    );
  }

  const idempotencySecrets = secretList('IDEMPOTENCY_SECRET', read('IDEMPOTENCY_SECRET'));
  if (idempotencySecrets === null && databaseUrl !== null && nodeEnv === 'production') {
    throw new ConfigError(
      'IDEMPOTENCY_SECRET',
      'is required in production with DATABASE_URL, so that every node finds the answers the others kept',
    );
  }
  const signingKeyEncryptionKeys = keyList('SIGNING_KEY_ENCRYPTION_KEY', read('SIGNING_KEY_ENCRYPTION_KEY'));
  if (signingKeyEncryptionKeys === null && databaseUrl !== null && nodeEnv === 'production') {
    throw new ConfigError(
      'SIGNING_KEY_ENCRYPTION_KEY',
      'is required in production with DATABASE_URL, so that every node opens the signing keys',
    );
  }
  const testCrashAfterCommit =
    oneOf('TEST_CRASH_AFTER_COMMIT', read('TEST_CRASH_AFTER_COMMIT') ?? 'off', ['on', 'off'] as const) ===
    'on';
  if (testCrashAfterCommit && nodeEnv !== 'test') {
    throw new ConfigError('TEST_CRASH_AFTER_COMMIT', 'is a test hook, accepted only with NODE_ENV=test');
  }

  const adminEmail = read('ADMIN_EMAIL') ?? null;
  const adminPassword = read('ADMIN_PASSWORD') ?? null;
  if ((adminEmail === null) !== (adminPassword === null)) {
    throw new ConfigError(
      adminEmail === null ? 'ADMIN_EMAIL' : 'ADMIN_PASSWORD',
      'ADMIN_EMAIL and ADMIN_PASSWORD go together',
    );
  }
  if (adminEmail !== null && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(adminEmail)) {
    throw new ConfigError('ADMIN_EMAIL', 'must be an e-mail address');
  }
  if (adminPassword !== null && adminPassword.length < 8) {
    throw new ConfigError('ADMIN_PASSWORD', 'must be at least 8 characters');
  }

  const passwordHashCost = integer(
    'PASSWORD_HASH_COST',
    read('PASSWORD_HASH_COST') ?? '32768',
    1024,
    1 << 20,
  );
  if ((passwordHashCost & (passwordHashCost - 1)) !== 0) {
    throw new ConfigError('PASSWORD_HASH_COST', 'must be a power of two');
  }

  const dataDir = read('DATA_DIR') ?? './data';

  const redisUrl = read('REDIS_URL') ?? null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');
  }
  const redisKeyPrefix = read('REDIS_KEY_PREFIX') ?? '';
  if (!/^[A-Za-z0-9:_.-]{0,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be at most 64 letters, digits or : _ . -');
  }

  const smtpUrl = read('SMTP_URL') ?? null;
  if (smtpUrl !== null) checkSmtpUrl(smtpUrl);
  const mailFrom = read('MAIL_FROM') ?? 'Licensing <no-reply@localhost>';
  if (!MAIL_FROM_PATTERN.test(mailFrom)) {
    throw new ConfigError('MAIL_FROM', 'must be an address, optionally with a name: "Name <a@b.example>"');
  }
  // In memory there is no data folder to put the outbox in; the system's temporary folder is.
  const mailOutboxDir =
    read('MAIL_OUTBOX_DIR') ??
    (dataDir === IN_MEMORY_DATA_DIR
      ? path.join(os.tmpdir(), 'licensing-outbox')
      : path.join(path.resolve(dataDir), 'outbox'));

  const stripeSecretKey = read('STRIPE_SECRET_KEY') ?? null;
  const stripePublishableKey = read('STRIPE_PUBLISHABLE_KEY') ?? null;
  if (stripeSecretKey !== null && stripePublishableKey === null && nodeEnv === 'production') {
    throw new ConfigError(
      'STRIPE_PUBLISHABLE_KEY',
      'is required with STRIPE_SECRET_KEY for the checkout page',
    );
  }
  if (stripePublishableKey !== null && !/^pk_(test|live)_[A-Za-z0-9]+$/.test(stripePublishableKey)) {
    throw new ConfigError(
      'STRIPE_PUBLISHABLE_KEY',
      'must be a Stripe publishable key (pk_test_… or pk_live_…)',
    );
  }

  const cryptoNames = ['CRYPTO_API_URL', 'CRYPTO_API_KEY', 'CRYPTO_WEBHOOK_SECRET'] as const;
  const cryptoValues = cryptoNames.map((name) => read(name));
  const cryptoMissing = cryptoNames.filter((_, i) => cryptoValues[i] === undefined);
  if (cryptoMissing.length > 0 && cryptoMissing.length < cryptoNames.length) {
    throw new ConfigError(cryptoMissing[0] as string, `${cryptoNames.join(', ')} go together`);
  }
  const crypto =
    cryptoMissing.length === 0
      ? {
          apiUrl: httpUrl('CRYPTO_API_URL', cryptoValues[0] as string),
          apiKey: cryptoValues[1] as string,
          webhookSecret: cryptoValues[2] as string,
        }
      : null;

  const metricsPort = portNumber(
    'METRICS_PORT',
    read('METRICS_PORT') ?? (nodeEnv === 'test' ? '0' : String(DEFAULT_METRICS_PORT)),
  );
  if (metricsPort !== 0 && (metricsPort === port || metricsPort === payPort)) {
    throw new ConfigError('METRICS_PORT', 'must differ from PORT and PAY_PORT');
  }
  const healthSetting = read('HEALTH_PORT') ?? (nodeEnv === 'test' ? '0' : String(DEFAULT_HEALTH_PORT));
  if (healthSetting !== 'off' && !/^\d+$/.test(healthSetting)) {
    throw new ConfigError('HEALTH_PORT', `must be a port number or off (got "${healthSetting}")`);
  }
  const healthPort = healthSetting === 'off' ? null : portNumber('HEALTH_PORT', healthSetting);
  if (healthPort && [port, payPort, metricsPort].includes(healthPort)) {
    throw new ConfigError('HEALTH_PORT', 'must differ from PORT, PAY_PORT and METRICS_PORT');
  }
  const otlpEndpoint = read('OTEL_EXPORTER_OTLP_ENDPOINT') ?? null;
  if (otlpEndpoint !== null) httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', otlpEndpoint);

  return Object.freeze({
    env: nodeEnv,
    host: read('HOST') ?? '0.0.0.0',
    port,
    payPort,
    publicOrigin,
    apiBaseUrl: `${publicOrigin}/v1`,
    payPublicUrl,
    dataDir: dataDir === IN_MEMORY_DATA_DIR ? dataDir : path.resolve(dataDir),
    databaseUrl,
    jwtSecret,
    idempotencySecrets,
    testCrashAfterCommit,
    signingKeyEncryptionKeys,
    userTokenTtlSeconds: integer('USER_TOKEN_TTL', read('USER_TOKEN_TTL') ?? '43200', 60, 60 * 60 * 24 * 30),
    adminEmail,
    adminPassword,
    logLevel: oneOf('LOG_LEVEL', read('LOG_LEVEL') ?? (nodeEnv === 'test' ? 'silent' : 'info'), LOG_LEVELS),
    passwordHashCost,
    redisUrl,
    redisKeyPrefix,
    trustProxyHops: integer('TRUST_PROXY', read('TRUST_PROXY') ?? '0', 0, 10),
    authRateLimit: integer('AUTH_RATE_LIMIT', read('AUTH_RATE_LIMIT') ?? '10', 1, 100_000),
    licenseTokens: oneOf('LICENSE_TOKENS', read('LICENSE_TOKENS') ?? 'on', ['on', 'off'] as const) === 'on',
    licenseTokenIssuer: read('LICENSE_TOKEN_ISSUER') ?? `${publicOrigin}/v1`,
    verifyRateLimit: integer('VERIFY_RATE_LIMIT', read('VERIFY_RATE_LIMIT') ?? '600', 1, 1_000_000),
    verifyKeyRateLimit: integer('VERIFY_KEY_RATE_LIMIT', read('VERIFY_KEY_RATE_LIMIT') ?? '60', 1, 1_000_000),
    webhookAllowPrivate:
      oneOf('WEBHOOK_ALLOW_PRIVATE', read('WEBHOOK_ALLOW_PRIVATE') ?? 'false', ['true', 'false'] as const) ===
      'true',
    webhookLogDays: integer('WEBHOOK_LOG_DAYS', read('WEBHOOK_LOG_DAYS') ?? '30', 1, 3650),
    stripeSecretKey,
    stripePublishableKey,
    checkoutValidateRateLimit: integer(
      'CHECKOUT_VALIDATE_RATE_LIMIT',
      read('CHECKOUT_VALIDATE_RATE_LIMIT') ?? '30',
      1,
      1_000_000,
    ),
    crypto,
    stripeWebhookSecret: read('STRIPE_WEBHOOK_SECRET') ?? null,
    stripeApiUrl: read('STRIPE_API_URL') ? httpUrl('STRIPE_API_URL', read('STRIPE_API_URL') as string) : null,
    checkoutRateLimit: integer('CHECKOUT_RATE_LIMIT', read('CHECKOUT_RATE_LIMIT') ?? '60', 1, 1_000_000),
    jobs: oneOf('JOBS', read('JOBS') ?? 'on', ['on', 'off'] as const) === 'on',
    webhookPollMs: integer('WEBHOOK_POLL_MS', read('WEBHOOK_POLL_MS') ?? '200', 10, 60_000),
    shutdownDrainMs: integer('SHUTDOWN_DRAIN_MS', read('SHUTDOWN_DRAIN_MS') ?? '0', 0, 600_000),
    shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', read('SHUTDOWN_TIMEOUT_MS') ?? '30000', 1_000, 600_000),
    expiryIntervalSeconds: integer('EXPIRY_INTERVAL', read('EXPIRY_INTERVAL') ?? '60', 1, 86_400),
    smtpUrl,
    mailFrom,
    mailOutboxDir: path.resolve(mailOutboxDir),
    mailPollMs: integer('MAIL_POLL_MS', read('MAIL_POLL_MS') ?? '1000', 10, 600_000),
    verificationFlushMs: integer(
      'VERIFICATION_FLUSH_MS',
      read('VERIFICATION_FLUSH_MS') ?? '10000',
      100,
      3_600_000,
    ),
    databaseQueryTimeoutMs: integer(
      'DATABASE_QUERY_TIMEOUT',
      read('DATABASE_QUERY_TIMEOUT') ?? '30000',
      0,
      3_600_000,
    ),
    verifyOutageGraceSeconds: integer(
      'VERIFY_OUTAGE_GRACE_SECONDS',
      read('VERIFY_OUTAGE_GRACE_SECONDS') ?? '300',
      0,
      86_400,
    ),
    maxInFlight: integer('MAX_IN_FLIGHT', read('MAX_IN_FLIGHT') ?? '1000', 1, 1_000_000),
    maxEventLoopDelayMs: integer('MAX_EVENT_LOOP_DELAY', read('MAX_EVENT_LOOP_DELAY') ?? '1000', 0, 60_000),
    // Node's own default is 511; 4096 is what Linux allows by default (somaxconn, since 5.4).
    listenBacklog: integer('LISTEN_BACKLOG', read('LISTEN_BACKLOG') ?? '4096', 1, 65_535),
    threadPoolNice: integer('THREADPOOL_NICE', read('THREADPOOL_NICE') ?? '10', 0, 19),
    threadPoolSize: integer('UV_THREADPOOL_SIZE', read('UV_THREADPOOL_SIZE') ?? '4', 1, 1024),
    // Checking costs a validation per response and turns drift into 500s: worth it in tests, not
    // on buyers' requests. NODE_ENV defaults to development, so a plain `npm start` leaves it off.
    responseContract: oneOf(
      'RESPONSE_CONTRACT',
      read('RESPONSE_CONTRACT') ?? (nodeEnv === 'test' ? 'enforce' : 'off'),
      ['off', 'log', 'enforce'] as const,
    ),
    accessLog: oneOf('ACCESS_LOG', read('ACCESS_LOG') ?? 'on', ['on', 'errors', 'off'] as const),
    metrics: oneOf('METRICS', read('METRICS') ?? 'on', ['on', 'off'] as const) === 'on',
    // Loopback unless told otherwise: the scrape endpoint is for the operator's Prometheus only.
    metricsHost: read('METRICS_HOST') ?? '127.0.0.1',
    metricsPort,
    // Where the main listeners are, by default: an orchestrator's probes reach it as they reached them.
    healthHost: read('HEALTH_HOST') ?? read('HOST') ?? '0.0.0.0',
    healthPort,
    healthStallMs: integer('HEALTH_STALL_MS', read('HEALTH_STALL_MS') ?? '10000', 1_000, 600_000),
    otlpEndpoint,
    otelServiceName: read('OTEL_SERVICE_NAME') ?? 'licensing-service',
  });
}

/** "a@b.example" or "Name <a@b.example>"; no line breaks, so it cannot smuggle in headers. */
const MAIL_FROM_PATTERN = /^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

function checkSmtpUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Never echo the value: it may carry the SMTP password.
    throw new ConfigError('SMTP_URL', 'must be an smtp:// or smtps:// URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new ConfigError('SMTP_URL', 'must use smtp:// (STARTTLS when offered) or smtps:// (TLS)');
  }
  if (!url.hostname) throw new ConfigError('SMTP_URL', 'must name the SMTP server host');
}

/** Comma-separated secrets of at least 32 characters each, none twice; null when unset. */
function secretList(name: string, value: string | undefined): readonly string[] | null {
  if (value === undefined) return null;
  const secrets = value.split(',').map((secret) => secret.trim());
  if (secrets.some((secret) => secret.length < 32))
    throw new ConfigError(name, 'must be one or more secrets of at least 32 characters, separated by commas');
  if (new Set(secrets).size !== secrets.length) throw new ConfigError(name, 'names a secret twice');
  return Object.freeze(secrets);
}

/** Comma-separated keys of 32 bytes each in base64 (or base64url), none twice; null when unset. */
function keyList(name: string, value: string | undefined): readonly string[] | null {
  if (value === undefined) return null;
  const keys = value.split(',').map((key) => key.trim());
  for (const key of keys) {
    if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(key) || Buffer.from(key, 'base64').length !== 32) {
      throw new ConfigError(
        name,
        'must be one or more keys of 32 random bytes in base64 (openssl rand -base64 32), separated by commas',
      );
    }
  }
  const distinct = new Set(keys.map((key) => Buffer.from(key, 'base64').toString('hex')));
  if (distinct.size !== keys.length) throw new ConfigError(name, 'names a key twice');
  return Object.freeze(keys);
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${value}")`);
  }
  return value as T;
}

function integer(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${value}")`);
  }
  return n;
}

function portNumber(name: string, value: string): number {
  return integer(name, value, 0, 65535);
}

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, 'must use http or https');
  }
  return url.href.replace(/\/+$/, '');
}

/** PUBLIC_BASE_URL may be given with or without the version segment; keep the origin part. */
function stripVersion(url: string): string {
  return url.replace(/\/v1$/, '');
}
