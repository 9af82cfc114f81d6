import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from './config.js';

const KEK = Buffer.alloc(32, 7).toString('base64');

describe('configuration', () => {
  test('defaults describe a local service on the embedded database', () => {
    const config = parseConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.payPort, 3001);
    assert.equal(config.apiBaseUrl, 'http://localhost:3000/v1');
    assert.equal(config.payPublicUrl, 'http://localhost:3001');
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.databaseUrl, null);
    assert.equal(config.env, 'development');
    assert.ok(Object.isFrozen(config));
  });

  test('public addresses follow the ports and accept a base url with or without /v1', () => {
    assert.equal(parseConfig({ PORT: '8080' }).apiBaseUrl, 'http://localhost:8080/v1');
    assert.equal(
      parseConfig({ PUBLIC_BASE_URL: 'https://api.example.com/v1/' }).apiBaseUrl,
      'https://api.example.com/v1',
    );
    assert.equal(
      parseConfig({ PUBLIC_BASE_URL: 'https://api.example.com' }).apiBaseUrl,
      'https://api.example.com/v1',
    );
    assert.equal(
      parseConfig({ PAY_PUBLIC_URL: 'https://pay.example.com/' }).payPublicUrl,
      'https://pay.example.com',
    );
  });

  const refusals: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['PAY_PORT', { PORT: '4000', PAY_PORT: '4000' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://example.com' }],
    ['PAY_PUBLIC_URL', { PAY_PUBLIC_URL: 'not a url' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://localhost/db' }],
    ['JWT_SECRET', { JWT_SECRET: 'too-short' }],
    ['JWT_SECRET', { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/app' }],
    ['IDEMPOTENCY_SECRET', { IDEMPOTENCY_SECRET: 'too-short' }],
    ['IDEMPOTENCY_SECRET', { IDEMPOTENCY_SECRET: `${'a'.repeat(32)},short` }],
    ['IDEMPOTENCY_SECRET', { IDEMPOTENCY_SECRET: `${'a'.repeat(32)},${'a'.repeat(32)}` }],
    [
      'IDEMPOTENCY_SECRET',
      { NODE_ENV: 'production', DATABASE_URL: 'postgres://db/app', JWT_SECRET: 'j'.repeat(32) },
    ],
    ['TEST_CRASH_AFTER_COMMIT', { TEST_CRASH_AFTER_COMMIT: 'on' }],
    ['TEST_CRASH_AFTER_COMMIT', { NODE_ENV: 'production', TEST_CRASH_AFTER_COMMIT: 'on' }],
    ['TEST_CRASH_AFTER_COMMIT', { NODE_ENV: 'test', TEST_CRASH_AFTER_COMMIT: 'yes' }],
    ['ADMIN_PASSWORD', { ADMIN_EMAIL: 'admin@example.com' }],
    ['ADMIN_EMAIL', { ADMIN_PASSWORD: 'secret123' }],
    ['ADMIN_EMAIL', { ADMIN_EMAIL: 'not-an-address', ADMIN_PASSWORD: 'secret123' }],
    ['ADMIN_PASSWORD', { ADMIN_EMAIL: 'admin@example.com', ADMIN_PASSWORD: 'short' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['NODE_ENV', { NODE_ENV: 'staging' }],
    ['PASSWORD_HASH_COST', { PASSWORD_HASH_COST: '3000' }],
    ['USER_TOKEN_TTL', { USER_TOKEN_TTL: '5' }],
    ['REDIS_URL', { REDIS_URL: 'localhost:6379' }],
    ['REDIS_KEY_PREFIX', { REDIS_KEY_PREFIX: 'has space' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'yes' }],
    ['AUTH_RATE_LIMIT', { AUTH_RATE_LIMIT: '0' }],
    ['VERIFICATION_FLUSH_MS', { VERIFICATION_FLUSH_MS: '50' }],
    ['VERIFICATION_FLUSH_MS', { VERIFICATION_FLUSH_MS: '3600001' }],
    ['VERIFICATION_FLUSH_MS', { VERIFICATION_FLUSH_MS: '10s' }],
    ['METRICS', { METRICS: 'yes' }],
    ['LICENSE_TIMELINE_CALLS', { LICENSE_TIMELINE_CALLS: 'no' }],
    ['METRICS_PORT', { METRICS_PORT: 'prometheus' }],
    ['METRICS_PORT', { METRICS_PORT: '3000' }],
    ['METRICS_PORT', { PORT: '9464' }],
    ['HEALTH_PORT', { HEALTH_PORT: 'probes' }],
    ['HEALTH_PORT', { HEALTH_PORT: '65536' }],
    ['HEALTH_PORT', { PORT: '9465' }],
    ['HEALTH_PORT', { HEALTH_PORT: '9464' }],
    ['HEALTH_STALL_MS', { HEALTH_STALL_MS: '999' }],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }],
    ['SHUTDOWN_TIMEOUT_MS', { SHUTDOWN_TIMEOUT_MS: '999' }],
    ['SHUTDOWN_TIMEOUT_MS', { SHUTDOWN_TIMEOUT_MS: 'soon' }],
    ['THREADPOOL_NICE', { THREADPOOL_NICE: '20' }],
    ['THREADPOOL_NICE', { THREADPOOL_NICE: '-5' }],
    ['UV_THREADPOOL_SIZE', { UV_THREADPOOL_SIZE: '0' }],
    ['LISTEN_BACKLOG', { LISTEN_BACKLOG: '0' }],
    ['LISTEN_BACKLOG', { LISTEN_BACKLOG: '65536' }],
    ['LISTEN_BACKLOG', { LISTEN_BACKLOG: 'lots' }],
    ['ARTIFACT_STORE', { ARTIFACT_STORE: 'gs://releases' }],
    ['ARTIFACT_STORE', { ARTIFACT_STORE: 's3://Releases_Bucket' }],
    ['ARTIFACT_STORE', { ARTIFACT_STORE: 's3://releases/builds//nightly' }],
    ['ARTIFACT_STORE', { ARTIFACT_STORE: 's3://releases/builds and more' }],
    ['ARTIFACT_S3_ENDPOINT', { ARTIFACT_S3_ENDPOINT: 'http://minio:9000' }],
    ['ARTIFACT_S3_ENDPOINT', { ARTIFACT_STORE: 's3://releases', ARTIFACT_S3_ENDPOINT: 'minio:9000' }],
    ['ARTIFACT_S3_REGION', { ARTIFACT_STORE: 's3://releases', ARTIFACT_S3_REGION: 'EU West' }],
    ['ARTIFACT_S3_SECRET_ACCESS_KEY', { ARTIFACT_STORE: 's3://releases', ARTIFACT_S3_ACCESS_KEY_ID: 'AKID' }],
    [
      'ARTIFACT_S3_ACCESS_KEY_ID',
      { ARTIFACT_STORE: 's3://releases', ARTIFACT_S3_SECRET_ACCESS_KEY: 'secret' },
    ],
    [
      'ARTIFACT_S3_FORCE_PATH_STYLE',
      { ARTIFACT_STORE: 's3://releases', ARTIFACT_S3_FORCE_PATH_STYLE: 'yes' },
    ],
    ['SIGNING_KEY_ENCRYPTION_KEY', { SIGNING_KEY_ENCRYPTION_KEY: 'a passphrase, not a key' }],
    ['SIGNING_KEY_ENCRYPTION_KEY', { SIGNING_KEY_ENCRYPTION_KEY: Buffer.alloc(16, 1).toString('base64') }],
    ['SIGNING_KEY_ENCRYPTION_KEY', { SIGNING_KEY_ENCRYPTION_KEY: `${KEK},${KEK}` }],
    ['SIGNING_KEY_ENCRYPTION_KEY', { SIGNING_KEY_ENCRYPTION_KEY: `${KEK},` }],
    [
      'SIGNING_KEY_ENCRYPTION_KEY',
      {
        NODE_ENV: 'production',
        DATABASE_URL: 'postgres://db/app',
        JWT_SECRET: 'x'.repeat(32),
        IDEMPOTENCY_SECRET: 'y'.repeat(32),
      },
    ],
  ];
  for (const [variable, env] of refusals) {
    test(`refuses ${JSON.stringify(env)} naming ${variable}`, () => {
      assert.throws(
        () => parseConfig(env),
        (error: unknown) =>
          error instanceof ConfigError && error.variable === variable && error.message.startsWith(variable),
      );
    });
  }

  test('artifacts are kept in a folder unless ARTIFACT_STORE names an S3 bucket', () => {
    assert.deepEqual(parseConfig({ DATA_DIR: '/srv/licensing' }).artifactStore, {
      kind: 'local',
      dir: '/srv/licensing/artifacts',
    });
    assert.deepEqual(parseConfig({ ARTIFACT_DIR: '/mnt/shared' }).artifactStore, {
      kind: 'local',
      dir: '/mnt/shared',
    });
    // On AWS: the bucket in the host name, the SDK's own credentials (environment, profile, role).
    assert.deepEqual(
      parseConfig({ ARTIFACT_STORE: 's3://releases', AWS_REGION: 'eu-west-1' }).artifactStore,
      {
        kind: 's3',
        bucket: 'releases',
        prefix: '',
        endpoint: null,
        region: 'eu-west-1',
        forcePathStyle: false,
        credentials: null,
      },
    );
    // A compatible service: the bucket in the path unless told otherwise, keys given here.
    const minio = parseConfig({
      ARTIFACT_STORE: 's3://releases/builds/app/',
      ARTIFACT_S3_ENDPOINT: 'http://minio:9000/',
      ARTIFACT_S3_ACCESS_KEY_ID: 'AKID',
      ARTIFACT_S3_SECRET_ACCESS_KEY: 'secret',
    }).artifactStore;
    assert.deepEqual(minio, {
      kind: 's3',
      bucket: 'releases',
      prefix: 'builds/app/',
      endpoint: 'http://minio:9000',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
    });
    const hosted = parseConfig({
      ARTIFACT_STORE: 's3://releases',
      ARTIFACT_S3_ENDPOINT: 'https://s3.example.com',
      ARTIFACT_S3_FORCE_PATH_STYLE: 'false',
    }).artifactStore;
    assert.equal(hosted.kind === 's3' && hosted.forcePathStyle, false);
  });

  test('an S3 setting that is refused never echoes the secret key', () => {
    assert.throws(
      () =>
        parseConfig({
          ARTIFACT_STORE: 's3://releases',
          ARTIFACT_S3_SECRET_ACCESS_KEY: 'do-not-print-me',
        }),
      (error: unknown) => error instanceof ConfigError && !error.message.includes('do-not-print-me'),
    );
  });

  test('signing keys are sealed under SIGNING_KEY_ENCRYPTION_KEY, base64 or base64url, several for a rotation', () => {
    assert.equal(parseConfig({}).signingKeyEncryptionKeys, null);
    const urlSafe = Buffer.alloc(32, 0xfb).toString('base64url');
    assert.deepEqual(
      parseConfig({ SIGNING_KEY_ENCRYPTION_KEY: ` ${KEK} , ${urlSafe}` }).signingKeyEncryptionKeys,
      [KEK, urlSafe],
    );
  });

  test('verification counts are written every 10 seconds unless told otherwise', () => {
    assert.equal(parseConfig({}).verificationFlushMs, 10_000);
    assert.equal(parseConfig({ VERIFICATION_FLUSH_MS: '100' }).verificationFlushMs, 100);
    assert.equal(parseConfig({ VERIFICATION_FLUSH_MS: '3600000' }).verificationFlushMs, 3_600_000);
  });

  test('verifies are answered from memory for 5 minutes of a database outage unless told otherwise', () => {
    assert.equal(parseConfig({}).verifyOutageGraceSeconds, 300);
    assert.equal(parseConfig({ VERIFY_OUTAGE_GRACE_SECONDS: '0' }).verifyOutageGraceSeconds, 0);
    assert.equal(parseConfig({ VERIFY_OUTAGE_GRACE_SECONDS: '86400' }).verifyOutageGraceSeconds, 86_400);
    assert.throws(() => parseConfig({ VERIFY_OUTAGE_GRACE_SECONDS: '-1' }), /VERIFY_OUTAGE_GRACE_SECONDS/);
    assert.throws(() => parseConfig({ VERIFY_OUTAGE_GRACE_SECONDS: '86401' }), /VERIFY_OUTAGE_GRACE_SECONDS/);
  });

  test('the thread pool runs at nice 10 unless told otherwise, and is as large as libuv makes it', () => {
    assert.equal(parseConfig({}).threadPoolNice, 10);
    assert.equal(parseConfig({ THREADPOOL_NICE: '0' }).threadPoolNice, 0);
    assert.equal(parseConfig({ THREADPOOL_NICE: '19' }).threadPoolNice, 19);
    assert.equal(parseConfig({}).threadPoolSize, 4);
    assert.equal(parseConfig({ UV_THREADPOOL_SIZE: '16' }).threadPoolSize, 16);
  });

  test('listeners queue up to 4096 waiting connections unless told otherwise', () => {
    assert.equal(parseConfig({}).listenBacklog, 4096);
    assert.equal(parseConfig({ LISTEN_BACKLOG: '511' }).listenBacklog, 511);
    assert.equal(parseConfig({ LISTEN_BACKLOG: '65535' }).listenBacklog, 65_535);
  });

  test('the access log is on unless told otherwise', () => {
    assert.equal(parseConfig({}).accessLog, 'on');
    assert.equal(parseConfig({ ACCESS_LOG: 'errors' }).accessLog, 'errors');
    assert.equal(parseConfig({ ACCESS_LOG: 'off' }).accessLog, 'off');
    assert.throws(() => parseConfig({ ACCESS_LOG: 'sometimes' }), /ACCESS_LOG/);
  });

  test('idempotency secrets are listed newest first, and the crash hook is off unless a test turns it on', () => {
    assert.equal(parseConfig({}).idempotencySecrets, null);
    const [newer, older] = ['n'.repeat(32), 'o'.repeat(40)];
    assert.deepEqual(parseConfig({ IDEMPOTENCY_SECRET: ` ${newer} , ${older}` }).idempotencySecrets, [
      newer,
      older,
    ]);
    assert.equal(parseConfig({ NODE_ENV: 'test' }).testCrashAfterCommit, false);
    assert.equal(parseConfig({ NODE_ENV: 'test', TEST_CRASH_AFTER_COMMIT: 'on' }).testCrashAfterCommit, true);
  });

  test('blank values count as unset', () => {
    assert.equal(parseConfig({ DATABASE_URL: '  ', PORT: '' }).databaseUrl, null);
  });

  test('metrics are recorded and served on loopback port 9464 unless told otherwise', () => {
    const config = parseConfig({});
    assert.equal(config.metrics, true);
    assert.equal(config.metricsHost, '127.0.0.1');
    assert.equal(config.metricsPort, 9464);
    // Test servers run side by side: each takes a free port.
    assert.equal(parseConfig({ NODE_ENV: 'test' }).metricsPort, 0);
    assert.equal(parseConfig({ METRICS: 'off' }).metrics, false);
    const moved = parseConfig({ METRICS_HOST: '0.0.0.0', METRICS_PORT: '9100' });
    assert.equal(moved.metricsHost, '0.0.0.0');
    assert.equal(moved.metricsPort, 9100);
  });

  test("probes are answered on port 9465 of the main listeners' interface unless told otherwise", () => {
    const config = parseConfig({});
    assert.equal(config.healthHost, '0.0.0.0');
    assert.equal(config.healthPort, 9465);
    assert.equal(config.healthStallMs, 10_000);
    assert.equal(parseConfig({ HOST: '10.0.0.5' }).healthHost, '10.0.0.5');
    assert.equal(parseConfig({ NODE_ENV: 'test' }).healthPort, 0);
    assert.equal(parseConfig({ HEALTH_PORT: 'off' }).healthPort, null);
    const moved = parseConfig({ HEALTH_HOST: '127.0.0.1', HEALTH_PORT: '8086', HEALTH_STALL_MS: '3000' });
    assert.equal(moved.healthHost, '127.0.0.1');
    assert.equal(moved.healthPort, 8086);
    assert.equal(moved.healthStallMs, 3000);
  });

  test('tracing is off unless an OTLP endpoint is given', () => {
    assert.equal(parseConfig({}).otlpEndpoint, null);
    assert.equal(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otlpEndpoint,
      'http://collector:4318',
    );
  });
});
