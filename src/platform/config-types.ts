/**
 * The artifact store: a folder (ARTIFACT_DIR; DATA_DIR/artifacts by default), or an S3 bucket
 * (ARTIFACT_STORE=s3://bucket/prefix) on AWS or an S3-compatible service.
 */
export type ArtifactStoreSettings =
  | { readonly kind: 'local'; readonly dir: string }
  | {
      readonly kind: 's3';
      readonly bucket: string;
      /** Put before every key: '' or a prefix ending in '/'. */
      readonly prefix: string;
      /** An S3-compatible service's address (ARTIFACT_S3_ENDPOINT); null for AWS S3 itself. */
      readonly endpoint: string | null;
      readonly region: string;
      /** Bucket in the path (https://host/bucket/key) rather than in the host name. */
      readonly forcePathStyle: boolean;
      /** Explicit keys (ARTIFACT_S3_ACCESS_KEY_ID and _SECRET_ACCESS_KEY); null: the AWS SDK's default chain. */
      readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | null;
    };

/**
 * The settings as every other file receives them: parsed once from the environment by
 * parseConfig (config.ts), the one place that reads it, into this frozen object, so a wrong
 * setting stops start-up with a message naming the variable.
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
  /** Where uploaded release artifacts are kept: ARTIFACT_STORE, ARTIFACT_DIR and ARTIFACT_S3_*. */
  readonly artifactStore: ArtifactStoreSettings;
  /** The largest artifact any seller may upload (ARTIFACT_MAX_BYTES, at most 2 GiB); tiers allow less. */
  readonly artifactMaxBytes: number;
  /** Never read from the environment: see DatabaseSettings.memoryImage (the test suite's). */
  readonly memoryImage?: Blob;
  /**
   * Whether a first start on an empty DATA_DIR copies the build's migrated template
   * (DATABASE_TEMPLATE=on, the default) or creates the cluster with PGlite's initdb (off).
   */
  readonly databaseTemplate: boolean;
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
  /** Days a license's timeline entries are kept (the hourly purge deletes older ones). */
  readonly licenseEventsRetentionDays: number;
  /**
   * Whether client software's calls (verifications, activations, check-ins, consumes) go in the
   * licenses' timelines (LICENSE_TIMELINE_CALLS on/off); what sellers and billing do always does.
   */
  readonly licenseTimelineCalls: boolean;
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
