import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { holdEventLoop, listenQueue, probeWhileHeld, startBurst } from '../testing/burst.js';
import { startTestServer, type TestServer } from '../testing/harness.js';
import { kernelListenQueueCap } from './service.js';

/**
 * A connection that finds the listen queue full is dropped by the kernel, and its client tries
 * again a second or more later; one that finds room waits there until the node accepts it. The
 * queue is seen from the kernel's side (/proc, Linux) while the node's event loop is held.
 */
const cap = kernelListenQueueCap();
const linuxOnly = process.platform === 'linux' && cap !== null ? false : 'needs Linux (/proc/net/tcp)';
const port = (server: TestServer) => Number(new URL(server.service.coreUrl).port);

describe('bursts of connections', { skip: linuxOnly }, () => {
  describe('with LISTEN_BACKLOG=64', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ LISTEN_BACKLOG: '64' });
    });
    after(() => server.stop());

    test('the listen queue holds 65 connections and no more', () => {
      const burst = startBurst({
        origin: server.service.coreUrl,
        connections: 200,
        probeEvery: 1,
        timeoutMs: 30_000,
      });
      try {
        // Every client has tried (connected, or its SYN dropped and waiting to retry).
        const tried = holdEventLoop(() => {
          const queue = listenQueue(port(server));
          return queue.connected + queue.connecting === 200 && queue.waiting > 0;
        }, 30_000);
        const queue = listenQueue(port(server));
        assert.ok(tried, `the clients did not all try: ${JSON.stringify(queue)}`);
        // Linux holds one more than the backlog.
        assert.equal(queue.waiting, Math.min(64, cap ?? 0) + 1);
        assert.ok(queue.connecting > 0, 'the rest wait to retry');
      } finally {
        burst.stop();
      }
    });
  });

  describe('with the default backlog', () => {
    let server: TestServer;
    const connections = 1500;
    before(async () => {
      // The loop is held for as long as the burst takes to queue: the node is not stuck meanwhile.
      server = await startTestServer({ HEALTH_STALL_MS: '120000' });
    });
    after(() => server.stop());

    test('a burst of 1,500 connections at once all wait in the listen queue, and each is answered: verifies 200 or 503 overloaded, health probes 200; the probe listener answers while they wait', {
      skip: (cap ?? 0) < connections ? `net.core.somaxconn is ${cap} here` : false,
    }, async (t) => {
      const burst = startBurst({
        origin: server.service.coreUrl,
        connections,
        probeEvery: 50,
        timeoutMs: 60_000,
      });
      const queued = holdEventLoop(() => listenQueue(port(server)).waiting === connections, 30_000);
      assert.ok(queued, `not all waited in the queue: ${JSON.stringify(listenQueue(port(server)))}`);
      // Still held, the main listeners accepting none: the probe listener's thread answers.
      const probe = (path: string) =>
        probeWhileHeld({ url: `${server.service.healthUrl}${path}`, everyMs: 100, timeoutMs: 10_000 }).at(-1);
      const live = probe('/healthz');
      assert.equal(live?.status, 200, JSON.stringify(live));
      // Readiness is what the node's last check of the shared test database found just before:
      // 200, or 503 not_ready if it went unanswered then; an answer either way.
      const ready = probe('/readyz');
      assert.ok(
        ready?.status === 200 || (ready?.status === 503 && JSON.parse(ready.body).error.code === 'not_ready'),
        JSON.stringify(ready),
      );
      assert.equal(listenQueue(port(server)).waiting, connections, 'the burst still waits, unaccepted');
      const outcome = await burst.outcome;
      t.diagnostic(JSON.stringify(outcome));

      const {
        'verify 200': served = 0,
        'verify 503 overloaded': shed = 0,
        'probe 200': probes = 0,
        ...other
      } = outcome.answers;
      assert.deepEqual(other, {}, 'no other answers');
      assert.equal(probes, connections / 50);
      assert.equal(served + shed + probes, connections);
      assert.deepEqual(
        {
          connectFailures: outcome.connectFailures,
          timeouts: outcome.timeouts,
          otherFailures: outcome.otherFailures,
        },
        { connectFailures: 0, timeouts: 0, otherFailures: 0 },
      );
    });
  });
});
