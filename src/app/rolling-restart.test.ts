import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type Balancer, haproxyBinary, readEnvFile, startHaproxy } from '../testing/balancer.js';
import { type CliProcess, killAll, runCli, serve } from '../testing/cli-process.js';
import { freePort } from '../testing/harness.js';
import { type HttpClient, type HttpResponse, httpClient } from '../testing/http-client.js';
import { confirmPurchase, GOOD_CARD } from '../testing/purchases.js';
import { scratchDatabase } from '../testing/scratch-database.js';

/**
 * The deployment docs/deployment.md describes, run as written: three nodes over one PostgreSQL
 * (and the suite's Redis) started from deploy/node.env, behind HAProxy running
 * deploy/haproxy.cfg. Only addresses, ports and secrets are the test's own. Each node in turn is
 * stopped (SIGTERM), started again and waited for until the balancer has it back, while
 * verifies and purchases go through the balancer all along. No request may fail, and every
 * purchase answered must be in the database once.
 */
const NODE_ENV_FILE = path.join(process.cwd(), 'deploy', 'node.env');
const HAPROXY_CONFIG = path.join(process.cwd(), 'deploy', 'haproxy.cfg');
/** Three loopback addresses, so the nodes listen on the same ports as hosts of their own would. */
const NODE_HOSTS = ['127.0.0.11', '127.0.0.12', '127.0.0.13'] as const;
/** The lines of deploy/node.env that name this deployment's own addresses, ports and secrets. */
const REPLACED = [
  'DATABASE_URL',
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'JWT_SECRET',
  'IDEMPOTENCY_SECRET',
  'SIGNING_KEY_ENCRYPTION_KEY',
  'PUBLIC_BASE_URL',
  'PAY_PUBLIC_URL',
  'PORT',
  'PAY_PORT',
  'HEALTH_PORT',
  'METRICS_PORT',
];
/** Purchases completed after each restart before the next, so every phase runs under load. */
const PURCHASES_PER_PHASE = 4;
const VERIFY_LANES = 3;
const BUYER_LANES = 2;
/** A request unanswered this long counts as failed (a hang), not as slow. */
const REQUEST_TIMEOUT_MS = 30_000;

const haproxy = haproxyBinary();
const skip = !process.env.DATABASE_URL
  ? 'several processes share one database, which PGlite cannot: runs in the PostgreSQL pass'
  : process.platform !== 'linux'
    ? 'the nodes listen on 127.0.0.11-13, loopback on Linux only'
    : !haproxy
      ? 'needs HAProxy (apt-get install haproxy)'
      : false;

interface Node {
  name: string;
  host: string;
  env: Record<string, string | undefined>;
  proc: CliProcess;
}

interface Deployment {
  databaseUrl: string;
  nodes: Node[];
  balancer: Balancer;
  metricsPort: number;
  /** The core API (with /v1) and the checkout host, through the balancer. */
  api: HttpClient;
  pay: HttpClient;
}

interface Outcome {
  what: string;
  ok: boolean;
  status: number | null;
  detail: string;
}

interface Purchase {
  orderId: string;
  email: string;
  licenseKey: string;
}

test('three nodes behind HAProxy, restarted one at a time under verify and purchase load, fail no request and lose or double no purchase', {
  skip,
  timeout: 600_000,
}, async (t) => {
  const deployment = await startDeployment();
  const shop = await openShop(deployment.api);
  const load = startLoad(deployment, shop);
  try {
    await load.purchasesAfter(PURCHASES_PER_PHASE);
    for (const node of deployment.nodes) {
      t.diagnostic(await restart(node, deployment));
      await load.purchasesAfter(PURCHASES_PER_PHASE);
    }
  } finally {
    await load.stop();
  }

  const servers = await deployment.balancer.servers();
  t.diagnostic(
    `${load.outcomes.length} requests (${load.purchases.length} purchases); HAProxy retried ${sum(servers, 'retries')}, redispatched ${sum(servers, 'redispatches')}`,
  );
  assert.deepEqual(
    load.outcomes.filter((outcome) => !outcome.ok),
    [],
    `no request failed; HAProxy's log:\n${errorLines(deployment.balancer.output())}`,
  );
  await assertPurchasesStoredOnce(deployment.databaseUrl, shop.productId, load);

  for (const node of deployment.nodes) node.proc.child.kill('SIGTERM');
  assert.deepEqual(await Promise.all(deployment.nodes.map((node) => node.proc.exited)), [0, 0, 0]);
});

/**
 * A database of its own, `licensing migrate`, three nodes from deploy/node.env and HAProxy on
 * deploy/haproxy.cfg, once every node is in the balancer's pool. All of it is removed after the file.
 */
async function startDeployment(): Promise<Deployment> {
  const scratch = await scratchDatabase();
  const dataDirs: string[] = [];
  let balancer: Balancer | null = null;
  after(async () => {
    killAll();
    await balancer?.stop();
    await scratch.drop();
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  const dataDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-rolling-'));
    dataDirs.push(dir);
    return dir;
  };

  const shared = readEnvFile(NODE_ENV_FILE);
  assert.deepEqual(
    REPLACED.filter((name) => !(name in shared)),
    [],
    'deploy/node.env names every setting the nodes must share',
  );
  const ports = {
    api: await freePort(),
    pay: await freePort(),
    health: await freePort(),
    metrics: await freePort(),
    lbApi: await freePort(),
    lbPay: await freePort(),
    lbStats: await freePort(),
  };
  const lbApiUrl = `http://127.0.0.1:${ports.lbApi}`;
  const lbPayUrl = `http://127.0.0.1:${ports.lbPay}`;
  const sharedEnv: Record<string, string | undefined> = {
    ...shared,
    DATABASE_URL: scratch.url,
    REDIS_URL: process.env.REDIS_URL,
    REDIS_KEY_PREFIX: `rolling-${randomBytes(4).toString('hex')}:`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    IDEMPOTENCY_SECRET: randomBytes(32).toString('hex'),
    SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PUBLIC_BASE_URL: lbApiUrl,
    PAY_PUBLIC_URL: lbPayUrl,
    PORT: String(ports.api),
    PAY_PORT: String(ports.pay),
    HEALTH_PORT: String(ports.health),
    METRICS_PORT: String(ports.metrics),
    // The test's own: the whole load comes from one address, and the log is kept for failures only.
    LOG_LEVEL: 'warn',
    VERIFY_RATE_LIMIT: '1000000',
    VERIFY_KEY_RATE_LIMIT: '1000000',
    CHECKOUT_RATE_LIMIT: '1000000',
    CHECKOUT_VALIDATE_RATE_LIMIT: '1000000',
  };

  // As the guide's procedure: migrations first, from any machine with the shared settings.
  const migrate = runCli(['migrate'], { ...sharedEnv, DATA_DIR: dataDir() });
  assert.equal(await migrate.exited, 0, migrate.output());

  const nodes: Node[] = await Promise.all(
    NODE_HOSTS.map(async (host, i) => {
      const env = { ...sharedEnv, HOST: host, METRICS_HOST: host, DATA_DIR: dataDir() };
      return { name: `node${i + 1}`, host, env, proc: (await serve(env)).proc };
    }),
  );
  balancer = await startHaproxy(
    haproxy as string,
    HAPROXY_CONFIG,
    {
      NODE1_HOST: NODE_HOSTS[0],
      NODE2_HOST: NODE_HOSTS[1],
      NODE3_HOST: NODE_HOSTS[2],
      API_PORT: String(ports.api),
      PAY_PORT: String(ports.pay),
      HEALTH_PORT: String(ports.health),
      LB_API_BIND: `127.0.0.1:${ports.lbApi}`,
      LB_PAY_BIND: `127.0.0.1:${ports.lbPay}`,
      LB_STATS_BIND: `127.0.0.1:${ports.lbStats}`,
    },
    `http://127.0.0.1:${ports.lbStats}`,
  );
  const deployment: Deployment = {
    databaseUrl: scratch.url as string,
    nodes,
    balancer,
    metricsPort: ports.metrics,
    api: httpClient(`${lbApiUrl}/v1`),
    pay: httpClient(lbPayUrl),
  };
  for (const node of nodes) await until(`${node.name} in the pool`, () => inThePool(deployment, node));
  return deployment;
}

/** A seller with a product on sale and ten licenses to verify, made through the balancer. */
async function openShop(api: HttpClient) {
  const { token } = (
    await api.post('/auth/register', {
      email: `seller-${randomBytes(4).toString('hex')}@rolling.example`,
      password: 'rolling restart please',
    })
  ).expect(201).body;
  const app = (await api.post('/apps', { name: 'Rolling' }, { token })).expect(201).body;
  const product = (
    await api.post(
      '/products',
      { appId: app.id, name: 'Rolling Pro', price: 19.99, currency: 'USD' },
      { token },
    )
  ).expect(201).body;
  const keys: string[] = [];
  for (let i = 0; i < 10; i++) {
    keys.push((await api.post(`/apps/${app.id}/licenses`, {}, { token })).expect(201).body.key);
  }
  return { productId: product.id as string, keys };
}

/**
 * Clients going through the balancer without pause until stopped: verifiers of the shop's
 * licenses, and buyers (a payment intent with an Idempotency-Key, its confirmation with the
 * sandbox's good card, then the mirror validate of the license on the checkout host). Every
 * request's outcome is recorded, and every purchase answered paid.
 */
function startLoad(deployment: Deployment, shop: { productId: string; keys: string[] }) {
  const { api, pay } = deployment;
  const outcomes: Outcome[] = [];
  const purchases: Purchase[] = [];
  const options = { timeoutMs: REQUEST_TIMEOUT_MS };
  let running = true;

  /** One request: its outcome recorded, its answer returned when it is the one expected. */
  const attempt = async (
    what: string,
    send: () => Promise<HttpResponse>,
    expected: (res: HttpResponse) => boolean,
  ): Promise<HttpResponse | null> => {
    try {
      const res = await send();
      const ok = expected(res);
      outcomes.push({ what, ok, status: res.status, detail: ok ? '' : res.text.slice(0, 300) });
      return ok ? res : null;
    } catch (error) {
      outcomes.push({ what, ok: false, status: null, detail: (error as Error).message });
      return null;
    }
  };
  const verifier = async (lane: number) => {
    for (let i = lane; running; i++) {
      const key = shop.keys[i % shop.keys.length];
      await attempt(
        'verify',
        () => api.post('/licenses/verify', { key }, options),
        (res) => res.status === 200 && res.body.valid === true,
      );
      await sleep(10);
    }
  };
  const buyer = async (lane: number) => {
    for (let i = 0; running; i++) {
      const email = `buyer-${lane}-${i}@rolling.example`;
      const intent = await attempt(
        'payment intent',
        () =>
          api.post(
            '/stripe/create-payment-intent',
            { productId: shop.productId, email },
            { ...options, headers: { 'idempotency-key': randomUUID() } },
          ),
        (res) => res.status === 201,
      );
      if (!intent) continue;
      const paid = await attempt(
        'payment confirmation',
        () => confirmPurchase({ api }, intent.body, GOOD_CARD, options),
        (res) => res.status === 200 && res.body.transactionStatus === 'paid' && Boolean(res.body.licenseKey),
      );
      if (!paid) continue;
      purchases.push({ orderId: paid.body.orderId, email, licenseKey: paid.body.licenseKey });
      await attempt(
        'purchase validation (checkout host)',
        () => pay.post('/api/checkout/mirror/validate', { license: paid.body.licenseKey, email }, options),
        (res) => res.status === 200 && res.body.verified === true,
      );
    }
  };
  const lanes = [
    ...Array.from({ length: VERIFY_LANES }, (_, lane) => verifier(lane)),
    ...Array.from({ length: BUYER_LANES }, (_, lane) => buyer(lane)),
  ];
  return {
    outcomes,
    purchases,
    async purchasesAfter(count: number) {
      const target = purchases.length + count;
      await until(`${count} more purchases`, () => purchases.length >= target);
    },
    /** Lets each client finish the request or purchase in hand. */
    async stop() {
      running = false;
      await Promise.all(lanes);
    },
  };
}

/**
 * SIGTERM, its exit awaited, a start with the same settings, then waits until the balancer has
 * the node in both backends and it has served requests again; says how long each step took.
 */
async function restart(node: Node, deployment: Deployment): Promise<string> {
  const began = Date.now();
  node.proc.child.kill('SIGTERM');
  assert.equal(await node.proc.exited, 0, `${node.name} stopped cleanly:\n${node.proc.output()}`);
  const stopped = Date.now();
  node.proc = (await serve(node.env)).proc;
  const started = Date.now();
  await until(`${node.name} back in the pool`, () => inThePool(deployment, node));
  // Back in the pool means serving: its own metrics count the requests the balancer sent it.
  await until(`${node.name} serving again`, async () => (await requestsServed(node, deployment)) > 0);
  return `${node.name}: stopped in ${stopped - began} ms, started in ${started - stopped} ms, back in the pool ${Date.now() - started} ms later`;
}

/**
 * Every purchase answered paid is stored once, paid, with the license it answered; there is no
 * order or license that no answer told of.
 */
async function assertPurchasesStoredOnce(
  databaseUrl: string,
  productId: string,
  load: { outcomes: Outcome[]; purchases: Purchase[] },
): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows: orders } = await db.query<{
      id: string;
      email: string;
      status: string;
      key: string | null;
    }>(
      `select o.id, o.email, o.status, l.key
         from orders o left join licenses l on l.id = o.license_id
        where o.product_id = $1`,
      [productId],
    );
    const intentsAnswered = load.outcomes.filter((o) => o.what === 'payment intent' && o.ok).length;
    assert.equal(orders.length, intentsAnswered, 'one order per payment intent answered, none doubled');
    assert.equal(new Set(orders.map((order) => order.email)).size, orders.length, 'no buyer has two orders');
    const byId = new Map(orders.map((order) => [order.id, order]));
    for (const purchase of load.purchases) {
      assert.deepEqual(byId.get(purchase.orderId), {
        id: purchase.orderId,
        email: purchase.email,
        status: 'paid',
        key: purchase.licenseKey,
      });
    }
    const { rows } = await db.query<{ n: number }>(
      'select count(*)::int as n from licenses where product_id = $1',
      [productId],
    );
    assert.equal(rows[0]?.n, load.purchases.length, 'one license per purchase');
  } finally {
    await db.end();
  }
}

/** Whether HAProxy has the node UP in both backends (the core API's and the checkout host's). */
async function inThePool(deployment: Deployment, node: Node): Promise<boolean> {
  const rows = (await deployment.balancer.servers()).filter((row) => row.server === node.name);
  return rows.length === 2 && rows.every((row) => row.status === 'UP');
}

/** Requests the node has answered since it started, read from its Prometheus endpoint. */
async function requestsServed(node: Node, deployment: Deployment): Promise<number> {
  const metrics = `http://${node.host}:${deployment.metricsPort}/metrics`;
  const text = await (await fetch(metrics, { signal: AbortSignal.timeout(10_000) })).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('licensing_http_request_duration_seconds_count'))
    .reduce((total, line) => total + Number(line.split(' ').pop()), 0);
}

/** Resolves once `done()` holds; fails naming `what` if it does not within `ms`. */
async function until(what: string, done: () => boolean | Promise<boolean>, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await sleep(100);
  }
}

function sum<T>(rows: T[], field: keyof T): number {
  return rows.reduce((total, row) => total + Number(row[field]), 0);
}

/** HAProxy's log lines (`option httplog`) of requests not answered 2xx or 3xx in full, and its alerts. */
function errorLines(output: string): string {
  const request = / (-?\d+) \d+ \S+ \S+ (\S{4}) [\d/]+ [\d/]+ "/;
  return output
    .split('\n')
    .filter((line) => {
      const logged = request.exec(line);
      return logged ? !/^[23]/.test(logged[1] ?? '') || logged[2] !== '----' : /ALERT|WARNING/.test(line);
    })
    .slice(-50)
    .join('\n');
}
