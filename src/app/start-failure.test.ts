import assert from 'node:assert/strict';
import { type AddressInfo, createServer } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { parseConfig } from '../platform/config.js';
import { createJobs } from '../platform/jobs.js';
import { createLog } from '../platform/log.js';
import { startTestServer } from '../testing/harness.js';
import { scratchDatabase } from '../testing/scratch-database.js';

/** Connections to `database` other than the asker's own. */
async function sessionsOn(url: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select count(*)::int as n from pg_stat_activity
        where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid()`,
      [database],
    );
    return rows[0].n;
  } finally {
    await client.end();
  }
}

test('a start that fails part-way (its port is taken) closes what it opened', {
  skip: process.env.DATABASE_URL ? false : 'PGlite in memory holds no connection to count',
}, async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const database = await scratchDatabase();
  const name = new URL(database.url as string).pathname.slice(1);
  try {
    // With jobs on, the node listens for committed events before it takes its ports.
    await assert.rejects(
      startTestServer({
        DATABASE_URL: database.url as string,
        JOBS: 'on',
        PORT: String((taken.address() as AddressInfo).port),
      }),
      { code: 'EADDRINUSE', message: /^PORT: .* is already in use/ },
    );
    // Left open, the listening connection would hold the process for good.
    let open = await sessionsOn(process.env.DATABASE_URL as string, name);
    for (let waited = 0; open > 0 && waited < 10_000; waited += 50) {
      await sleep(50);
      open = await sessionsOn(process.env.DATABASE_URL as string, name);
    }
    assert.equal(open, 0, 'connections left open by the failed start');
  } finally {
    taken.close();
    await database.drop();
  }
});

/** A port free a moment ago, and whether it can be taken now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
async function canListenOn(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}

test('a start whose probe port is taken fails and closes the API listener; one whose API port is taken closes the probe listener', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const takenPort = String((taken.address() as AddressInfo).port);
  try {
    const apiPort = await freePort();
    await assert.rejects(startTestServer({ PORT: String(apiPort), HEALTH_PORT: takenPort }), {
      code: 'EADDRINUSE',
      message: new RegExp(`^HEALTH_PORT: 127\\.0\\.0\\.1:${takenPort} is already in use`),
    });
    assert.ok(await canListenOn(apiPort), 'the API port is free again');

    const probePort = await freePort();
    await assert.rejects(startTestServer({ PORT: takenPort, HEALTH_PORT: String(probePort) }), {
      code: 'EADDRINUSE',
      message: new RegExp(`^PORT: .*:${takenPort} is already in use`),
    });
    assert.ok(await canListenOn(probePort), 'the probe port is free again');
  } finally {
    taken.close();
  }
});

test('stopping the jobs aborts the signal a run in progress was given, and waits for that run', async () => {
  const jobs = createJobs(createLog(parseConfig({ LOG_LEVEL: 'silent', DATA_DIR: 'memory:' })));
  const seen: string[] = [];
  let started = () => {};
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  jobs.every('backlog', 60_000, async (stopping) => {
    seen.push('started');
    started();
    // A run working through a backlog stops between two pieces of it once told.
    await new Promise((resolve) => stopping.addEventListener('abort', resolve, { once: true }));
    await sleep(10);
    seen.push('wound down');
  });
  await running;
  await jobs.stop();
  assert.deepEqual(seen, ['started', 'wound down']);
});
