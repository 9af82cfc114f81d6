import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Seller, signUp, startTestServer, type TestServer } from '../../testing/harness.js';

describe('a node beyond its capacity', () => {
  let server: TestServer;
  let seller: Seller;

  before(async () => {
    // A capacity of four requests in hand, and sign-ins that take a while each (a production
    // password hash cost, on the thread pool), make "beyond capacity" reachable with a burst.
    server = await startTestServer({ MAX_IN_FLIGHT: '4', PASSWORD_HASH_COST: '65536' });
    seller = await signUp(server);
  });

  after(() => server.stop());

  test('sheds the excess with 503 overloaded and Retry-After, and keeps answering health checks', async () => {
    const signIn = () =>
      server.api.post('/auth/login', { email: seller.user.email, password: 'not the password' });
    const burst = Array.from({ length: 60 }, signIn);
    const health = Array.from({ length: 10 }, () => server.api.get('/health'));
    const answers = await Promise.all(burst);
    for (const res of await Promise.all(health)) res.expect(200);

    const shed = answers.filter((res) => res.status === 503);
    for (const res of answers) {
      if (res.status === 401) assert.equal(res.body.error.code, 'invalid_credentials');
      else {
        assert.equal(res.status, 503, res.text);
        assert.equal(res.body.error.code, 'overloaded');
        assert.ok(Number(res.headers.get('retry-after')) > 0);
        // Shed before routing, it still answers in the one error body, under its request id.
        assert.equal(res.body.error.requestId, res.headers.get('x-request-id'));
      }
    }
    assert.ok(shed.length > 0, 'some of the burst was shed');
    assert.ok(shed.length < answers.length, 'the node kept serving what it could');

    // Once the burst has passed, the node serves every request again.
    assert.equal((await signIn()).status, 401);
  });
});
