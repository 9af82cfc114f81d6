import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort, signUp, startTestServer, TEST_PASSWORD, type TestServer } from '../../testing/harness.js';

/**
 * Two nodes over one database, sharing JWT_SECRET but started without PUBLIC_BASE_URL on
 * different ports, as a scaled-out deployment is. In-memory PGlite cannot be shared by two
 * nodes, so this runs on PostgreSQL only.
 */
const onPostgres = Boolean(process.env.DATABASE_URL);
const skip = !onPostgres && 'needs DATABASE_URL (two nodes, one database)';
const JWT_SECRET = 'nodes-share-this-secret-0123456789abcdef';

const nodes: TestServer[] = [];
before(async () => {
  if (!onPostgres) return;
  for (let i = 0; i < 2; i++)
    nodes.push(await startTestServer({ JWT_SECRET, PORT: String(await freePort()) }));
});
after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
});

describe('sessions across nodes', { skip }, () => {
  test('a session from one node is accepted by another listening on another port', async () => {
    const [first, second] = nodes as [TestServer, TestServer];
    assert.notEqual(first.config.apiBaseUrl, second.config.apiBaseUrl, 'the nodes differ in address');
    const seller = await signUp(first);
    const me = (await second.api.get('/auth/me', { token: seller.token })).expect(200).body;
    assert.equal(me.user.id, seller.user.id);
    const login = await second.api.post('/auth/login', { email: seller.user.email, password: TEST_PASSWORD });
    const token = login.expect(200).body.token;
    assert.equal((await first.api.get('/auth/me', { token })).expect(200).body.user.id, seller.user.id);
  });
});
