import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../../testing/harness.js';

/**
 * A node's background work (the verification cache's refresh, webhook passes, jobs) issues
 * statements one after another. On PGlite each runs on the event loop's own thread, so a run of
 * them must still leave turns to requests that need no database.
 */
const storage = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

describe(`statements and the event loop (${storage})`, () => {
  test('a request that needs no database is answered while statements run one after another', async () => {
    const order: string[] = [];
    // A few milliseconds of work in PGlite; a hundred of them far longer than a request to a
    // route that answers from memory.
    const count = sql<{ n: number }>`select count(*) as n from generate_series(1, 50000)`;
    const statements = (async () => {
      for (let i = 0; i < 100; i++) {
        const { rows } = await count.execute(server.db);
        assert.equal(rows[0]?.n, 50_000);
      }
      order.push('statements done');
    })();
    const request = server.api.get('/health').then((res) => {
      res.expect(200);
      order.push('request answered');
    });
    await Promise.all([statements, request]);
    assert.deepEqual(order, ['request answered', 'statements done']);
  });
});
