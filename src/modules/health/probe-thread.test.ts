import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '../../platform/config.js';
import { requestsDrained } from '../../platform/http/create-http-app.js';
import { createLog } from '../../platform/log.js';
import { probeWhileHeld } from '../../testing/burst.js';
import { startTestServer, type TestServer } from '../../testing/harness.js';
import { type HttpClient, httpClient } from '../../testing/http-client.js';
import { startProbeThread } from './probe-thread.js';

/**
 * The probe listener (HEALTH_PORT) answers from a thread of its own what the main listeners
 * answer, and keeps answering while the main thread's event loop is held.
 */
const PROBES = ['/healthz', '/readyz', '/v1/health', '/v1/health/ready', '/health', '/health/ready'];

/** Asks until `done` holds for an answer; the last answer either way. */
async function askUntil(client: HttpClient, path: string, done: (status: number) => boolean) {
  let res = await client.get(path);
  for (let i = 0; i < 100 && !done(res.status); i++) {
    await sleep(100);
    res = await client.get(path);
  }
  return res;
}

/** Whether the core listener has a request in hand (its handler not done). */
async function inFlight(server: TestServer): Promise<boolean> {
  let drained = false;
  void requestsDrained(server.service.core).then(() => {
    drained = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return !drained;
}

describe('the probe listener', () => {
  let server: TestServer;
  let probes: HttpClient;
  before(async () => {
    server = await startTestServer();
    probes = httpClient(server.service.healthUrl as string);
  });
  after(() => server.stop());

  test("answers liveness and readiness as the main listeners do, under both hosts' names", async () => {
    const core = httpClient(server.service.coreUrl);
    const pay = httpClient(server.service.payUrl);
    for (const path of PROBES) {
      const res = (await probes.get(path)).expect(200);
      const main = path.startsWith('/health') ? await pay.get(path) : await core.get(path);
      assert.deepEqual(res.body, main.expect(200).body, path);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.ok(res.headers.get('x-request-id'));
    }
    assert.deepEqual((await probes.get('/readyz/?probe=1')).expect(200).body, {
      status: 'ready',
      database: 'ok',
    });
    const head = await fetch(`${probes.baseUrl}/healthz`, { method: 'HEAD' });
    assert.equal(head.status, 200);
  });

  test('answers anything else 404 in the one error body', async () => {
    const res = await probes.get('/metrics', { headers: { 'x-request-id': 'probe-404' } });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, {
      error: { code: 'route_not_found', message: 'No route GET /metrics', requestId: 'probe-404' },
    });
    assert.equal((await probes.post('/healthz', {})).status, 404);
  });

  test('is not opened with HEALTH_PORT=off', async () => {
    const off = await startTestServer({ HEALTH_PORT: 'off' });
    try {
      assert.equal(off.service.healthUrl, null);
    } finally {
      await off.stop();
    }
  });
});

describe("the probe listener's readiness", () => {
  test('answers 503 not_ready once the database cannot be reached, as the main listeners do; liveness stays 200', async () => {
    const server = await startTestServer();
    const probes = httpClient(server.service.healthUrl as string);
    try {
      (await probes.get('/readyz')).expect(200);
      await server.service.modules.database.close();
      const res = await askUntil(probes, '/readyz', (status) => status !== 200);
      assert.equal(res.status, 503);
      assert.equal(res.body.error.code, 'not_ready');
      assert.equal(res.body.error.message, 'The database is not reachable');
      assert.equal(res.headers.get('retry-after'), '5');
      assert.equal((await server.api.get('/health/ready')).status, 503, 'the main listener agrees');
      (await probes.get('/healthz')).expect(200);
    } finally {
      await server.stop();
    }
  });

  test('answers 503 not_ready "starting" until the main listeners accept connections', async () => {
    const thread = await startProbeThread(
      { host: '127.0.0.1', port: 0, backlog: 16, stallMs: 10_000, ping: async () => {} },
      createLog(parseConfig({ LOG_LEVEL: 'silent' })),
    );
    try {
      const probes = httpClient(thread.url);
      const early = await probes.get('/readyz');
      assert.equal(early.status, 503);
      assert.equal(early.body.error.message, 'The service is starting');
      (await probes.get('/healthz')).expect(200);
      thread.serving();
      (await probes.get('/readyz')).expect(200);
    } finally {
      await thread.close();
    }
  });

  test('answers 503 not_ready while the node stops, until its last step', async () => {
    const server = await startTestServer({ SHUTDOWN_TIMEOUT_MS: '2000' });
    const probes = httpClient(server.service.healthUrl as string);
    // A request whose body never finishes holds the stop at "requests in flight" until the deadline.
    const { port } = new URL(server.service.coreUrl);
    const stalled = net.connect(Number(port), '127.0.0.1');
    stalled.on('error', () => {});
    await new Promise((resolve) => stalled.once('connect', resolve));
    stalled.write(
      'POST /v1/licenses/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"key"',
    );
    for (let i = 0; i < 100 && !(await inFlight(server)); i++) await sleep(50);
    assert.ok(await inFlight(server), 'the stalled request is in hand');
    const stopping = server.stop();
    try {
      assert.equal(server.service.stopStage, 'requests in flight');
      for (const path of ['/healthz', '/readyz']) {
        const res = await probes.get(path);
        assert.equal(res.status, 503, path);
        assert.equal(res.body.error.code, 'not_ready');
        assert.equal(res.body.error.message, 'The service is shutting down; retry the request');
      }
    } finally {
      await stopping;
      stalled.destroy();
    }
    await assert.rejects(probes.get('/healthz'), 'closed once stopped');
  });
});

describe("the probe listener's liveness", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ HEALTH_STALL_MS: '1000' });
  });
  after(() => server.stop());

  test('is answered while the main thread is held: 503 not_ready past HEALTH_STALL_MS, and 200 once it runs again', async () => {
    const url = server.service.healthUrl as string;
    // Nothing of this thread runs while the probes are sent (no beat, no listener of its own).
    const held = probeWhileHeld({ url: `${url}/healthz`, untilStatus: 503, everyMs: 100, timeoutMs: 20_000 });
    const readiness = probeWhileHeld({ url: `${url}/readyz`, everyMs: 100, timeoutMs: 5_000 });
    assert.ok(
      held.every((answer) => answer.status === 200 || answer.status === 503),
      `every probe answered: ${JSON.stringify(held)}`,
    );
    const last = held.at(-1);
    assert.equal(last?.status, 503, JSON.stringify(held));
    const { error } = JSON.parse(last?.body ?? '{}');
    assert.equal(error.code, 'not_ready');
    assert.match(error.message, /^The service's main thread has not run for \d+ s$/);
    assert.equal(readiness[0]?.status, 503, 'a stuck node is not ready either');

    const probes = httpClient(url);
    (await askUntil(probes, '/healthz', (status) => status === 200)).expect(200);
    (await askUntil(probes, '/readyz', (status) => status === 200)).expect(200);
  });
});

describe('a node that drains before it stops (SHUTDOWN_DRAIN_MS)', () => {
  test('answers its probes 503 on every listener while it serves every other route, each answer closing its connection', async () => {
    const server = await startTestServer({ SHUTDOWN_DRAIN_MS: '600000' });
    const probes = httpClient(server.service.healthUrl as string);
    const jwks = `${server.service.coreUrl}/v1/licenses/jwks`;
    const agent = new http.Agent({ keepAlive: true });
    try {
      assert.deepEqual(await ask(jwks, agent), { status: 200, connection: 'keep-alive' });
      const stopping = server.stop();
      assert.equal(server.service.stopStage, 'draining');
      for (const path of ['/readyz', '/healthz']) {
        const res = await probes.get(path);
        assert.equal(res.status, 503, path);
        assert.equal(res.body.error.code, 'not_ready');
      }
      for (const url of [
        `${server.service.coreUrl}/readyz`,
        `${server.service.coreUrl}/v1/health/ready`,
        `${server.service.payUrl}/health/ready`,
      ]) {
        assert.deepEqual(await ask(url, agent), { status: 503, connection: 'close' }, url);
      }
      assert.deepEqual(await ask(jwks, agent), { status: 200, connection: 'close' });
      assert.equal(server.service.stopStage, 'draining', 'still draining');
      server.service.skipDrain();
      await stopping;
      await assert.rejects(ask(jwks, agent), 'closed once stopped');
    } finally {
      agent.destroy();
    }
  });
});

/** A GET through `agent` (keep-alive): its status and the Connection header of its answer. */
function ask(url: string, agent: http.Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      })
      .on('error', reject);
  });
}
