import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueLicense, sellerWithApp, startTestServer, type TestServer } from '../../testing/harness.js';
import { holdingProxy } from '../../testing/pg-proxy.js';

/**
 * Two nodes on one PostgreSQL; the first reaches it through a proxy that can freeze its
 * listening connection without closing it, as a NAT, a load balancer or a failover may. A
 * revocation made on the second node must stop the first from answering the license valid
 * within its listener's probe bound (5 s between probes, 5 s to hear one back), not after the
 * cache's two-minute safety net or TCP keepalive's minutes.
 */
const skip = process.env.DATABASE_URL ? false : 'PGlite has one node and no connection to lose';
/** Far above the probe bound (10 s), far below the cache's safety net (120 s). */
const WAIT_LIMIT_MS = 40_000;

let proxy: Awaited<ReturnType<typeof holdingProxy>>;
let behindProxy: TestServer;
let direct: TestServer;
before(async () => {
  if (skip) return;
  proxy = await holdingProxy(new URL(process.env.DATABASE_URL as string));
  behindProxy = await startTestServer({ DATABASE_URL: proxy.url });
  direct = await startTestServer();
});
after(async () => {
  if (skip) return;
  await behindProxy.stop();
  await direct.stop();
  await proxy.close();
});

test('a node whose change channel falls silent stops answering a revoked license valid within the probe bound', {
  skip,
}, async (t) => {
  const seller = await sellerWithApp(direct);
  const license = await issueLicense(direct, seller);
  const verify = async () =>
    (await behindProxy.api.post('/licenses/verify', { key: license.key })).expect(200).body as {
      valid: boolean;
      code?: string;
    };
  // Verified until the node holds it in memory (it stores once it hears its own channel).
  for (let tries = 0; !behindProxy.service.modules.verificationCache.listening; tries++) {
    assert.ok(tries < 400, 'the node never heard its own channel');
    await verify();
    await sleep(25);
  }
  assert.equal((await verify()).valid, true);
  assert.equal(proxy.freezeListeners(), 1, 'only the listening connection falls silent');
  (
    await direct.api.post(`/apps/${seller.appId}/licenses/${license.id}/revoke`, undefined, {
      token: seller.token,
    })
  ).expect(200);
  const started = Date.now();
  let answer = await verify();
  const validAfterRevoke = answer.valid;
  while (answer.valid) {
    assert.ok(Date.now() - started < WAIT_LIMIT_MS, 'the revoked license is still answered valid');
    await sleep(200);
    answer = await verify();
  }
  t.diagnostic(
    `answered valid right after the revocation: ${validAfterRevoke}; invalid (${answer.code}) after about ${Math.round((Date.now() - started) / 1000)} s`,
  );
  assert.equal(answer.code, 'license_revoked');
});
