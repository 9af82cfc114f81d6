import os from 'node:os';
import path from 'node:path';
import type { ArtifactStoreSettings, Config } from './config-types.js';
import {
  ConfigError,
  checkSmtpUrl,
  httpUrl,
  integer,
  keyList,
  MAIL_FROM_PATTERN,
  oneOf,
  portNumber,
  secretList,
} from './config-values.js';

export type { ArtifactStoreSettings, Config } from './config-types.js';
export { ConfigError } from './config-values.js';

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const IN_MEMORY_DATA_DIR = 'memory:';
/** OpenTelemetry's Prometheus exporter port, the one scrape configs commonly expect. */
export const DEFAULT_METRICS_PORT = 9464;
/** The port after it, for the probe listener. */
export const DEFAULT_HEALTH_PORT = 9465;

/** Reads and bounds every setting; the first wrong one stops start-up as a ConfigError naming it. */
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

  const artifactStore = artifactStoreSettings(read, dataDir);
  const artifactMaxBytes = integer(
    'ARTIFACT_MAX_BYTES',
    read('ARTIFACT_MAX_BYTES') ?? String(2 * 1024 ** 3),
    1,
    2 * 1024 ** 3,
  );

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
    artifactStore,
    artifactMaxBytes,
    databaseTemplate:
      oneOf('DATABASE_TEMPLATE', read('DATABASE_TEMPLATE') ?? 'on', ['on', 'off'] as const) === 'on',
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
    licenseEventsRetentionDays: integer(
      'LICENSE_EVENTS_RETENTION_DAYS',
      read('LICENSE_EVENTS_RETENTION_DAYS') ?? '90',
      1,
      3650,
    ),
    licenseTimelineCalls:
      oneOf('LICENSE_TIMELINE_CALLS', read('LICENSE_TIMELINE_CALLS') ?? 'on', ['on', 'off'] as const) ===
      'on',
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

/** S3 bucket names: 3 to 63 lower-case letters, digits, dots and hyphens, a letter or digit at each end. */
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** A key prefix: path segments of letters, digits and `!-_.*'()`, S3's safe characters. */
const S3_PREFIX = /^[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*$/;

/**
 * Where release artifacts are kept: a folder (ARTIFACT_DIR) unless ARTIFACT_STORE names an S3
 * bucket, reached through ARTIFACT_S3_* (an S3-compatible service with ARTIFACT_S3_ENDPOINT).
 * An ARTIFACT_S3_* setting without an s3:// store is refused, so a typo never silently keeps
 * the files on one node's disk.
 */
function artifactStoreSettings(
  read: (name: string) => string | undefined,
  dataDir: string,
): ArtifactStoreSettings {
  const store = read('ARTIFACT_STORE') ?? 'local';
  const s3Names = [
    'ARTIFACT_S3_ENDPOINT',
    'ARTIFACT_S3_REGION',
    'ARTIFACT_S3_ACCESS_KEY_ID',
    'ARTIFACT_S3_SECRET_ACCESS_KEY',
    'ARTIFACT_S3_FORCE_PATH_STYLE',
  ];
  if (store === 'local') {
    const stray = s3Names.find((name) => read(name) !== undefined);
    if (stray) throw new ConfigError(stray, 'is set, but ARTIFACT_STORE is not an s3:// bucket');
    // In memory, a folder under the system's temporary folder, which services may share: the
    // files are named by their content.
    const dir =
      read('ARTIFACT_DIR') ??
      (dataDir === IN_MEMORY_DATA_DIR
        ? path.join(os.tmpdir(), 'licensing-artifacts')
        : path.join(path.resolve(dataDir), 'artifacts'));
    return { kind: 'local', dir: path.resolve(dir) };
  }
  const address = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(store);
  if (!address)
    throw new ConfigError('ARTIFACT_STORE', `must be local or s3://bucket/prefix (got "${store}")`);
  const bucket = address[1] as string;
  if (!S3_BUCKET.test(bucket) || bucket.includes('..')) {
    throw new ConfigError(
      'ARTIFACT_STORE',
      `names the bucket "${bucket}": 3 to 63 lower-case letters, digits, dots and hyphens`,
    );
  }
  const prefix = (address[2] ?? '').replace(/\/+$/, '');
  if (prefix !== '' && !S3_PREFIX.test(prefix)) {
    throw new ConfigError(
      'ARTIFACT_STORE',
      "has a key prefix with empty segments or characters other than letters, digits and !-_.*'()",
    );
  }
  const endpointSetting = read('ARTIFACT_S3_ENDPOINT');
  const endpoint = endpointSetting === undefined ? null : httpUrl('ARTIFACT_S3_ENDPOINT', endpointSetting);
  const region = read('ARTIFACT_S3_REGION') ?? read('AWS_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9-]{1,32}$/.test(region)) {
    throw new ConfigError(
      read('ARTIFACT_S3_REGION') === undefined ? 'AWS_REGION' : 'ARTIFACT_S3_REGION',
      `must be a region name like eu-west-1 (got "${region}")`,
    );
  }
  const accessKeyId = read('ARTIFACT_S3_ACCESS_KEY_ID');
  const secretAccessKey = read('ARTIFACT_S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(
      accessKeyId === undefined ? 'ARTIFACT_S3_ACCESS_KEY_ID' : 'ARTIFACT_S3_SECRET_ACCESS_KEY',
      'ARTIFACT_S3_ACCESS_KEY_ID and ARTIFACT_S3_SECRET_ACCESS_KEY go together',
    );
  }
  // A compatible service (MinIO and most others) answers at one address for every bucket; AWS
  // itself names the bucket in the host.
  const forcePathStyle =
    oneOf(
      'ARTIFACT_S3_FORCE_PATH_STYLE',
      read('ARTIFACT_S3_FORCE_PATH_STYLE') ?? (endpoint ? 'true' : 'false'),
      ['true', 'false'] as const,
    ) === 'true';
  return {
    kind: 's3',
    bucket,
    prefix: prefix === '' ? '' : `${prefix}/`,
    endpoint,
    region,
    forcePathStyle,
    credentials:
      accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : null,
  };
}

/** PUBLIC_BASE_URL may be given with or without the version segment; keep the origin part. */
function stripVersion(url: string): string {
  return url.replace(/\/v1$/, '');
}
