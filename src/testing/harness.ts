import assert from 'node:assert/strict';
import { createPrivateKey, type KeyObject, randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import pg from 'pg';
import { resolveSigningKeyEncryptionKeys } from '../app/server-secret.js';
import { type RunningService, startService } from '../app/service.js';
import { createKeySealer } from '../modules/license-tokens/index.js';
import type { Clock } from '../platform/clock.js';
import { type Config, IN_MEMORY_DATA_DIR, parseConfig } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import { createLog } from '../platform/log.js';
import { type HttpClient, httpClient } from './http-client.js';
import { migratedMemoryImage } from './memory-image.js';
import { scratchDatabase } from './scratch-database.js';
import { TEST_SIGNING_KEY_ENCRYPTION_KEY } from './test-secrets.js';

/**
 * A whole service per test file: both listeners on free ports, storage from the environment
 * (DATABASE_URL → PostgreSQL, otherwise in-memory PGlite). Tests isolate themselves by making
 * their own sellers, never by truncating tables, so files can run in parallel on one database.
 */
export interface TestServer {
  config: Config;
  service: RunningService;
  api: HttpClient;
  pay: HttpClient;
  db: Db;
  adminToken(): Promise<string>;
  stop(): Promise<void>;
}

export const TEST_PASSWORD = 'correct horse battery';

export async function startTestServer(
  overrides: Record<string, string> = {},
  options: { clock?: Clock; logLines?: string[]; ownDatabase?: boolean } = {},
): Promise<TestServer> {
  const adminEmail = `admin-${uniqueSuffix()}@test.example`;
  const scratch = options.ownDatabase ? await scratchDatabase() : null;
  const parsed = parseConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    PAY_PORT: '0',
    DATA_DIR: 'memory:',
    DATABASE_URL: scratch?.url ?? process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    // Every test server counts its own rate limits, though all share one Redis.
    REDIS_KEY_PREFIX: `test-${uniqueSuffix()}:`,
    // Test files sign up many sellers from one address; the limit itself has its own test.
    AUTH_RATE_LIMIT: '100000',
    VERIFY_RATE_LIMIT: '100000',
    VERIFY_KEY_RATE_LIMIT: '100000',
    CHECKOUT_RATE_LIMIT: '100000',
    CHECKOUT_VALIDATE_RATE_LIMIT: '100000',
    // Test receivers listen on loopback.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Test servers share one database but not one clock: background jobs run only where a test
    // asks for them (tests drive expiry and delivery passes themselves).
    JOBS: 'off',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    // A lower scrypt cost keeps hundreds of test sign-ups fast; the algorithm is the same.
    PASSWORD_HASH_COST: '1024',
    ADMIN_EMAIL: adminEmail,
    ADMIN_PASSWORD: TEST_PASSWORD,
    // The test process also runs the tests, so its event loop measures them, not the server's load.
    MAX_EVENT_LOOP_DELAY: '0',
    // A response that drifts from its declared schema answers 500, so any test touching it fails.
    RESPONSE_CONTRACT: 'enforce',
    // Servers sharing the test database open each other's signing keys.
    SIGNING_KEY_ENCRYPTION_KEY: TEST_SIGNING_KEY_ENCRYPTION_KEY,
    ...overrides,
  });
  const config: Config =
    parsed.databaseUrl === null && parsed.dataDir === IN_MEMORY_DATA_DIR
      ? { ...parsed, memoryImage: await migratedMemoryImage() }
      : parsed;
  const destination = options.logLines
    ? { write: (line: string) => void options.logLines?.push(line) }
    : undefined;
  const service = await withinStartDeadline(
    startService(config, createLog(config, destination), options.clock),
    config.databaseUrl,
  );
  const api = httpClient(`${service.coreUrl}/v1`);
  let adminToken: Promise<string> | null = null;
  return {
    config,
    service,
    api,
    pay: httpClient(service.payUrl),
    db: service.modules.database.db,
    adminToken() {
      adminToken ??= api
        .post('/auth/login', { email: adminEmail, password: TEST_PASSWORD })
        .then((res) => res.expect(200).body.token as string);
      return adminToken;
    },
    async stop() {
      await service.stop();
      await scratch?.drop();
    },
  };
}

/** Far above any start seen (a few seconds), far below the runner's 15 minutes per file. */
const START_DEADLINE_MS = 90_000;

/**
 * A test server that does not start fails its file at once with what the database was doing,
 * instead of holding it until the runner's timeout with nothing to say.
 */
async function withinStartDeadline<T>(starting: Promise<T>, databaseUrl: string | null): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, START_DEADLINE_MS, 'late');
  });
  const outcome = await Promise.race([starting, deadline]).finally(() => clearTimeout(timer));
  if (outcome !== 'late') return outcome;
  const activity = databaseUrl ? await databaseActivity(databaseUrl) : 'PGlite in memory';
  // The start still under way would keep this file's process alive until the runner gives up.
  setTimeout(() => process.exit(1), 5_000).unref();
  throw new Error(
    `the test server did not start within ${START_DEADLINE_MS / 1000} s\n` +
      `this process is waiting on: ${process.getActiveResourcesInfo().join(', ')}\n` +
      `the database server's sessions that are not idle:\n${activity}`,
  );
}

/** Every session on the server that is not idle: what it waits for and who blocks it. */
async function databaseActivity(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query(
      `select pid, datname, state, wait_event_type, wait_event, pg_blocking_pids(pid) as blocked_by,
              round(extract(epoch from now() - xact_start)) as transaction_seconds, left(query, 120) as query
         from pg_stat_activity
        where pid <> pg_backend_pid() and backend_type = 'client backend'
          and (state is distinct from 'idle' or wait_event_type = 'Lock')`,
    );
    return rows.map((row) => JSON.stringify(row)).join('\n') || '(none)';
  } catch (err) {
    return `(not readable: ${(err as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A port free on loopback right now, for a listener whose public address must be known before it
 * starts (PAY_PORT with PAY_PUBLIC_URL). Another process could take it first; tests accept that.
 */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A stored signing key's private key, opened as the service opens it: for tests that sign as it would. */
export async function storedSigningKey(server: TestServer, kid: string): Promise<KeyObject> {
  const row = await server.db
    .selectFrom('signing_keys')
    .select('sealed_private_key')
    .where('kid', '=', kid)
    .executeTakeFirstOrThrow();
  const sealer = createKeySealer(resolveSigningKeyEncryptionKeys(server.config));
  return createPrivateKey({
    key: sealer.open(kid, row.sealed_private_key),
    format: 'der',
    type: 'pkcs8',
  });
}

export function uniqueSuffix(): string {
  return randomBytes(6).toString('hex');
}

export interface Seller {
  token: string;
  user: { id: string; email: string; role: string; tier: string };
}

/** Registers a new seller through the API; an admin sets the tier or role when asked. */
export async function signUp(
  server: TestServer,
  options: {
    tier?: 'free' | 'pro' | 'business' | 'enterprise';
    role?: 'SELLER' | 'ADMIN';
    email?: string;
  } = {},
): Promise<Seller> {
  const email = options.email ?? `seller-${uniqueSuffix()}@test.example`;
  const res = await server.api.post('/auth/register', {
    email,
    password: TEST_PASSWORD,
    name: 'Test Seller',
  });
  const seller = res.expect(201).body as Seller;
  if (options.tier || options.role) {
    const patch = await server.api.patch(
      `/admin/users/${seller.user.id}`,
      { ...(options.tier ? { tier: options.tier } : {}), ...(options.role ? { role: options.role } : {}) },
      { token: await server.adminToken() },
    );
    seller.user = patch.expect(200).body;
  }
  return seller;
}

export async function createApp(
  server: TestServer,
  token: string,
  name = 'Test App',
): Promise<{ id: string; name: string }> {
  return (await server.api.post('/apps', { name }, { token })).expect(201).body;
}

export async function createApiKey(
  server: TestServer,
  token: string,
  appId: string,
  name = 'backend',
): Promise<{ id: string; key: string; prefix: string }> {
  return (await server.api.post(`/apps/${appId}/api-keys`, { name }, { token })).expect(201).body;
}

export type SellerWithApp = Seller & { appId: string };

/** A new seller (at the tier asked) with one app. */
export async function sellerWithApp(
  server: TestServer,
  tier?: 'free' | 'pro' | 'business' | 'enterprise',
): Promise<SellerWithApp> {
  const seller = await signUp(server, tier ? { tier } : {});
  return { ...seller, appId: (await createApp(server, seller.token)).id };
}

/** The seller's one license with this key, as the list route finds it. */
export async function licenseByKey(
  server: TestServer,
  seller: { token: string; appId: string },
  key: string,
) {
  const list = (
    await server.api.get(`/apps/${seller.appId}/licenses?key=${encodeURIComponent(key)}`, {
      token: seller.token,
    })
  ).expect(200).body;
  assert.equal(list.total, 1);
  return list.licenses[0];
}

/** Issues a license for the seller's app through the API. */
export async function issueLicense(
  server: TestServer,
  seller: { token: string; appId: string },
  body: Record<string, unknown> = {},
) {
  return (await server.api.post(`/apps/${seller.appId}/licenses`, body, { token: seller.token })).expect(201)
    .body;
}
