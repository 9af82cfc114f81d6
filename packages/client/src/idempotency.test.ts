import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer, uniqueSuffix } from '../../../src/testing/harness.js';
import { LicensingApiError, LicensingClient, responseInfo } from './index.js';

/**
 * The SDK's retries against the real service, through a proxy that loses answers: it forwards a
 * chosen request, lets the service do the work, then drops the connection before the client sees
 * the answer. What the service holds afterwards is read back through the API.
 */
let server: TestServer;
let proxy: LossyProxy;
let seller: LicensingClient;
let sellerToken: string;
let appId: string;

before(async () => {
  server = await startTestServer();
  proxy = await startLossyProxy(server.service.coreUrl);
  const direct = new LicensingClient({ baseUrl: server.service.coreUrl });
  const session = await direct.auth.register({
    email: `sdk-retry-${uniqueSuffix()}@example.com`,
    password: 'sdk password 1',
  });
  sellerToken = session.token;
  seller = direct.withToken(sellerToken);
  appId = (await seller.apps.create({ name: 'Retry app' })).id;
});
after(async () => {
  await proxy.close();
  await server.stop();
});

const throughProxy = () =>
  new LicensingClient({ baseUrl: proxy.url, token: sellerToken, retryDelayMs: 1, retries: 2 });

describe('retries against the service when an answer is lost', () => {
  test('a creating call whose answer was lost is retried with its key and makes exactly one license', async () => {
    const email = `lost-${uniqueSuffix()}@example.com`;
    proxy.dropAnswerOnce((req) => req.method === 'POST' && req.url === `/v1/apps/${appId}/licenses`);
    const issued = await throughProxy().licenses.issue(appId, { email, metadata: { plan: 'pro' } });

    const sent = proxy.forwarded.filter((req) => req.url === `/v1/apps/${appId}/licenses`);
    assert.equal(sent.length, 2, 'the first answer was lost, the retry got one');
    assert.equal(sent[0]?.idempotencyKey, sent[1]?.idempotencyKey);
    assert.equal(responseInfo(issued)?.replayed, true, 'the service replayed the first answer');

    const held = await seller.licenses.list(appId, { email });
    assert.equal(held.total, 1);
    assert.equal(held.licenses[0]?.id, issued.id);
  });

  test('a status change whose answer was lost is not repeated: it fails, and it was done once', async () => {
    const license = await seller.licenses.issue(appId, {});
    const path = `/v1/apps/${appId}/licenses/${license.id}/suspend`;
    proxy.dropAnswerOnce((req) => req.url === path);
    await assert.rejects(
      throughProxy().licenses.suspend(appId, license.id),
      (error: unknown) => error instanceof LicensingApiError && error.code === 'network_error',
    );
    assert.equal(proxy.forwarded.filter((req) => req.url === path).length, 1);
    assert.equal((await seller.licenses.get(appId, license.id)).status, 'suspended');
  });
});

interface LossyProxy {
  url: string;
  forwarded: { method: string; url: string; idempotencyKey: string | undefined }[];
  /** The next request matching `when` reaches the service, but its answer is dropped. */
  dropAnswerOnce(when: (req: http.IncomingMessage) => boolean): void;
  close(): Promise<void>;
}

async function startLossyProxy(target: string): Promise<LossyProxy> {
  const forwarded: LossyProxy['forwarded'] = [];
  let drop: ((req: http.IncomingMessage) => boolean) | null = null;
  const proxy = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([name]) => !['host', 'connection', 'content-length'].includes(name),
      ),
    ) as Record<string, string>;
    forwarded.push({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      idempotencyKey: headers['idempotency-key'],
    });
    let upstream: Response;
    let body: Buffer;
    try {
      upstream = await fetch(new URL(req.url ?? '/', target), {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      body = Buffer.from(await upstream.arrayBuffer());
    } catch {
      res.writeHead(502).end();
      return;
    }
    if (drop?.(req)) {
      drop = null;
      req.socket.destroy(); // the work is done; the client never hears of it
      return;
    }
    const relayed: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name))
        relayed[name] = value;
    });
    res.writeHead(upstream.status, relayed);
    res.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    forwarded,
    dropAnswerOnce(when) {
      drop = when;
    },
    async close() {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
